"""cluster/loop/pool.py: the elastic pool of shard actors, alone (with actors of its own kind on the
session's Ray cluster) and under a search (a shard that never returns, workers that cannot be
placed)."""

from __future__ import annotations

import os
import time

import pytest
import ray
from cluster_helpers import (
    DETERMINISTIC_SHARD_COLUMNS,
    CpuHolder,
    Gate,
    direct_tables,
    driverless_gpu_runner,
    failing_gpu_runner,
    gated_runner,
    make_config,
    tables_of,
    wait_for,
)

import cluster.cloud.actors
import cluster.cloud.worker
import cluster.loop.pool
from cluster.cloud.worker import ShardRunner
from cluster.loop.coordinator import run_search
from cluster.loop.pool import AUTO_FACTOR, AUTO_FIRST_S, AUTO_MIN_S, ShardPool
from cluster.runs.plan import Plan
from kernels.errors import BmnError

SEARCH = dict(strategy="random", deals=60_000, shard_size=10_000, min_cards=600, seed=5)


def make_pool(actor_class, config, wanted=2, **options) -> tuple[ShardPool, Plan]:
    plan = Plan(config)
    deck, split = config.deck, plan.space.split
    pool = ShardPool(lambda kind: actor_class.remote(deck, split, config.strategy), lambda failed: wanted,
                     in_flight=2, max_attempts=config.max_attempts, **options)
    return pool, plan


def run_pool(pool: ShardPool, plan: Plan, timeout: float = 120, shards=None) -> dict:
    """Drive the pool as the run loop does, to the end of the plan (or of `shards`, the plan's shards not
    yet dispatched): {shard id: outcome}."""
    shards = shards if shards is not None else (plan.shard(k) for k in range(plan.count))
    outcomes, exhausted, end = {}, False, time.monotonic() + timeout
    pool.scale()
    while time.monotonic() < end:
        exhausted = pool.dispatch(shards) or exhausted
        if exhausted and not pool.busy():
            return outcomes
        for outcome in pool.wait(0.2):
            outcomes[outcome.shard.id] = outcome
    raise AssertionError("the pool did not finish the plan")


def test_the_automatic_deadline_follows_the_slowest_shard():
    pool = ShardPool(lambda kind: None, lambda failed: 0, in_flight=1, max_attempts=1)
    assert pool.deadline() == AUTO_FIRST_S  # nothing measured yet
    pool.slowest = 2.0
    assert pool.deadline() == AUTO_MIN_S
    pool.slowest = 100.0
    assert pool.deadline() == AUTO_FACTOR * 100.0
    timed = ShardPool(lambda kind: None, lambda failed: 0, in_flight=1, max_attempts=1, shard_timeout=7.5)
    assert timed.deadline() == 7.5


def test_the_pool_alone_plays_a_plan_like_the_kernels(ray_address, tmp_path):
    config = make_config(tmp_path, **SEARCH)
    gate = Gate(tmp_path)
    gate.set(True)
    pool, plan = make_pool(gated_runner(gate), config)
    try:
        outcomes = run_pool(pool, plan)
    finally:
        pool.close()
    assert sorted(outcomes) == list(range(plan.count)) and all(o.done for o in outcomes.values())
    assert pool.completed == plan.count and pool.slowest is not None and pool.stuck == 0
    want = {s["shard"]: s["deals"] for s in direct_tables(config)["shards"].to_pylist()}
    assert {k: o.figures.counts.deals for k, o in outcomes.items()} == want


def test_a_gpu_failing_mid_run_gives_its_shards_to_the_cpu_actors(ray_address, tmp_path):
    """A GPU actor beside a CPU actor; its second shard raises (out of memory): that shard and the one
    queued behind it go to the CPU actor untried, no actor is asked for on that GPU again, and one
    sentence says so. Every shard is done once, with the kernels' figures."""
    config = make_config(tmp_path, **dict(SEARCH, deals=120_000))
    plan = Plan(config)
    gpu_gate, cpu_gate = Gate(tmp_path), Gate(tmp_path)
    kinds = {"gpu": failing_gpu_runner(gpu_gate, fail_on=2), "cpu": gated_runner(cpu_gate)}
    pool = ShardPool(lambda kind: kinds[kind].remote(config.deck, plan.space.split, config.strategy),
                     lambda failed: {"gpu": 1 - failed, "cpu": 1}, in_flight=2, max_attempts=1)
    try:
        pool.scale()
        gpu_gate.set(True)  # the GPU actor starts first, so that it takes shards before the CPU's
        assert wait_for(lambda: pool.wait(0.05) == [] and pool.actors.ready == 1, timeout=60)
        cpu_gate.set(True)
        outcomes = run_pool(pool, plan)
    finally:
        pool.close()
    assert sorted(outcomes) == list(range(plan.count)) and all(o.done for o in outcomes.values())
    assert all(o.attempts == 1 for o in outcomes.values())  # the GPU's failed try is not counted
    by = {k: o.on_gpu for k, o in outcomes.items()}
    assert sum(by.values()) == 1 and by[0]  # the GPU played its first shard only
    assert sum(a.kind == "gpu" for a in pool.actors) == 1  # never replaced
    report = pool.report()
    assert report.gpu_failures == 1 and report.workers == 0 and report.in_flight == 0  # (closed)
    assert len(report.notes) == 1 and "failed (RuntimeError" in report.notes[0] and "CPU workers" in report.notes[0]
    assert pool.report().notes == ()  # a note is reported once
    want = {s["shard"]: s["deals"] for s in direct_tables(config)["shards"].to_pylist()}
    assert {k: o.figures.counts.deals for k, o in outcomes.items()} == want


def test_a_gpu_actor_failing_to_start_after_the_last_shard_is_said_when_the_pool_closes(ray_address, tmp_path):
    """A CPU actor, started sooner, plays every shard while the GPU actor still starts; the GPU's
    warm-up then fails (no CUDA driver): closing the pool, which gives starting actors a grace, says so."""
    config = make_config(tmp_path, **SEARCH)
    plan = Plan(config)
    gpu_gate, cpu_gate = Gate(tmp_path), Gate(tmp_path)
    kinds = {"gpu": driverless_gpu_runner(gpu_gate), "cpu": gated_runner(cpu_gate)}
    pool = ShardPool(lambda kind: kinds[kind].remote(config.deck, plan.space.split, config.strategy),
                     lambda failed: {"gpu": 1 - failed, "cpu": 1}, in_flight=2, max_attempts=1)
    try:
        cpu_gate.set(True)
        outcomes = run_pool(pool, plan)
        assert pool.actors.notes == [] and pool.actors.ready == 1
        gpu_gate.set(True)
    finally:
        pool.close(grace_s=60)
    assert sorted(outcomes) == list(range(plan.count)) and not any(o.on_gpu
                                                                   for o in outcomes.values())
    assert pool.actors.gpu_failures == 1 and len(pool.actors.notes) == 1
    assert "GPU worker" in pool.actors.notes[0] and "CUDA driver library cannot be found" in pool.actors.notes[0]


@pytest.mark.parametrize("fail_on", [None, 2], ids=["plays", "fails mid-batch"])
def test_a_gpu_actor_takes_batches_of_consecutive_shards(ray_address, tmp_path, fail_on):
    """gpu_batch = 3: the GPU actor's calls are 3 of the plan's shards each (in flight: 2 calls), each shard
    its own outcome with the kernels' figures. A batch that raises (its second shard: out of memory) gives
    all its shards and the batch queued behind it back to the CPU actor, untried."""
    config = make_config(tmp_path, **dict(SEARCH, deals=120_000))
    plan = Plan(config)
    gpu_gate, cpu_gate = Gate(tmp_path), Gate(tmp_path)
    kinds = {"gpu": failing_gpu_runner(gpu_gate, fail_on=fail_on or 10**9), "cpu": gated_runner(cpu_gate)}
    pool = ShardPool(lambda kind: kinds[kind].remote(config.deck, plan.space.split, config.strategy),
                     lambda failed: {"gpu": 1 - failed, "cpu": 1}, in_flight=2, max_attempts=1, gpu_batch=3)
    shards = (plan.shard(k) for k in range(plan.count))
    try:
        pool.scale()
        gpu_gate.set(True)
        assert wait_for(lambda: pool.wait(0.05) == [] and pool.actors.ready == 1, timeout=60)
        pool.dispatch(shards)
        assert [[s.id for s in batch] for batch, _ in pool.in_flight.values()] == [[0, 1, 2], [3, 4, 5]]
        assert pool.report().in_flight == 6
        cpu_gate.set(True)
        outcomes = run_pool(pool, plan, shards=shards)
    finally:
        pool.close()
    assert sorted(outcomes) == list(range(plan.count)) and all(o.done for o in outcomes.values())
    assert all(o.attempts == 1 for o in outcomes.values())
    on_gpu = {k for k, o in outcomes.items() if o.on_gpu}
    if fail_on is None:
        assert {0, 1, 2, 3, 4, 5} <= on_gpu and pool.actors.gpu_failures == 0
    else:
        assert on_gpu == set() and pool.actors.gpu_failures == 1 and len(pool.actors.notes) == 1
    want = {s["shard"]: s["deals"] for s in direct_tables(config)["shards"].to_pylist()}
    assert {k: o.figures.counts.deals for k, o in outcomes.items()} == want


def test_actors_lost_before_they_start_are_capacity_lost_not_a_failure_to_start(ray_address, tmp_path):
    """A spot node taken while its actors warm up: they are replaced, as often as it happens, and
    the run goes on once actors start; it never counts as "the workers cannot start"."""
    config = make_config(tmp_path, **SEARCH)
    gate = Gate(tmp_path)
    pool, plan = make_pool(gated_runner(gate), config)
    try:
        pool.scale()
        for lost in range(1, 4 * (2 * 2 + 2)):  # well past the threshold for failures to start
            starting = [a for a in pool.actors if a.alive and not a.ready]
            ray.kill(starting[0].handle, no_restart=True)  # gone, as with its node
            assert wait_for(lambda lost=lost: pool.wait(0.05) == [] and pool.actors.lost == lost, timeout=30)
        assert pool.actors.start_failures == 0 and pool.actors.alive == 2
        gate.set(True)
        outcomes = run_pool(pool, plan)
    finally:
        pool.close()
    assert len(outcomes) == plan.count and all(o.done for o in outcomes.values())


def test_workers_that_fail_to_start_stop_the_pool(ray_address, tmp_path):
    config = make_config(tmp_path, **SEARCH)
    pool, _ = make_pool(gated_runner(None, fail_warm_up=True), config)
    try:
        pool.scale()
        with pytest.raises(BmnError, match=r"the workers cannot start \(7 failed\): .*No module named 'numba'"):
            for _ in range(600):
                pool.wait(0.1)
    finally:
        pool.close()


def test_a_fixed_number_of_workers_the_cluster_cannot_place_says_so(ray_address, tmp_path, monkeypatch):
    """Every CPU of the cluster is held by someone else: workers = 1 waits START_WAIT_S, then stops
    with a sentence (workers = 0 would wait for CPUs as long as it takes)."""
    monkeypatch.setattr(cluster.cloud.actors, "START_WAIT_S", 3.0)
    cpus = int(ray.cluster_resources()["CPU"])
    holders = [CpuHolder.remote() for _ in range(cpus)]
    ray.get([h.placed.remote() for h in holders])  # placed: every CPU is taken
    try:
        with pytest.raises(BmnError, match=rf"none of the 1 workers asked for could be placed in \d+ s: the Ray "
                                           rf"cluster has {cpus} CPUs \(0 free\).*workers = 0"):
            run_search(make_config(tmp_path, workers=1, **SEARCH))
    finally:
        for holder in holders:
            ray.kill(holder)
    assert not (tmp_path / "run.lock").exists()
    # The CPUs free again, the same command finishes the run.
    monkeypatch.undo()
    assert wait_for(lambda: ray.available_resources().get("CPU", 0) == cpus, timeout=60)
    report = run_search(make_config(tmp_path, workers=1, **SEARCH), resume=True)
    assert report.state == "finished"


def stalling_worker(marker_dir: str):
    """ShardWorker, except that shard 1 never returns (a hung node), on every try, and shard 2 not
    on its first try: its actor writes a marker file, then waits for ever."""

    @ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)
    class Stalling(ShardRunner):
        def run(self, shard):
            marker = os.path.join(marker_dir, f"stalled-{shard.id}")
            if shard.id == 1 or (shard.id == 2 and not os.path.exists(marker)):
                open(marker, "w").write(str(os.getpid()))
                while True:
                    time.sleep(1)
            return super().run(shard)

    return Stalling


def test_stuck_shards_are_reissued_and_their_actors_replaced(ray_address, tmp_path, monkeypatch):
    """Shards whose worker never answers: past shard_timeout the actor is killed and replaced and the
    shard runs on another; one stuck on every try is given up with its reason; every other shard's
    rows are those of an undisturbed run."""
    import pyarrow.compute as pc

    markers = tmp_path / "markers"
    markers.mkdir()
    monkeypatch.setattr(cluster.cloud.worker, "ShardWorker", stalling_worker(str(markers)))
    config = make_config(tmp_path / "run", workers=2, shard_timeout=3, max_attempts=2, **SEARCH)
    pools = []
    report = run_search(config, on_shard_done=lambda coordinator: pools.append(coordinator.pool))
    assert report.shards_failed == 1 and report.shards_done == 5
    assert (markers / "stalled-2").exists()
    pool = pools[-1]
    assert pool.stuck == 3 and len(pool.actors) == 2 + 3  # each stuck actor killed and replaced
    tables, want = tables_of(tmp_path / "run"), direct_tables(config)
    rows = tables["shards"].to_pylist()
    [failed] = [r for r in rows if r["status"] == "failed"]
    assert failed["shard"] == 1 and failed["attempts"] == 2
    assert failed["error"].startswith("past its deadline: no result from ") and failed["error"].endswith(" in 3 s")
    attempts = {r["shard"]: r["attempts"] for r in rows}
    assert attempts[2] == 2 and all(n == 1 for k, n in attempts.items() if k not in (1, 2))

    def others(table):
        return table.filter(pc.not_equal(table["shard"], 1))

    assert others(tables["games"]).equals(others(want["games"]))
    assert others(tables["shards"]).select(DETERMINISTIC_SHARD_COLUMNS).equals(
        others(want["shards"]).select(DETERMINISTIC_SHARD_COLUMNS))
