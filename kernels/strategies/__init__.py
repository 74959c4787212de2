"""Search strategies, one module each, found by name through this registry.

Each module holds its kernels (or calls the shared sweep kernel), its public wrapper `run_<name>`
and one `Strategy` object, `STRATEGY` (kernels/strategies/base.py), declaring its config table and
its shards' parameters as typed values, how a search is cut into shards, what a shard runs, how it
warms up, its example search and what a run of it shows. The registry is every module of this
package that holds a `STRATEGY`, found when the package is imported: adding a strategy is its
module, its example config, its tests and its docs section (docs/development.md, "Adding a
strategy"), and its `run_<name>` imported here by name, the package's API written out (a test
holds the list to the registry). The cluster reads strategies only through `get(name)`.

Every strategy is deterministic: the same (strategy, parameters, seed, shard) gives the same
result on any machine.
"""

from __future__ import annotations

import importlib
import pkgutil

from ..dealspace import DealSpace
from ..errors import BmnError
from ..tally import Candidate, CycleRow, GeneRow, ShardResult
from .ancestors import run_ancestors
from .atlas import run_atlas
from .base import Example, Param, Search, Shard, ShardParams, ShardPlan, Strategy, Table
from .census import run_census
from .climb import run_climb
from .construct import run_construct
from .cycles import run_cycles
from .deals import run_deals
from .exhaustive import run_exhaustive
from .extend import run_extend
from .longest import run_longest
from .random import run_random
from .states import run_states

__all__ = [
    "Candidate", "CycleRow", "Example", "GeneRow", "Param", "REGISTRY", "Search", "Shard", "ShardParams",
    "ShardPlan", "ShardResult", "Strategy", "Table", "discover", "get", "run_shard", "run_shard_batch",
    # each strategy's public wrapper (tests/test_strategy_registry.py: one for every strategy of the registry)
    "run_ancestors", "run_atlas", "run_census", "run_climb", "run_construct", "run_cycles", "run_deals",
    "run_exhaustive", "run_extend", "run_longest", "run_random", "run_states",
]


def discover() -> dict[str, Strategy]:
    """Every strategy of the modules in this package's folders, by name, in name order: each module's
    `STRATEGY`, checked to be a Strategy whose name is its module's."""
    found: dict[str, Strategy] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        strategy = getattr(importlib.import_module(f"{__name__}.{info.name}"), "STRATEGY", None)
        if strategy is None:
            continue
        if not isinstance(strategy, Strategy) or strategy.name != info.name:
            raise TypeError(f"{__name__}.{info.name}.STRATEGY must be a Strategy named {info.name!r}")
        found[strategy.name] = strategy
    return found


REGISTRY: dict[str, Strategy] = discover()


def get(name: str) -> Strategy:
    try:
        return REGISTRY[name]
    except KeyError:
        raise BmnError(f"unknown strategy {name!r}; choose one of {', '.join(REGISTRY)}") from None


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
