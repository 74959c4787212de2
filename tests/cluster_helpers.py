"""Helpers for the cluster tests: configs, tables from the kernels directly, table comparison."""

from __future__ import annotations

import time

import pyarrow as pa

from cluster.config import build_config, resolve
from cluster.plan import Plan
from cluster.storage import RunStore
from cluster.tables import RunContents, build_tables, read_contents
from cluster.worker import ShardRunner

# The manifest columns that must not depend on who ran a shard, when, or how often.
DETERMINISTIC_SHARD_COLUMNS = ["shard", "strategy", "params", "status", "deals", "cards", "max_cards", "cycles",
                               "candidates"]


def make_config(out, **values):
    values.setdefault("progress", False)
    return resolve(build_config({"out": str(out), **values}))


def tables_of(uri) -> dict[str, pa.Table]:
    return build_tables(read_contents(RunStore(str(uri))))


def direct_tables(config) -> dict[str, pa.Table]:
    """The tables obtained by calling the kernels shard by shard, without Ray."""
    plan = Plan(config)
    runner = ShardRunner(config.deck, plan.space.split, config.strategy)
    contents = RunContents()
    for k in range(plan.count):
        table, summary = runner.run(plan.shard(k))
        contents.summaries[k] = summary
        if table.num_rows:
            contents.games.append(table)
    return build_tables(contents)


def assert_same_tables(a: dict[str, pa.Table], b: dict[str, pa.Table]) -> None:
    for name in ("games", "cycles", "histogram"):
        assert a[name].equals(b[name]), name
    assert a["shards"].select(DETERMINISTIC_SHARD_COLUMNS).equals(b["shards"].select(DETERMINISTIC_SHARD_COLUMNS))


def wait_for(predicate, timeout=60.0, step=0.05):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if predicate():
            return True
        time.sleep(step)
    return False


def busy_actor(coordinator):
    """An actor of a running coordinator with a shard still being computed (or None)."""
    import ray

    for actor in coordinator.actors:
        if not (actor.alive and actor.ready):
            continue
        refs = [ref for ref, (_, owner, _) in coordinator.in_flight.items() if owner is actor]
        if refs:
            _, unfinished = ray.wait(refs, num_returns=len(refs), timeout=0)
            if unfinished:
                return actor
    return None


def kill_a_busy_actor_once(killed: list):
    """A coordinator hook: SIGKILL the process of an actor that is computing, the first time one is."""
    import os
    import signal

    import ray

    def hook(coordinator):
        actor = None if killed else busy_actor(coordinator)
        if actor is not None:
            pid = ray.get(actor.handle.pid.remote())
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    return hook
