"""`random`: uniformly random deals from a counter-based stream keyed by (seed, shard).

The baseline search, and the one whose histogram estimates the distribution of game lengths.
Shard k = deals 0..size-1 of the stream (seed, k) (kernels/rng.py): deal j of shard k is a pure
function of (seed, k, j), so any candidate can be regenerated from its index. The kernel is the
sweep kernel (kernels/strategies/sweep.py).
"""

from __future__ import annotations

from .base import ShardSpec, Strategy, bounds, shards_of
from .sweep import run_random
from .tally import ShardResult


class Random(Strategy):
    name = "random"
    summary = "uniformly random deals from a counter-based stream keyed by (seed, shard)"
    keys = frozenset({"deals", "seed"})

    def shard_count(self, config, space, params):
        return shards_of(config.deals, config.shard_size)

    def shard(self, config, space, params, k):
        count = min(config.shard_size, config.deals - k * config.shard_size)
        return ShardSpec({"seed": config.seed, "shard": k, "count": count, **bounds(config)})

    def run(self, space, params, deals) -> ShardResult:
        return run_random(space, **params)

    def warm_up(self, space):
        run_random(space, 0, 0, 16, min_cards=0)


STRATEGY = Random()
