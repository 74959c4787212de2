"""A shard's result: its statistics (mergeable by addition) and its candidate games."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..dealspace import DealSpace
from ..notation import format_deal
from ..result import GameResult
from .common import CARDS, CYCLES, DEALS, HIST_BINS, LONGEST_INDEX, N_CAND


@dataclass
class Candidate:
    """A deal worth keeping: a long finite game or a cycle."""

    hands: str  # HAND/HAND[/...]
    index: int  # where the shard met it: offset in the rank range, or deal number in the stream
    result: GameResult


@dataclass
class ShardResult:
    players: int
    deals: int = 0
    cards: int = 0
    cycles: int = 0
    wins: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    histogram: np.ndarray = field(default_factory=lambda: np.zeros(HIST_BINS, dtype=np.int64))
    longest: Candidate | None = None
    candidates: list[Candidate] = field(default_factory=list)

    @property
    def max_cards(self) -> int:
        return self.longest.result.cards if self.longest else 0

    def summary(self) -> dict:
        return {
            "deals": self.deals,
            "cards": self.cards,
            "cycles": self.cycles,
            "wins": [int(w) for w in self.wins],
            "max_cards": self.max_cards,
            "candidates": len(self.candidates),
        }

    @classmethod
    def from_tally(cls, tally: dict, space: DealSpace, rows_to_results=GameResult.from_row) -> "ShardResult":
        stats = tally["stats"]
        n_cand = int(stats[N_CAND])
        letters = space.deck.max_value <= 4
        candidates = [
            Candidate(
                format_deal(space.cut(tally["cand_deals"][k]), letters),
                int(tally["cand_index"][k]),
                rows_to_results(tally["cand_rows"][k]),
            )
            for k in range(n_cand)
        ]
        longest = None
        if stats[LONGEST_INDEX] >= 0:
            longest = Candidate(
                format_deal(space.cut(tally["longest_deal"]), letters),
                int(stats[LONGEST_INDEX]),
                rows_to_results(tally["longest_row"]),
            )
        return cls(
            players=space.players,
            deals=int(stats[DEALS]),
            cards=int(stats[CARDS]),
            cycles=int(stats[CYCLES]),
            wins=tally["wins"].copy(),
            histogram=tally["histogram"].copy(),
            longest=longest,
            candidates=candidates,
        )
