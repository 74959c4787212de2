"""The search cluster on a real local Ray (one instance for this module)."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import ray
from cluster_helpers import (
    assert_kernels_tables,
    assert_same_tables,
    direct_tables,
    kill_a_busy_actor_once,
    make_config,
    tables_of,
    wait_for,
)

from cluster.loop.coordinator import run_search
from cluster.runs.lease import Lease
from cluster.runs.storage import RunStore
from cluster.runs.tables import read_summaries
from kernels.errors import BmnError

BMN = Path(sys.executable).parent / "bmn"
RANDOM = dict(strategy="random", deals=300_000, shard_size=50_000, min_cards=1000, seed=11)


@pytest.fixture(scope="module")
def reference_run(ray_address, tmp_path_factory):
    """The uninterrupted run of RANDOM on two workers, and its tables."""
    out = tmp_path_factory.mktemp("reference")
    report = run_search(make_config(out, workers=2, **RANDOM))
    assert report.state == "finished" and report.shards_done == 6
    return out, tables_of(out)


def test_two_workers_one_worker_and_the_kernels_agree(reference_run, tmp_path):
    _, tables2 = reference_run
    run_search(make_config(tmp_path, workers=1, **RANDOM))
    tables1 = tables_of(tmp_path)
    assert_same_tables(tables2, tables1)
    assert_same_tables(tables2, direct_tables(make_config(tmp_path / "x", **RANDOM)))
    assert tables1["games"].num_rows > 10
    assert sum(tables1["histogram"].column("games").to_pylist()) == 300_000


def test_tables_written_match_tables_rebuilt(reference_run):
    out, tables = reference_run
    import pyarrow.parquet as pq

    for name, table in tables.items():
        assert pq.read_table(out / f"{name}.parquet").equals(table)
    run = json.loads((out / "run.json").read_text())
    assert run["schema_version"] == 1 and run["config"]["seed"] == 11 and run["code_version"]


def test_an_actor_runs_its_kernels_on_one_numba_thread(ray_address):
    # The actor holds one CPU; a parallel kernel (play_batch's, the deals and climbing strategies')
    # would otherwise start a thread per CPU of its node. Numba counts threads per calling thread:
    # asked on the thread that runs the actor's calls.
    from cluster.cloud.worker import ShardWorker

    actor = ShardWorker.remote("standard", (26, 26), "random")  # (the kernels the module's searches load)
    try:
        ray.get(actor.warm_up.remote())
        threads = ray.get(actor.__ray_call__.remote(lambda runner: __import__("numba").get_num_threads()))
        assert threads == 1
    finally:
        ray.kill(actor)


# Shards of a quarter of a second each, so that an actor is still computing one when a hook looks
# (with RANDOM's, of 25 ms, every shard in flight was sometimes done by then).
QUARTER = dict(RANDOM, deals=2_400_000, shard_size=400_000)


def test_a_killed_actor_changes_nothing(ray_address, tmp_path):
    killed = []
    report = run_search(make_config(tmp_path, workers=2, **QUARTER), on_shard_done=kill_a_busy_actor_once(killed))
    assert killed and report.state == "finished" and report.shards_failed == 0
    tables = tables_of(tmp_path)
    assert_kernels_tables(tables, make_config(tmp_path, **QUARTER))
    attempts = dict(zip(*tables["shards"].select(["shard", "attempts"]).to_pydict().values()))
    _, _, queued = killed[0]
    assert max(attempts[k] for k in queued) >= 2  # the shard it was computing was run again


def test_attempts_cap_reports_failed_shards_and_resume_finishes_them(ray_address, tmp_path):
    killed = []
    report = run_search(make_config(tmp_path, workers=2, max_attempts=1, **QUARTER),
                        on_shard_done=kill_a_busy_actor_once(killed))
    assert killed
    assert report.shards_failed >= 1
    manifest = tables_of(tmp_path)["shards"].to_pylist()
    failed = [row for row in manifest if row["status"] == "failed"]
    assert failed and all(row["error"].startswith("worker lost") for row in failed)
    assert {row["shard"] for row in failed} <= killed[0][2]  # the shards it held, one of them computing
    report = run_search(make_config(tmp_path, workers=2, **QUARTER), resume=True)
    assert report.shards_failed == 0 and report.shards_done == 6
    assert_kernels_tables(tables_of(tmp_path), make_config(tmp_path, **QUARTER))


@pytest.mark.slow
def test_driver_stopped_by_ray_job_stop_then_resumed(ray_address, tmp_path):
    """`ray job stop` sends the driver SIGTERM and, after a grace of a few seconds, SIGKILL: the
    search stops within the grace (its lock released, its shards kept), and resuming finishes the
    run as if nothing had happened. (A driver killed outright, leaving its lock:
    test_cluster_s3.py.)"""
    from ray.dashboard.modules.job.job_supervisor import JobSupervisor

    out = tmp_path / "run"
    args = [str(BMN), "search", "--strategy", "random", "--deals", "3000000", "--shard-size", "50000",
            "--min-cards", "1000", "--seed", "11", "--workers", "2", "--out", str(out), "--address", ray_address,
            "--no-progress"]
    shards = out / "shards"
    driver = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert wait_for(lambda: shards.exists() and len(list(shards.glob("*.parquet"))) >= 2)
    driver.send_signal(signal.SIGTERM)
    try:
        code = driver.wait(timeout=JobSupervisor.DEFAULT_RAY_JOB_STOP_WAIT_TIME_S)
    except subprocess.TimeoutExpired:
        driver.kill()
        pytest.fail("still running after `ray job stop`'s grace: Ray would SIGKILL it, its lock left behind")
    assert code == 130 and "Traceback" not in driver.stderr.read()
    assert not (out / "run.lock").exists()
    assert json.loads((out / "progress.json").read_text())["state"] == "interrupted"
    stopped = len(read_summaries(RunStore(str(out))))
    assert 2 <= stopped < 60
    # It wrote no summary tables (too slow for the grace on a large run): a query builds them.
    assert not (out / "games.parquet").exists()
    from cluster.commands.query import query

    assert query([str(out)], "SELECT count(*) AS n FROM shards").to_pylist() == [{"n": stopped}]
    resumed = subprocess.run([str(BMN), "resume", str(out), "--address", ray_address, "--no-progress", "--json"],
                             capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    report = json.loads(resumed.stdout)
    assert report["shards_done"] == 60 and report["new_shards"] == 60 - stopped
    assert_kernels_tables(tables_of(out), make_config(tmp_path / "whole", **{**RANDOM, "deals": 3_000_000}))


def test_time_limit_then_resume(reference_run, ray_address, tmp_path, capsys):
    """A limit shorter than a shard, and than the workers' start (issue 31: such a run never advanced,
    however often it was resumed): every session plays the shards it first hands out (one worker: its
    two in flight), a resume keeps the limit and says so, and `--time-limit 0` lifts it."""
    from cluster.commands.search import print_report

    _, want = reference_run
    config = make_config(tmp_path, workers=1, time_limit=0.01, **RANDOM)
    done = []
    for resume in (False, True):
        report = run_search(config, resume=resume)
        assert report.state == "time limit"
        done.append(report.shards_done)
    assert 0 < done[0] < done[1] < 6, done
    assert print_report(report, as_json=False) == 0
    assert f"`bmn resume {tmp_path} --time-limit 0` without one" in capsys.readouterr().out
    lifted = subprocess.run([str(BMN), "resume", str(tmp_path), "--time-limit", "0", "--address", ray_address,
                             "--no-progress"], capture_output=True, text=True)
    assert lifted.returncode == 0 and lifted.stdout.startswith("finished: 6 of 6 shards done"), lifted.stderr
    assert_same_tables(want, tables_of(tmp_path))
    # the searches leave no thread of theirs behind (a notebook or a service runs many searches)
    import threading

    for thread in threading.enumerate():
        if thread.name.startswith("bmn-"):
            thread.join(timeout=5)
    assert not [t.name for t in threading.enumerate() if t.name.startswith("bmn-")]


def test_a_resume_reads_each_shard_file_once(reference_run, tmp_path, monkeypatch):
    _, want = reference_run
    collected = []

    def interrupt(coordinator):
        collected.append(1)
        if len(collected) == 3:
            raise KeyboardInterrupt

    assert run_search(make_config(tmp_path, workers=1, **RANDOM), on_shard_done=interrupt).state == "interrupted"
    before = len(read_summaries(RunStore(str(tmp_path))))
    assert 3 <= before < 6
    reads = []
    original = RunStore.read_parquet
    monkeypatch.setattr(RunStore, "read_parquet", lambda store, rel: reads.append(rel) or original(store, rel))
    assert run_search(make_config(tmp_path, workers=1, **RANDOM), resume=True).state == "finished"
    # the files there at the start are read when the run opens, the new ones at the end: once each
    assert sorted(reads) == sorted(set(reads)) and len(reads) == 6, reads
    assert_same_tables(want, tables_of(tmp_path))


def test_rerunning_the_same_search_skips_finished_shards(reference_run):
    out, want = reference_run
    report = run_search(make_config(out, workers=2, **RANDOM))
    assert report.new_shards == 0 and report.shards_done == 6
    assert_same_tables(want, tables_of(out))


def test_a_different_search_on_the_same_run_is_refused(reference_run):
    out, want = reference_run
    with pytest.raises(BmnError, match=r"holds a different search \(seed: 11 in the run, 12 now\)"):
        run_search(make_config(out, workers=2, **{**RANDOM, "seed": 12}))
    assert_same_tables(want, tables_of(out))


def test_two_jobs_on_one_run_are_refused(reference_run):
    out, want = reference_run
    holder = Lease(RunStore(str(out))).acquire()
    try:
        with pytest.raises(BmnError, match="being written by another job"):
            run_search(make_config(out, workers=2, **RANDOM))
    finally:
        holder.release()
    assert_same_tables(want, tables_of(out))


def test_searches_give_back_every_cpu(ray_address, tmp_path):
    # Searches of one tiny shard end while their second actor is still starting; each must leave the
    # cluster's CPUs as it found them (an actor killed mid-creation kept its CPU until the driver
    # exits, and the next search asking for two workers waited for ever).
    for k in range(2):
        report = run_search(make_config(tmp_path / str(k), workers=2, strategy="random", deals=10, shard_size=10,
                                        min_cards=10**6, seed=k))
        assert report.state == "finished"
    assert wait_for(lambda: ray.available_resources().get("CPU", 0) == 2, timeout=60), ray.available_resources()


def standing_request() -> list:
    """The CPU bundles this cluster's autoscaler is asked to keep (request_resources), as Ray stores
    them for either autoscaler version."""
    from ray.autoscaler.v2.utils import is_autoscaler_v2

    if is_autoscaler_v2():
        from ray._raylet import GcsClient
        from ray.autoscaler.v2.sdk import get_cluster_resource_state

        state = get_cluster_resource_state(GcsClient(ray.get_runtime_context().gcs_address))
        return [b for c in state.cluster_resource_constraints for b in c.resource_requests]
    from ray.autoscaler._private.constants import AUTOSCALER_RESOURCE_REQUEST_CHANNEL
    from ray.experimental.internal_kv import _internal_kv_get

    stored = _internal_kv_get(AUTOSCALER_RESOURCE_REQUEST_CHANNEL)
    return json.loads(stored) if stored else []


def test_max_workers_caps_the_pool_and_the_autoscaler_request_which_ends_with_the_search(reference_run, tmp_path):
    """workers = 0 (every CPU the cluster has, now or later) with max_workers = 1, on a cluster of 2
    CPUs: one actor at most, at most one CPU asked of the autoscaler while the search runs, the
    request withdrawn when it ends, and the tables of two workers."""
    _, want = reference_run
    during, alive = [], []

    def look(coordinator):
        during.append(standing_request())
        alive.append(coordinator.pool.actors.alive)

    report = run_search(make_config(tmp_path, workers=0, max_workers=1, **RANDOM), on_shard_done=look)
    assert report.state == "finished" and during and during[0]  # while it ran, CPUs were asked for
    assert max(alive) == 1 and max(len(request) for request in during) == 1, (alive, during)
    assert standing_request() == []
    assert_same_tables(want, tables_of(tmp_path))


def test_cycles_from_many_shards_and_workers_dedupe(ray_address, tmp_path):
    # 4004 deals, 46 of which enter one of 4 cycles; 201 shards of 20 deals on two workers.
    config = make_config(tmp_path, workers=2, strategy="exhaustive", deck="0:10,1:3,2:1", shard_size=20,
                         min_cards=10**6)

    def both_workers_warm(coordinator):
        ray.get([a.warm_ref for a in coordinator.pool.actors], timeout=300)

    run_search(config, on_shard_done=both_workers_warm)
    tables = tables_of(tmp_path)
    rows = tables["games"].to_pylist()
    cycles = tables["cycles"].to_pylist()
    assert len(rows) == 46 and len(cycles) == 4
    for cycle in cycles:
        entered = [r for r in rows if r["cycle_id"] == cycle["cycle_id"]]
        assert cycle["deals"] == len(entered)
        assert cycle["first_shard"] == min(r["shard"] for r in entered)
        assert cycle["hands"] == min(entered, key=lambda r: (r["shard"], r["index"]))["hands"]
        assert cycle["period_tricks"] == entered[0]["period_tricks"]
    by_shard = {m["shard"]: m["worker"] for m in tables["shards"].to_pylist()}
    assert len({by_shard[r["shard"]] for r in rows}) == 2  # cycles were met by both workers
    assert_same_tables(tables, direct_tables(config))
    assert [r["rank"] for r in rows] == sorted(r["rank"] for r in rows)


def test_status_of_a_finished_run(reference_run, capsys):
    from cluster.commands.status import run_status_dict

    out, tables = reference_run
    st = run_status_dict(str(out))
    assert (st["state"], st["shards_done"], st["shards_pending"], st["deals"]) == ("finished", 6, 0, 300_000)
    assert st["longest"]["cards"] == max(tables["games"].column("cards").to_pylist())


def test_a_directory_that_is_not_a_run_is_refused(ray_address, tmp_path):
    (tmp_path / "notes.txt").write_text("my notes")
    with pytest.raises(BmnError, match="already holds files .*notes.txt.* and is not a bmn run"):
        run_search(make_config(tmp_path, workers=1, **RANDOM))
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_min_tricks_keeps_games_of_that_many_tricks(ray_address, tmp_path):
    config = make_config(tmp_path, workers=1, **{**RANDOM, "deals": 100_000, "min_cards": 10**6, "min_tricks": 200})
    run_search(config)
    rows = tables_of(tmp_path)["games"].to_pylist()
    assert rows and all(r["tricks"] >= 200 and r["cards"] < 10**6 for r in rows)
    histogram = tables_of(tmp_path)["histogram"].to_pylist()
    assert sum(h["games"] for h in histogram) == 100_000
    assert_same_tables(tables_of(tmp_path), direct_tables(config))


def test_a_job_on_another_machine_is_refused_while_the_first_compiles(reference_run, tmp_path, monkeypatch):
    """The lease is renewed from the moment a job opens its run, before any shard: a job on another
    machine watching the lock while the first one's workers are still compiling sees it renewed
    and is refused (the lease shortened to 1 s, so that the watch is short)."""
    import socket
    import threading

    from cluster_helpers import Gate, gated_runner

    import cluster.cloud.worker
    import cluster.runs.lease

    _, want = reference_run
    monkeypatch.setattr(cluster.runs.lease, "LOCK_STALE_S", 1.0)
    here, elsewhere = socket.gethostname(), threading.local()
    monkeypatch.setattr(cluster.runs.lease.socket, "gethostname",
                        lambda: "another-machine" if getattr(elsewhere, "on", False) else here)
    gate = Gate(tmp_path)  # shut: the first job's workers stay in their warm-up (compiling)
    monkeypatch.setattr(cluster.cloud.worker, "ShardWorker", gated_runner(gate))
    out = tmp_path / "run"
    result = {}
    first = threading.Thread(target=lambda: result.update(report=run_search(make_config(out, workers=1, **RANDOM))))
    first.start()
    try:
        assert wait_for(lambda: (out / "run.lock").exists(), timeout=60)
        elsewhere.on = True  # this thread is now a job on another machine
        with pytest.raises(BmnError, match="being written by another job"):
            Lease(RunStore(str(out))).acquire(notice=lambda text: None)
        elsewhere.on = False
        shards = out / "shards"
        assert not (shards.exists() and any(shards.glob("*.parquet")))  # still before any shard
    finally:
        elsewhere.on = False
        gate.set(True)
        first.join(timeout=300)
    assert result["report"].state == "finished"
    assert_same_tables(want, tables_of(out))


def test_a_dead_jobs_lock_is_taken_over_after_its_lease_passes_unchanged(reference_run, monkeypatch):
    import socket
    import threading

    import cluster.runs.lease

    monkeypatch.setattr(cluster.runs.lease, "LOCK_STALE_S", 1.0)
    out, want = reference_run
    store = RunStore(str(out))
    # A lock left by a job on another machine (its clock 90 s fast): watched for the lease, unchanged,
    # so its job is dead and the search takes the run over.
    stale = {"owner": "elsewhere", "host": socket.gethostname() + "-other", "pid": 1, "started": 0.0,
             "heartbeat": time.time() + 90}
    store.write_json("run.lock", stale)
    report = run_search(make_config(out, workers=2, **RANDOM))
    assert report.shards_done == 6 and not (out / "run.lock").exists()
    # The same lock renewed while watched (a live job, its clock an hour behind): refused.
    stop = threading.Event()

    def renew():
        k = 0
        while not stop.wait(0.1):
            k += 1
            store.write_json("run.lock", {**stale, "heartbeat": time.time() - 3600, "renewal": k})

    store.write_json("run.lock", stale)
    renewer = threading.Thread(target=renew)
    renewer.start()
    try:
        with pytest.raises(BmnError, match="being written by another job"):
            run_search(make_config(out, workers=2, **RANDOM))
    finally:
        stop.set()
        renewer.join()
    store.delete("run.lock")
    assert_same_tables(want, tables_of(out))


def test_a_search_renews_its_lease_from_one_thread(ray_address, tmp_path, monkeypatch):
    """The lease's renewer is the lock's only writer during a search: progress.json, written by the
    search's own thread (every 0.05 s here), leaves the lock alone (renewed every 100 s here, so
    not within the test)."""
    import threading

    import cluster.loop.course
    import cluster.runs.lease
    from cluster.runs.lease import read_lock

    monkeypatch.setattr(cluster.loop.course, "PROGRESS_S", 0.05)
    monkeypatch.setattr(cluster.runs.lease, "LOCK_STALE_S", 600.0)
    out = tmp_path / "run"
    seen = []

    def look(coordinator):
        progress = out / "progress.json"
        state = progress.exists() and json.loads(progress.read_text())["state"]
        renewers = sum(t.name == "bmn-lease" for t in threading.enumerate())
        seen.append((read_lock(RunStore(str(out))).renewal, state, renewers))

    assert run_search(make_config(out, workers=1, **QUARTER), on_shard_done=look).state == "finished"
    assert "running" in [state for _, state, _ in seen], seen  # the heartbeat wrote progress.json meanwhile
    assert all(renewal == 0 and renewers == 1 for renewal, _, renewers in seen), seen


def test_a_search_whose_run_another_job_took_over_stops_with_one_sentence(ray_address, tmp_path, monkeypatch):
    """Another job took the run over (this one's renewals stopped past the lease, then came back):
    the search stops at its lease's next renewal, says who has the run, and leaves their lock."""
    from cluster_helpers import one_sentence

    import cluster.runs.lease
    from cluster.runs.lease import LockInfo

    monkeypatch.setattr(cluster.runs.lease, "LOCK_STALE_S", 0.6)  # a renewal every 0.1 s
    config = make_config(tmp_path / "run", workers=1, **QUARTER)
    thief = LockInfo("someone-else", "elsewhere", 1, time.time(), time.time())

    def take_over(coordinator):
        # Written until the renewer reads it (a renewal under way may write over it once).
        lease = coordinator.lease
        assert wait_for(lambda: lease.lost or coordinator.store.write_json("run.lock", thief.__dict__), timeout=10)

    with pytest.raises(BmnError) as caught:
        run_search(config, on_shard_done=take_over)
    assert one_sentence(caught.value) == f"another job took over run {config.out} ({thief.describe()})"
    assert json.loads((tmp_path / "run" / "run.lock").read_text())["owner"] == "someone-else"


@contextlib.contextmanager
def run_json_changed(out, **changes):
    """The run's run.json with some values changed, put back afterwards."""
    store = RunStore(str(out))
    original = store.read_json("run.json")
    store.write_json("run.json", {**original, **changes})
    try:
        yield store
    finally:
        store.write_json("run.json", original)


def test_a_run_of_another_table_schema_is_refused(reference_run):
    out, want = reference_run
    with run_json_changed(out, schema_version=99):
        with pytest.raises(BmnError, match="written with table schema 99, this bmn writes schema 1"):
            run_search(make_config(out, workers=2, **RANDOM), resume=True)
    assert_same_tables(want, tables_of(out))


def test_resuming_with_kernels_that_compute_something_else_is_refused(reference_run):
    out, want = reference_run
    with run_json_changed(out, results_version=0, code_version="0.0.1+gold") as store:
        with pytest.raises(BmnError, match=r"computed with results version 0 \(bmn 0.0.1\+gold\).*results version 1"):
            run_search(make_config(out, workers=2, **RANDOM), resume=True)
        summaries = read_summaries(store)
        assert {s.results_version for s in summaries.values()} == {1}  # each shard says what computed it


def test_exhaustive_ranks_past_64_bits_end_to_end(ray_address, tmp_path):
    from kernels.dealspace import DealSpace
    from kernels.decks import parse_deck
    from kernels.notation import format_deal

    casella = 472460898658889399111  # > 2**63
    config = make_config(tmp_path, workers=1, strategy="exhaustive", range=f"{casella - 300}:{casella + 300}",
                         shard_size=200, min_cards=400)
    run_search(config)
    rows = tables_of(tmp_path)["games"].to_pylist()
    space = DealSpace.of(parse_deck("standard"))
    assert rows and any(int(r["rank"]) == casella and r["outcome"] == "cycle" for r in rows)
    for r in rows:
        assert format_deal(space.unrank(int(r["rank"]))) == r["hands"]


def test_ranks_that_the_games_table_cannot_hold_are_refused():
    with pytest.raises(BmnError, match="at most 38 digits"):
        make_config("unused", strategy="exhaustive", deck="0:70,1:8,2:8,3:8,4:8")
    # A range of small ranks of the same deck is fine.
    make_config("unused", strategy="exhaustive", deck="0:70,1:8,2:8,3:8,4:8", range="0:1000")


def test_a_split_names_the_players(tmp_path):
    config = make_config(tmp_path, strategy="random", split="18,17,17")
    assert config.players == 3 and config.space().split == (18, 17, 17)
    with pytest.raises(BmnError, match="players"):
        make_config(tmp_path, strategy="random", split="18,17,17", players=2)
