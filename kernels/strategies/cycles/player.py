"""Playing the factory's rows: any cut, hand 1 leading, one after another on this core."""

from __future__ import annotations

import numpy as np

from ...decks import Deck
from ...engines import default_brent_start, engine_named, pick_engine, play_rows
from ...game import CYCLE, F_OUTCOME, N_FIELDS


class Player:
    """Plays rows of one size (any cut; at most the target deck's penalty cards and `slack` more)
    on this core."""

    def __init__(self, total: int, target: Deck, slack: int = 0):
        self.total = total
        penalty = min(total, target.penalty_cards + slack)
        self.engine = engine_named(pick_engine(2, total, penalty, target.max_value)).id
        self.brent = default_brent_start(total)
        self.games = 0
        self.cycles = 0

    def play(self, rows: np.ndarray, cuts: np.ndarray) -> np.ndarray:
        out = np.zeros((rows.shape[0], N_FIELDS), dtype=np.int64)
        if rows.shape[0]:
            splits = np.stack((cuts, self.total - cuts), axis=1).astype(np.int64)
            play_rows(self.engine, rows, splits, self.brent, out)
        self.games += rows.shape[0]
        self.cycles += int((out[:, F_OUTCOME] == CYCLE).sum())
        return out
