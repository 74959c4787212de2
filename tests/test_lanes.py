"""The CPU lanes engine (kernels/sweep/lanes.py) gives the CPU sweep's ShardResult, field by field, with 8 and
16 lanes: random standard deals with candidates kept, a small deck with cycles (Brent's check), a start past
0, no deals, fewer deals than lanes, splits with an empty hand, and more candidates than the first buffer
holds."""

from __future__ import annotations

import numpy as np
import pytest

from gpu_sim_cases import difference
from helpers import space
from kernels.rng import stream_key
from kernels.sweep import cpu, lanes

CASES = {
    "standard": ("standard", None, 7, 0, 3000, 400, 0),  # ~540 candidates, the longest game
    "standard, min_tricks": ("standard", None, 11, 250, 600, 10**6, 60),
    "start past 0, fewer than the lanes": ("standard", None, 1, 17, 5, 100, 0),
    "no deals": ("standard", None, 2, 0, 0, 10, 0),
    "small deck, cycles": ("0:6,1:2,2:2", None, 5, 3, 4000, 40, 0),  # hundreds of cycles
    "every deal kept (the buffer grows)": ("0:6,1:2,2:2", None, 6, 0, 1500, 0, 0),
    "hand 1 empty": ("0:6,1:2,2:2", "0,10", 4, 5, 20, 0, 0),
    "hand 2 empty": ("0:6,1:2,2:2", "10,0", 4, 5, 20, 0, 0),
    "unequal hands": ("0:6,1:2,2:2", "3,7", 4, 5, 300, 8, 2),
}


@pytest.mark.parametrize("n_lanes", lanes.LANES)
@pytest.mark.parametrize("case", list(CASES))
def test_lanes_equal_the_cpu_sweep(case, n_lanes):
    deck, split, seed, start, count, min_cards, min_tricks = CASES[case]
    sp = space(deck, split)
    penalties = np.array([v for v in sp.deck.cards() if v], dtype=np.uint8)
    key = stream_key(seed, 3)
    expected = cpu.run_random(sp, key, penalties, start, count, min_cards=min_cards, min_tricks=min_tricks)
    got = lanes.run_random(sp, key, penalties, start, count, min_cards=min_cards, min_tricks=min_tricks,
                           lanes=n_lanes)
    assert difference(expected, got) == ""
    assert got.deals == count


def test_the_cases_reach_what_they_are_for():
    """The cases hold what they are meant to test: candidates, cycles, more kept deals than 1024."""
    results = {}
    for case in ("standard", "small deck, cycles", "every deal kept (the buffer grows)"):
        deck, split, seed, start, count, min_cards, min_tricks = CASES[case]
        sp = space(deck, split)
        penalties = np.array([v for v in sp.deck.cards() if v], dtype=np.uint8)
        results[case] = cpu.run_random(sp, stream_key(seed, 3), penalties, start, count, min_cards=min_cards,
                                       min_tricks=min_tricks)
    assert len(results["standard"].candidates) > 100
    assert results["small deck, cycles"].cycles > 10
    assert len(results["every deal kept (the buffer grows)"].candidates) > 1024
