"""What a worker returns for a shard it played: one `PlayedShard`, its candidate deals and its figures.

Apart from summary.py, which makes the run's record of a shard from the figures (and its Arrow rows),
and from tables.py, which makes the games rows from the candidates, so that the actors, which only
play and count, never import pyarrow (a tenth of a second of every actor's start).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from kernels.game import GameResult
from kernels.strategies import Candidate, CycleRow, Shard, ShardResult


@dataclass(frozen=True, kw_only=True)
class ShardFigures:
    """A shard's figures: those of its result the summary tables need (a few hundred numbers at most),
    where it ran, how long it took."""

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
    longest: Candidate | None = None  # the longest finite game (the first met among equals)
    cycle_ids: tuple[str, ...] = ()  # every cycle a candidate enters or the shard reported
    cycle_rows: tuple[CycleRow, ...] | None = None  # the cycles it reported (None: no result, or not recorded)

    @classmethod
    def from_result(cls, result: ShardResult, *, elapsed_s: float, worker: str) -> "ShardFigures":
        return cls(
            deals=result.deals, cards=result.cards, max_cards=result.max_cards, cycles=result.cycles,
            candidates=len(result.candidates), elapsed_s=round(float(elapsed_s), 4), worker=worker,
            finished_at=time.time(), wins=tuple(int(w) for w in result.wins),
            histogram={int(k): int(result.histogram[k]) for k in np.nonzero(result.histogram)[0]},
            longest=result.longest,
            cycle_ids=tuple(sorted({c.result.cycle_id for c in result.candidates if c.result.cycle_id}
                                   | {row.cycle_id for row in result.cycle_rows})),
            cycle_rows=tuple(result.cycle_rows),
        )


class PlayedShard(NamedTuple):
    """What a worker returns for one shard: its candidate deals (plain values: the driver makes them the
    shard's games rows, `tables.games_table`), the deck they are of and, for a rank range, the rank of its
    first deal; and its figures."""

    shard: int
    strategy: str
    candidates: list[Candidate]
    deck: str
    rank_base: int | None
    figures: ShardFigures

    @classmethod
    def of(cls, shard: Shard, result: ShardResult, *, deck: str, elapsed_s: float, worker: str) -> "PlayedShard":
        """`deck`: the run's, where the result does not name one of its own (the atlas's decks do)."""
        return cls(shard.id, shard.strategy, result.candidates, result.deck or deck, result.rank_base,
                   ShardFigures.from_result(result, elapsed_s=elapsed_s, worker=worker))


def game_json(game: Candidate) -> dict:
    """A game as the run's JSON files write it (the longest in a summary, status, progress, a report):
    its hands, where it was met, its result's fields."""
    return {"hands": game.hands, "index": game.index, **game.result.to_dict()}


def game_of_json(values: dict) -> Candidate:
    return Candidate(values["hands"], values["index"],
                     GameResult(**{k: v for k, v in values.items() if k not in ("hands", "index")}))
