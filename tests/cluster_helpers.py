"""Helpers for the cluster tests: configs, tables from the kernels directly, table comparison."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pytest
import ray

from cluster.cloud.worker import ShardRunner
from cluster.runs.config import build_config, resolve
from cluster.runs.plan import Plan, Shard
from cluster.runs.storage import RunStore
from cluster.runs.summary import ShardSummary
from cluster.runs.tables import RunContents, build_tables, games_table, read_contents
from kernels.strategies import Strategy

# Credentials for moto's S3 server (it accepts any).
AWS_TEST_ENV = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}

# A new value of every execution key (cluster/runs/config.py: those declared `execution=True`), each valid with the
# other keys' defaults: what a resume may change.
EXECUTION_CHANGES = {"out": "runs/other", "workers": 3, "max_workers": 2, "address": "auto", "time_limit": 60.0,
                     "progress": False, "max_attempts": 5, "in_flight": 4, "shard_timeout": 30.0, "device": "cpu",
                     "gpu_batch": 2, "audit": 0.1}

# The manifest columns that must not depend on who ran a shard, when, or how often.
DETERMINISTIC_SHARD_COLUMNS = ["shard", "strategy", "params", "status", "deals", "cards", "max_cards", "cycles",
                               "candidates"]


def make_config(out, **values):
    values.setdefault("progress", False)
    return resolve(build_config({"out": str(out), **values}))


def example_config(strategy: Strategy, tmp: Path):
    """The config of a strategy's example search, its deals file (if it reads one) written in `tmp`."""
    example = strategy.example
    values = {**example.search, "strategy": strategy.name, **({strategy.name: example.table} if example.table else {})}
    if example.deals:
        path = tmp / f"{strategy.name}.txt"
        path.write_text("\n".join(example.deals) + "\n")
        values["deals_file"] = str(path)
    return make_config(tmp / strategy.name, **values)


def tables_of(uri) -> dict[str, pa.Table]:
    return build_tables(read_contents(RunStore(str(uri))))


def play_shard(runner: ShardRunner, shard: Shard) -> tuple[pa.Table, ShardSummary]:
    """A shard played as a search plays it, without Ray: its games rows and its summary (a first try's,
    not signed by a run)."""
    played = runner.run(shard)
    return games_table(played), ShardSummary.of(played, run=None)


def direct_tables(config) -> dict[str, pa.Table]:
    """The tables obtained by calling the kernels shard by shard, without Ray."""
    plan = Plan(config)
    runner = ShardRunner(config.deck, plan.space.split, config.strategy)
    contents = RunContents()
    for k in range(plan.count):
        table, summary = play_shard(runner, plan.shard(k))
        contents.summaries[k] = summary
        if table.num_rows:
            contents.games.append(table)
    return build_tables(contents)


def offline_run(out, **values):
    """A finished run written as a search writes it, without Ray: run.json, the shard files from the
    kernels, then `run_search` with nothing left to compute (it writes the tables and starts no Ray)."""
    from cluster.loop.coordinator import run_search
    from cluster.runs.runmeta import open_run
    from cluster.runs.tables import shard_file_name, shard_file_table

    config = make_config(out, **values)
    store = RunStore(str(out))
    store.make_root()
    open_run(config, store, resume=False)
    plan = Plan(config)
    runner = ShardRunner(config.deck, plan.space.split, config.strategy)
    for k in range(plan.count):
        table, summary = play_shard(runner, plan.shard(k))
        store.write_parquet(shard_file_name(k), shard_file_table(table, [summary]))
    report = run_search(config, resume=True)
    assert report.state == "finished" and report.shards_done == plan.count
    return out


def _compared(tables: dict[str, pa.Table]) -> dict[str, pa.Table]:
    """What of a run's tables is the same on every run of its config: all but timings and placements, and
    the cycles' labels (`known`: the catalogue's word, which grows; tests/test_catalogue.py holds them)."""
    from cluster.runs.owned import own_tables

    return {"games": tables["games"], "cycles": unlabelled(tables["cycles"]), "histogram": tables["histogram"],
            "shards": tables["shards"].select(DETERMINISTIC_SHARD_COLUMNS),
            # (an own table the run does not keep: empty, as every run once wrote it)
            **{name: tables.get(name, own.schema.empty_table()).drop_columns(list(own.timings))
               for name, own in own_tables().items()}}


def unlabelled(cycles: pa.Table) -> pa.Table:
    return cycles.drop_columns(["known"]) if "known" in cycles.column_names else cycles


def assert_same_tables(a: dict[str, pa.Table], b: dict[str, pa.Table]) -> None:
    b = _compared(b)
    for name, table in _compared(a).items():
        assert table.equals(b[name]), name


def tables_digest(tables: dict[str, pa.Table]) -> str:
    """A hash of what assert_same_tables compares: each table's schema and rows."""
    parts = [[table.schema.to_string(show_schema_metadata=False), table.to_pylist()]
             for table in _compared(tables).values()]
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


# The kernels' tables of the larger searches that cluster tests play (millions of deals: seconds of a
# core each to play again in the test's process), pinned by digest under their config's fingerprint.
TABLE_PINS = Path(__file__).parent / "data" / "table_pins.json"


def assert_kernels_tables(tables: dict[str, pa.Table], config) -> None:
    """A run's tables are the kernels' own for its config (direct_tables): held to the digest pinned for
    the config where it is, else compared with the kernels' tables (a difference fails naming its
    table). Equal tables without their pin fail too: a pin is missing or stale (the results changed,
    as with a new RESULTS_VERSION); BMN_PIN_TABLES=1 writes it (run those tests without -n)."""
    pins = json.loads(TABLE_PINS.read_text())
    digest = tables_digest(tables)
    if pins.get(config.fingerprint()) == digest:
        return
    assert_same_tables(tables, direct_tables(config))
    if not os.environ.get("BMN_PIN_TABLES"):
        pytest.fail(f"the tables are the kernels' own, but tests/data/table_pins.json has no pin {digest} for the "
                    f"config {config.fingerprint()}: rerun with BMN_PIN_TABLES=1 to write it")
    pins[config.fingerprint()] = digest
    TABLE_PINS.write_text(json.dumps(dict(sorted(pins.items())), indent=1) + "\n")


def wait_for(predicate, timeout=60.0, step=0.05):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if predicate():
            return True
        time.sleep(step)
    return False


def in_process(*args) -> subprocess.CompletedProcess:
    """`bmn ARGS` run by the console script's main() in this process (argparse's own exit included), as
    subprocess.run would report it: for commands that start no Ray, where a process of their own adds
    only its start (~1 CPU-s)."""
    from cluster.commands.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            code = main([str(a) for a in args])
        except SystemExit as exit:  # argparse: a usage line and one error line, exit code 2
            code = exit.code
    return subprocess.CompletedProcess(["bmn", *map(str, args)], code, out.getvalue(), err.getvalue())


def run_main(*args) -> tuple[int, str]:
    """(exit code, stderr) of `bmn ARGS` run by main() in this process (`in_process`)."""
    done = in_process(*args)
    return done.returncode, done.stderr


def busy_actor(coordinator):
    """(actor, shard id) of an actor of a running coordinator that is computing a shard now, or None.

    An actor runs its queued shards one at a time, in the order they were sent: the shard it is
    computing is its oldest one still in flight.
    """
    import ray

    pool = coordinator.pool
    for actor in pool.actors:
        if not (actor.alive and actor.ready and actor.queue):
            continue
        oldest = actor.queue[0]
        _, unfinished = ray.wait([oldest], num_returns=1, timeout=0)
        if unfinished:
            return actor, pool.in_flight[oldest][0][0].id
    return None


def kill_a_busy_actor_once(killed: list):
    """A coordinator hook: SIGKILL an actor's process while it computes a shard, the first time one
    does. Appends (pid, shard id, ids of every shard in flight on it) to `killed`: the shard it
    seemed to be computing may have just finished (its result on its way), and then the next one
    queued on it is the one lost. The pid is the one the actor reported at warm-up: asking the
    actor would wait behind the shards queued on it."""
    import os
    import signal

    def hook(coordinator):
        found = None if killed else busy_actor(coordinator)
        if found is not None:
            actor, shard_id = found
            queued = {shard.id for ref in actor.queue for shard in coordinator.pool.in_flight[ref][0]}
            os.kill(actor.pid, signal.SIGKILL)
            killed.append((actor.pid, shard_id, queued))

    return hook


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def moto_s3(*buckets: str):
    """moto's S3 server on loopback, with these buckets and AWS_TEST_ENV set; yields its endpoint URL."""
    import boto3
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    try:
        with pytest.MonkeyPatch.context() as mp:
            for key, value in AWS_TEST_ENV.items():
                mp.setenv(key, value)
            client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
            for bucket in buckets:
                client.create_bucket(Bucket=bucket)
            yield endpoint
    finally:
        server.stop()


# -- a run's store, for the tests of storage.py and lease.py: its fixtures are imported by name -------

STORE_BUCKET = "bmn-store"


def s3_run_uri(endpoint: str) -> str:
    """A run of its own on moto's S3 (a fresh prefix of STORE_BUCKET)."""
    return f"s3://{STORE_BUCKET}/{uuid.uuid4().hex}/run?endpoint_override={endpoint}"


@pytest.fixture(scope="module")
def endpoint():
    """moto's S3 server, with STORE_BUCKET, for one test module."""
    with moto_s3(STORE_BUCKET) as url:
        yield url


@pytest.fixture(params=["local", "s3"])
def store(request, tmp_path) -> RunStore:
    """A new run's store: a folder under tmp_path, or a run on moto's S3, its root made as a search
    makes it before taking the lock (nothing to make on S3)."""
    if request.param == "local":
        store = RunStore(str(tmp_path / "run"))
    else:
        store = RunStore(s3_run_uri(request.getfixturevalue("endpoint")))
    store.make_root()
    return store


def one_sentence(error: Exception) -> str:
    """An error's message, held to be one sentence for a user: one line, no traceback."""
    message = str(error)
    assert message and "\n" not in message and "Traceback" not in message, message
    return message


class FlakyStore:
    """A filesystem whose first `failures` opens for reading fail as an object store's 503 does."""

    def __init__(self, fs, failures: int):
        self.fs, self.failures, self.opens = fs, failures, 0

    def open_input_stream(self, path):
        self.opens += 1
        if self.opens <= self.failures:
            raise OSError("AWS Error SLOW_DOWN during GetObject operation: Please reduce your request rate.")
        return self.fs.open_input_stream(path)

    def __getattr__(self, name):
        return getattr(self.fs, name)


@contextmanager
def ray_head(num_cpus: int = 2, num_gpus: int = 0):
    """A `ray start --head` cluster (its address), token authentication on as on a real cluster, kept in
    a temporary directory of its own so it leaves no record where Ray looks for a cluster to join.
    `num_gpus` declares GPUs the machine may not have (Ray takes the count as given): the GPU actors
    it places then find no driver, or run under numba-cuda's simulator where the driver asks for it.
    Every process it started is stopped on the way out.

    A starting node must register with the control store in time: `ray start` asks the control store
    (which waits up to RAY_raylet_start_wait_time_s for the registration) and gives up once 30 s have
    passed since its first question. On this 2-core machine an idle start takes about 20 s, so under
    the other pytest worker's load a start can miss it: the control store is given 120 s, and a start
    that fails all the same is tried once more."""
    for attempt in (1, 2):
        temp = tempfile.mkdtemp(prefix="bmnray-")  # short: Ray's socket paths must fit in 107 bytes
        head, log = _start_head(temp, num_cpus, num_gpus)
        try:
            address = _head_address(temp, head)
        except RuntimeError:
            _stop_head(head, log, temp)
            if attempt == 2:
                raise
            continue
        try:
            yield address
        finally:
            _stop_head(head, log, temp)
        return


def _start_head(temp: str, num_cpus: int, num_gpus: int):
    ray_exe = os.path.join(os.path.dirname(sys.executable), "ray")
    log = open(os.path.join(temp, "head.log"), "wb")
    # No log monitor: it forwards the workers' output to drivers, and bmn's drivers ask for none
    # (log_to_driver=False); it rescans every worker's log file, hundreds over a session (~20 s of CPU).
    head = subprocess.Popen([ray_exe, "start", "--head", "--block", f"--num-cpus={num_cpus}",
                             f"--num-gpus={num_gpus}", "--port=0", f"--temp-dir={temp}", "--include-dashboard=false",
                             "--include-log-monitor=false", "--disable-usage-stats",
                             "--object-store-memory=500000000"],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                            env=dict(os.environ, RAY_raylet_start_wait_time_s="120"))
    return head, log


def _head_address(temp: str, head) -> str:
    record = os.path.join(temp, "ray_current_cluster")
    deadline = time.monotonic() + 120
    while not (os.path.exists(record) and open(record).read().strip()):
        if head.poll() is not None or time.monotonic() > deadline:
            with open(os.path.join(temp, "head.log"), "rb") as said:
                raise RuntimeError(f"ray start --head failed: {said.read().decode()[-2000:]}")
        time.sleep(0.1)
    return open(record).read().strip()


def _stop_head(head, log, temp: str) -> None:
    # Every process of the cluster is in the head's process group: the test cluster holds nothing
    # worth a graceful stop, and `ray start --block` takes many seconds to stop gracefully.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(head.pid, signal.SIGKILL)
    head.wait()
    log.close()
    shutil.rmtree(temp, ignore_errors=True)


class Gate:
    """Holds actors in their warm-up until opened, so that a test decides when they have started: a
    file that the actors look for (the test clusters' nodes share this machine), not an actor, which
    would take a Ray worker process of its own and a call 20 times a second from each actor it holds."""

    def __init__(self, folder):
        self.path = os.path.join(folder, f"gate-{uuid.uuid4().hex}")

    def set(self, value: bool) -> None:
        if value:
            open(self.path, "w").close()
        else:
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.path)

    def is_open(self) -> bool:
        return os.path.exists(self.path)


@ray.remote(num_cpus=1)
class CpuHolder:
    """An actor holding one of the cluster's CPUs while it lives (someone else's work)."""

    def placed(self) -> bool:
        return True


def gated_runner(gate, fail_warm_up: bool = False):
    """A ShardRunner whose warm-up waits for `gate` (or raises, as a node lacking a dependency)."""

    @ray.remote(num_cpus=0, max_restarts=0, max_task_retries=0)
    class Gated(ShardRunner):
        def warm_up(self):
            if fail_warm_up:
                raise ImportError("No module named 'numba'")
            while not gate.is_open():
                time.sleep(0.05)
            return super().warm_up()

    return Gated


def driverless_gpu_runner(gate):
    """A GPU actor whose warm-up, once `gate` opens, fails as on a node whose CUDA driver is missing."""

    @ray.remote(num_cpus=0, max_restarts=0, max_task_retries=0)
    class Driverless(ShardRunner):
        def warm_up(self):
            while not gate.is_open():
                time.sleep(0.05)
            raise RuntimeError("CUDA driver library cannot be found")

    return Driverless


def failing_gpu_runner(gate, fail_on: int):
    """A GPU actor as the pool sees one (its shards' figures say device "gpu") whose shard number `fail_on`
    raises as a GPU out of memory does; it plays its other shards on the CPU, after `gate` opens."""

    @ray.remote(num_cpus=0, max_restarts=0, max_task_retries=0)
    class FailingGpu(gated_runner(gate).__ray_actor_class__):
        def __init__(self, deck, split, strategy, device="gpu"):
            super().__init__(deck, split, strategy)
            self.runs = 0

        def run(self, shard):
            self.runs += 1
            if self.runs == fail_on:
                raise RuntimeError("[CUDA_ERROR_OUT_OF_MEMORY] Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY")
            played = super().run(shard)
            return played._replace(figures=dataclasses.replace(played.figures, device="gpu"))

    return FailingGpu


# The Ray actors defined here travel to the workers by value: the tests' folder is not on the
# workers' import path.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
