"""A run's identity on disk: run.json (the config, code and schema versions), inputs.txt, and the
checks that a folder is a run, or may become one.

A folder (or object-store prefix) is a run exactly when it holds run.json. A new run is refused
in a folder that holds anything else; resuming with a different search is refused, naming what
differs.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace

from kernels import RESULTS_VERSION
from kernels.errors import BmnError

from .. import __version__
from .config import EXECUTION_KEYS, SearchConfig, differences, from_json, with_execution
from .lease import LOCK
from .owned import own_table
from .storage import PROGRESS_JSON, RUN_JSON, RunStore
from .tables import SCHEMA_VERSION, TABLES

INPUTS = "inputs.txt"  # the deals of a run's deals file, so the run never depends on the file again


def code_version() -> str:
    """The package version, with the git commit when run from a checkout."""
    version = __version__
    here = os.path.dirname(os.path.abspath(__file__))
    head = os.path.join(here, "..", ".git", "HEAD")
    try:
        with open(head) as f:
            ref = f.read().strip()
        if ref.startswith("ref: "):
            with open(os.path.join(here, "..", ".git", ref[5:])) as f:
                ref = f.read().strip()
        version += "+g" + ref[:10]
    except OSError:
        pass
    return version


def existing_run(uri: str) -> RunStore:
    """The store of a run that must already exist (resume, status, query, compact)."""
    store = RunStore(uri)
    if not store.exists(RUN_JSON):
        raise BmnError(f"{uri} is not a bmn run (no {RUN_JSON})")
    return store


def check_new_run_folder(store: RunStore) -> None:
    """A new run goes into a new or empty folder, never into one holding someone else's files."""
    if store.exists(RUN_JSON):
        return
    foreign = [n for n in store.entries() if n != LOCK]
    if foreign:
        raise BmnError(f"{store.uri} already holds files ({', '.join(foreign[:3])}) and is not a bmn "
                       f"run; choose a new or empty directory for --out")


def read_run_config(uri: str) -> SearchConfig:
    """The search a run holds (`bmn resume`, query, compact, status)."""
    return stored_config(existing_run(uri))


def stored_config(store: RunStore, stored: dict | None = None) -> SearchConfig:
    """The config of a run's run.json (`stored`, where already read), parsed and checked, with the
    run's input deals for the strategies that take a deals file."""
    config = from_json((stored or run_json(store))["config"])
    if config.strategy_def.takes_deals_file:
        config = replace(config, input_deals=tuple(store.read_bytes(INPUTS).decode().splitlines()))
    return config


def run_json(store: RunStore) -> dict:
    """The run's run.json, or one sentence saying it is damaged."""
    stored = store.read_json(RUN_JSON)
    if not isinstance(stored, dict) or not isinstance(stored.get("config"), dict):
        raise BmnError(f"{store.path(RUN_JSON)} is damaged (it holds no config); the shard files are intact: "
                       f"restore run.json from a copy to resume or query this run")
    return stored


def read_progress(store: RunStore) -> dict:
    """The run's progress.json, or {} where there is none or it is damaged: it is only a snapshot,
    written again at every heartbeat, and nothing is lost with it."""
    try:
        progress = store.read_json(PROGRESS_JSON) if store.exists(PROGRESS_JSON) else {}
    except BmnError:
        return {}
    return progress if isinstance(progress, dict) else {}


def check_results_version(stored: dict, uri: str) -> None:
    """Refuse to add shards computed by kernels that compute something else than the run's."""
    version = stored.get("results_version", 1)  # runs written before the number was recorded: 1
    if version != RESULTS_VERSION:
        raise BmnError(f"run {uri} was computed with results version {version} (bmn {stored.get('code_version')}); "
                       f"this bmn ({code_version()}) computes results version {RESULTS_VERSION}, so its shards "
                       f"would differ from the run's: finish the run with the bmn that started it, or start a "
                       f"new run")


def open_run(config: SearchConfig, store: RunStore, resume: bool) -> SearchConfig:
    """Create the run's run.json, or check that an existing run is the same search.

    A resume takes the run's search with `config`'s execution settings. `bmn resume` passes the run's
    own config (read, parsed and checked once, by read_run_config): its fingerprint is run.json's, so
    the stored config is not parsed again here. A strategy whose own table reads from outside the run when it
    starts (the genes library) prepares the config first (cluster/runs/owntable.py)."""
    own = own_table(config.strategy_def)
    if own is not None and own.prepare is not None and not resume:
        config = own.prepare(config, stored_config(store) if store.exists(RUN_JSON) else None)
    if store.exists(RUN_JSON):
        stored = run_json(store)
        if stored.get("schema_version") != SCHEMA_VERSION:
            raise BmnError(f"run {store.uri} was written with table schema {stored.get('schema_version')}, "
                           f"this bmn writes schema {SCHEMA_VERSION}")
        check_results_version(stored, store.uri)
        same = stored.get("fingerprint") == config.fingerprint() and (
            not config.strategy_def.takes_deals_file or config.input_deals)
        previous = config if same else stored_config(store, stored)
        if resume:
            # Execution settings may change between attempts; what is computed may not.
            return previous if same else with_execution(
                previous, {key: getattr(config, key) for key in EXECUTION_KEYS}, f"bmn resume {store.uri}")
        diff = [] if same else differences(previous, config)
        if diff:
            raise BmnError(f"run {store.uri} holds a different search ({'; '.join(diff)}); "
                           f"use another --out, or `bmn resume {store.uri}` to finish that one")
        return replace(config, input_deals=previous.input_deals or config.input_deals)
    if resume:
        raise BmnError(f"{store.uri} is not a bmn run (no {RUN_JSON}); start one with `bmn search --out {store.uri}`")
    if config.input_deals:
        store.write_bytes(INPUTS, ("\n".join(config.input_deals) + "\n").encode())
    store.write_json(RUN_JSON, {"config": config.to_json(), "fingerprint": config.fingerprint(),
                                "code_version": code_version(), "schema_version": SCHEMA_VERSION,
                                "results_version": RESULTS_VERSION,
                                "created_at": time.time(), "tables": run_table_names(config)})
    return config


def run_table_names(config: SearchConfig) -> list[str]:
    """The tables a run of this config writes: every run's, and its strategy's own if it keeps one."""
    return [*TABLES, *([config.strategy_def.own_table] if config.strategy_def.own_table else [])]
