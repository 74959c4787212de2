"""The climb strategy (kernels/strategies/climb.py)."""

from __future__ import annotations

from helpers import STANDARD

from kernels.engines.reference import play_reference
from kernels.notation import parse_deal
from kernels.strategies import run_climb, run_random


def test_climb_is_deterministic_and_beats_its_own_pool():
    a = run_climb(STANDARD, 3, 0, 60000, pool=20000, top=2, max_states=20000, min_cards=1000)
    b = run_climb(STANDARD, 3, 0, 60000, pool=20000, top=2, max_states=20000, min_cards=1000)
    pool = run_random(STANDARD, 3, 0, 60000, min_cards=1000)
    assert [(c.hands, c.index) for c in a.candidates] == [(c.hands, c.index) for c in b.candidates]
    assert a.max_cards > pool.max_cards  # climbing found a longer game than the pool held
    assert {c.hands for c in pool.candidates} <= {c.hands for c in a.candidates}
    for c in a.candidates:
        assert c.result.cards >= 1000 or c.result.outcome == "cycle"
        assert play_reference(parse_deal(c.hands)) == c.result
