"""Writing a run to an S3-compatible object store (moto's server on loopback) and resuming it there."""

from __future__ import annotations

import socket

import boto3
import pytest
import ray
from moto.server import ThreadedMotoServer

from cluster.coordinator import run_search
from cluster.status import run_status_dict
from cluster.storage import RunStore

from cluster_helpers import assert_same_tables, make_config, tables_of

SEARCH = dict(strategy="random", deals=40_000, shard_size=5_000, min_cards=600, seed=3)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    mp = pytest.MonkeyPatch()
    mp.setenv("AWS_ACCESS_KEY_ID", "testing")
    mp.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    mp.setenv("AWS_DEFAULT_REGION", "us-east-1")
    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(Bucket="bmn-runs")
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR")
    yield endpoint
    ray.shutdown()
    mp.undo()
    server.stop()


def test_write_interrupt_and_resume_on_s3(s3, tmp_path):
    uri = f"s3://bmn-runs/searches/one?endpoint_override={s3}"
    stop_after = []

    def interrupt(coordinator):
        stop_after.append(1)
        if len(stop_after) == 2:
            raise KeyboardInterrupt  # as Ctrl-C would

    report = run_search(make_config(uri, workers=2, **SEARCH), on_shard_done=interrupt)
    assert report.state == "interrupted" and 2 <= report.shards_done < 8
    store = RunStore(uri)
    assert store.exists("run.json") and not store.exists("run.lock")
    report = run_search(make_config(uri, workers=2, **SEARCH), resume=True)
    assert report.state == "finished" and report.shards_done == 8
    local = tmp_path / "local"
    run_search(make_config(local, workers=2, **SEARCH))
    assert_same_tables(tables_of(local), tables_of(uri))
    names = store.list("shards", ".parquet")
    assert len(names) == 8
    assert run_status_dict(uri)["shards_done"] == 8
    from cluster.query import query

    both = query([uri, str(local)], "SELECT count(*) AS n, max(cards) AS longest FROM games").to_pylist()[0]
    assert both["n"] == tables_of(local)["games"].num_rows  # the same deals: one row each
    assert both["longest"] == max(tables_of(uri)["games"].column("cards").to_pylist())


def test_endpoint_from_the_environment(s3, tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3)
    uri = "s3://bmn-runs/searches/two"
    report = run_search(make_config(uri, workers=1, **{**SEARCH, "deals": 10_000}))
    assert report.state == "finished" and RunStore(uri).exists("games.parquet")
