"""Search strategies: each plays one shard and returns a ShardResult (kernels/search/result.py).

Every strategy is deterministic: the same (strategy, parameters, seed, shard) gives the same
result on any machine.
"""

from __future__ import annotations

import numpy as np

from ..dealspace import DealSpace
from ..engine import default_brent_start
from ..errors import BmnError
from ..play import pick_engine
from ..rng import stream_key
from .common import ENGINE_IDS, grow, new_tally
from .result import Candidate, ShardResult
from .sweep import exhaustive_kernel, random_kernel

__all__ = ["Candidate", "ShardResult", "run_exhaustive", "run_random", "engine_for"]


def engine_for(space: DealSpace, engine: str = "auto") -> int:
    deck = space.deck
    return ENGINE_IDS[pick_engine(space.players, deck.total, deck.penalty_cards, deck.max_value, engine)]


def _tally_args(tally: dict) -> tuple:
    return (
        tally["stats"], tally["wins"], tally["histogram"], tally["cand_deals"], tally["cand_rows"],
        tally["cand_index"], tally["longest_deal"], tally["longest_row"],
    )


def run_exhaustive(space: DealSpace, lo: int, hi: int, *, min_cards: int, min_tricks: int = 0,
                   engine: str = "auto") -> ShardResult:
    """Every deal of ranks [lo, hi), stepping from one deal to the next (no per-deal unranking).

    Candidate indexes are offsets from `lo` (rank = lo + index).
    """
    lo, hi = int(lo), int(hi)
    space.check_range(lo, hi)
    count = hi - lo
    tally = new_tally(space.deck.total, space.players)
    if count == 0:
        return ShardResult.from_tally(tally, space)
    if count >= 2**62:
        raise BmnError(f"a shard of {count} deals is too large; cut the range into shards")
    seq = space.unrank_sequence(lo)
    split = np.array(space.split, dtype=np.int64)
    eng = engine_for(space, engine)
    brent = default_brent_start(space.deck.total)
    done = 0
    while True:
        done = exhaustive_kernel(eng, seq, split, count, done, int(min_cards), int(min_tricks), brent,
                                 *_tally_args(tally))
        if done >= count:
            return ShardResult.from_tally(tally, space)
        grow(tally)


def run_random(space: DealSpace, seed: int, shard: int, count: int, *, start: int = 0, min_cards: int,
               min_tricks: int = 0, engine: str = "auto") -> ShardResult:
    """Deals start..start+count-1 of the uniform random stream of (seed, shard).

    Candidate indexes are deal numbers in the stream, so any candidate can be regenerated.
    """
    tally = new_tally(space.deck.total, space.players)
    penalties = np.array([v for v in space.deck.cards() if v], dtype=np.uint8)
    split = np.array(space.split, dtype=np.int64)
    eng = engine_for(space, engine)
    brent = default_brent_start(space.deck.total)
    key = stream_key(int(seed), int(shard))
    j, stop = int(start), int(start) + int(count)
    while True:
        j = random_kernel(eng, penalties, split, key, j, stop, int(min_cards), int(min_tricks), brent,
                          *_tally_args(tally))
        if j >= stop:
            return ShardResult.from_tally(tally, space)
        grow(tally)
