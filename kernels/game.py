"""What playing one deal tells us, in the field names every table and JSON output uses."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ._jit import kernel

WIN = 0
CYCLE = 1
OUTCOME_NAMES = {WIN: "win", CYCLE: "cycle"}

# Columns of the int64 result rows the kernels write (one row per deal).
F_OUTCOME, F_WINNER, F_TRICKS, F_CARDS, F_PRE_TRICKS, F_PRE_CARDS, F_PER_TRICKS, F_PER_CARDS, F_CYCLE_ID = range(9)
N_FIELDS = 9


@kernel(inline="always")
def keeps(cards, tricks, min_cards, min_tricks):
    """Whether a search keeps a finished game (every cycle is kept besides): at least `min_cards` cards
    long or, with min_tricks > 0, at least that many tricks. The one statement of the rule: the CPU and
    GPU sweeps call it in their loops, GameResult.is_candidate here."""
    return cards >= min_cards or (min_tricks > 0 and tricks >= min_tricks)


@dataclass(frozen=True)
class GameResult:
    outcome: str  # "win" or "cycle"
    winner: int | None  # 1-based hand number of the winner; None for a cycle
    tricks: int
    cards: int
    preperiod_tricks: int | None = None
    preperiod_cards: int | None = None
    period_tricks: int | None = None
    period_cards: int | None = None
    cycle_id: str | None = None  # 16 hex digits, see kernels/cycleid.py

    def to_dict(self) -> dict:
        return asdict(self)

    def is_candidate(self, min_cards: int, min_tricks: int = 0) -> bool:
        """What a search keeps: every cycle, and every finite game at least this long."""
        return self.outcome == "cycle" or keeps(self.cards, self.tricks, min_cards, min_tricks)

    @classmethod
    def from_row(cls, row: np.ndarray) -> GameResult:
        """Build from one int64 row written by a kernel (columns F_*)."""
        if int(row[F_OUTCOME]) == WIN:
            return cls("win", int(row[F_WINNER]) + 1, int(row[F_TRICKS]), int(row[F_CARDS]))
        return cls(
            "cycle",
            None,
            int(row[F_TRICKS]),
            int(row[F_CARDS]),
            int(row[F_PRE_TRICKS]),
            int(row[F_PRE_CARDS]),
            int(row[F_PER_TRICKS]),
            int(row[F_PER_CARDS]),
            cycle_id_hex(int(row[F_CYCLE_ID])),
        )


def cycle_id_hex(value: int) -> str:
    """Cycle ids travel as 16 lowercase hex digits (kernels keep them as int64 bit patterns)."""
    return format(value & 0xFFFFFFFFFFFFFFFF, "016x")
