"""A run's totals (cluster/runs/totals.py): one rule for the coordinator, `bmn status` and the tables."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

from cluster.runs.figures import ShardFigures
from cluster.runs.summary import ShardSummary
from cluster.runs.totals import KEEP_LONGEST, RunTotals, SessionTotals
from kernels.game import GameResult
from kernels.tally import Candidate, Counts

ROOT = Path(__file__).resolve().parents[1]


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


def test_a_copy_of_the_totals_is_complete_and_their_own():
    """RunTotals.copy (SessionTotals.start takes the opened files' totals so): every field equal, and changing
    either copy, however it is changed, leaves the other as it was."""
    original = RunTotals(done=3, failed=1, counts=Counts(30, 300, 2), longest=[game(70, "A"), game(50, "B")],
                         cycle_ids={"a", "b"}, histogram={5: 2, 7: 1})
    given = {f.name for f in dataclasses.fields(RunTotals)}
    assert all(getattr(original, name) != getattr(RunTotals(), name) for name in given)  # no field at its default
    copy = original.copy()
    assert copy == original and copy is not original
    before = dataclasses.replace(original, counts=Counts(30, 300, 2), longest=list(original.longest),
                                 cycle_ids=set(original.cycle_ids), histogram=dict(original.histogram))
    copy.add(shard(9, longest=game(90, "Z"), histogram={5: 1, 9: 4}, cycle_ids=["c"]))
    copy.add(shard(10, status="failed"))
    assert original == before and copy != original
    again = original.copy()
    original.counts.add(Counts(1, 1, 1))
    original.longest.clear()
    original.cycle_ids.add("z")
    original.histogram[1] = 1
    assert again == before
    session = SessionTotals()
    session.start(again)
    assert session.run == again and session.run is not again and session.run.counts is not again.counts


def test_the_totals_are_written_by_the_run_loop_alone():
    """A RunTotals or SessionTotals field is changed by totals.py's own methods alone, and SessionTotals' writing
    methods are called by the run loop alone (coordinator.py and its recorder.py): no other module of cluster/
    assigns a field of theirs or changes one in place."""
    fields = {f.name for cls in (RunTotals, SessionTotals) for f in dataclasses.fields(cls)}
    writing = {name for name, _ in inspect.getmembers(SessionTotals, inspect.isfunction)
               if not name.startswith("_") and name != "snapshot"}
    assert writing == {"start", "handed", "count", "tabled"}
    loop = {"cluster/loop/coordinator.py", "cluster/loop/recorder.py"}
    found = []
    for path in sorted((ROOT / "cluster").rglob("*.py")):
        where = str(path.relative_to(ROOT))
        if where == "cluster/runs/totals.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for target in targets:
                for part in ast.walk(target):
                    if isinstance(part, ast.Attribute) and part.attr in fields and not _on_self(part):
                        found.append(f"{where}:{node.lineno} assigns {ast.unparse(part)}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                receiver = node.func.value
                if isinstance(receiver, ast.Attribute) and receiver.attr in fields and node.func.attr in CHANGING:
                    found.append(f"{where}:{node.lineno} changes {ast.unparse(receiver)} in place")
                if node.func.attr in writing and "counts" in ast.unparse(receiver) and where not in loop:
                    found.append(f"{where}:{node.lineno} calls {ast.unparse(node.func)}")
    assert found == []


CHANGING = {"add", "update", "append", "extend", "insert", "sort", "clear", "pop", "remove", "discard", "setdefault"}


def _on_self(node: ast.Attribute) -> bool:
    return isinstance(node.value, ast.Name) and node.value.id == "self"
