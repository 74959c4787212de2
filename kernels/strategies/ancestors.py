"""`ancestors`: every balanced deal whose game enters a deal's cycle (or passes through its start).

Backward play (kernels/backward.py) from every state of the cycle; the cycle's states are cut
into `parts` shards (shard k takes the states r with r % parts == k), which run in parallel.
Every deal found is replayed forward and checked; all of them are candidates (min_cards does
not apply: these deals are the answer).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..backward import DEFAULT_MAX_STATES, ancestors
from ..notation import parse_deal
from ..tally import ShardResult, tally_games
from .base import Example, Shard, ShardParams, ShardPlan, Strategy, Table, key, keys_of
from .deals import CASELLA


def run_ancestors(deal: str, *, part: int = 0, parts: int = 1, limit: int | None = None,
                  max_states: int = DEFAULT_MAX_STATES) -> ShardResult:
    """The balanced ancestors of a deal's cycle (or of its start), roots part::parts."""
    found = ancestors(parse_deal(deal), limit=limit, max_states=max_states, part=part, parts=parts)
    return tally_games([d.result for d in found.deals], [d.hands for d in found.deals], [0] * len(found.deals),
                       0, 0, 2)


@dataclass(frozen=True, kw_only=True)
class AncestorsTable(Table):
    parts: int = key(1, "shards: cycle states r with r % parts == k")
    limit: int | None = key(None, "deals kept per shard at most (none: all)")
    max_states: int = key(DEFAULT_MAX_STATES, "ancestor states per shard at most")


@dataclass(frozen=True, kw_only=True)
class AncestorsShard(ShardParams, keys_of(AncestorsTable)):
    """The balanced ancestors of `deal`'s cycle from its states r with r % parts == part."""

    deal: str
    part: int


class Ancestors(Strategy):
    name = "ancestors"
    summary = "every balanced deal entering a cycle, the cycle's states cut into parts"
    example = Example(
        search=dict(deal=CASELLA),
        table=dict(parts=2),
        pin="5f94fb6b648d14b4a40ab47a46f05fdb59271d6d0327ed9262e20923f252727e",
    )
    warm_group = "backward"
    Table = AncestorsTable
    Params = AncestorsShard
    keys = frozenset({"deal"})
    backward = True
    needs_deal = True

    def plan(self, search, space, table: AncestorsTable):
        return ShardPlan(table.parts, lambda k: Shard(k, self.name, AncestorsShard(deal=search.deal, part=k,
                                                                                   **table.values())))

    def run(self, space, params: AncestorsShard, deals=(), device="cpu"):
        return run_ancestors(params.deal, part=params.part, parts=params.parts, limit=params.limit,
                             max_states=params.max_states)

    def warm_up(self, space, device="cpu"):
        run_ancestors(CASELLA, max_states=64)


STRATEGY = Ancestors()
