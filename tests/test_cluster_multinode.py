"""A multi-node Ray cluster on one machine, started as a user starts a cloud cluster (`ray start` per
node, token authentication): the job submitted with `ray job submit`, results on S3; then a node lost
mid-run (its processes killed, as a preempted machine's are)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest
import ray
from cluster_helpers import (
    AWS_TEST_ENV,
    assert_kernels_tables,
    assert_same_tables,
    busy_actor,
    direct_tables,
    free_port,
    make_config,
    moto_s3,
    tables_of,
    wait_for,
)

from cluster.loop.coordinator import run_search

BIN = Path(sys.executable).parent

SEARCH = dict(strategy="random", deals=800_000, shard_size=50_000, min_cards=1200, seed=5)


# -- the cloud flow, as a user types it ------------------------------------------------------------

def _ray(*args: str, env: dict, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "ray"), *args], env=env, capture_output=True, text=True, **kwargs)


@pytest.fixture(scope="module")
def typed_cluster(tmp_path_factory):
    """A Ray cluster started as docs/cloud.md starts one, each node its own `ray start` process: a head
    with no CPU (it runs the job's driver and the dashboard, with the job API on 127.0.0.1 only) and
    two worker nodes of one CPU, token authentication on with the session's token (so that this
    process can join as a driver). Yields (GCS address, dashboard URL, the environment that holds the
    token, the worker nodes' `ray start` processes: each leads the session of its node's processes)."""
    temp = tempfile.mkdtemp(prefix="bmnjob-")  # short: Ray's socket paths must fit in 107 bytes
    env = {**os.environ, "RAY_AUTH_MODE": "token", "HOME": str(tmp_path_factory.mktemp("home"))}
    dashboard = free_port()
    nodes = []

    def start(*args: str) -> subprocess.Popen:
        log = open(os.path.join(temp, f"node{len(nodes)}.log"), "wb")
        node = subprocess.Popen([str(BIN / "ray"), "start", "--block", "--disable-usage-stats", *args], env=env,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        nodes.append((node, log))
        return node

    try:
        start("--head", "--num-cpus=0", "--port=0", f"--temp-dir={temp}", "--dashboard-host=127.0.0.1",
              f"--dashboard-port={dashboard}", f"--dashboard-agent-listen-port={free_port()}")
        record = os.path.join(temp, "ray_current_cluster")
        assert wait_for(lambda: os.path.exists(record) and open(record).read().strip(), timeout=120)
        address = open(record).read().strip()
        def started(log: str) -> bool:  # what `ray start --block` prints once its node is up
            with open(os.path.join(temp, log), "rb") as handle:
                return b"Ray runtime started" in handle.read()

        def up(count: int) -> bool:
            said = _ray("status", f"--address={address}", env=env, timeout=60).stdout
            return said.count(" node_") == count and f"0.0/{count - 1}.0 CPU" in said

        # As the launchers do before a worker node starts (configs/warm_kernels.py), the kernels the
        # job uses are compiled into the Numba cache the nodes share here, so that both nodes' actors
        # start in seconds, well before the job's work is done.
        warm = ("from kernels.dealspace import DealSpace; from kernels.decks import parse_deck; "
                "from kernels.strategies import get; get('random').warm_up(DealSpace.of(parse_deck('standard')))")
        subprocess.run([sys.executable, "-c", warm], env=env, check=True, timeout=600)
        # One worker node after the other: several nodes on one machine pick their ports as they
        # start, and two starting at once can pick the same one. Each agent on a port of its own.
        # (Each node's own log says when it is up, read at no cost; `ray status`, a process of its own,
        # then checks the cluster once.)
        for count in (2, 3):
            start(f"--address={address}", "--num-cpus=1", "--dashboard-agent-listen-port=0",
                  "--dashboard-agent-grpc-port=0", "--metrics-export-port=0", "--runtime-env-agent-port=0")
            assert wait_for(lambda count=count: started(f"node{count - 1}.log"), timeout=180, step=0.2), \
                f"worker node {count - 1} did not start"
        assert wait_for(lambda: up(3), timeout=120, step=1.0), "the cluster does not have its two worker nodes"
        yield address, f"http://127.0.0.1:{dashboard}", env, [node for node, _ in nodes[1:]]
    finally:
        for node, log in nodes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(node.pid, signal.SIGKILL)
            node.wait()
            log.close()
        shutil.rmtree(temp, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_cloud_flow_as_a_user_types_it(typed_cluster, tmp_path):
    """`ray job submit -- bmn search ... --out s3://...` on a cluster of separate processes with token
    authentication, writing to moto's S3; then `bmn status` and `bmn query` from outside the
    cluster. The tables equal the kernels' own, both worker nodes play shards, and a client without
    the cluster's token is refused."""
    address, dashboard, env, _ = typed_cluster
    search = dict(strategy="random", deals=9_600_000, shard_size=400_000, min_cards=1400, seed=8)
    with moto_s3("bmn-cloud") as endpoint:
        storage = {**AWS_TEST_ENV, "AWS_ENDPOINT_URL": endpoint}
        uri = "s3://bmn-cloud/bmn/run-1"
        command = [str(BIN / "bmn"), "search", "--strategy", "random", "--deals", str(search["deals"]),
                   "--shard-size", str(search["shard_size"]), "--min-cards", str(search["min_cards"]),
                   "--seed", str(search["seed"]), "--out", uri, "--no-progress"]
        job = None
        for _ in range(60):  # the job API answers "no available agent" until the head's agent is up
            job = _ray("job", "submit", "--address", dashboard, "--runtime-env-json",
                       json.dumps({"env_vars": storage}), "--", *command, env=env, timeout=300)
            if "No available agent" not in job.stdout + job.stderr:
                break
            time.sleep(1.0)
        assert job.returncode == 0 and "finished" in job.stdout, job.stdout + job.stderr
        outside = {**env, **storage}
        status = subprocess.run([str(BIN / "bmn"), "status", uri, "--json"], env=outside, capture_output=True,
                                text=True, timeout=120)
        assert status.returncode == 0, status.stderr
        assert (json.loads(status.stdout)["state"], json.loads(status.stdout)["shards_done"]) == ("finished", 24)
        query = subprocess.run([str(BIN / "bmn"), "query", uri, "SELECT count(DISTINCT worker) AS workers FROM shards",
                                "--format", "json"], env=outside, capture_output=True, text=True, timeout=120)
        assert query.returncode == 0, query.stderr
        assert json.loads(query.stdout) == [{"workers": 2}]  # one actor on each one-CPU node: both played
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("AWS_ENDPOINT_URL", endpoint)
            assert_kernels_tables(tables_of(uri), make_config(tmp_path / "direct", **search))
    # Without the token: the job API refuses the client.
    anonymous = {k: v for k, v in env.items() if k != "RAY_AUTH_TOKEN"}
    refused = _ray("job", "list", "--address", dashboard, env=anonymous, timeout=120)
    assert refused.returncode != 0 and re.search(r"401|[Uu]nauthori[sz]ed|token", refused.stdout + refused.stderr)


# -- a node lost mid-run (after the cloud flow, which needs both worker nodes) ----------------------

@pytest.mark.slow
def test_losing_a_node_mid_run_loses_nothing(typed_cluster, tmp_path):
    """One worker on the two-node cluster: its node is lost while it computes a shard (every process of
    the node killed at once). The shard is played again by an actor started on the other node, and the
    tables are the kernels' own."""
    address, _, _, worker_nodes = typed_cluster
    lost = []

    def lose_a_busy_node(coordinator):
        if lost:
            return
        found = busy_actor(coordinator)
        if found is None:
            return  # try again after the next shard
        busy, shard_id = found
        # The node's `ray start` leads the session of every process of the node (the actors lead
        # process groups of their own): all of them are killed, the busy actor first, while it is
        # still computing the shard.
        session = os.getsid(busy.pid)
        node = next(n for n in worker_nodes if n.pid == session)
        for process in sorted(psutil.process_iter(), key=lambda p: p.pid != busy.pid):
            with contextlib.suppress(psutil.Error, ProcessLookupError):
                if os.getsid(process.pid) == session:
                    process.kill()
        node.wait()
        lost.append((busy.node_id, shard_id, coordinator))

    ray.init(address=address, logging_level="ERROR")
    try:
        config = make_config(tmp_path, workers=1, **SEARCH)
        report = run_search(config, on_shard_done=lose_a_busy_node)
    finally:
        ray.shutdown()
    assert lost and report.state == "finished" and report.shards_failed == 0
    tables = tables_of(tmp_path)
    assert_same_tables(tables, direct_tables(config))
    attempts = dict(zip(*tables["shards"].select(["shard", "attempts"]).to_pydict().values()))
    assert attempts[lost[0][1]] >= 2  # the shard computing on the lost node was run again
    pool = lost[0][2].pool
    # The lost actor was replaced, on the other node (the lost one is gone, the head has no CPU). A
    # replacement that Ray placed on the lost node before its control store declared the node dead is
    # lost in turn, and replaced: every actor but the last was lost, and the last one played on the
    # other node.
    last = pool.actors[-1]
    assert pool.actors.lost == len(pool.actors) - 1 >= 1 and last.ready and last.node_id not in (None, lost[0][0])
    assert f":{last.pid}" in {worker[worker.rindex(":"):] for worker in tables["shards"].column("worker").to_pylist()}
