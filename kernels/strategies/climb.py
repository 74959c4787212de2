"""`climb`: a local search for long finite games whose neighbourhood is backward play.

Why not swaps and moves? Measured on the standard deck: the 672 single-swap neighbours of the
8344-card record average 244 cards, as random deals do (254), and none exceeds 1600. A deal's
game is decided by its first few dozen cards, so any change to the deal is a new random game;
annealing over swaps or moves is random sampling with extra steps (benchmarks/README.md).

The neighbours that do resemble a long game are the deals whose games *merge* into it: the
balanced ancestors of its trick-boundary states, found by backward play. They share the long
game's whole future from the merge point, so a long game's neighbours are long too. Every state
has one successor, so all the games merging into a game form one tree (the ancestors of its last
state); one backward search explores that tree, and repeating it from the best deal found
explores nothing new. So the climb is, for each round of one shard:

1. play `pool` uniformly random deals (the `random` strategy's stream for this seed and shard,
   continuing where the last round stopped) and keep the `top` longest finite games;
2. climb from each of them that is at least `ratio` times as long as the longest game of the
   shard so far to the longest balanced deal of its merge tree (kernels/backward.py,
   `extend`, within `max_states` ancestor states), and record every longer deal found as a
   candidate. A climb gains up to a few tens of percent, so a game far shorter than the
   shard's best cannot become its best: skipping it keeps the climbing to a few percent of
   the time.

Everything is counter-based and budgeted by counts, so the same (seed, shard, parameters) give
the same result on any machine. It needs two players and equal hands (backward play reports
balanced deals). `benchmarks/climb_vs_random.py` compares it with `random` at equal CPU time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..backward import extend
from ..dealspace import DealSpace
from ..errors import BmnError
from ..notation import parse_deal
from ..tally import ShardResult
from .base import Example, StreamShard, StreamShards, Table, key, keys_of
from .rounds import Rounds


@dataclass(frozen=True, kw_only=True)
class ClimbTable(Table):
    pool: int = key(200_000, "deals per round")
    top: int = key(4, "games climbed per round", minimum=0)
    max_states: int = key(50_000, "backward-play budget per climb")
    ratio: float = key(0.75, "climb only games at least this fraction of the shard's best", minimum=0, maximum=1)


@dataclass(frozen=True, kw_only=True)
class ClimbShard(StreamShard, keys_of(ClimbTable)):
    """Deals of the stream (seed, shard) in rounds of `pool`, the `top` longest of each climbed."""


CLIMB_DEFAULTS = ClimbTable().values()


def run_climb(space: DealSpace, seed: int, shard: int, count: int, *, min_cards: int, min_tricks: int = 0,
              pool: int = CLIMB_DEFAULTS["pool"], top: int = CLIMB_DEFAULTS["top"],
              max_states: int = CLIMB_DEFAULTS["max_states"], ratio: float = CLIMB_DEFAULTS["ratio"],
              engine: str = "auto") -> ShardResult:
    """`count` random deals in rounds of `pool`, the `top` longest of each round climbed by backward play.

    Candidate indexes are deal numbers in the shard's random stream; a deal found by climbing
    carries the index of the deal it was climbed from.
    """
    if space.players != 2 or space.split[0] != space.split[1]:
        raise BmnError("climb climbs by backward play, which needs two players with equal hands")
    if pool < 1 or top < 0 or max_states < 1 or not 0 <= ratio <= 1:
        raise BmnError("climb needs pool >= 1, top >= 0, max_states >= 1 and 0 <= ratio <= 1")
    rounds = Rounds(space, seed, shard, count, pool, min_cards=min_cards, min_tricks=min_tricks, engine=engine)
    guess = None  # a length threshold that let the previous round keep its top games
    while rounds.left:
        keep = min_cards if guess is None else min(min_cards, guess)
        round_result = rounds.play(keep)
        if top == 0:
            continue
        need = _threshold(round_result.histogram, top)
        kept = round_result
        if need < keep:  # the guess was too high: replay the round keeping enough games
            kept = rounds.replay(need)
        seedlings = sorted((c for c in kept.candidates if c.result.outcome == "win" and c.result.cards >= need),
                           key=lambda c: (-c.result.cards, c.index))[:top]
        best = rounds.result.max_cards
        seedlings = [c for c in seedlings if c.result.cards >= ratio * best]
        guess = _threshold(round_result.histogram, 4 * top)
        for seedling in seedlings:
            for found in extend(parse_deal(seedling.hands), max_states=max_states).deals:
                rounds.add(found.result, found.hands, seedling.index)
    return rounds.finish()


def _threshold(histogram: np.ndarray, k: int) -> int:
    """The largest length L such that at least k finite games lasted L cards or more."""
    need = k
    for cards in range(len(histogram) - 1, -1, -1):
        need -= int(histogram[cards])
        if need <= 0:
            return cards
    return 0


class Climb(StreamShards):
    name = "climb"
    summary = "rounds of random deals; the longest climbed by backward play to the longest deal merging into them"
    example = Example(
        search=dict(deals=40_000, shard_size=20_000, min_cards=1200, seed=3),
        table=dict(pool=10_000, top=2, max_states=5000),
        pin="a1ef97b3656d1034f65d06e854c04cec1e7d446ec99be6a53f85b11eb1d1e675",
    )
    warm_group = "both"
    Table = ClimbTable
    Params = ClimbShard
    backward = True

    def run(self, space, params: ClimbShard, deals=(), device="cpu"):
        return run_climb(space, params.seed, params.shard, params.count, min_cards=params.min_cards,
                         min_tricks=params.min_tricks, pool=params.pool, top=params.top, max_states=params.max_states,
                         ratio=params.ratio)

    def warm_up(self, space, device="cpu"):
        run_climb(space, 0, 0, 64, pool=64, top=1, max_states=64, min_cards=0)


STRATEGY = Climb()
