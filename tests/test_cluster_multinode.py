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


@pytest.mark.slow
def test_removing_a_node_mid_run_loses_nothing(cluster, tmp_path):
    c, nodes = cluster
    removed = []

    def remove_a_busy_node(coordinator):
        if removed:
            return
        found = busy_actor(coordinator)
        if found is None:
            return  # try again after the next shard
        busy, shard_id = found
        node_id, pid = busy.node_id, busy.pid
        node = next(n for n in nodes if n.node_id == node_id)
        # A lost machine takes its processes at once: kill the worker first, while it is still
        # computing the shard (removing the node takes a moment, in which the shard could finish).
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        c.remove_node(node, allow_graceful=False)
        removed.append((node_id, shard_id, coordinator))

    config = make_config(tmp_path, workers=2, **SEARCH)
    report = run_search(config, on_shard_done=remove_a_busy_node)
    assert removed and report.state == "finished" and report.shards_failed == 0
    tables = tables_of(tmp_path)
    assert_same_tables(tables, direct_tables(config))
    attempts = dict(zip(*tables["shards"].select(["shard", "attempts"]).to_pydict().values()))
    assert attempts[removed[0][1]] >= 2  # the shard computing on the lost node was run again
    coordinator = removed[0][2]
    # The lost actor was replaced (on the spare node: the lost one is gone, the head has no CPU).
    assert coordinator.pool.lost_actors == 1 and len(coordinator.pool.actors) == 3
