"""Search strategies, one module each, found by name through this registry.

Each module holds its kernels (or calls the shared sweep kernel), its public wrapper `run_<name>`
and one `Strategy` object (kernels/strategies/base.py) declaring its config table and its shards'
parameters as typed values, how a search is cut into shards, what a shard runs and how it warms up.
The cluster reads strategies only through `get(name)`. Adding a strategy: one module, one line
below, one example config, its tests.

Every strategy is deterministic: the same (strategy, parameters, seed, shard) gives the same
result on any machine.
"""

from __future__ import annotations

from ..dealspace import DealSpace
from ..errors import BmnError
from . import ancestors, atlas, census, climb, construct, cycles, deals, exhaustive, extend, longest, random, states
from .ancestors import run_ancestors
from .atlas import run_atlas
from .base import Param, Search, Shard, ShardParams, ShardPlan, Strategy, Table
from .climb import run_climb
from .construct import run_construct
from .deals import run_deals
from .extend import run_extend
from .longest import run_longest
from .states import run_states
from ..sweep import run_exhaustive, run_random
from ..tally import Candidate, CycleRow, ShardResult

REGISTRY: dict[str, Strategy] = {s.name: s for s in (
    exhaustive.STRATEGY,
    random.STRATEGY,
    climb.STRATEGY,
    longest.STRATEGY,
    extend.STRATEGY,
    ancestors.STRATEGY,
    deals.STRATEGY,
    census.STRATEGY,
    cycles.STRATEGY,
    states.STRATEGY,
    atlas.STRATEGY,
    construct.STRATEGY,
)}
STRATEGIES = tuple(REGISTRY)

__all__ = [
    "Candidate", "CycleRow", "Param", "REGISTRY", "STRATEGIES", "Search", "Shard", "ShardParams", "ShardPlan",
    "ShardResult", "Strategy", "Table", "get",
    "run_ancestors", "run_atlas", "run_climb", "run_construct", "run_deals", "run_exhaustive", "run_extend", "run_longest", "run_random", "run_shard",
    "run_shard_batch",
    "run_states",
]


def get(name: str) -> Strategy:
    try:
        return REGISTRY[name]
    except KeyError:
        raise BmnError(f"unknown strategy {name!r}; choose one of {', '.join(STRATEGIES)}") from None


def run_shard(space: DealSpace, shard: Shard, device: str = "cpu") -> ShardResult:
    """Run one shard (what a cluster worker does) on the CPU or, for the strategies with GPU kernels, the
    GPU (the same result): its strategy's kernels with its parameters, its input deals and the device.
    Whatever the shard itself raises goes up unchanged."""
    strategy = get(shard.strategy)
    if not isinstance(shard.params, strategy.Params):
        raise BmnError(f"the {strategy.name} strategy's shards take {strategy.Params.__name__}, not "
                       f"{type(shard.params).__name__}")
    if device != "cpu" and not strategy.gpu:
        raise BmnError(f"the {strategy.name} strategy has no GPU kernels; its shards run on CPUs")
    return strategy.run(space, shard.params, deals=tuple(shard.deals), device=device)


def run_shard_batch(space: DealSpace, shards: list[Shard], device: str = "cpu") -> list[ShardResult]:
    """Several shards of one strategy, each its own result (a GPU actor's batch: on a GPU, in as few
    launches as it allows; else one after another)."""
    strategy = get(shards[0].strategy)
    if any(s.strategy != strategy.name or not isinstance(s.params, strategy.Params) for s in shards):
        return [run_shard(space, s, device) for s in shards]  # (says what does not fit)
    if device != "cpu" and not strategy.gpu:
        raise BmnError(f"the {strategy.name} strategy has no GPU kernels; its shards run on CPUs")
    return strategy.run_batch(space, [s.params for s in shards], [tuple(s.deals) for s in shards], device)
