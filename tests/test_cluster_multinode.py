"""A multi-node Ray cluster simulated on one machine; a node is removed mid-run."""

from __future__ import annotations

import os
import signal

import pytest
import ray
from ray.cluster_utils import Cluster

from cluster.coordinator import run_search

from cluster_helpers import assert_same_tables, busy_actor, direct_tables, make_config, tables_of

SEARCH = dict(strategy="random", deals=800_000, shard_size=50_000, min_cards=1200, seed=5)


@pytest.fixture(scope="module")
def cluster():
    # A head node with no CPU (so no actor lands there) and three one-CPU worker nodes.
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    nodes = [c.add_node(num_cpus=1) for _ in range(3)]
    c.wait_for_nodes()
    ray.init(address=c.address, logging_level="ERROR")
    yield c, nodes
    ray.shutdown()
    c.shutdown()


def test_removing_a_node_mid_run_loses_nothing(cluster, tmp_path):
    c, nodes = cluster
    removed = []

    def remove_a_busy_node(coordinator):
        if removed:
            return
        busy = busy_actor(coordinator)
        if busy is None:
            return  # try again after the next shard
        node_id = ray.get(busy.handle.node_id.remote())
        pid = ray.get(busy.handle.pid.remote())
        node = next(n for n in nodes if n.node_id == node_id)
        c.remove_node(node, allow_graceful=False)
        # Removing a node stops its raylet and object store; its worker processes notice only
        # later. A lost machine takes them at once: so does this test.
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        removed.append(node_id)

    config = make_config(tmp_path, workers=2, **SEARCH)
    report = run_search(config, on_shard_done=remove_a_busy_node)
    assert removed and report.state == "finished" and report.shards_failed == 0
    tables = tables_of(tmp_path)
    assert_same_tables(tables, direct_tables(config))
    assert max(tables["shards"].column("attempts").to_pylist()) >= 2
    workers = set(tables["shards"].column("worker").to_pylist())
    assert len(workers) >= 2  # the surviving actor and the replacement on the spare node
