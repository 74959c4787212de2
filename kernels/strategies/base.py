"""What a search strategy declares, in one place, so the cluster never needs to know its name.

A strategy is one module of this package holding its kernels (or calling shared ones), its
public wrapper, and one `Strategy` object that says:
    params        the keys of its own config table (`[climb] pool = ...`), with defaults and bounds
    keys          which of the search's top-level keys it reads (deals, seed, range, deals_file, deal)
    backward      whether it uses backward play (two players with equal hands)
    shard_count   how many shards a search is cut into (a pure function of the config)
    shard         what shard k computes: a small JSON-able dict of parameters (plus input deals)
    wrapper       its public wrapper `run_<name>`, which a shard's parameters are bound to: its
                  arguments `space` and `deals` are the shard's deal space and input deals, the
                  others are the shard's parameters by name
    run           what a worker does with one shard: returns a ShardResult (by default the wrapper
                  called with the bound parameters)
    warm_up       a tiny run that compiles (or loads from Numba's disk cache) every kernel it uses

`config` below is any object with the search's keys as attributes (the cluster passes its
SearchConfig); `params` is the strategy's table with every default filled in.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable

from ..dealspace import DealSpace
from ..errors import BmnError
from .tally import ShardResult

# Top-level keys a strategy may read besides the common ones (deck, split, min_cards, ...).
OPTIONAL_KEYS = ("deals", "seed", "range", "deals_file", "deal")


@dataclass(frozen=True)
class Param:
    """One key of a strategy's config table."""

    name: str
    default: Any
    doc: str
    minimum: float = 1
    maximum: float | None = None
    kind: type = int  # int; float for a number that may have a fraction; str for text; list for a list of text
    optional: bool = False  # None (no limit) is allowed

    def coerce(self, value: Any, where: str, table: str) -> Any:
        if value is None and self.optional:
            return None
        key = f"{table}.{self.name}"
        if self.kind is list:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise BmnError(f"{where}: {key} must be a list of text, such as [\"0:8,1:2,2:2\"], got {value!r}")
            return list(value)
        if self.kind is str:
            if not isinstance(value, str):
                raise BmnError(f"{where}: {key} must be text, got {value!r}")
            return value
        if self.kind is float:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not self._in_range(value):
                bounds = f"between {self.minimum:g} and {self.maximum:g}" if self.maximum is not None \
                    else f">= {self.minimum:g}"
                raise BmnError(f"{where}: {key} must be a number {bounds}, got {value!r}")
            return float(value) if isinstance(value, float) else value
        if isinstance(value, bool) or not isinstance(value, int) or not self._in_range(value):
            bounds = f">= {self.minimum:g}" + (f" and <= {self.maximum:g}" if self.maximum is not None else "")
            raise BmnError(f"{where}: {key} must be a whole number {bounds}, got {value!r}")
        return value

    def _in_range(self, value) -> bool:
        return value >= self.minimum and (self.maximum is None or value <= self.maximum)


@dataclass(frozen=True)
class ShardSpec:
    """What one shard computes: JSON-able parameters, plus input deals where the strategy takes them."""

    params: dict
    deals: tuple[str, ...] = ()


# The wrapper's arguments the dispatch fills itself: the shard's deal space and its input deals.
SUPPLIED = ("space", "deals")


class Strategy:
    name: str = ""
    summary: str = ""  # one line: what a shard does
    params: tuple[Param, ...] = ()
    keys: frozenset[str] = frozenset()  # of OPTIONAL_KEYS
    backward: bool = False  # uses backward play: two players with equal hands
    takes_deals_file: bool = False  # reads deals_file into the run (kept in the run as inputs.txt)
    needs_deal: bool = False  # reads `deal`
    wrapper: Callable[..., ShardResult]  # run_<name> (set it with staticmethod)

    def defaults(self) -> dict:
        return {p.name: p.default for p in self.params}

    def table(self, values: dict | None, where: str = "config") -> dict:
        """The strategy's table, checked, with every default filled in."""
        values = dict(values or {})
        known = {p.name: p for p in self.params}
        unknown = sorted(set(values) - set(known))
        if unknown:
            if not known:
                raise BmnError(f"{where}: the {self.name} strategy takes no [{self.name}] table")
            raise BmnError(f"{where}: unknown key {unknown[0]!r} in [{self.name}]; known keys are {', '.join(known)}")
        return {**self.defaults(), **{k: known[k].coerce(v, where, self.name) for k, v in values.items()}}

    def check(self, config, space: DealSpace, params: dict, where: str) -> None:
        """Checks of the strategy's own, beyond the generic ones (raise BmnError with a sentence)."""

    def shard_count(self, config, space: DealSpace, params: dict) -> int:
        raise NotImplementedError

    def shard(self, config, space: DealSpace, params: dict, k: int) -> ShardSpec:
        raise NotImplementedError

    def bind(self, params: dict) -> dict:
        """A shard's parameters bound to the wrapper's signature, or a BmnError naming the strategy
        and the parameter that does not fit (one it does not take, or one it needs and lacks)."""
        signature = inspect.signature(self.wrapper)
        own = [p for name, p in signature.parameters.items() if name not in SUPPLIED]
        try:
            return signature.replace(parameters=own).bind(**params).arguments
        except TypeError as error:
            raise BmnError(f"the {self.name} strategy's shard parameters do not fit {self.wrapper.__name__}: "
                           f"{error}") from None

    def run(self, space: DealSpace, params: dict, deals: tuple[str, ...]) -> ShardResult:
        supplied = {"space": space, "deals": list(deals)}
        given = {name: supplied[name] for name in inspect.signature(self.wrapper).parameters if name in supplied}
        return self.wrapper(**given, **params)

    def warm_up(self, space: DealSpace) -> None:
        raise NotImplementedError


class StreamShards(Strategy):
    """Strategies over the random stream: shard k = `shard_size` deals (the last shard fewer) of the
    stream (seed, k), with the strategy's own parameters."""

    keys = frozenset({"deals", "seed"})

    def shard_count(self, config, space, params):
        return shards_of(config.deals, config.shard_size)

    def shard(self, config, space, params, k):
        count = min(config.shard_size, config.deals - k * config.shard_size)
        return ShardSpec({"seed": config.seed, "shard": k, "count": count, **bounds(config), **params})


def bounds(config) -> dict:
    """The candidate thresholds every shard carries."""
    return {"min_cards": config.min_cards, "min_tricks": config.min_tricks}


def shards_of(total: int, size: int) -> int:
    return -(-total // size)
