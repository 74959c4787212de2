"""Playing the factory's rows: any cut, hand 1 leading, one after another on this core."""

from __future__ import annotations

import numpy as np

from ..._jit import kernel
from ...decks import Deck
from ...engines import ENGINE_IDS, pick_engine, play_one
from ...engines.percard import default_brent_start, new_workspace
from ...game import CYCLE, F_OUTCOME, N_FIELDS


@kernel
def play_rows(engine, rows, cuts, brent_start, out):
    """Play row i with hand 1 holding its first cuts[i] cards and leading, one after another."""
    total = rows.shape[1]
    split = np.zeros(2, dtype=np.int64)
    hands, head, size, still_in, pile, enc = new_workspace(2, total)
    for i in range(rows.shape[0]):
        split[0] = cuts[i]
        split[1] = total - cuts[i]
        play_one(engine, rows[i], split, 0, brent_start, hands, head, size, still_in, pile, enc, out[i])


class Player:
    """Plays rows of one size (any cut; at most the target deck's penalty cards and `slack` more)
    on this core."""

    def __init__(self, total: int, target: Deck, slack: int = 0):
        self.total = total
        penalty = min(total, target.penalty_cards + slack)
        self.engine = ENGINE_IDS[pick_engine(2, total, penalty, target.max_value)]
        self.brent = default_brent_start(total)
        self.games = 0
        self.cycles = 0

    def play(self, rows: np.ndarray, cuts: np.ndarray) -> np.ndarray:
        out = np.zeros((rows.shape[0], N_FIELDS), dtype=np.int64)
        if rows.shape[0]:
            play_rows(self.engine, rows, cuts, self.brent, out)
        self.games += rows.shape[0]
        self.cycles += int((out[:, F_OUTCOME] == CYCLE).sum())
        return out
