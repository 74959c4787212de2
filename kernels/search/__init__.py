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
from .climb import run_climb
from .sweep import EXHAUSTIVE, RANDOM, sweep_kernel

__all__ = [
    "Candidate", "ShardResult", "STRATEGIES", "engine_for", "run_strategy", "run_exhaustive", "run_random",
    "run_climb", "run_deals", "run_extend", "run_ancestors",
]


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
    no_penalties = np.zeros(0, dtype=np.uint8)
    while True:
        done = sweep_kernel(EXHAUSTIVE, eng, seq, no_penalties, np.uint64(0), split, done, count, int(min_cards),
                            int(min_tricks), brent, *_tally_args(tally))
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
    seq = np.zeros(space.deck.total, dtype=np.uint8)
    while True:
        j = sweep_kernel(RANDOM, eng, seq, penalties, key, split, j, stop, int(min_cards), int(min_tricks), brent,
                         *_tally_args(tally))
        if j >= stop:
            return ShardResult.from_tally(tally, space)
        grow(tally)



def _tally_results(results, hands, indexes, min_cards: int, min_tricks: int, players: int) -> ShardResult:
    """A ShardResult from games played one by one (deals, extend, ancestors)."""
    from .climb import add_game

    shard = ShardResult(players=players, wins=np.zeros(players, dtype=np.int64))
    for h, r, index in zip(hands, results, indexes):
        add_game(shard, r, h, index)
        if r.is_candidate(min_cards, min_tricks):
            shard.candidates.append(Candidate(h, index, r))
    return shard


def run_deals(deals: list[str], *, index_base: int = 0, min_cards: int = 0, min_tricks: int = 0,
              engine: str = "auto") -> ShardResult:
    """Play an explicit list of deals (`HAND/HAND[/...]` strings), for checking claims and re-scoring.

    Candidate indexes are positions in the whole list (index_base + position).
    """
    from ..notation import format_deal, parse_deal
    from ..play import as_sequence, play_batch
    from ..result import GameResult

    parsed = [parse_deal(d) for d in deals]
    results: list = [None] * len(parsed)
    groups: dict[tuple, list[int]] = {}
    for k, deal in enumerate(parsed):
        groups.setdefault(tuple(len(h) for h in deal), []).append(k)
    for split, members in groups.items():
        rows = play_batch(np.stack([as_sequence(parsed[k])[0] for k in members]), split, engine_name=engine)
        for k, row in zip(members, rows):
            results[k] = GameResult.from_row(row)
    players = max((len(d) for d in parsed), default=2)
    indexes = range(index_base, index_base + len(parsed))
    return _tally_results(results, [format_deal(d) for d in parsed], indexes, min_cards, min_tricks, players)


def run_extend(deals: list[str], *, index_base: int = 0, min_cards: int = 0, min_tricks: int = 0,
               max_states: int = 200_000) -> ShardResult:
    """Backward play from each (finite) deal's game: the longer balanced deals found.

    Candidate indexes are the positions of the deals they were extended from.
    """
    from ..notation import parse_deal
    from .backplay import extend

    hands, results, origin = [], [], []
    for k, text in enumerate(deals):
        for found in extend(parse_deal(text), max_states=max_states).deals:
            if found.hands in hands:
                continue  # reached from an earlier deal of this shard too
            hands.append(found.hands)
            results.append(found.result)
            origin.append(index_base + k)
    return _tally_results(results, hands, origin, min_cards, min_tricks, 2)


def run_ancestors(deal: str, *, part: int = 0, parts: int = 1, limit: int | None = None,
                  max_states: int = 2_000_000) -> ShardResult:
    """The balanced ancestors of a deal's cycle (or of its start), roots part::parts.

    Every ancestor is a candidate (min_cards does not apply: these deals are the answer).
    """
    from ..notation import parse_deal
    from .backplay import ancestors

    found = ancestors(parse_deal(deal), limit=limit, max_states=max_states, part=part, parts=parts)
    return _tally_results([d.result for d in found.deals], [d.hands for d in found.deals],
                          [0] * len(found.deals), 0, 0, 2)


STRATEGIES = ("exhaustive", "random", "climb", "extend", "ancestors", "deals")


def run_strategy(strategy: str, space: DealSpace | None = None, **params) -> ShardResult:
    """Run one shard of a strategy by name (the entry point the cluster's workers call).

    exhaustive: lo, hi; random: seed, shard, count[, start]; climb: seed, shard, count[, pool,
    top, max_states]; deals / extend: deals (strings)[, index_base]; ancestors: deal[, part,
    parts, limit]. All take min_cards and min_tricks where they apply.
    """
    if strategy not in STRATEGIES:
        raise BmnError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    try:
        if strategy == "exhaustive":
            return run_exhaustive(space, **params)
        if strategy == "random":
            return run_random(space, **params)
        if strategy == "climb":
            return run_climb(space, **params)
        if strategy == "deals":
            return run_deals(**params)
        if strategy == "extend":
            return run_extend(**params)
        return run_ancestors(**params)
    except TypeError as error:
        raise BmnError(f"strategy {strategy}: {error}") from None


def warm_up(strategy: str, space: DealSpace) -> None:
    """Run every kernel a strategy uses once on a tiny input: compiles it, or loads it from
    Numba's on-disk cache, so a worker's first real shard is not slowed by compilation."""
    from ..notation import format_deal

    if strategy == "exhaustive":
        run_exhaustive(space, 0, min(space.count, 16), min_cards=0)
    elif strategy == "random":
        run_random(space, 0, 0, 16, min_cards=0)
    elif strategy == "climb":
        run_climb(space, 0, 0, 64, pool=64, top=1, max_states=64, min_cards=0)
    else:
        deal = format_deal(space.cut(space.first())) if space.players == 2 else None
        casella = "---K---Q-KQAJ-----AAJ--J--/----------Q----KQ-J-----KA"
        run_deals([deal or casella, casella])
        if strategy in ("extend", "ancestors"):
            run_extend([casella], max_states=64)
            run_ancestors(casella, max_states=64)
