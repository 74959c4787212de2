"""The CPU lanes engine (kernels/sweep/lanes.py) gives the CPU sweep's ShardResult, field by field."""

from __future__ import annotations

import numpy as np
import pytest

from gpu_sim_cases import difference
from helpers import space
from kernels.rng import stream_key
from kernels.sweep import cpu, lanes


@pytest.mark.parametrize("deck, seed, start, count, min_cards", [
    ("standard", 7, 0, 3000, 400), ("standard", 1, 17, 5, 100), ("standard", 2, 0, 0, 10),
    ("0:6,1:2,2:2", 5, 0, 4000, 40),  # cycles
])
def test_lanes_equal_the_cpu_sweep(deck, seed, start, count, min_cards):
    sp = space(deck)
    penalties = np.array([v for v in sp.deck.cards() if v], dtype=np.uint8)
    key = stream_key(seed, 3)
    a = cpu.run_random(sp, key, penalties, start, count, min_cards=min_cards)
    assert difference(a, lanes.run_random(sp, key, penalties, start, count, min_cards=min_cards)) == ""
