"""`deals`: play an explicit list of deals, for checking claims and re-scoring candidates.

Shard k = input deals [k*size, (k+1)*size) of the run's deals file (kept in the run as
inputs.txt). Deals of different shapes (splits, player counts) may be mixed in one file.
"""

from __future__ import annotations

import numpy as np

from ..game import GameResult
from ..notation import format_deal, parse_deal
from ..play import as_sequence, play_batch
from .base import Shard, Strategy, bounds, shards_of
from ..tally import ShardResult, tally_games

CASELLA = "---K---Q-KQAJ-----AAJ--J--/----------Q----KQ-J-----KA"  # a cycle, for warming up


def run_deals(deals: list[str], *, index_base: int = 0, min_cards: int = 0, min_tricks: int = 0,
              engine: str = "auto") -> ShardResult:
    """Play an explicit list of deals (`HAND/HAND[/...]` strings).

    Candidate indexes are positions in the whole list (index_base + position).
    """
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
    return tally_games(results, [format_deal(d) for d in parsed], indexes, min_cards, min_tricks, players)


def input_chunk(config, k: int) -> tuple[int, tuple[str, ...]]:
    """Shard k's slice of the run's input deals: (index of its first deal, the deals)."""
    start = k * config.shard_size
    return start, tuple(config.input_deals[start:start + config.shard_size])


class Deals(Strategy):
    name = "deals"
    summary = "plays an explicit list of deals: checking claims, re-scoring"
    keys = frozenset({"deals_file"})
    takes_deals_file = True

    def shard_count(self, config, space, params):
        return shards_of(config.input_count, config.shard_size)

    def shard(self, config, space, params, k):
        start, chunk = input_chunk(config, k)
        return Shard(k, self.name, {"index_base": start, **bounds(config)}, chunk)

    wrapper = staticmethod(run_deals)

    def warm_up(self, space):
        first = format_deal(space.cut(space.first())) if space.players == 2 else CASELLA
        run_deals([first, CASELLA])


STRATEGY = Deals()
