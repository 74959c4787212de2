"""The shard plan: a pure function of the config, never listed in full.

Shard k of a plan is computed on demand (`Plan.shard(k)`), so a plan over the 6.5e20 deals of
the standard deck costs nothing; a run records the shards it finished, never the planned ones.
How a search is cut into shards is the strategy's own business (`shard_count` and `shard` in its
module under kernels/strategies/); the plan only asks it, and hands out the `Shard` it makes.
"""

from __future__ import annotations

from kernels.strategies import Shard

from .config import SearchConfig

__all__ = ["Plan", "Shard"]


class Plan:
    def __init__(self, config: SearchConfig):
        self.config = config
        self.space = config.space()
        self.strategy = config.strategy_def
        self.params = config.strategy_params()
        self.count = self.strategy.shard_count(config, self.space, self.params)

    def shard(self, k: int) -> Shard:
        if not 0 <= k < self.count:
            raise IndexError(k)
        return self.strategy.shard(self.config, self.space, self.params, k)
