"""`extend`: backward play from every state of given long games.

From each trick-boundary state of each input game, backward play (kernels/backward.py) finds the
balanced deals whose games pass through that state off the game's own path; those longer than
the original are kept. Shard k = input deals [k*size, (k+1)*size). Feed it the longest games of
another run to lengthen them.
"""

from __future__ import annotations

from ..backward import extend
from ..notation import parse_deal
from .base import Param, Shard, Strategy, bounds, shards_of
from .deals import CASELLA, input_chunk
from ..tally import ShardResult, tally_games


def run_extend(deals: list[str], *, index_base: int = 0, min_cards: int = 0, min_tricks: int = 0,
               max_states: int = 200_000) -> ShardResult:
    """Backward play from each (finite) deal's game: the longer balanced deals found.

    Candidate indexes are the positions of the deals they were extended from.
    """
    hands, results, origin = [], [], []
    seen: set[str] = set()
    for k, text in enumerate(deals):
        for found in extend(parse_deal(text), max_states=max_states).deals:
            if found.hands in seen:
                continue  # reached from an earlier deal of this shard too
            seen.add(found.hands)
            hands.append(found.hands)
            results.append(found.result)
            origin.append(index_base + k)
    return tally_games(results, hands, origin, min_cards, min_tricks, 2)


class Extend(Strategy):
    name = "extend"
    summary = "backward play from every state of given long games: longer balanced deals through the same states"
    params = (Param("max_states", 200_000, "ancestor states visited per game at most"),)
    keys = frozenset({"deals_file"})
    backward = True
    takes_deals_file = True

    def shard_count(self, config, space, params):
        return shards_of(config.input_count, config.shard_size)

    def shard(self, config, space, params, k):
        start, chunk = input_chunk(config, k)
        return Shard(k, self.name, {"index_base": start, **bounds(config), **params}, chunk)

    wrapper = staticmethod(run_extend)

    def warm_up(self, space):
        run_extend([CASELLA], max_states=64)


STRATEGY = Extend()
