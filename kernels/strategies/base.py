"""What a strategy declares, in one place, so the cluster never needs to know its name.

A strategy is one module of this package holding its kernels (or calling shared ones) and one
`Strategy` object. Three typed values go through it, each a frozen dataclass of plain values:

    Search       the search's own values (deck, split, players, seed, deals, ranges, input deals):
                 what every strategy plans from; the cluster makes one from its config, a notebook
                 writes one by hand
    Table        the strategy's config table (`[climb] pool = ...`), each key a field declared with
                 `key()` (its default, bounds and doc: a `Param`), checked when the config is read
    ShardParams  what one shard computes: the strategy's `Params` (its fields usually the stream's or
                 range's, and the table's keys copied by `keys_of`); its JSON form is the shard's
                 `params` in the run (kernels/strategies/codec.py), read back strictly by `typed`

A field added after runs were made, whose default computes what they did, is left unsaid at that
default (`unsaid`, `key(..., unsaid=True)`): out of the shard's JSON form and of the run's identity.

and a strategy says:
    plan          the search cut into shards: a `ShardPlan` (how many, and shard k made on demand)
    run           what a worker does with one shard: its kernels called with the shard's parameters,
                  named one by one; the dispatch adds the deal space, the input deals and the device
    keys          which of the search's top-level keys it reads (deals, seed, range, deals_file, deal)
    backward      whether it uses backward play (two players with equal hands)
    deal_space    the run's deck and split (by default the search's; the atlas's decks are its own)
    gpu           whether its shards can run on a GPU (run with device="gpu" gives the CPU's result)
    warm_up       a tiny run that compiles (or loads from Numba's disk cache) every kernel it uses (with
                  device="gpu", the GPU's too, for strategies with GPU kernels)
    warm_group    which kernels that warm-up compiles (WARM_GROUPS: `make test` warms by group)
    example       its small search for the tests (an `Example`, with the pin of its tables)
    summary       one line: its row of docs/strategies.md's table
    own_table     a summary table of its own, built by the cluster module of that name (the atlas's)
"""

from __future__ import annotations

import functools
import json
import math
import typing
from collections.abc import Callable, Sequence
from dataclasses import MISSING, dataclass, field, fields, is_dataclass, make_dataclass
from typing import Any, ClassVar

from ..dealspace import DealSpace
from ..decks import parse_deck
from ..errors import BmnError
from ..tally import ShardResult

# Top-level keys a strategy may read besides the common ones (deck, split, min_cards, ...).
OPTIONAL_KEYS = ("deals", "seed", "range", "deals_file", "deal")


@dataclass(frozen=True)
class Param:
    """One field of a typed value as its annotation and `key()` say: a config key (a strategy's own, `[climb]
    pool`, or a search's, `deals`), a shard parameter, a field of run.json. `decode` is the one place a value is
    checked, whatever it came from (TOML, a flag, a shard's JSON, run.json): its kind by the annotation, at any
    depth (each item of a list, each field of a nested value), then its bounds; a wrong value is the same
    sentence whichever way it came (`count must be a whole number, got "5"`), after where it came from."""

    name: str
    default: Any
    doc: str
    hint: Any = int  # the field's annotation: bool, int, float, str, tuple[X, ...], list[X], a typed value; X | None
    minimum: float | None = None  # (numbers only)
    maximum: float | None = None
    # How a value given as text is read, for a field that is not text itself (a flag's "26,26", a TOML
    # "1_000_000"): returns the value or raises ValueError.
    from_text: Callable[[str], Any] | None = None
    # Part of what a run computes (its identity: a resume with another value is refused). False for a
    # key that only sizes or checks the work (the atlas's cpu_hours and rate).
    result: bool = True
    # A run's own key that says how the run is executed, not what it computes (the cluster's workers, time
    # limit, device...): no part of its identity, and it may change when the run is resumed.
    execution: bool = False

    def decode(self, value: Any, text: bool = False) -> Any:
        """The value as the field holds it (a list as a tuple, a nested value typed), or a ValueError: "must
        be ..., got ..." (the field's name and where the value came from are the caller's to say). Text where
        the field is not text is read by `from_text`; `text`: the value was typed as text (a command-line
        flag's), which a field without `from_text` reads as its kind does (a number, true or false), so a flag
        and a TOML value that make the same mistake get the same sentence."""
        if isinstance(value, str) and _base(self.hint) is not str:
            read = self.from_text or (TEXT_READERS.get(_base(self.hint)) if text else None)
            if read is not None:
                try:
                    value = read(value)
                except ValueError:
                    raise ValueError(_wrong(self.hint, value)) from None
        value = _read(self.hint, value)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if self.minimum is not None and value < self.minimum:
                raise ValueError(("must not be negative" if self.minimum == 0 else f"must be at least {self.minimum:g}")
                                 + f", got {_dumps(value)}")
            if self.maximum is not None and value > self.maximum:
                raise ValueError(f"must be at most {self.maximum:g}, got {_dumps(value)}")
        return value

    def coerce(self, value: Any, where: str, table: str | None = None, text: bool = False) -> Any:
        """The value, decoded (`text`: typed as text, a flag's), or a BmnError naming `table.name` (or `name`
        for a top-level key)."""
        try:
            return self.decode(value, text)
        except ValueError as error:
            raise BmnError(f"{where}: {f'{table}.{self.name}' if table else self.name} {error}") from None


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def _optional(hint: Any) -> bool:
    return type(None) in typing.get_args(hint) and typing.get_origin(hint) is not tuple


def _base(hint: Any) -> Any:
    """The type a value of the hint holds (X of X | None)."""
    if _optional(hint):
        return next(a for a in typing.get_args(hint) if a is not type(None))
    return hint


def _words(hint: Any) -> str:
    """The kind of a value of this type, in words."""
    base = _base(hint)
    what = {bool: "true or false", int: "a whole number", float: "a number", str: "text"}.get(base)
    if what is None and typing.get_origin(base) in (tuple, list):
        item = _words(typing.get_args(base)[0])
        what = f"a list of {'text' if item == 'text' else item.removeprefix('an ').removeprefix('a ') + 's'}"
    if what is None:
        what = "an object"
    return what + (" or null" if _optional(hint) else "")


def _wrong(hint: Any, value: Any) -> str:
    return f"must be {_words(hint)}, got {_dumps(value)}"


def _read(hint: Any, value: Any) -> Any:
    """A value of the hint's type from its JSON (or TOML) form, checked at any depth: a ValueError otherwise."""
    if value is None and _optional(hint):
        return None
    base = _base(hint)
    if base is bool:
        ok = isinstance(value, bool)
    elif base is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif base is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if ok and not math.isfinite(value):
            raise ValueError(f"must be a finite number, got {_dumps(value)}")
    elif base is str:
        ok = isinstance(value, str)
    elif typing.get_origin(base) in (tuple, list):
        if not isinstance(value, (list, tuple)):
            raise ValueError(_wrong(hint, value))
        items = []
        for i, v in enumerate(value):
            try:
                items.append(_read(typing.get_args(base)[0], v))
            except ValueError as error:  # (a nested value's own sentence says which of its keys)
                nested = _words(typing.get_args(base)[0]) == "an object"
                raise ValueError(_wrong(hint, value) + (f" (item {i}: {error})" if nested else "")) from None
        return tuple(items) if typing.get_origin(base) is tuple else items
    elif isinstance(base, type) and hasattr(base, "from_json"):  # a nested typed value
        if not isinstance(value, dict):
            raise ValueError(_wrong(hint, value))
        return base.from_json(value)
    else:
        raise TypeError(f"no JSON form for a field of type {hint!r}")
    if not ok:
        raise ValueError(_wrong(hint, value))
    return value


PARAM = "bmn.param"  # where a table's field keeps what `key()` declared
UNSAID = "bmn.unsaid"  # a field left out of its JSON form (and of a run's identity) at its default


def key(default: Any, doc: str, *, unsaid: bool = False, **how) -> Any:
    """A config key, as a field of a typed value (a strategy's `Table`, the `Search`): its default and doc,
    and its bounds (Param's minimum, maximum, from_text, result, execution; a number's minimum is 1 unless said);
    its kind
    is its annotation's. A list's default is given as a tuple (a frozen value). `unsaid`: a key added after runs
    were made, whose default computes what those runs did: at its default it is left out of the run's identity
    and of its shards' parameters, so those runs resume and their shard files stay theirs."""
    if isinstance(default, list):
        default = tuple(default)
    return field(default=default, metadata={PARAM: {"doc": doc, **how}, **({UNSAID: True} if unsaid else {})})


@functools.cache
def params_of(cls: type) -> dict[str, Param]:
    """Each field of a typed value as its Param (its annotation, and what `key()` declared where it did), by
    name, in field order: the one spec its values are decoded by (read once per class)."""
    hints = typing.get_type_hints(cls)
    out = {}
    for f in fields(cls):
        how = dict(f.metadata.get(PARAM, {}))
        default = None if f.default is MISSING else f.default
        if PARAM in f.metadata and "minimum" not in how and _base(hints[f.name]) in (int, float):
            how["minimum"] = 1
        out[f.name] = Param(f.name, default, how.pop("doc", ""), hints[f.name], **how)
    return out


def unsaid(default: Any) -> Any:
    """A shard parameter added after runs were made without it, whose default computes what they did: at
    its default it is left out of the shard's JSON form (so those runs' shards keep their parameters)."""
    return field(default=default, metadata={UNSAID: True})


def whole(text: str) -> int:
    """A whole number as text ("1_000_000", a flag's "26"): from_text of the keys that are one."""
    digits = text.replace("_", "")
    if not digits.lstrip("-").isdigit():
        raise ValueError(text)
    return int(digits)


def sizes(text: str) -> tuple[int, ...]:
    """Hand sizes as text ("26,26" or "18/17/17")."""
    return tuple(int(x) for x in text.replace("/", ",").split(","))


def number(text: str) -> int | float:
    """A number as text ("5", "0.5", "1e3", "nan"), as TOML reads it: a whole number stays one."""
    try:
        return whole(text)
    except ValueError:
        return float(text)


def truth(text: str) -> bool:
    """true or false, as text."""
    if text not in ("true", "false"):
        raise ValueError(text)
    return text == "true"


# How a value typed as text (a flag's) is read, by the field's kind, where the field has no from_text of its own.
TEXT_READERS: dict[type, Callable[[str], Any]] = {int: whole, float: number, bool: truth}


@dataclass(frozen=True)
class Search:
    """The search's own values that strategies plan from, each key declared here once (its default, doc and
    bounds: the config reader's check and its flag's `--help` come from it; the cluster's SearchConfig adds the
    run's own keys). The optional keys' docs leave out which strategies read them (their flags' help names them,
    from the strategies' `keys`). Plain values, so a notebook plans and plays any strategy's shards from `kernels`
    alone."""

    deck: str = key("standard", "standard, camicia or VALUE:COUNT,...")
    players: int = key(2, "number of hands (equal split)", from_text=whole)
    split: tuple[int, ...] | None = key(None, "hand sizes, e.g. 26,26 (none: equal hands, or the strategy's own)",
                                        from_text=sizes)
    seed: int = key(1, "the seed of the random streams (64 bits)", minimum=0, maximum=2**64 - 1, from_text=whole)
    deals: int = key(1_000_000, "deals (or states) to play in all", from_text=whole)
    shard_size: int = key(100_000, "deals per shard", from_text=whole)
    min_cards: int = key(1000, "keep finite games of at least this many cards", minimum=0, from_text=whole)
    min_tricks: int = key(0, "also keep finite games of at least this many tricks", minimum=0, from_text=whole)
    range: str | None = key(None, "the rank range LO:HI (none: the whole deal space)")
    deal: str | None = key(None, "the deal (HAND/HAND) to search back from")
    # deals, extend: the deals file's deals, and how many (a run's config read back for its plan alone, whose
    # deals are not read, says it: filled by the cluster, never a config's key)
    input_deals: tuple[str, ...] = field(default=(), repr=False)
    input_count: int = key(0, "the deals file's deals (filled when the file is read)", minimum=0)

    def inputs(self) -> int:
        return len(self.input_deals) or self.input_count


def said(value: Any) -> dict:
    """A typed value's fields by name in their JSON form, without those left unsaid at their default (the
    one rule for a table's stated keys and a shard's parameters)."""
    return {f.name: _plain(getattr(value, f.name)) for f in fields(value)
            if not (f.metadata.get(UNSAID) and getattr(value, f.name) == f.default)}


def _plain(value: Any) -> Any:
    """A field's JSON form: nested typed values as objects, tuples as lists."""
    if is_dataclass(value):
        return value.to_json()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def typed(cls: type, values: Any, what: str) -> Any:
    """A typed value from its JSON form, every field decoded by its Param (`Param.decode`: its kind at any
    depth, its bounds): an unknown key, a missing one or a wrong value is a ValueError of one sentence
    (never a value of the wrong type). `what`: what the value is, for that sentence ("shard parameters")."""
    if not isinstance(values, dict):
        raise ValueError(f"{what} are a JSON object, not {type(values).__name__}")
    spec = params_of(cls)
    unknown = sorted(set(values) - set(spec))
    if unknown:
        raise ValueError(f"{what} have no key {unknown[0]!r} (known: {', '.join(spec)})")
    required = [f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING]
    missing = [name for name in required if name not in values]
    if missing:
        raise ValueError(f"{what} are missing {missing[0]!r}")
    out = {}
    for name, value in values.items():
        try:
            out[name] = spec[name].decode(value)
        except ValueError as error:
            raise ValueError(f"{what}: {name} {error}") from None
    return cls(**out)


def keys_of(table: type, but: tuple[str, ...] = ()) -> type:
    """A strategy's table keys as fields (their annotations, defaults and specs: a shard's JSON is decoded as its
    table's TOML is), for a shard's Params to take beside its own: the Params copy the table's keys (`but` those
    that only plan, which no shard computes with)."""
    hints = typing.get_type_hints(table)
    copied = [(f.name, hints[f.name], field(default=f.default, metadata=f.metadata))
              for f in fields(table) if PARAM in f.metadata and f.name not in but]
    keys = make_dataclass(f"{table.__name__.removesuffix('Table')}Keys", copied, frozen=True, kw_only=True)
    keys.__module__ = table.__module__
    return keys


@dataclass(frozen=True, kw_only=True)
class Table:
    """A strategy's config table as one typed value; its fields declared with `key()` are the keys."""

    @classmethod
    def params(cls) -> tuple[Param, ...]:
        """Its keys as `Param`s: how each is checked and documented (docs/strategies.md)."""
        keyed = {f.name for f in fields(cls) if PARAM in f.metadata}
        return tuple(p for name, p in params_of(cls).items() if name in keyed)

    @classmethod
    def of(cls, values: dict | None, name: str, where: str = "config") -> Table:
        """The table `[name]` of a config, checked (unknown keys, kinds and bounds: one sentence each),
        every default filled in."""
        values = dict(values or {})
        known = {p.name: p for p in cls.params()}
        unknown = sorted(set(values) - set(known))
        if unknown:
            if not known:
                raise BmnError(f"{where}: the {name} strategy takes no [{name}] table")
            raise BmnError(f"{where}: unknown key {unknown[0]!r} in [{name}]; known keys are {', '.join(known)}")
        return cls(**{k: known[k].coerce(v, where, name) for k, v in values.items()})

    @classmethod
    def taken_from(cls, holder: Any) -> Table:
        """The table whose keys a value holds (a shard's Params, which copy them: keys_of; a key they leave out
        at its default)."""
        return cls(**{p.name: getattr(holder, p.name) for p in cls.params() if hasattr(holder, p.name)})

    def values(self) -> dict:
        """Its keys' values by name, as they are (to build a shard's Params from)."""
        return {p.name: getattr(self, p.name) for p in self.params()}

    def keys(self) -> dict:
        """Its keys' values by name, as JSON writes them (lists as lists)."""
        return {p.name: _plain(getattr(self, p.name)) for p in self.params()}

    def stated(self) -> dict:
        """Its keys' values without those left unsaid at their default (`key(..., unsaid=True)`)."""
        return said(self)

    def identity(self) -> dict:
        """The keys that are part of what a run computes (those whose Param has `result`), as stated."""
        sizing = {p.name for p in self.params() if not p.result}
        return {k: v for k, v in self.stated().items() if k not in sizing}

    def to_json(self) -> dict:
        """As a shard's parameter (the cycle factory's, construct's): every key but those left unsaid at their
        default (so shards written before such a key keep their parameters)."""
        return self.stated()

    @classmethod
    def from_json(cls, values: dict) -> Table:
        """As a shard's parameter: each key checked against its type (a ValueError of one sentence)."""
        return typed(cls, values, f"the keys of {cls.__name__}")


@dataclass(frozen=True, kw_only=True)
class NoTable(Table):
    """The table of a strategy that has none."""


@dataclass(frozen=True, kw_only=True)
class ShardParams:
    """What one shard computes, as one typed value (each strategy's `Params`). Its JSON form (`to_json`,
    written by kernels/strategies/codec.py) is the shard's `params` in its summary and in the shards table:
    the fields by name, a nested value as an object, a tuple as a list, and a field left unsaid at its
    default left out (`unsaid`, `key(..., unsaid=True)`), so the shards of runs made before that field was
    added keep their parameters. A strategy's table keys are copied among its fields (`keys_of`), never nested:
    the keys that an earlier form nested them under (`flattened`) are read back flat."""

    flattened: ClassVar[tuple[str, ...]] = ()  # keys of earlier forms whose objects' keys are now the Params' own

    def to_json(self) -> dict:
        return said(self)

    @classmethod
    def flat(cls, values: Any) -> Any:
        """A JSON form with the objects of an earlier form's nesting keys (`flattened`) spread among its own."""
        if not isinstance(values, dict) or not any(isinstance(values.get(k), dict) for k in cls.flattened):
            return values
        out = {k: v for k, v in values.items() if k not in cls.flattened}
        for k in cls.flattened:
            out.update(values.get(k) or {})
        return out

    @classmethod
    def from_json(cls, values: dict) -> ShardParams:
        """The value of a JSON form (to_json's, of this bmn or an earlier one, flattened): a key missing that has
        no default, one it does not know, or a value of the wrong kind is a ValueError of one sentence."""
        return typed(cls, cls.flat(values), "shard parameters")


@dataclass(frozen=True, kw_only=True)
class StreamShard(ShardParams):
    """Shard `shard` of a search over the random stream: deals 0..count-1 of the stream (seed, shard), the
    finite games of at least `min_cards` cards (or `min_tricks` tricks) kept."""

    seed: int
    shard: int
    count: int
    min_cards: int
    min_tricks: int


@dataclass(frozen=True)
class Shard:
    """Shard `id` of a search: what it computes, made by its strategy's plan and sent as it is to the
    worker that runs it (`Strategy.run`)."""

    id: int
    strategy: str
    params: ShardParams  # its strategy's Params
    deals: tuple[str, ...] = ()  # input deals, for strategies that take a deals file


class ShardPlan:
    """A search cut into shards: how many, and shard k made on demand (a plan over the 6.5e20 deals of the
    standard deck is never listed). `meter`, where the shards' work is unequal and known ahead (construct's gene
    searches): given the shards already done, what counts the work for the progress display (`WorkMeter`)."""

    def __init__(self, count: int, make: Callable[[int], Shard], meter: Callable[[set[int]], WorkMeter] | None = None):
        self.count = count
        self._make = make
        self.meter = meter

    def shard(self, k: int) -> Shard:
        if not 0 <= k < self.count:
            raise IndexError(k)
        return self._make(k)


class WorkMeter:
    """The progress of a plan whose shards do unequal work known ahead: told each shard done (the choices it made,
    where it counts them, their CPU-seconds, and its own seconds), it says where the run stands with `workers`
    playing (its own units, rates and ETA)."""

    def done(self, k: int, choices: int, cpu_s: float, elapsed_s: float) -> None:
        raise NotImplementedError

    def status(self, workers: int) -> str:
        raise NotImplementedError


# The warm-up groups (`make test` and configs/warm_kernels.py --group): the sweep's kernels and backward
# play's share none, so their groups compile side by side; "both" uses the two, so it warms after them.
WARM_GROUPS = ("sweep", "backward", "both")


@dataclass(frozen=True)
class Example:
    """A small search of a strategy, declared once by it: what the tests run of every strategy (the
    results pins: tests/test_results_version.py; its first shard planned and played from `kernels` alone,
    as a notebook would: tests/test_strategy_registry.py)."""

    search: dict  # the config's top-level keys besides `strategy` (deck, deals, shard_size, seed, deal, ...)
    table: dict = field(default_factory=dict)  # its [name] table's keys
    deals: tuple[str, ...] = ()  # a deals file's deals, for a strategy that reads one
    pin: str = ""  # the sha256 of the tables the example's run builds, at kernels.RESULTS_VERSION


class Strategy:
    name: str = ""
    summary: str = ""  # one line: what a shard does (its row of docs/strategies.md's table)
    example: Example | None = None  # its small search for the tests
    warm_group: str = ""  # one of WARM_GROUPS: the kernels its warm-up compiles
    Table: type[Table] = NoTable  # its config table's typed value
    Params: type[ShardParams] = ShardParams  # what one of its shards computes
    keys: frozenset[str] = frozenset()  # of OPTIONAL_KEYS
    backward: bool = False  # uses backward play: two players with equal hands
    takes_deals_file: bool = False  # reads deals_file into the run (kept in the run as inputs.txt)
    needs_deal: bool = False  # reads `deal`
    own_table: str | None = None  # a summary table of its own (its name, and the bmn command that prints it)
    gpu: bool = False  # run() takes device="gpu" (kernels/sweep/gpu.py) and gives the CPU's result
    unit: str = "deals"  # what its shards play, and their `deals` column counts: "deals", or "states"
    finite_games: bool = True  # it tallies finite games (and so has a longest game to show)

    @property
    def params(self) -> tuple[Param, ...]:
        """Its table's keys (docs/strategies.md lists them)."""
        return self.Table.params()

    def table(self, values: dict | None, where: str = "config") -> Table:
        """Its table from a config's values, checked, every default filled in."""
        return self.Table.of(values, self.name, where)

    def identity(self, table: Table) -> dict:
        """What of its table is part of what a run computes."""
        return table.identity()

    def deal_space(self, search: Search, table: Table) -> DealSpace:
        """The run's deal space (the deck and split its actors are started with): the search's deck, split
        and players; a strategy whose shards name decks of their own may say otherwise."""
        return DealSpace.of(parse_deck(search.deck), search.split, search.players)

    def describe(self, search: Search, space: DealSpace, table: Table) -> str:
        """What the run searches, in a few words (`bmn status`): its deck and split by default."""
        return f"{search.deck} {'/'.join(map(str, space.split))}"

    def check(self, search: Search, space: DealSpace, table: Table, where: str) -> None:
        """Checks of the strategy's own, beyond the generic ones (raise BmnError with a sentence)."""

    def plan(self, search: Search, space: DealSpace, table: Table) -> ShardPlan:
        raise NotImplementedError

    def run(self, space: DealSpace, params: ShardParams, deals: tuple[str, ...] = (),
            device: str = "cpu") -> ShardResult:
        """One shard: its kernels called with `params` (the strategy's Params), named one by one; `deals`
        the shard's input deals, `device` where it plays ("cpu", or "gpu" for a strategy with GPU kernels)."""
        raise NotImplementedError

    def run_batch(self, space: DealSpace, params: Sequence[ShardParams], deals: Sequence[tuple[str, ...]],
                  device: str = "cpu") -> list[ShardResult]:
        """Several shards, each its own result (a GPU actor's batch): one after another by default; the
        strategies with GPU kernels play a batch on the GPU in as few launches as it allows."""
        return [self.run(space, p, d, device) for p, d in zip(params, deals)]

    def warm_up(self, space: DealSpace, device: str = "cpu") -> None:
        raise NotImplementedError


class EverySplit(Strategy):
    """A strategy whose two-player states are of every split (each cut at its own place): its deal space
    is the deck with hands as equal as it allows (an odd deck has states too), and a run says so."""

    players_why: str = ""  # why two players, and why no split, in a few words each (the sentences' ends)
    split_why: str = ""

    def deal_space(self, search, table):
        deck = parse_deck(search.deck)
        if search.players != 2:
            raise BmnError(f"the {self.name} strategy {self.players_why}")
        if search.split is not None:
            raise BmnError(f"the {self.name} strategy {self.split_why}; leave split out")
        if deck.total < 2:
            return super().deal_space(search, table)  # refused by the generic checks
        return DealSpace.of(deck, [deck.total - deck.total // 2, deck.total // 2])

    def describe(self, search, space, table):
        return f"{search.deck}, states of every split"


class StreamShards(Strategy):
    """Strategies over the random stream: shard k = `shard_size` deals (the last shard fewer) of the
    stream (seed, k), with the strategy's own table."""

    keys = frozenset({"deals", "seed"})
    Params = StreamShard

    def plan(self, search, space, table):
        def shard(k: int) -> Shard:
            count = min(search.shard_size, search.deals - k * search.shard_size)
            return Shard(k, self.name, self.Params(seed=search.seed, shard=k, count=count, **bounds(search),
                                                   **table.values()))
        return ShardPlan(shards_of(search.deals, search.shard_size), shard)


def bounds(search: Search) -> dict:
    """The candidate thresholds every shard carries."""
    return {"min_cards": search.min_cards, "min_tricks": search.min_tricks}


def shards_of(total: int, size: int) -> int:
    return -(-total // size)
