"""Writing a run to an S3-compatible object store (moto's server on loopback) and resuming it there."""

from __future__ import annotations

import boto3
import pytest
from cluster_helpers import (
    AWS_TEST_ENV,
    assert_kernels_tables,
    assert_same_tables,
    free_port,
    make_config,
    moto_s3,
    offline_run,
    tables_of,
)

from cluster.commands.status import run_status_dict
from cluster.loop.coordinator import run_search
from cluster.runs.storage import RunStore

SEARCH = dict(strategy="random", deals=40_000, shard_size=5_000, min_cards=600, seed=3)


@pytest.fixture(scope="module")
def s3(ray_address):
    with moto_s3("bmn-runs") as endpoint:
        yield endpoint


def test_write_interrupt_and_resume_on_s3(s3, tmp_path):
    uri = f"s3://bmn-runs/searches/one?endpoint_override={s3}"
    # 20 shards: stopped at the second, the shards in flight (two on each worker) and those already
    # handed in are written, well short of all of them (with 8 shards, all could be)
    search = {**SEARCH, "shard_size": 2_000}
    stop_after = []

    def interrupt(coordinator):
        stop_after.append(1)
        if len(stop_after) == 2:
            raise KeyboardInterrupt  # as Ctrl-C would

    report = run_search(make_config(uri, workers=2, **search), on_shard_done=interrupt)
    assert report.state == "interrupted" and 2 <= report.shards_done < 20
    store = RunStore(uri)
    assert store.exists("run.json") and not store.exists("run.lock")
    report = run_search(make_config(uri, workers=2, **search), resume=True)
    assert report.state == "finished" and report.shards_done == 20
    local = offline_run(tmp_path / "local", **search)  # the same search on disk, from the kernels
    assert_same_tables(tables_of(local), tables_of(uri))
    names = store.list("shards", ".parquet")
    assert len(names) == 20
    assert run_status_dict(uri)["shards_done"] == 20
    from cluster.commands.query import query

    both = query([uri, str(local)], "SELECT count(*) AS n, max(cards) AS longest FROM games").to_pylist()[0]
    assert both["n"] == tables_of(local)["games"].num_rows  # the same deals: one row each
    assert both["longest"] == max(tables_of(uri)["games"].column("cards").to_pylist())


@pytest.mark.slow
def test_a_driver_killed_on_an_s3_run_then_resumed(s3, ray_address, tmp_path):
    """`bmn search --out s3://...` killed outright (SIGKILL: its node preempted) leaves its lock and
    its finished shards in the bucket; `bmn resume` takes the lock over (its process is gone) and
    finishes the run with the tables of a run never stopped (the kernels' own, shard by shard)."""
    import signal
    import subprocess
    import sys
    from pathlib import Path

    from cluster_helpers import wait_for

    bmn = str(Path(sys.executable).parent / "bmn")
    search = {**SEARCH, "deals": 800_000, "shard_size": 20_000}
    uri = f"s3://bmn-runs/searches/killed?endpoint_override={s3}"
    args = [bmn, "search", "--strategy", "random", "--deals", str(search["deals"]), "--shard-size",
            str(search["shard_size"]), "--min-cards", str(search["min_cards"]), "--seed", str(search["seed"]),
            "--workers", "2", "--out", uri, "--address", ray_address, "--no-progress"]
    driver = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    store = RunStore(uri)
    assert wait_for(lambda: len(store.list("shards", ".parquet")) >= 3, timeout=120)
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    done_before = len(store.list("shards", ".parquet"))
    assert store.exists("run.lock") and 3 <= done_before < 40
    resumed = subprocess.run([bmn, "resume", uri, "--address", ray_address, "--no-progress"],
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert not store.exists("run.lock") and run_status_dict(uri)["shards_done"] == 40
    assert_kernels_tables(tables_of(uri), make_config(tmp_path / "direct", **search))


def test_endpoint_from_the_environment(s3, tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3)
    uri = "s3://bmn-runs/searches/two"
    report = run_search(make_config(uri, workers=1, **{**SEARCH, "deals": 10_000}))
    assert report.state == "finished" and RunStore(uri).exists("games.parquet")


class _SlowCountingStore:
    """moto's S3 behind a WSGI layer that holds every request `delay` seconds and counts how many
    are in flight at once, and which requests are made."""

    def __init__(self, delay: float):
        import threading

        from moto.server import create_backend_app

        self.app, self.delay = create_backend_app("s3"), delay
        self.lock, self.now, self.most, self.requests = threading.Lock(), 0, 0, []

    def __call__(self, environ, start_response):
        import time

        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
            self.requests.append((environ["REQUEST_METHOD"], environ["PATH_INFO"]))
        try:
            time.sleep(self.delay)
            return self.app(environ, start_response)
        finally:
            with self.lock:
                self.now -= 1


@pytest.fixture
def slow_store():
    import threading

    from werkzeug.serving import make_server

    store = _SlowCountingStore(0.2)
    server = make_server("127.0.0.1", free_port(), store, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.server_port}"
    with pytest.MonkeyPatch.context() as mp:
        for key, value in AWS_TEST_ENV.items():
            mp.setenv(key, value)
        boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(Bucket="bmn-slow")
        yield store, endpoint
    server.shutdown()


def test_shard_files_go_to_a_slow_store_many_at_once_one_request_each(slow_store):
    """The writer pool's threads each have a request in flight (pyarrow's own pool of 8 would cap
    them at 8), each shard file is one PUT, and reading one back takes two requests."""
    import concurrent.futures as futures

    from cluster.loop.writer import WRITE_THREADS
    from cluster.runs.summary import ShardSummary
    from cluster.runs.tables import GAMES_SCHEMA, shard_file_name, shard_file_table
    from kernels.strategies.base import StreamShard

    store, endpoint = slow_store
    run = RunStore(f"s3://bmn-slow/run?endpoint_override={endpoint}")
    files = 2 * WRITE_THREADS
    store.requests.clear()
    with futures.ThreadPoolExecutor(WRITE_THREADS) as pool:
        params = StreamShard(seed=1, shard=0, count=1, min_cards=0, min_tricks=0)
        for done in [pool.submit(run.write_parquet, shard_file_name(k), shard_file_table(
                GAMES_SCHEMA.empty_table(), [ShardSummary(k, "random", params, "done")]))
                     for k in range(files)]:
            done.result()
    assert store.most >= 16, f"at most {store.most} requests in flight"
    assert sorted(m for m, _ in store.requests) == ["PUT"] * files
    store.requests.clear()
    assert run.read_parquet(shard_file_name(3)).schema.metadata
    assert len(store.requests) == 2, store.requests


class _RecordingStore:
    """moto's S3 as a WSGI app that records every request: method, path, query, headers, and the body
    of a multi-object delete (its keys); other bodies (chunked uploads among them) pass untouched."""

    def __init__(self):
        from moto.server import create_backend_app

        self.app, self.requests = create_backend_app("s3"), []

    def __call__(self, environ, start_response):
        import io

        body = b""
        if environ["REQUEST_METHOD"] == "POST" and "delete" in environ.get("QUERY_STRING", ""):
            body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))  # the keys deleted
            environ["wsgi.input"] = io.BytesIO(body)
        headers = {k[5:].replace("_", "-").lower(): v for k, v in environ.items() if k.startswith("HTTP_")}
        self.requests.append((environ["REQUEST_METHOD"], environ["PATH_INFO"], environ.get("QUERY_STRING", ""),
                              headers, body))
        return self.app(environ, start_response)


def test_a_runs_requests_fall_within_the_head_policy(ray_address, tmp_path):
    """A search, its status, a query, a compaction and a resume of the finished run, on S3: every
    request it makes is one configs/aws-head-policy.json allows the driver (it lists the bucket
    only under the run's prefix, and touches no object outside it)."""
    import threading
    from pathlib import Path

    import aws_policy
    from werkzeug.serving import make_server

    from cluster.commands.query import query
    from cluster.runs.compact import compact

    store = _RecordingStore()
    server = make_server("127.0.0.1", free_port(), store, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.server_port}"
    policy = aws_policy.load(Path(__file__).resolve().parents[1] / "configs" / "aws-head-policy.json",
                             **{"YOUR-BUCKET": "bmn-policy"})
    try:
        with pytest.MonkeyPatch.context() as mp:
            for key, value in AWS_TEST_ENV.items():
                mp.setenv(key, value)
            boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(Bucket="bmn-policy")
            store.requests.clear()
            uri = f"s3://bmn-policy/bmn/run-1?endpoint_override={endpoint}"
            search = {**SEARCH, "deals": 10_000}
            assert run_search(make_config(uri, workers=1, **search)).state == "finished"
            assert run_status_dict(uri)["shards_done"] == 2
            assert query([uri], "SELECT count(*) AS n FROM games").num_rows == 1
            compact(uri)
            assert run_search(make_config(uri, workers=1, **search), resume=True).state == "finished"
    finally:
        server.shutdown()
    assert len(store.requests) > 20
    refused = []
    for method, path, query_string, headers, body in store.requests:
        for action, resource, context in aws_policy.s3_authorizations(method, path, query_string, headers, body):
            if not aws_policy.allows(policy, action, resource, context):
                refused.append(f"{method} {path}?{query_string} ({action} {resource} {context})")
    assert not refused, "\n".join(refused[:10])
