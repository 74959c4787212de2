"""The random stream's trick-boundary states, as the states mode cuts them: deal j of the stream (seed,
shard) cut at its own random place (kernels/rng.py), hand 1 holding the first part. Both devices' host
sides regenerate the states their kernels kept from here (kernels/sweep/__init__.py, gpu.py).
"""

from __future__ import annotations

import numpy as np

from .._jit import kernel
from ..rng import deal_state, random_cut, random_deal


@kernel
def states_at(key, penalties, indexes, out, cuts):
    """States indexes[i] of the random stream `key`: the deal into out[i], hand 1's cards into cuts[i]."""
    positions = np.zeros(out.shape[1], dtype=np.int64)
    for i in range(indexes.shape[0]):
        cuts[i] = random_cut(random_deal(deal_state(key, indexes[i]), positions, penalties, out[i]), out.shape[1])
