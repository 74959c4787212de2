"""A search that follows its cluster (ray.cluster_utils.Cluster on one machine): a head with no CPU,
nodes joining while the search waits and while it runs, a node leaving. Every node that joins gets
an actor per CPU, and the tables are those of a run on a fixed cluster."""

from __future__ import annotations

import threading
import time

import pytest
import ray
from cluster_helpers import assert_kernels_tables, make_config, tables_of, wait_for
from ray.cluster_utils import Cluster

from cluster.loop.coordinator import run_search
from cluster.loop.progress import ProgressView

SEARCH = dict(strategy="random", deals=6_000_000, shard_size=100_000, min_cards=1500, seed=17)


class Notes(ProgressView):
    """Records what the progress line says (it is off: nothing is printed)."""

    def __init__(self):
        super().__init__(enabled=False)
        self.notes: list[str] = []

    def update(self, *args, note: str = "", **kwargs) -> None:
        if note:
            self.notes.append(note)


@pytest.fixture
def cluster():
    # Ray's control store marks a node dead after failed health checks: by default five, three seconds
    # apart (~15 s in which the lost node's shard waits and the search has nothing else left to do);
    # here after two, one second apart.
    health = {"health_check_period_ms": 1000, "health_check_timeout_ms": 1000, "health_check_failure_threshold": 2}
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False,
                                                      "_system_config": health})
    ray.init(address=c.address, logging_level="ERROR")
    yield c
    ray.shutdown()
    c.shutdown()


@pytest.mark.slow
def test_the_search_waits_for_cpus_then_grows_with_the_cluster_and_survives_a_node_leaving(cluster, tmp_path):
    config = make_config(tmp_path, workers=0, **SEARCH)  # 0: every CPU the cluster has, now or later
    progress = Notes()
    seen: dict[str, set] = {}
    shards_done = []
    result = {}
    joined: list[str] = []

    def hook(coordinator):
        shards_done.append(coordinator.counts.run.done)
        for actor in coordinator.pool.actors:
            if actor.ready:
                seen.setdefault(actor.node_id, set()).add(actor.pid)
        if joined and len(seen.get(joined[0], ())) < 2:
            # Until the second node's two actors are up, the one on the first node must not finish
            # the whole search alone (starting a worker process can take longer than the search
            # on a busy 2-core machine): each shard it hands in waits a little.
            time.sleep(2.0)

    def search():
        try:
            result["report"] = run_search(config, progress=progress, on_shard_done=hook)
        except BaseException as error:  # noqa: BLE001 - handed to the test's thread
            result["error"] = error

    runner = threading.Thread(target=search)
    runner.start()
    # The search starts on a cluster without a CPU: it waits, and says so.
    assert wait_for(lambda: "waiting for CPUs to join the cluster" in progress.notes, timeout=60)
    assert not shards_done
    first = cluster.add_node(num_cpus=1)
    assert wait_for(lambda: len(shards_done) >= 5, timeout=120)
    second = cluster.add_node(num_cpus=2)
    joined.append(second.node_id)
    assert wait_for(lambda: second.node_id in seen and len(seen[second.node_id]) == 2, timeout=120)
    cluster.remove_node(first, allow_graceful=False)
    runner.join(timeout=300)
    assert not runner.is_alive() and "error" not in result, result.get("error")
    report = result["report"]
    assert report.state == "finished" and report.shards_done == 60 and report.shards_failed == 0
    # An actor on every node that joined, one per CPU: one on the first node, two on the second.
    assert set(seen) == {first.node_id, second.node_id} and len(seen[first.node_id]) == 1
    tables = tables_of(tmp_path)
    assert_kernels_tables(tables, config)
    # The node that joined mid-run played shards, each of its actors (the shards table's worker:
    # NODE_IP:PID): work is handed out shard by shard, so whatever is left when an actor has started
    # is shared with it.
    played = {int(worker.rsplit(":", 1)[1]) for worker in tables["shards"].column("worker").to_pylist()}
    assert seen[second.node_id] <= played, (seen, played)
