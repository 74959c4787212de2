"""The shard plan: a pure function of the config, never listed in full.

Shard k of a plan is computed on demand (`Plan.shard(k)`), so a plan over the 6.5e20 deals of the
standard deck costs nothing; a run records the shards it finished, never the planned ones. How a
search is cut into shards is the strategy's own business (its `plan`, from the search's plain values
and its typed table: kernels/strategies/); the plan asks it once per run and keeps what it made (the
atlas's layout of decks and splits, say), so every shard is made from it.
"""

from __future__ import annotations

from kernels.strategies import Shard, ShardPlan

from .config import SearchConfig

__all__ = ["Plan", "Shard"]


class Plan:
    def __init__(self, config: SearchConfig):
        self.config = config
        self.search = config.search()
        self.space = config.space()
        self.strategy = config.strategy_def
        self.table = config.table()
        self.shards: ShardPlan = self.strategy.plan(self.search, self.space, self.table)
        self.count = self.shards.count

    def shard(self, k: int) -> Shard:
        return self.shards.shard(k)

    def describe(self) -> str:
        """What the run searches, in a few words (`bmn status`)."""
        return self.strategy.describe(self.search, self.space, self.table)
