"""A search's configuration: a TOML file, command-line flags on top, checked before anything starts.

Every key that can change a result is part of the run's identity (`identity()`): resuming a run
with a different identity is refused, with the keys that differ named. Keys that only change how
the work is done (workers, address, time limit, progress display) may differ between attempts.
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from dataclasses import dataclass, field, fields, replace
from typing import Any

from kernels.dealspace import DealSpace
from kernels.decks import parse_deck
from kernels.errors import BmnError
from kernels.notation import format_deal, parse_deal
from kernels.strategies import REGISTRY, Param, Search, Strategy, Table, get
from kernels.strategies.base import OPTIONAL_KEYS, key, params_of, whole

from .storage import refuse_credentials

DEVICES = ("auto", "cpu", "gpu")


def strategy_tables() -> tuple[str, ...]:
    """The strategies with a table of their own parameters (`[climb] pool = ...`): the table's name is the
    strategy's name."""
    return tuple(name for name, s in REGISTRY.items() if s.params)


@dataclass(frozen=True)
class SearchConfig(Search):
    """A search's config, checked and resolved once (`build_config`, `resolve`, `from_json`); never
    changed afterwards: a resumed run's execution settings make a new value (`with_execution`). Its keys are
    the Search's (kernels/strategies/base.py, declared there once) and the run's own, each declared here with
    `key()`: KEYS, the checks, the flags (cluster/commands/search.py) and EXECUTION_KEYS come from these
    declarations."""

    strategy: str = key("random", f"the strategy: {', '.join(REGISTRY)}")
    deals_file: str | None = key(None, "one deal per line")
    # The strategy tables the config gives, by strategy name, each its typed value as checked
    # (`[climb] pool = 100_000` -> {"climb": ClimbTable(pool=100_000)}).
    tables: dict[str, Table] = field(default_factory=dict)
    # Execution only (`execution=True`: EXECUTION_KEYS, the keys a resume may change, are these):
    out: str = key("runs/search", "run directory or URI (s3://bucket/prefix) for the tables", execution=True)
    workers: int = key(0, "actors (0: one per CPU of the Ray cluster, now or later)", minimum=0, from_text=whole,
                       execution=True)
    max_workers: int = key(0, "with workers = 0: at most this many actors (0: no limit)", minimum=0, from_text=whole,
                           execution=True)
    address: str | None = key(None, "join this Ray cluster (none: RAY_ADDRESS, else a local Ray)", execution=True)
    time_limit: float = key(0, "stop after this many seconds (0: none; resume later: a resume keeps the limit, 0 "
                               "lifts it)", minimum=0, execution=True)
    progress: bool = key(True, "show the progress display", execution=True)
    max_attempts: int = key(3, "tries of a shard before it is given up", from_text=whole, execution=True)
    in_flight: int = key(2, "shards queued per worker", from_text=whole, execution=True)
    # Seconds a worker may spend on one shard before it is taken for stuck and the shard reissued;
    # 0: automatic (cluster/loop/pool.py: ten times the slowest shard so far, at least five minutes).
    shard_timeout: float = key(0, "seconds a worker may spend on one shard before it is taken for stuck and the shard "
                                  "runs elsewhere (0: ten times the slowest shard so far, at least 300)", minimum=0,
                               execution=True)
    # Where the shards of the strategies with GPU kernels (random, exhaustive, states) run: "cpu"; "gpu" (one actor
    # per GPU of the cluster, nothing on the other CPUs); "auto" (an actor per GPU, each holding a CPU to
    # drive it, and CPU actors on the other CPUs; on a cluster without GPUs, CPU actors only).
    device: str = key("auto", f"{', '.join(n for n, s in REGISTRY.items() if s.gpu)}: cpu, gpu (an actor per GPU of "
                              "the cluster) or auto (an actor per GPU, CPU actors on the other CPUs)", execution=True)
    # Shards a GPU actor takes per call (cluster/loop/pool.py), played in one launch where they fit: a GPU plays
    # as much as hundreds of CPU cores, so its calls are this many of the plan's shards (the plan, and so
    # the results, are the same). 0: as many as fill the device, FILL deals for each lane it holds at once
    # (kernels/sweep/gpu.py `batch_for`, from the actor's occupancy).
    gpu_batch: int = key(0, "shards a GPU worker takes per call, in one launch where they fit (0: as many as fill "
                            "its device)", minimum=0, from_text=whole, execution=True)
    # The fraction of the shards a GPU plays that a CPU actor plays again and compares (cluster/loop/audit.py):
    # a mismatch stops the search, the shard redone on the CPU. 0: none.
    audit: float = key(0, "the fraction of GPU shards played again on CPU workers and compared (a mismatch stops "
                          "the search)", minimum=0, maximum=1, execution=True)
    # Filled by resolve() for the deals and extend strategies: the deals of the deals file are kept in the run
    # directory (inputs.txt) so a run never depends on the file again; only their hash and count are part of
    # the config.
    input_sha256: str | None = key(None, "the deals file's deals' sha256 (filled when the file is read)")

    def space(self) -> DealSpace:
        """The run's deal space, computed once (a config never changes)."""
        return self._once("space", lambda: self.strategy_def.deal_space(self.search(), self.table()))

    @property
    def strategy_def(self) -> Strategy:
        return get(self.strategy)

    def table(self) -> Table:
        """The strategy's own table as its typed value, every default filled in (the one the config gave,
        checked when it was read, or the strategy's defaults)."""
        return self.tables[self.strategy] if self.strategy in self.tables else self.strategy_def.Table()

    def search(self) -> Search:
        """What the strategy plans from: the search's own values, none of the execution settings."""
        return Search(**{f.name: getattr(self, f.name) for f in fields(Search)})

    def identity(self) -> dict:
        """What determines the results: everything but the execution keys."""
        ident = {k: v for k, v in self.to_json().items() if k not in EXECUTION_KEYS}
        for name in strategy_tables():
            ident.pop(name, None)
        ident.pop("deals_file")  # the deals themselves are identified by input_sha256
        ident["strategy_params"] = self.strategy_def.identity(self.table())
        ident["deck"] = parse_deck(self.deck).spec()
        ident["split"] = list(self.space().split)
        return ident

    def fingerprint(self) -> str:
        """The identity's hash (what signs the run's shards), computed once."""
        return self._once("fingerprint", lambda: hashlib.sha256(
            json.dumps(self.identity(), sort_keys=True).encode()).hexdigest()[:16])

    def _once(self, name: str, compute):
        # Kept beside the fields, not among them: equality, asdict and `replace` (a new config, computed
        # afresh) see only the fields. (A frozen dataclass is written through object.__setattr__.)
        key = f"_{name}"
        if key not in self.__dict__:
            object.__setattr__(self, key, compute())
        return self.__dict__[key]

    def to_json(self) -> dict:
        """The config as run.json stores it: its keys, and its strategy's own table (every key of it, where the
        config gives one; runs of earlier bmn also held an empty table of every other strategy)."""
        values = {name: _plain(getattr(self, name)) for name in KEYS}
        if self.strategy in self.tables:
            values[self.strategy] = self.tables[self.strategy].keys()
        return values


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def load_toml(path: str) -> dict:
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise BmnError(f"config file {path} does not exist") from None
    except tomllib.TOMLDecodeError as error:
        raise BmnError(f"config file {path} is not valid TOML: {error}") from None
    except UnicodeDecodeError:
        raise BmnError(f"config file {path} is not UTF-8 text, so not a TOML file") from None
    except OSError as error:
        raise BmnError(f"cannot read config file {path}: {error.strerror}") from None


def build_config(values: dict, where: str = "config") -> SearchConfig:
    """A SearchConfig from plain values (a TOML table, flags), rejecting unknown keys and bad values."""
    known = _top_level_keys() - set(FILLED)
    unknown = sorted(set(values) - known)
    if unknown:
        raise BmnError(f"{where}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                       f"known keys are {', '.join(sorted(known))}")
    return _checked(values, where)


def _checked(values: dict, where: str) -> SearchConfig:
    tables = {key: _table(key, values[key], where) for key in strategy_tables() if key in values}
    plain = {key: KEYS[key].coerce(value, where) for key, value in values.items() if key in KEYS}
    if plain.get("split") is not None and "players" not in values:
        plain["players"] = len(plain["split"])  # a split names the players: 18,17,17 is three hands
    config = SearchConfig(**plain, tables=tables)
    check(config, where)
    return config


def _top_level_keys() -> set[str]:
    return set(KEYS) | set(strategy_tables())


def _table(name: str, value: Any, where: str) -> Table:
    if not isinstance(value, dict):
        raise BmnError(f"{where}: [{name}] must be a table")
    return REGISTRY[name].table(value, where)  # keys and values checked


# Every top-level key (the Search's and the run's own), checked by the same Param.decode as a strategy's keys.
KEYS: dict[str, Param] = {name: p for name, p in params_of(SearchConfig).items()
                          if name not in ("tables", "input_deals")}
# The keys bmn fills itself when it reads a deals file: never a config's, nor a flag's.
FILLED = ("input_count", "input_sha256")
# The keys a config (and a flag of the same name: cluster/commands/search.py) sets.
USER_KEYS = tuple(name for name in KEYS if name not in FILLED)
# Keys that say how a run is executed, not what it computes (declared with `execution=True`): they may change
# when a run is resumed.
EXECUTION_KEYS = tuple(name for name, p in KEYS.items() if p.execution)


def check(config: SearchConfig, where: str = "config") -> None:
    """What no single key can say is refused here, before any work starts (each key's kind and bounds
    are KEYS' business)."""
    if config.strategy not in REGISTRY:
        raise BmnError(f"{where}: unknown strategy {config.strategy!r}; choose one of {', '.join(REGISTRY)}")
    strategy = config.strategy_def
    space = config.space()  # raises for a bad deck, split or player count
    for name in OPTIONAL_KEYS:
        if name in ("range", "deal") and getattr(config, name) is not None and name not in strategy.keys:
            users = readers(name)
            raise BmnError(f"{where}: {name} applies to the {' and '.join(users)} "
                           f"strateg{'ies' if len(users) > 1 else 'y'} only")
    if strategy.backward and (space.players != 2 or space.split[0] != space.split[1]):
        raise BmnError(f"{where}: the {config.strategy} strategy uses backward play, "
                       "which needs two players with equal hands")
    if strategy.takes_deals_file and not config.deals_file and not config.input_sha256:
        raise BmnError(f"{where}: the {config.strategy} strategy needs deals_file (one deal per line)")
    if strategy.needs_deal:
        if not config.deal:
            raise BmnError(f"{where}: the {config.strategy} strategy needs deal = \"HAND/HAND\"")
        parse_deal(config.deal)
    strategy.check(config.search(), space, config.table(), where)
    check_execution(config, where)


def check_execution(config: SearchConfig, where: str) -> None:
    """What the execution keys cannot be alone, with the search they run (a resume checks only this:
    the search itself was checked when the run's config was read)."""
    if config.device not in DEVICES:
        raise BmnError(f"{where}: device must be one of {', '.join(DEVICES)}, got {config.device!r}")
    if config.device == "gpu":
        if not config.strategy_def.gpu:
            gpu_strategies = [name for name, s in REGISTRY.items() if s.gpu]
            raise BmnError(f"{where}: device = \"gpu\": the {config.strategy} strategy has no GPU kernels (only "
                           f"{' and '.join(gpu_strategies)} have); use device = \"cpu\" or \"auto\"")
        from kernels.sweep.gpu import check_space
        check_space(config.space())
        if config.audit:
            raise BmnError(f"{where}: audit plays GPU shards again on CPU workers, and device = \"gpu\" has none; use "
                           f"device = \"auto\" (GPU and CPU workers)")
    if not config.out:
        raise BmnError(f"{where}: out must name a run directory or URI")
    refuse_credentials(config.out, f"{where}: out")


def readers(key: str) -> list[str]:
    """The strategies that read one of the optional top-level keys (OPTIONAL_KEYS)."""
    return [name for name, s in REGISTRY.items() if key in s.keys]


def read_deals_file(path: str) -> list[str]:
    """The deals of a file, one per line (blank lines and # comments skipped), in canonical form."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.readlines()
    except OSError as error:
        raise BmnError(f"cannot read deals file {path}: {error.strerror}") from None
    deals = []
    for number, raw in enumerate(lines, start=1):
        text = raw.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            deals.append(format_deal(parse_deal(text.split())))
        except BmnError as error:
            raise BmnError(f"deals file {path}, line {number}: {error}") from None
    if not deals:
        raise BmnError(f"deals file {path} holds no deals")
    return deals


def resolve(config: SearchConfig) -> SearchConfig:
    """The config with what it points to read in (the deals file), so the run is self-contained."""
    strategy = config.strategy_def
    if strategy.takes_deals_file and config.deals_file and not config.input_deals:
        config = with_inputs(config, read_deals_file(os.path.expanduser(config.deals_file)))
    if strategy.needs_deal and config.deal:
        config = replace(config, deal=format_deal(parse_deal(config.deal)))
    return config


def with_inputs(config: SearchConfig, deals: list[str]) -> SearchConfig:
    """The config holding these input deals (and their count and hash)."""
    return replace(config, input_deals=tuple(deals), input_count=len(deals),
                   input_sha256=hashlib.sha256("\n".join(deals).encode()).hexdigest())


def with_execution(config: SearchConfig, values: dict, where: str) -> SearchConfig:
    """The config with other execution settings (a resumed run's flags), checked like any config."""
    unknown = sorted(set(values) - set(EXECUTION_KEYS))
    if unknown:
        raise BmnError(f"{where}: {', '.join(unknown)} cannot change when a run is resumed")
    config = replace(config, **{key: KEYS[key].coerce(value, where) for key, value in values.items()})
    check_execution(config, where)
    return config


def from_json(values: dict) -> SearchConfig:
    """The config stored in a run's run.json, checked like any other."""
    if not isinstance(values, dict):
        raise BmnError("run.json: the config is not a table")
    plain = {k: v for k, v in values.items() if k in KEYS}
    tables = {k: values[k] for k in strategy_tables() if values.get(k)}
    return _checked({**plain, **tables}, "run.json")


def differences(a: SearchConfig, b: SearchConfig) -> list[str]:
    ia, ib = a.identity(), b.identity()
    return [f"{k}: {ia.get(k)!r} in the run, {ib.get(k)!r} now"
            for k in sorted(set(ia) | set(ib)) if ia.get(k) != ib.get(k)]
