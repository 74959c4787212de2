"""kernels/bits.py: ctz and popcount as LLVM intrinsics, against Python's own bit counting."""

from __future__ import annotations

import numpy as np
from numba import njit

from kernels.bits import ctz, popcount

WORDS = [0, 1, 2, 3, 0x80, 0xFF00, 1 << 63, (1 << 64) - 1, 0x5555555555555555, 0xAAAAAAAAAAAAAAAA,
         *np.random.default_rng(1).integers(0, 2**63, 200, dtype=np.int64).tolist()]


@njit(cache=True)
def both(words):
    out = np.zeros((words.shape[0], 2), np.uint64)
    for i in range(words.shape[0]):
        out[i, 0] = ctz(words[i])
        out[i, 1] = popcount(words[i])
    return out


def trailing_zeros(w: int) -> int:
    return 64 if w == 0 else (w & -w).bit_length() - 1


def test_ctz_and_popcount_agree_with_python():
    got = both(np.array(WORDS, dtype=np.uint64)).tolist()
    assert got == [[trailing_zeros(w), bin(w).count("1")] for w in WORDS]
    assert got[0] == [64, 0] and got[6] == [63, 1] and got[7] == [0, 64]  # 0, the top bit, all bits
