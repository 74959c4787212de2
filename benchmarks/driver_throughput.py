"""How many shard results per second the driver sustains when every request to the object store
takes `LATENCY` seconds more (a moto S3 server on loopback behind a delay), against a local disk.

    .venv/bin/python benchmarks/driver_throughput.py [SHARDS] [LATENCY_S] [WORKERS]

Shards are tiny (100 deals), so the workers return results far faster than one request per shard
to a slow store could keep up with: the figure is the driver's, not the kernels'. It is the number
of shards collected and written per second, from the first shard handed out to the last written.
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import tempfile
import time

import boto3
import ray
from moto.server import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import make_server

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from cluster.config import build_config  # noqa: E402
from cluster.coordinator import run_search  # noqa: E402


def serve(port: int, latency: float) -> None:
    """The slow store, in a process of its own (as a real one is: not competing with the driver)."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    app = DomainDispatcherApplication(create_backend_app)

    def delayed(environ, start_response):
        time.sleep(latency)
        return app(environ, start_response)

    make_server("127.0.0.1", port, delayed, threaded=True).serve_forever()


def slow_s3(latency: float) -> tuple[str, subprocess.Popen]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(port), str(latency)])
    endpoint = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    return endpoint, server


def measure_writes(uri: str, shards: int) -> float:
    """The driver's write path alone: shard files through the coordinator's writer pool (no Ray, no
    kernels), so the figure is the store's and the pool's, whatever the machine's cores are busy with."""
    import concurrent.futures as futures

    from cluster.coordinator import WRITE_THREADS
    from cluster.storage import RunStore
    from cluster.tables import GAMES_SCHEMA, shard_file_name, shard_file_table, shard_summary

    store = RunStore(uri)
    table = GAMES_SCHEMA.empty_table()
    t0 = time.perf_counter()
    with futures.ThreadPoolExecutor(WRITE_THREADS) as pool:
        done = [pool.submit(store.write_parquet, shard_file_name(k), shard_file_table(table, [shard_summary(
            k, "random", {}, None, status="done", elapsed_s=0, attempts=1, worker="", finished_at=0)]))
            for k in range(shards)]
        for f in done:
            f.result()
    return shards / (time.perf_counter() - t0)


def measure(out: str, shards: int, workers: int) -> tuple[float, int]:
    config = build_config({"out": out, "strategy": "random", "deals": shards * 100, "shard_size": 100,
                           "min_cards": 10**6, "workers": workers, "in_flight": 8, "progress": False})
    report = run_search(config)
    assert report.shards_done == shards, report
    return report.new_shards / report.work_s, report.new_shards


def main() -> None:
    shards = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    latency = float(sys.argv[2]) if len(sys.argv) > 2 else 0.05
    workers = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    for key, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                       ("AWS_DEFAULT_REGION", "us-east-1")):
        os.environ.setdefault(key, value)
    endpoint, server = slow_s3(latency)
    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(Bucket="bmn-bench")
    ray.init(num_cpus=workers, include_dashboard=False, logging_level="ERROR")
    try:
        measure(tempfile.mkdtemp(), 50, workers)  # warm-up: compile or load the kernels
        with tempfile.TemporaryDirectory() as tmp:
            local_rate, n = measure(os.path.join(tmp, "run"), shards, workers)
        print(f"local disk:            {local_rate:8.1f} shard results/s ({n} shards of 100 deals, {workers} workers)")
        s3_rate, n = measure(f"s3://bmn-bench/run?endpoint_override={endpoint}", shards, workers)
        print(f"S3 (+{latency * 1000:.0f} ms/request): {s3_rate:8.1f} shard results/s ({n} shards, whole search)")
        w = measure_writes(f"s3://bmn-bench/writes?endpoint_override={endpoint}", shards)
        print(f"S3 (+{latency * 1000:.0f} ms/request): {w:8.1f} shard files/s (the driver's write path alone)")
    finally:
        ray.shutdown()
        server.terminate()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        serve(int(sys.argv[2]), float(sys.argv[3]))
    else:
        main()
