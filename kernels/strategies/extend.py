"""`extend`: backward play from every state of given long games.

From each trick-boundary state of each input game, backward play (kernels/backward.py) finds the
balanced deals whose games pass through that state off the game's own path; those longer than
the original are kept. Shard k = input deals [k*size, (k+1)*size). Feed it the longest games of
another run to lengthen them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..backward import extend
from ..notation import parse_deal
from ..tally import ShardResult, tally_games
from .base import Example, Strategy, Table, bounds, key, keys_of
from .deals import CASELLA, EXAMPLE_DEALS, DealsShard, input_plan


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


@dataclass(frozen=True, kw_only=True)
class ExtendTable(Table):
    max_states: int = key(200_000, "ancestor states visited per game at most")


@dataclass(frozen=True, kw_only=True)
class ExtendShard(DealsShard, keys_of(ExtendTable)):
    """The shard's input deals (numbered from `index_base`), each game's states searched back within
    `max_states`."""


class Extend(Strategy):
    name = "extend"
    summary = "backward play from every state of given long games: longer balanced deals through the same states"
    example = Example(
        search=dict(min_cards=0, shard_size=2),
        table=dict(max_states=5000),
        deals=EXAMPLE_DEALS,
        pin="34dd728347cdd5c5783141efea78586f086ad220d4a7b8d81dfe1c2276602772",
    )
    warm_group = "backward"
    Table = ExtendTable
    Params = ExtendShard
    keys = frozenset({"deals_file"})
    backward = True
    takes_deals_file = True

    def plan(self, search, space, table: ExtendTable):
        return input_plan(self, search, lambda start: ExtendShard(index_base=start, **bounds(search),
                                                                  **table.values()))

    def run(self, space, params: ExtendShard, deals=(), device="cpu"):
        return run_extend(list(deals), index_base=params.index_base, min_cards=params.min_cards,
                          min_tricks=params.min_tricks, max_states=params.max_states)

    def warm_up(self, space, device="cpu"):
        run_extend([CASELLA], max_states=64)


STRATEGY = Extend()
