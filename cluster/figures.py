"""What a worker reports of a shard it played, besides its games: `ShardFigures`.

Apart from summary.py, which makes the run's record of a shard from them (and its Arrow rows), so
that the actors, which only make figures, never import pyarrow (a tenth of a second of every
actor's start).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from kernels.strategies import CycleRow, ShardResult


@dataclass(frozen=True, kw_only=True)
class ShardFigures:
    """What a worker reports of a shard it played: its result's figures (those the summary tables need),
    where it ran, how long it took. Its games travel beside it, as rows of the games table."""

    deals: int = 0
    cards: int = 0
    max_cards: int = 0
    cycles: int = 0
    candidates: int = 0
    elapsed_s: float = 0.0
    worker: str = ""
    finished_at: float = 0.0
    histogram: dict[int, int] = field(default_factory=dict)  # finite games by length in cards (non-zero only)
    wins: tuple[int, ...] = ()  # finite games won by each hand
    longest: dict | None = None  # the longest finite game: hands, index and the fields of its GameResult
    cycle_ids: tuple[str, ...] = ()  # every cycle a candidate enters or the shard reported
    cycle_rows: tuple[CycleRow, ...] | None = None  # the cycles it reported (None: no result, or not recorded)

    @classmethod
    def from_result(cls, result: ShardResult, *, elapsed_s: float, worker: str) -> "ShardFigures":
        return cls(
            deals=result.deals, cards=result.cards, max_cards=result.max_cards, cycles=result.cycles,
            candidates=len(result.candidates), elapsed_s=round(float(elapsed_s), 4), worker=worker,
            finished_at=time.time(), wins=tuple(int(w) for w in result.wins),
            histogram={int(k): int(result.histogram[k]) for k in np.nonzero(result.histogram)[0]},
            longest=None if result.longest is None else {
                "hands": result.longest.hands, "index": result.longest.index, **result.longest.result.to_dict()},
            cycle_ids=tuple(sorted({c.result.cycle_id for c in result.candidates if c.result.cycle_id}
                                   | {row.cycle_id for row in result.cycle_rows})),
            cycle_rows=tuple(result.cycle_rows),
        )
