"""The shard plan: a pure function of the config, never listed in full.

Shard k of a plan is computed on demand (`Plan.shard(k)`), so a plan over the 6.5e20 deals of
the standard deck costs nothing; a run records the shards it finished, never the planned ones.

    exhaustive  shard k = ranks [lo + k*size, lo + (k+1)*size) of the range
    random      shard k = deals 0..size-1 of the random stream (seed, k)
    climb       shard k = `size` deals of the climb of stream (seed, k)
    deals       shard k = input deals [k*size, (k+1)*size)
    extend      shard k = input deals [k*size, (k+1)*size), each extended by backward play
    ancestors   shard k = the cycle states r with r % parts == k
"""

from __future__ import annotations

from dataclasses import dataclass

from kernels.search import run_strategy

from .config import SearchConfig, parse_range


@dataclass(frozen=True)
class Shard:
    id: int
    strategy: str
    params: dict  # JSON-able: what this shard computes (for the manifest and the worker)
    deals: tuple[str, ...] = ()  # input deals, for the deals and extend strategies


class Plan:
    def __init__(self, config: SearchConfig):
        self.config = config
        self.space = config.space()
        c = config
        if c.strategy == "exhaustive":
            self.lo, self.hi = parse_range(c.range) if c.range else (0, self.space.count)
            self.count = -(-(self.hi - self.lo) // c.shard_size)
        elif c.strategy in ("random", "climb"):
            self.count = -(-c.deals // c.shard_size)
        elif c.strategy in ("deals", "extend"):
            self.count = -(-c.input_count // c.shard_size)
        else:
            self.count = c.strategy_params()["parts"]

    @property
    def deals_planned(self) -> int | None:
        """Deals the plan plays in all, where that is known in advance."""
        c = self.config
        if c.strategy == "exhaustive":
            return self.hi - self.lo
        if c.strategy in ("random", "climb"):
            return c.deals
        if c.strategy == "deals":
            return c.input_count
        return None

    def shard(self, k: int) -> Shard:
        if not 0 <= k < self.count:
            raise IndexError(k)
        c = self.config
        bounds = {"min_cards": c.min_cards, "min_tricks": c.min_tricks}
        size = c.shard_size
        if c.strategy == "exhaustive":
            lo = self.lo + k * size
            return Shard(k, c.strategy, {"lo": lo, "hi": min(self.hi, lo + size), **bounds})
        if c.strategy in ("random", "climb"):
            count = min(size, c.deals - k * size)
            params = {"seed": c.seed, "shard": k, "count": count, **bounds}
            if c.strategy == "climb":
                params.update(c.strategy_params())
            return Shard(k, c.strategy, params)
        if c.strategy in ("deals", "extend"):
            start = k * size
            chunk = tuple(c.input_deals[start:start + size])
            params = {"index_base": start, **bounds}
            if c.strategy == "extend":
                params.update(c.strategy_params())
            return Shard(k, c.strategy, params, chunk)
        p = c.strategy_params()
        return Shard(k, c.strategy, {"deal": c.deal, "part": k, "parts": p["parts"], "limit": p["limit"],
                                     "max_states": p["max_states"]})


def run_shard(config_space_deck: str, split: tuple[int, ...], shard: Shard):
    """Run one shard with the kernels (what a worker does); returns the kernels' ShardResult."""
    from kernels.dealspace import DealSpace
    from kernels.decks import parse_deck

    params = dict(shard.params)
    if shard.strategy in ("deals", "extend"):
        params["deals"] = list(shard.deals)
    if shard.strategy in ("exhaustive", "random", "climb"):
        return run_strategy(shard.strategy, DealSpace(parse_deck(config_space_deck), tuple(split)), **params)
    return run_strategy(shard.strategy, **params)
