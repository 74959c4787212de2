"""What a worker returns for a shard it played: one `PlayedShard`, its candidate deals and its figures
(`ShardFigures`); the pool hands the same value to the run loop, with the shard's tries, or with the error
of a shard it gave up.

Apart from summary.py, which makes the run's record of a shard from the figures (and its Arrow rows),
and from tables.py, which makes the games rows from the candidates, so that the actors, which only
play and count, never import pyarrow (a tenth of a second of every actor's start).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields
from typing import NamedTuple

import numpy as np

from kernels.game import GameResult
from kernels.strategies import Candidate, CycleRow, GeneRow, Shard, ShardResult
from kernels.tally import Counts, SearchRow

GPU_MARK = "/gpu"  # how a shard's file writes a GPU worker: its place and this (as bmn always has)


@dataclass(frozen=True, kw_only=True)
class ShardFigures:
    """A shard's figures: those of its result the summary tables need (a few hundred numbers at most),
    where it ran (the worker's node and process, and its device), how long it took."""

    counts: Counts = field(default_factory=Counts)
    max_cards: int = 0
    candidates: int = 0
    elapsed_s: float = 0.0
    worker: str = ""  # NODE:PID of the worker that played it
    device: str = "cpu"  # what played it there: "cpu" or "gpu"
    finished_at: float = 0.0
    histogram: dict[int, int] = field(default_factory=dict)  # finite games by length in cards (non-zero only)
    wins: tuple[int, ...] = ()  # finite games won by each hand
    longest: Candidate | None = None  # the longest finite game (the first met among equals)
    cycle_ids: tuple[str, ...] = ()  # every cycle a candidate enters or the shard reported
    cycle_rows: tuple[CycleRow, ...] | None = None  # the cycles it reported (None: no result, or not recorded)
    gene_rows: tuple[GeneRow, ...] = ()  # the genes it found or built with (construct's long genes)
    search_rows: tuple[SearchRow, ...] = ()  # its part of a long composition's gene search (construct)

    @classmethod
    def from_result(cls, result: ShardResult, *, elapsed_s: float, worker: str, device: str = "cpu") -> ShardFigures:
        return cls(
            counts=result.counts(), max_cards=result.max_cards,
            candidates=len(result.candidates), elapsed_s=round(float(elapsed_s), 4), worker=worker, device=device,
            finished_at=time.time(), wins=tuple(int(w) for w in result.wins),
            histogram={int(k): int(result.histogram[k]) for k in np.nonzero(result.histogram)[0]},
            longest=result.longest,
            cycle_ids=tuple(sorted({c.result.cycle_id for c in result.candidates if c.result.cycle_id}
                                   | {row.cycle_id for row in result.cycle_rows})),
            cycle_rows=tuple(result.cycle_rows), gene_rows=tuple(result.gene_rows),
            search_rows=tuple(result.search_rows),
        )

    @property
    def worker_label(self) -> str:
        """The worker as a shard's file writes it: NODE:PID, and /gpu for a GPU's."""
        return self.worker + (GPU_MARK if self.device == "gpu" else "")

    def flat(self) -> dict:
        """The figures as a shard's file (and the shards table) holds them: the counts among the others, the
        worker as `worker_label`."""
        counts = {f.name: getattr(self.counts, f.name) for f in fields(Counts)}
        values = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("counts", "device")}
        return {**counts, **values, "worker": self.worker_label}

    @classmethod
    def of_flat(cls, values: dict) -> ShardFigures:
        """The figures of `flat`'s form (of any bmn: a worker written with /gpu is a GPU's); keys of others ignored."""
        known = {f.name for f in fields(cls)} - {"counts", "device"}
        worker = values.get("worker", "")
        gpu = worker.endswith(GPU_MARK)
        return cls(counts=Counts(**{f.name: values[f.name] for f in fields(Counts) if f.name in values}),
                   **{k: v for k, v in values.items() if k in known and k != "worker"},
                   worker=worker[:-len(GPU_MARK)] if gpu else worker, device="gpu" if gpu else "cpu")


class PlayedShard(NamedTuple):
    """A shard played: its candidate deals (plain values: the driver makes them the shard's games rows,
    `tables.games_table`), the deck they are of and, for a rank range, the rank of its first deal; and its
    figures. What a worker returns, and what the pool hands the run loop with the shard's tries (`attempts`),
    or for a shard it gave up: no figures, and its last error (`given_up`). `audit`: a GPU's shard played
    again on a CPU (cluster/loop/audit.py)."""

    shard: Shard
    candidates: list[Candidate]
    deck: str
    rank_base: int | None
    figures: ShardFigures | None  # None: given up
    attempts: int = 1
    error: str | None = None
    audit: bool = False

    @classmethod
    def of(cls, shard: Shard, result: ShardResult, *, deck: str, elapsed_s: float, worker: str,
           device: str = "cpu") -> PlayedShard:
        """`deck`: the run's, where the result does not name one of its own (the atlas's decks do)."""
        return cls(shard, result.candidates, result.deck or deck, result.rank_base,
                   ShardFigures.from_result(result, elapsed_s=elapsed_s, worker=worker, device=device))

    @classmethod
    def given_up(cls, shard: Shard, attempts: int, error: str, audit: bool = False) -> PlayedShard:
        return cls(shard, [], "", None, None, attempts, error, audit)

    @property
    def done(self) -> bool:
        return self.figures is not None

    @property
    def on_gpu(self) -> bool:
        return self.figures is not None and self.figures.device == "gpu"


def game_json(game: Candidate) -> dict:
    """A game as the run's JSON files write it (the longest in a summary, status, progress, a report):
    its hands, where it was met, its result's fields."""
    return {"hands": game.hands, "index": game.index, **game.result.to_dict()}


def game_of_json(values: dict) -> Candidate:
    return Candidate(values["hands"], values["index"],
                     GameResult(**{k: v for k, v in values.items() if k not in ("hands", "index")}))
