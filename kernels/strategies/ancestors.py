"""`ancestors`: every balanced deal whose game enters a deal's cycle (or passes through its start).

Backward play (kernels/backward.py) from every state of the cycle; the cycle's states are cut
into `parts` shards (shard k takes the states r with r % parts == k), which run in parallel.
Every deal found is replayed forward and checked; all of them are candidates (min_cards does
not apply: these deals are the answer).
"""

from __future__ import annotations

from ..backward import DEFAULT_MAX_STATES, ancestors
from ..notation import parse_deal
from .base import Param, Shard, Strategy
from .deals import CASELLA
from ..tally import ShardResult, tally_games


def run_ancestors(deal: str, *, part: int = 0, parts: int = 1, limit: int | None = None,
                  max_states: int = DEFAULT_MAX_STATES) -> ShardResult:
    """The balanced ancestors of a deal's cycle (or of its start), roots part::parts."""
    found = ancestors(parse_deal(deal), limit=limit, max_states=max_states, part=part, parts=parts)
    return tally_games([d.result for d in found.deals], [d.hands for d in found.deals], [0] * len(found.deals),
                       0, 0, 2)


class Ancestors(Strategy):
    name = "ancestors"
    summary = "every balanced deal entering a cycle, the cycle's states cut into parts"
    params = (
        Param("parts", 1, "shards: cycle states r with r % parts == k"),
        Param("limit", None, "deals kept per shard at most (none: all)", optional=True),
        Param("max_states", DEFAULT_MAX_STATES, "ancestor states per shard at most"),
    )
    keys = frozenset({"deal"})
    backward = True
    needs_deal = True

    def shard_count(self, config, space, params):
        return params["parts"]

    def shard(self, config, space, params, k):
        return Shard(k, self.name, {"deal": config.deal, "part": k, "parts": params["parts"], "limit": params["limit"],
                                    "max_states": params["max_states"]})

    wrapper = staticmethod(run_ancestors)

    def warm_up(self, space):
        run_ancestors(CASELLA, max_states=64)


STRATEGY = Ancestors()
