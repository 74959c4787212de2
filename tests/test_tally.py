"""kernels/tally.py: the tally a compiled loop fills (Tally), read into a ShardResult; results merged and
tallied game by game; a cycle row written and read back."""

from __future__ import annotations

import inspect

from helpers import space

from kernels.game import GameResult
from kernels.strategies import run_random
from kernels.sweep.cpu import sweep_kernel
from kernels.tally import N_CAND, CycleRow, ShardResult, Tally, tally_games

SMALL = space("0:8,1:2,2:2", "6,6")


def test_a_tally_is_what_the_sweep_kernel_takes_last_in_its_order():
    taken = list(inspect.signature(sweep_kernel.py_func).parameters)
    assert taken[-len(Tally._fields):] == list(Tally._fields)


def test_a_grown_tally_keeps_its_candidates_and_doubles_their_room():
    tally = Tally.new(12, 2, capacity=2)
    tally.cand_deals[:] = 7
    tally.cand_index[:] = [4, 9]
    tally.stats[N_CAND] = 2
    grown = tally.grown()
    assert grown.cand_deals.shape == (4, 12) and grown.cand_rows.shape[0] == 4 and grown.cand_index.shape == (4,)
    assert (grown.cand_deals[:2] == 7).all() and not grown.cand_deals[2:].any()
    assert grown.cand_index.tolist() == [4, 9, 0, 0]
    # What the kernel counts in carries on in the same arrays.
    assert grown.stats is tally.stats and grown.histogram is tally.histogram and grown.wins is tally.wins


def test_a_sweep_outgrowing_its_candidate_room_gives_the_same_result(monkeypatch):
    roomy = run_random(SMALL, 3, 0, 2000, min_cards=20)
    new = Tally.new
    monkeypatch.setattr(Tally, "new", classmethod(lambda cls, total, players, capacity=1: new(total, players, 1)))
    cramped = run_random(SMALL, 3, 0, 2000, min_cards=20)
    assert len(roomy.candidates) > 100
    assert [(c.hands, c.index, c.result) for c in cramped.candidates] == \
        [(c.hands, c.index, c.result) for c in roomy.candidates]
    assert (cramped.deals, cramped.cards, cramped.cycles, cramped.longest) == \
        (roomy.deals, roomy.cards, roomy.cycles, roomy.longest)
    assert cramped.histogram.tolist() == roomy.histogram.tolist() and cramped.wins.tolist() == roomy.wins.tolist()


def test_an_empty_tally_is_an_empty_result():
    result = ShardResult.from_tally(Tally.new(SMALL.deck.total, 2, capacity=0), SMALL)
    assert (result.deals, result.cards, result.cycles, result.longest, result.candidates) == (0, 0, 0, None, [])
    assert result.wins.tolist() == [0, 0] and not result.histogram.any()


def test_games_tallied_one_by_one_and_results_merged():
    win = GameResult(outcome="win", winner=2, tricks=20, cards=90)
    long = GameResult(outcome="win", winner=1, tricks=40, cards=300)
    cycle = GameResult(outcome="cycle", winner=None, tricks=50, cards=400, cycle_id="00000000000000aa")
    first = tally_games([win, cycle], ["A/B", "C/D"], [0, 1], min_cards=200, min_tricks=0, players=2)
    assert (first.deals, first.cards, first.cycles) == (2, 490, 1) and first.wins.tolist() == [0, 1]
    assert first.histogram[90] == 1 and first.histogram.sum() == 1  # a cycle has no length in the histogram
    assert [c.hands for c in first.candidates] == ["C/D"] and first.longest.hands == "A/B"
    second = tally_games([long], ["E/F"], [5], min_cards=200, min_tricks=0, players=2)
    first.merge(second)
    assert (first.deals, first.cards, first.cycles, first.max_cards) == (3, 790, 1, 300)
    assert first.longest.hands == "E/F" and first.wins.tolist() == [1, 1]


def test_a_cycle_row_writes_its_closure_only_where_it_was_searched():
    row = CycleRow("00000000000000aa", 4, 10, "0:2,1:1,2:1", "J-/Q-", basin=3)
    assert "closure" not in row.to_json() and CycleRow.from_json({**row.to_json(), "later": 1}) == row
    searched = CycleRow("00000000000000aa", 4, 10, "0:2,1:1,2:1", "J-/Q-", closure=12, closest="J-/Q-", imbalance=0)
    assert searched.to_json()["closure"] == 12 and CycleRow.from_json(searched.to_json()) == searched
