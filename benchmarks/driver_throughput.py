"""How many shard results per second the driver sustains when every request to the object store
takes `LATENCY` seconds more (moto's S3 on loopback behind a delay), against a local disk.

    .venv/bin/pip install -e ".[bench]"     # uvicorn for the store's HTTP front
    .venv/bin/python benchmarks/driver_throughput.py [SHARDS] [LATENCY_S] [WORKERS]

The store is moto's S3 application (its own request handling and object storage) served by
uvicorn: the delay is awaited for every request independently, as a real store's round trip is,
and moto then answers in about 1 ms, where moto's own development server spends about 5 ms per
request on HTTP and so cannot show more than ~200 requests per second on this machine.

Shards are tiny (100 deals), so the workers return results far faster than one request per shard
to a slow store could keep up with: the figure is the driver's, not the kernels'. It is the number
of shards collected and written per second, from the first shard handed out to the last written.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time

import boto3
import ray
from moto.server import create_backend_app

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from cluster.loop.coordinator import run_search  # noqa: E402
from cluster.runs.config import build_config  # noqa: E402


def plain_body(headers: dict[bytes, bytes], body: bytes) -> bytes | None:
    """The object's bytes of a PUT sent whole or in unsigned aws-chunked encoding ("size in hex,
    CRLF, data, CRLF", ending with a chunk of size 0 and optional checksum trailers); None for a
    signed-chunk upload (left to moto's own request handling)."""
    payload = headers.get(b"x-amz-content-sha256", b"")
    if payload != b"STREAMING-UNSIGNED-PAYLOAD-TRAILER":
        return None if payload.startswith(b"STREAMING-") else body
    out, at = bytearray(), 0
    while True:
        end = body.index(b"\r\n", at)
        size = int(body[at:end].split(b";")[0], 16)
        if size == 0:
            return bytes(out)
        out += body[end + 2:end + 2 + size]
        at = end + 2 + size + 2


def asgi_front(wsgi_app, latency: float, put_object=None):
    """An ASGI application that waits `latency` seconds (without holding a thread) and then hands
    the request to a WSGI application (moto's S3): many slow requests in flight at once. With
    `put_object(bucket, key, data)`, a plain object PUT skips the WSGI application's request
    handling and goes straight to that function (moto's S3 backend)."""
    import asyncio
    import io

    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        body = bytearray()
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        await asyncio.sleep(latency)
        if put_object is not None and scope["method"] == "PUT" and not scope["query_string"]:
            bucket, _, key = scope["path"].lstrip("/").partition("/")
            data = plain_body(dict(scope["headers"]), bytes(body))
            if key and data is not None:  # a plain object PUT (every shard file): into moto's S3 backend
                stored = put_object(bucket, key, data)
                await send({"type": "http.response.start", "status": 200,
                            "headers": [(b"etag", f'"{stored.etag.strip(chr(34))}"'.encode()),
                                        (b"content-length", b"0")]})
                await send({"type": "http.response.body", "body": b""})
                return
        host, port = scope.get("server") or ("127.0.0.1", 80)
        environ = {"REQUEST_METHOD": scope["method"], "SCRIPT_NAME": "",
                   "PATH_INFO": scope["path"].encode("utf-8").decode("latin-1"),
                   "QUERY_STRING": scope["query_string"].decode("latin-1"),
                   "SERVER_NAME": host, "SERVER_PORT": str(port), "SERVER_PROTOCOL": "HTTP/1.1",
                   "wsgi.version": (1, 0), "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(bytes(body)),
                   "wsgi.errors": sys.stderr, "wsgi.multithread": False, "wsgi.multiprocess": False,
                   "wsgi.run_once": False}
        for raw_name, raw_value in scope["headers"]:
            name, value = raw_name.decode("latin-1").upper().replace("-", "_"), raw_value.decode("latin-1")
            key = name if name in ("CONTENT_TYPE", "CONTENT_LENGTH") else "HTTP_" + name
            environ[key] = environ[key] + "," + value if key in environ else value
        # uvicorn has already undone any chunked transfer encoding: say how long the body is
        environ["CONTENT_LENGTH"] = str(len(body))
        environ.pop("HTTP_TRANSFER_ENCODING", None)
        reply = {}

        def start_response(status, headers, exc_info=None):
            reply["status"], reply["headers"] = int(status.split(" ", 1)[0]), headers

        chunks = wsgi_app(environ, start_response)
        try:
            data = b"".join(chunks)
        finally:
            if hasattr(chunks, "close"):
                chunks.close()
        await send({"type": "http.response.start", "status": reply["status"],
                    "headers": [(k.lower().encode("latin-1"), str(v).encode("latin-1")) for k, v in reply["headers"]]})
        await send({"type": "http.response.body", "body": data})

    return app


def serve(port: int, latency: float) -> None:
    """The slow store, in a process of its own (as a real one is: not competing with the driver)."""
    import uvicorn
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.s3.models import s3_backends

    backend = s3_backends[DEFAULT_ACCOUNT_ID]["aws"]
    put = backend.put_object if os.environ.get("BMN_BENCH_FAST_PUT", "1") == "1" else None
    uvicorn.run(asgi_front(create_backend_app("s3"), latency, put), host="127.0.0.1", port=port, log_level="error",
                access_log=False, loop="uvloop", http="httptools", backlog=4096)


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

    from cluster.loop.writer import WRITE_THREADS
    from cluster.runs.storage import RunStore
    from cluster.runs.summary import ShardSummary
    from cluster.runs.tables import GAMES_SCHEMA, shard_file_name, shard_file_table

    store = RunStore(uri)
    table = GAMES_SCHEMA.empty_table()
    t0 = time.perf_counter()
    with futures.ThreadPoolExecutor(WRITE_THREADS) as pool:
        done = [pool.submit(store.write_parquet, shard_file_name(k),
                            shard_file_table(table, [ShardSummary(k, "random", "{}", "done")]))
                for k in range(shards)]
        for f in done:
            f.result()
    return shards / (time.perf_counter() - t0)


def measure_reads(uri: str) -> float:
    """Every shard file of a run read back in full, as the driver does when a search finishes."""
    from cluster.runs.storage import RunStore
    from cluster.runs.tables import read_contents

    t0 = time.perf_counter()
    contents = read_contents(RunStore(uri))
    assert not contents.damaged, contents.damaged
    return len(contents.files) / (time.perf_counter() - t0)


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
        r = measure_reads(f"s3://bmn-bench/run?endpoint_override={endpoint}")
        print(f"S3 (+{latency * 1000:.0f} ms/request): {r:8.1f} shard files/s read back "
              f"(as the driver does at the end)")
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
