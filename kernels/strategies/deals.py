"""`deals`: play an explicit list of deals, for checking claims and re-scoring candidates.

Shard k = input deals [k*size, (k+1)*size) of the run's deals file (kept in the run as
inputs.txt). Deals of different shapes (splits, player counts) may be mixed in one file.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..game import GameResult
from ..notation import format_deal, parse_deal
from ..play import as_sequence, play_batch
from ..tally import ShardResult, tally_games
from .base import Example, Search, Shard, ShardParams, ShardPlan, Strategy, bounds, shards_of

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


@dataclass(frozen=True, kw_only=True)
class DealsShard(ShardParams):
    """The shard's input deals (carried by the Shard), numbered from `index_base` in the whole list; the
    finite games of at least `min_cards` cards (or `min_tricks`) kept."""

    index_base: int
    min_cards: int
    min_tricks: int


def input_chunk(search: Search, k: int) -> tuple[int, tuple[str, ...]]:
    """Shard k's slice of the run's input deals: (index of its first deal, the deals)."""
    start = k * search.shard_size
    return start, tuple(search.input_deals[start:start + search.shard_size])


def input_plan(strategy: Strategy, search: Search, params) -> ShardPlan:
    """Shard k = input deals [k*size, (k+1)*size), with `params(index_base)` (deals, extend)."""
    def shard(k: int) -> Shard:
        start, chunk = input_chunk(search, k)
        return Shard(k, strategy.name, params(start), chunk)
    return ShardPlan(shards_of(search.inputs(), search.shard_size), shard)


# Three deals (the second a cycle): the deals and extend strategies' example.
EXAMPLE_DEALS = ("-J------Q------AAA-----QQ-/K----JA-----------KQ-K-JJK",
                 CASELLA,
                 "Q-Q-Q--J------J---K----AA-/---K-JA----Q-K--J-A------K")


class Deals(Strategy):
    name = "deals"
    summary = "plays an explicit list of deals: checking claims, re-scoring"
    example = Example(
        search=dict(min_cards=0, shard_size=2),
        deals=EXAMPLE_DEALS,
        pin="ab0568e5abe8a6d61d95ccbd73a8eda1364d67fb51228e8dce4b35ae8755ed1e",
    )
    warm_group = "backward"
    keys = frozenset({"deals_file"})
    takes_deals_file = True
    Params = DealsShard

    def plan(self, search, space, table):
        return input_plan(self, search, lambda start: DealsShard(index_base=start, **bounds(search)))

    def run(self, space, params: DealsShard, deals=(), device="cpu"):
        return run_deals(list(deals), index_base=params.index_base, min_cards=params.min_cards,
                         min_tricks=params.min_tricks)

    def warm_up(self, space, device="cpu"):
        first = format_deal(space.cut(space.first())) if space.players == 2 else CASELLA
        run_deals([first, CASELLA])


STRATEGY = Deals()
