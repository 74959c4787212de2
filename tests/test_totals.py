"""A run's totals (cluster/runs/totals.py): one rule for the coordinator, `bmn status` and the tables."""

from __future__ import annotations

from cluster.runs.figures import ShardFigures
from cluster.runs.summary import ShardSummary
from cluster.runs.totals import KEEP_LONGEST, RunTotals
from kernels.game import GameResult
from kernels.tally import Candidate, Counts


def shard(k: int, status="done", longest=None, histogram=None, cycle_ids=()) -> ShardSummary:
    figures = ShardFigures(counts=Counts(deals=10 * (status == "done"), cards=100 * (status == "done"), cycles=1),
                           longest=longest, histogram=histogram or {}, cycle_ids=tuple(cycle_ids))
    return ShardSummary(k, "random", "{}", status, figures)


def game(cards: int, hands: str) -> Candidate:
    return Candidate(hands, 0, GameResult("win", 1, cards // 10, cards))


def test_done_shards_add_up_and_failed_ones_only_count():
    totals = RunTotals.of({0: shard(0, histogram={5: 2, 7: 1}, cycle_ids=["a"]), 1: shard(1, status="failed"),
                           2: shard(2, histogram={7: 3}, cycle_ids=["a", "b"])})
    assert (totals.done, totals.failed, totals.counts) == (2, 1, Counts(20, 200, 2))
    assert totals.histogram == {5: 2, 7: 4} and totals.cycle_ids == {"a", "b"}
    assert totals.best is None and totals.longest_cards == 0


def test_the_longest_games_are_ordered_by_cards_then_hands_whatever_the_shard_order():
    games = [game(50, "B"), game(70, "Z"), game(70, "A"), game(10, "C"), game(60, "D"), game(20, "E"), game(30, "F")]
    summaries = {k: shard(k, longest=g) for k, g in enumerate(games)}
    forward = RunTotals.of(summaries)
    backward = RunTotals()
    for k in reversed(range(len(games))):
        backward.add(summaries[k])
    assert forward.longest == backward.longest
    assert [(g.result.cards, g.hands) for g in forward.longest] == [(70, "A"), (70, "Z"), (60, "D"), (50, "B"),
                                                                   (30, "F")]
    assert len(forward.longest) == KEEP_LONGEST and forward.best == game(70, "A") and forward.longest_cards == 70
