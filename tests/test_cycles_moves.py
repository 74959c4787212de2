"""The cycle factory's cycles and moves (kernels/strategies/cycles/state.py, moves.py)."""

from __future__ import annotations

from collections import Counter

import numpy as np
from helpers import CASELLA, CASELLA_ID, space

from kernels.cyclestate import cycle_state
from kernels.decks import parse_deck
from kernels.engines.reference import play_reference
from kernels.notation import parse_deal
from kernels.strategies.cycles.moves import insertions, substitutions, variations
from kernels.strategies.cycles.state import CycleState, Target, cycle_states


def casella() -> CycleState:
    return CycleState(CASELLA_ID, tuple(tuple(h) for h in parse_deal(cycle_state(parse_deal(CASELLA)))))


def _deal(row, cut):
    return [tuple(int(v) for v in row[:cut]), tuple(int(v) for v in row[cut:])]


def test_a_cycle_state_carries_its_sizes_and_composition():
    cycle = casella()
    assert cycle.cards == 52 and sum(cycle.sizes) == 52 and cycle.sizes == tuple(len(h) for h in cycle.hands)
    assert cycle.composition(5).tolist() == [36, 4, 4, 4, 4]
    assert Target(parse_deck("standard"), 0).holds(cycle)
    assert not Target(parse_deck("0:37,1:4,2:4,3:4,4:4"), 0).holds(cycle)


def test_the_states_of_a_cycle_are_its_period_each_from_the_leaders_seat():
    states = casella().states()
    assert len(states) == 62
    assert [(r.tolist(), c) for r, c in states] == [(r.tolist(), c) for r, c in cycle_states(casella().hands)]
    assert (states[0][0].tolist(), states[0][1]) == (list(casella().hands[0] + casella().hands[1]), casella().sizes[0])
    for row, cut in states[::7]:
        r = play_reference(_deal(row, cut))
        assert (r.cycle_id, r.preperiod_tricks) == (CASELLA_ID, 0)
    assert len({row.tobytes() + bytes([cut]) for row, cut in states}) == 62


def test_target_counts_excess_and_allows_values_within_the_slack():
    target = Target(parse_deck("0:6,1:2,2:2"), 1)
    assert (target.total, target.values) == (10, [0, 1, 2])
    assert target.excess(_counts(7, 2, 1)) == 1 and target.excess(_counts(6, 3, 3)) == 2
    assert target.allowed(_counts(6, 2, 1)).tolist() == [0, 1, 2]
    assert target.allowed(_counts(7, 2, 1)).tolist() == [2]  # one more 0 or 1 would be 2 over


def _counts(*values):
    """Counts of values 0, 1, 2, ... as the deck holds them (one per possible value)."""
    return np.array(values + (0,) * (len(parse_deck("standard").counts) - len(values)), dtype=np.int64)


def _small_cycle() -> CycleState:
    """The cycle of the first 5/5 deal of 8 plain cards and 2 jacks that cycles."""
    deals = space("0:8,1:2")
    deal = next(d for d in map(deals.unrank, range(deals.count)) if play_reference(d).outcome == "cycle")
    return CycleState(play_reference(deal).cycle_id, tuple(tuple(h) for h in parse_deal(cycle_state(deal))))


def test_insertions_put_one_allowed_card_into_a_state_of_the_cycle():
    cycle = _small_cycle()
    target = Target(parse_deck("0:9,1:2,2:1"), 0)
    rows, cuts = insertions([cycle], target, np.random.default_rng(1), children=10**6)
    rows, cuts = np.concatenate(rows), np.concatenate(cuts)
    states = {(row.tobytes(), cut) for row, cut in cycle.states()}
    n = cycle.cards
    # All of them: every state, every slot (n + 2), every value the deck still lacks (0 and 2).
    assert len(rows) == len(cycle.states()) * (n + 2) * 2 and rows.shape[1] == n + 1
    for row, cut in zip(rows, cuts):
        parents = [(np.delete(row, i), cut - (i < cut)) for i in range(n + 1)
                   if row[i] in (0, 2) and 0 < cut - (i < cut) < n]
        assert any((p.tobytes(), c) in states for p, c in parents)
    drawn, _ = insertions([cycle], target, np.random.default_rng(1), children=50)
    assert sum(len(r) for r in drawn) == 50
    paired, _ = insertions([cycle], target, np.random.default_rng(1), children=50, pairs=30)
    assert sum(len(r) for r in paired) == 30 and paired[0].shape[1] == n + 2


def test_substitutions_and_variations_keep_the_size_and_stay_within_the_slack():
    cycle = _small_cycle()
    target = Target(parse_deck("0:7,1:2,2:1"), 0)  # as many cards: only substitutions reach it
    rows, cuts = substitutions([cycle], target, np.random.default_rng(2), count=5, at_target=40)
    rows = np.concatenate(rows)
    assert rows.shape == (40, 10)
    for row in rows:
        assert target.excess(_counts(*np.bincount(row, minlength=3))) <= target.excess(target.composition(cycle))
        assert sum(Counter(row.tolist())[v] != Counter(cycle.hands[0] + cycle.hands[1])[v] for v in range(3)) == 2
    rows, cuts = variations(cycle, np.random.default_rng(3), 100)
    assert rows.shape == (100, 10) and ((cuts >= 1) & (cuts <= 9)).all()
    assert all(np.bincount(row, minlength=3).tolist() == cycle.composition(3).tolist() for row in rows)
