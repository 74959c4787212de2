"""Playing deals from Python: one deal, or a batch in parallel, with the right kernel for each.

`play(deal)` returns a GameResult; `play_batch(deals, split)` takes an (N, cards) uint8 array of
card sequences cut by `split` and returns the (N, 9) int64 result rows (columns in game.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .engines import ENGINES, default_brent_start, engine_named, pick_engine
from .errors import BmnError
from .game import N_FIELDS, GameResult
from .notation import MAX_VALUE, check_deal

__all__ = ["ENGINES", "as_sequence", "pick_engine", "play", "play_batch"]


def as_sequence(deal: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """A deal as (card sequence uint8, hand sizes int64), the form the kernels take."""
    seq = np.array([v for hand in deal for v in hand], dtype=np.uint8)
    split = np.array([len(hand) for hand in deal], dtype=np.int64)
    return seq, split


def play(deal: Sequence[Sequence[int]], leader: int = 0, engine_name: str = "auto") -> GameResult:
    """Play one deal (hand 1 leads unless `leader` says otherwise, 0-based)."""
    check_deal(deal)
    seq, split = as_sequence(deal)
    rows = play_batch(seq[None, :], split, leader=leader, engine_name=engine_name)
    return GameResult.from_row(rows[0])


def play_batch(
    deals: np.ndarray, split: Sequence[int], leader: int = 0, engine_name: str = "auto"
) -> np.ndarray:
    """Play every row of `deals` in parallel (all threads); returns int64 rows (N, 9)."""
    deals = np.ascontiguousarray(deals, dtype=np.uint8)
    split_arr = np.asarray(split, dtype=np.int64)
    if deals.ndim != 2 or int(split_arr.sum()) != deals.shape[1]:
        raise BmnError("deals must be an (N, cards) array whose rows the split cuts exactly")
    if not 0 <= leader < len(split_arr):
        raise BmnError(f"leader must be a hand number between 1 and {len(split_arr)}")
    out = np.zeros((deals.shape[0], N_FIELDS), dtype=np.int64)
    if deals.shape[0] == 0:
        return out
    if int(deals.max()) > MAX_VALUE:
        raise BmnError(f"card values must be between 0 and {MAX_VALUE}")
    penalty_cards = int((deals != 0).sum(axis=1).max())
    engine = engine_named(pick_engine(len(split_arr), deals.shape[1], penalty_cards, int(deals.max()), engine_name))
    engine.batch(deals, split_arr, leader, default_brent_start(deals.shape[1]), out)
    return out
