"""What a search that ran (or resumed) tells its caller: one `RunReport` (the CLI prints it; a notebook
reads it), made from the session's counters, its files and its pool's times."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..runs import known
from ..runs.figures import game_json
from ..runs.totals import SessionTotals
from .pool import PoolReport
from .runfiles import RunFiles


@dataclass
class RunReport:
    uri: str
    state: str  # "finished", "time limit", "interrupted", "incomplete" (ran to its end, tables miss shards)
    shards_total: int
    shards_done: int
    shards_failed: int
    deals: int
    cards: int
    elapsed_s: float
    cycles: int
    longest: list[dict] = field(default_factory=list)
    new_shards: int = 0
    session_deals: int = 0  # deals played by this run of the coordinator
    work_s: float = 0.0  # from the first shard handed out to the last one collected
    set_aside: list[str] = field(default_factory=list)  # damaged shard files moved into damaged/
    table: str | None = None  # the strategy's own summary table, if it has one (the atlas)
    missing: list[int] = field(default_factory=list)  # "incomplete": the shards the tables miss
    unit: str = "deals"  # what the strategy's shards play: "deals" (counted by `deals`) or "states"
    finite_games: bool = True  # whether the strategy keeps finite games (a longest game to show)
    # Each distinct cycle's label by the catalogue of known cycles (cluster/runs/known.py; None: new), and
    # the cycles that contradict a complete exhaustive search (one sentence each)
    cycle_labels: list = field(default_factory=list)
    contradictions: list[str] = field(default_factory=list)
    balanced: list[int] = field(default_factory=list)  # the counted balanced deals of each cycle they enter

    def to_json(self) -> dict:
        return self.__dict__.copy()

    @classmethod
    def of(cls, state: str, files: RunFiles, counts: SessionTotals, pool: PoolReport, t0: float) -> RunReport:
        first, last = pool.first_dispatch, pool.last_result
        work = (last - first) if first and last else 0.0
        t = counts.run
        balanced = []
        if files.cycles is not None:
            labels, contradictions = files.cycles.column("known").to_pylist(), known.contradictions(files.cycles)
            balanced = sorted((n for n in files.cycles.column("balanced").to_pylist() if n), reverse=True)
        else:  # (an interrupted search writes no tables: its cycles as the shards name them)
            labels, contradictions = known.labels_of(t.cycle_ids, None), []
        strategy = files.plan.strategy
        return cls(files.store.uri, state, files.plan.count, t.done, t.failed, t.counts.deals, t.counts.cards,
                   round(time.time() - t0, 2), len(t.cycle_ids), [game_json(g) for g in t.longest],
                   counts.new, counts.played.deals, round(work, 3), list(files.set_aside), strategy.own_table,
                   list(files.missing), strategy.unit, strategy.finite_games, labels, contradictions, balanced)
