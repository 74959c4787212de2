"""What a search strategy declares, in one place, so the cluster never needs to know its name.

A strategy is one module of this package holding its kernels (or calling shared ones), its
public wrapper, and one `Strategy` object that says:
    params        the keys of its own config table (`[climb] pool = ...`), with defaults and bounds
    keys          which of the search's top-level keys it reads (deals, seed, range, deals_file, deal)
    backward      whether it uses backward play (two players with equal hands)
    shard_count   how many shards a search is cut into (a pure function of the config)
    deal_space    the run's deck and split (by default the config's; the atlas's decks are its own)
    shard         what shard k computes: a `Shard`, its JSON-able parameters (plus input deals)
    wrapper       its public wrapper `run_<name>`, which a shard's parameters are bound to: its
                  arguments `space` and `deals` are the shard's deal space and input deals, the
                  others are the shard's parameters by name
    describes     shard parameters that say where the shard stands in the plan (for the strategy's own
                  table) and that its wrapper does not take
    run           what a worker does with one shard: returns a ShardResult (by default the wrapper
                  called with the bound parameters, and `device` where the strategy has GPU kernels)
    gpu           whether its shards can run on a GPU (its wrapper takes `device="gpu"` and gives the
                  CPU's result); the cluster gives such strategies GPU actors (`device`)
    warm_up       a tiny run that compiles (or loads from Numba's disk cache) every kernel it uses (with
                  `device="gpu"`, the GPU's too, for strategies with GPU kernels)

`config` below is any object with the search's keys as attributes (the cluster passes its
SearchConfig); `params` is the strategy's table with every default filled in.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import Any, Callable

from ..dealspace import DealSpace
from ..decks import parse_deck
from ..errors import BmnError
from ..tally import ShardResult

# Top-level keys a strategy may read besides the common ones (deck, split, min_cards, ...).
OPTIONAL_KEYS = ("deals", "seed", "range", "deals_file", "deal")


@dataclass(frozen=True)
class Param:
    """One config key: a strategy's own (`[climb] pool`) or a search's top-level one (`deals`), checked
    by `coerce`, the one place a config value is checked for its kind and bounds."""

    name: str
    default: Any
    doc: str
    minimum: float | None = 1
    maximum: float | None = None
    kind: type = int  # int; float for a number that may have a fraction; str for text; list for a list
    # of text; bool for true or false
    optional: bool = False  # None (not set, or no limit) is allowed
    item: type = str  # for a list: the kind of its items (str, or int for hand sizes)
    # How a value given as text is read, for keys that are not text themselves (a flag's "26,26",
    # a TOML "1_000_000"): returns the value or raises ValueError.
    from_text: Callable[[str], Any] | None = None
    # Part of what a run computes (its identity: a resume with another value is refused). False for a
    # key that only sizes or checks the work (the atlas's cpu_hours and rate).
    result: bool = True
    # False for a key added after runs of its strategy were made, whose default computes what those
    # runs did: at its default it is left out of the run's identity and of its shards' parameters
    # (Strategy.stated), so those runs resume and their shard files stay theirs.
    stated_at_default: bool = True

    def coerce(self, value: Any, where: str, table: str | None = None) -> Any:
        """The value, checked, or a BmnError naming `table.name` (or `name` for a top-level key)."""
        if value is None and self.optional:
            return None
        key = f"{table}.{self.name}" if table else self.name
        if isinstance(value, str) and self.from_text is not None and self.kind is not str:
            try:
                value = self.from_text(value)
            except ValueError:
                raise BmnError(f"{where}: {key} must be {self._kind_text()}, got {value!r}") from None
        if self.kind is list:
            if not isinstance(value, list) or not all(isinstance(v, self.item) for v in value):
                raise BmnError(f"{where}: {key} must be {self._kind_text()}, got {value!r}")
            return list(value)
        if self.kind is str:
            if not isinstance(value, str):
                raise BmnError(f"{where}: {key} must be text, got {value!r}")
            return value
        if self.kind is bool:
            if not isinstance(value, bool):
                raise BmnError(f"{where}: {key} must be true or false, got {value!r}")
            return value
        number = (int, float) if self.kind is float else int
        if isinstance(value, bool) or not isinstance(value, number):
            raise BmnError(f"{where}: {key} must be {self._kind_text()}, got {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise BmnError(f"{where}: {key} must be a finite number, got {value!r}")
        if self.minimum is not None and value < self.minimum:
            raise BmnError(f"{where}: {key} must " + ("not be negative" if self.minimum == 0 else
                                                      f"be at least {self.minimum:g}") + f", got {value!r}")
        if self.maximum is not None and value > self.maximum:
            raise BmnError(f"{where}: {key} must be at most {self.maximum:g}, got {value!r}")
        return value  # a whole number given for a float key stays whole (as the run's identity has it)

    def _kind_text(self) -> str:
        if self.kind is list:
            return "a list of whole numbers, such as [26, 26]" if self.item is int else \
                "a list of text, such as [\"0:8,1:2,2:2\"]"
        return "a number" if self.kind is float else "a whole number"


@dataclass(frozen=True)
class Shard:
    """Shard `id` of a search: what it computes, made by its strategy (`Strategy.shard`), listed by the
    cluster's plan (cluster/plan.py) and sent as it is to the worker that runs it (`Strategy.run`)."""

    id: int
    strategy: str
    params: dict  # JSON-able: the wrapper's arguments by name (kept in the shard's summary as they are)
    deals: tuple[str, ...] = ()  # input deals, for strategies that take a deals file


# The wrapper's arguments the dispatch fills itself: the shard's deal space, its input deals, and
# (strategies with GPU kernels) the device it runs on, which is never part of what a shard computes.
SUPPLIED = ("space", "deals", "device")


class Strategy:
    name: str = ""
    summary: str = ""  # one line: what a shard does
    params: tuple[Param, ...] = ()
    keys: frozenset[str] = frozenset()  # of OPTIONAL_KEYS
    backward: bool = False  # uses backward play: two players with equal hands
    takes_deals_file: bool = False  # reads deals_file into the run (kept in the run as inputs.txt)
    needs_deal: bool = False  # reads `deal`
    own_table: str | None = None  # a summary table of its own (its name, and the bmn command that prints it)
    gpu: bool = False  # its wrapper takes device="gpu" (kernels/sweep/gpu.py)
    unit: str = "deals"  # what its shards play, and their `deals` column counts: "deals", or "states"
    finite_games: bool = True  # it tallies finite games (and so has a longest game to show)
    # Shard parameters that say where a shard stands in the plan, for the strategy's own table, and
    # that its wrapper does not compute with: kept in the shard (and its summary), never bound.
    describes: frozenset[str] = frozenset()
    wrapper: Callable[..., ShardResult]  # run_<name> (set it with staticmethod)

    def identity(self, params: dict) -> dict:
        """The parameters that are part of what a run computes (those whose Param has `result`)."""
        sizing = {p.name for p in self.params if not p.result}
        return {k: v for k, v in self.stated(params).items() if k not in sizing}

    def stated(self, params: dict) -> dict:
        """The parameters without those at a default that is left unsaid (Param.stated_at_default)."""
        unsaid = {p.name: p.default for p in self.params if not p.stated_at_default}
        return {k: v for k, v in params.items() if k not in unsaid or v != unsaid[k]}

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

    def deal_space(self, config) -> DealSpace:
        """The run's deal space (the deck and split its actors are started with): the config's deck,
        split and players; a strategy whose shards name decks of their own may say otherwise."""
        return DealSpace.of(parse_deck(config.deck), config.split, config.players)

    def describe(self, config, space: DealSpace, params: dict) -> str:
        """What the run searches, in a few words (`bmn status`): its deck and split by default."""
        return f"{config.deck} {'/'.join(map(str, space.split))}"

    def check(self, config, space: DealSpace, params: dict, where: str) -> None:
        """Checks of the strategy's own, beyond the generic ones (raise BmnError with a sentence)."""

    def shard_count(self, config, space: DealSpace, params: dict) -> int:
        raise NotImplementedError

    def shard(self, config, space: DealSpace, params: dict, k: int) -> Shard:
        raise NotImplementedError

    def bind(self, params: dict) -> dict:
        """A shard's parameters (less those it `describes`) bound to the wrapper's signature, or a
        BmnError naming the strategy and the parameter that does not fit (one it does not take, or one
        it needs and lacks)."""
        signature = inspect.signature(self.wrapper)
        own = [p for name, p in signature.parameters.items() if name not in SUPPLIED]
        computed = {k: v for k, v in params.items() if k not in self.describes}
        try:
            return signature.replace(parameters=own).bind(**computed).arguments
        except TypeError as error:
            raise BmnError(f"the {self.name} strategy's shard parameters do not fit {self.wrapper.__name__}: "
                           f"{error}") from None

    def run(self, space: DealSpace, params: dict, deals: tuple[str, ...], device: str = "cpu") -> ShardResult:
        """(`device` reaches only the strategies with GPU kernels: run_shard says so to the others.)"""
        supplied = {"space": space, "deals": list(deals), "device": device}
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
        return Shard(k, self.name, {"seed": config.seed, "shard": k, "count": count, **bounds(config), **params})


def bounds(config) -> dict:
    """The candidate thresholds every shard carries."""
    return {"min_cards": config.min_cards, "min_tricks": config.min_tricks}


def shards_of(total: int, size: int) -> int:
    return -(-total // size)
