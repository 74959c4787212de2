"""cluster/storage.py: a run's files on a local disk or S3 (moto's server on loopback), written
atomically, listed, locked by one job at a time, and its errors as one sentence."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import uuid

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import cluster.storage as storage
from cluster.storage import LOCK, LOCK_STALE_S, LockInfo, RunStore, open_filesystem
from kernels.errors import BmnError

from cluster_helpers import moto_s3

BUCKET = "bmn-storage"


@pytest.fixture(scope="module")
def endpoint():
    with moto_s3(BUCKET) as url:
        yield url


@pytest.fixture(params=["local", "s3"])
def store(request, tmp_path):
    if request.param == "local":
        store = RunStore(str(tmp_path / "run"))
    else:
        url = request.getfixturevalue("endpoint")
        store = RunStore(f"s3://{BUCKET}/{uuid.uuid4().hex}/run?endpoint_override={url}")
    store.make_root()  # as a search does before taking the lock (nothing to make on S3)
    return store



def one_sentence(error: BmnError) -> str:
    message = str(error)
    assert message and "\n" not in message and "Traceback" not in message, message
    return message


def table(rows: int) -> pa.Table:
    return pa.table({"k": pa.array(range(rows), pa.int64()), "v": pa.array([k % 7 for k in range(rows)], pa.int8())})


# -- opening --------------------------------------------------------------------------------------

def test_open_filesystem_tells_local_from_object_stores(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert open_filesystem("runs/x")[1:] == (str(tmp_path / "runs" / "x"), True)
    assert open_filesystem(f"file://{tmp_path}/y")[1:] == (str(tmp_path / "y"), True)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert open_filesystem("~/z")[1:] == (str(tmp_path / "z"), True)
    fs, root, local = open_filesystem("s3://bucket/a/b/?endpoint_override=http://127.0.0.1:9")
    assert (root, local, fs.type_name) == ("bucket/a/b", False, "s3")


@pytest.mark.parametrize("uri, words", [("s3:///only-a-path", "names no bucket"),
                                        ("nosuchscheme://x/y", "cannot open nosuchscheme://x/y")])
def test_unusable_uris_are_one_sentence(uri, words):
    with pytest.raises(BmnError) as caught:
        RunStore(uri)
    assert words in one_sentence(caught.value)


def test_make_root_refuses_a_file_and_a_path_through_a_file(tmp_path):
    (tmp_path / "file").write_text("x")
    for path, cause in ((tmp_path / "file", "File exists"), (tmp_path / "file" / "run", "Not a directory")):
        with pytest.raises(BmnError) as caught:
            RunStore(str(path)).make_root()
        assert one_sentence(caught.value) == f"cannot create run directory {path}: {cause}"
    RunStore(str(tmp_path / "a" / "b")).make_root()
    assert (tmp_path / "a" / "b").is_dir()


# -- reading and writing --------------------------------------------------------------------------

def test_bytes_json_and_parquet_round_trip(store):
    assert not store.exists("run.json")
    store.write_bytes("deep/er/blob", b"\x00\xffabc")
    assert store.exists("deep/er/blob") and store.read_bytes("deep/er/blob") == b"\x00\xffabc"
    store.write_json("run.json", {"b": [1, 2], "a": "x"})
    assert store.read_json("run.json") == {"a": "x", "b": [1, 2]}
    text = store.read_bytes("run.json").decode()
    assert text.endswith("}\n") and text.index('"a"') < text.index('"b"')  # sorted keys: stable files
    store.write_parquet("t.parquet", table(5).replace_schema_metadata({"who": "me"}))
    assert store.read_parquet("t.parquet").equals(table(5).replace_schema_metadata({"who": "me"}))
    assert store.parquet_metadata("t.parquet") == {b"who": b"me"}


def test_small_tables_are_snappy_and_large_ones_zstd(store):
    for rows, codec in ((storage.SMALL_TABLE_ROWS - 1, "SNAPPY"), (storage.SMALL_TABLE_ROWS, "ZSTD")):
        store.write_parquet(f"{rows}.parquet", table(rows))
        meta = pq.ParquetFile(pa.BufferReader(store.read_bytes(f"{rows}.parquet"))).metadata
        assert meta.row_group(0).column(0).compression == codec


def test_a_file_written_twice_replaces_itself(store):
    store.write_bytes("shards/s1", b"first, longer content")
    store.write_bytes("shards/s1", b"second")
    assert store.read_bytes("shards/s1") == b"second"
    assert store.list("shards") == ["s1"]


def test_list_and_entries(store):
    assert store.list("shards") == [] and store.entries() == []
    for name in ("b.parquet", "a.parquet", "c.json", ".hidden.parquet", "sub/d.parquet"):
        store.write_bytes(f"shards/{name}", b"x")
    store.write_bytes("run.json", b"{}")
    assert store.list("shards") == ["a.parquet", "b.parquet", "c.json"]  # sorted, files only, no dot files
    assert store.list("shards", ".parquet") == ["a.parquet", "b.parquet"]
    assert store.list("shards/sub") == ["d.parquet"]
    assert store.entries() == ["run.json", "shards"]


def test_move_and_delete(store):
    store.write_bytes("shards/s2", b"garbled")
    store.move("shards/s2", "damaged/s2")
    assert not store.exists("shards/s2") and store.read_bytes("damaged/s2") == b"garbled"
    store.delete("damaged/s2")
    assert not store.exists("damaged/s2")
    store.delete("damaged/s2")  # deleting what is gone is no error


def test_a_local_write_leaves_no_temporary_file_and_a_failed_one_keeps_the_old_file(tmp_path):
    store = RunStore(str(tmp_path))
    store.write_bytes("shards/s", b"old")
    with pytest.raises(TypeError):
        store.write_bytes("shards/s", "not bytes")  # fails half-way: the temporary file is written
    assert store.read_bytes("shards/s") == b"old"
    assert os.listdir(tmp_path / "shards") == ["s"]


def test_object_store_writes_are_retried_then_fail(endpoint, monkeypatch):
    calls = []
    monkeypatch.setattr(storage, "WRITE_BACKOFF_S", 0.0)
    monkeypatch.setattr(storage.time, "sleep", calls.append)
    store = RunStore(f"s3://no-such-bucket/run?endpoint_override={endpoint}")
    with pytest.raises(OSError):
        store.write_bytes("x", b"x")
    assert len(calls) == storage.WRITE_RETRIES


def wait_until(predicate, timeout=10.0):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if predicate():
            return True
        time.sleep(0.01)
    return False


# -- the lock ---------------------------------------------------------------------------------------

def test_the_stale_lock_age_is_ninety_seconds():
    assert LOCK_STALE_S == 90.0 and storage.RENEWALS_PER_LEASE == 6  # README: "watches it for 90 s", "renewed every 15 s"


def test_one_job_holds_the_lock_and_releases_it(store):
    store.acquire()
    holder = store.read_lock()
    assert holder.owner == store.owner and holder.pid == os.getpid() and holder.host == socket.gethostname()
    assert store.live_holder() == holder
    other = RunStore(store.uri)
    with pytest.raises(BmnError) as caught:
        other.acquire()
    assert f"pid {os.getpid()} on {socket.gethostname()}" in one_sentence(caught.value)
    assert "being written by another job" in str(caught.value)
    before = holder.heartbeat
    time.sleep(0.01)
    store.heartbeat()
    assert store.read_lock().heartbeat > before
    store.release()
    assert not store.exists(LOCK) and store.owner is None and store.live_holder() is None
    other.acquire()
    other.release()


def test_a_taken_over_lock_is_noticed_and_not_released(store):
    store.acquire()
    thief = LockInfo("someone-else", "elsewhere", 1, time.time(), time.time())
    store.write_json(LOCK, thief.__dict__)
    with pytest.raises(BmnError) as caught:
        store.heartbeat()
    assert "another job took over" in one_sentence(caught.value)
    store.release()
    assert store.read_lock() == thief


def test_a_lock_is_taken_over_only_after_a_lease_unchanged_on_this_clock(store, monkeypatch):
    """Another machine's lock is watched for the lease time on this machine's monotonic clock: its
    own clock (skewed either way) is never compared with this one."""
    monkeypatch.setattr(storage, "LOCK_STALE_S", 0.5)
    notices: list[str] = []
    now = time.time()
    # Left unchanged, though its clock says it was renewed in the future (a clock running fast): taken
    # over once the lease has passed.
    store.write_json(LOCK, LockInfo("a", "another-host", 1, now, now + 90).__dict__)
    t0 = time.monotonic()
    store.acquire(notice=notices.append)
    assert time.monotonic() - t0 >= 0.5 and store.read_lock().owner == store.owner
    assert "(pid 1 on another-host" in notices[0] and "watching it for 0.5 s" in notices[0]
    store.release()
    # Renewed while watched, though its clock is hours behind: a live job, refused.
    store.write_json(LOCK, LockInfo("b", "another-host", 1, now, now - 10_000).__dict__)
    stop = threading.Event()

    def renew():
        k = 0
        while not stop.wait(0.05):
            k += 1
            RunStore(store.uri).write_json(LOCK, LockInfo("b", "another-host", 1, now, now - 10_000, k).__dict__)

    renewer = threading.Thread(target=renew)
    renewer.start()
    try:
        with pytest.raises(BmnError, match="being written by another job"):
            store.acquire(notice=notices.append)
    finally:
        stop.set()
        renewer.join()
    assert store.owner is None and store.read_lock().owner == "b"
    store.delete(LOCK)


def test_an_empty_or_garbled_lock_expires_like_any_other(store, monkeypatch):
    """A job that died while writing its lock (a crash, a full disk) left it empty or cut short."""
    monkeypatch.setattr(storage, "LOCK_STALE_S", 0.3)
    for junk in (b"", b"{not json", b'{"owner": "x"}'):
        notices: list[str] = []
        store.write_bytes(LOCK, junk)
        store.acquire(notice=notices.append)
        assert "an unreadable lock" in notices[0] and store.read_lock().owner == store.owner
        store.release()


def test_this_machines_locks_are_told_by_their_process(store, monkeypatch):
    """On this machine a lock is dead as soon as its process is (taken at once, however fresh its
    heartbeat), and live while it runs (refused at once)."""
    monkeypatch.setattr(storage, "LOCK_STALE_S", 30.0)
    now = time.time()
    dead_pid = max(int(p) for p in os.listdir("/proc") if p.isdigit()) + 100_000
    store.write_json(LOCK, LockInfo("c", socket.gethostname(), dead_pid, now, now).__dict__)
    notices: list[str] = []
    t0 = time.monotonic()
    store.acquire(notice=notices.append)
    assert time.monotonic() - t0 < 5 and not notices and store.read_lock().owner == store.owner
    store.release()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        store.write_json(LOCK, LockInfo("d", socket.gethostname(), live.pid, now, now - 10_000).__dict__)
        with pytest.raises(BmnError, match=f"pid {live.pid} on {socket.gethostname()}"):
            store.acquire(notice=notices.append)
        assert not notices
    finally:
        live.kill()
        live.wait()
    # What a reader (bmn status, bmn query) makes of a lock at a glance.
    assert not RunStore.is_live(LockInfo("c", socket.gethostname(), dead_pid, now, now))
    assert RunStore.is_live(LockInfo("e", socket.gethostname(), os.getpid(), now, now))
    store.delete(LOCK)


def test_the_lease_is_renewed_from_acquire_to_release_without_being_asked(store, monkeypatch):
    monkeypatch.setattr(storage, "LOCK_STALE_S", 0.3)
    store.acquire()
    first = store.read_lock()
    assert wait_until(lambda: (store.read_lock() or first).renewal >= 2)  # 6 renewals per lease: one every 0.05 s
    now = store.read_lock()
    assert (now.owner, now.started) == (first.owner, first.started)
    store.release()
    assert not store.exists(LOCK)


def test_a_garbled_lock_counts_as_none(store):
    store.write_bytes(LOCK, b"{not json")
    assert store.read_lock() is None
    store.write_json(LOCK, {"owner": "x"})  # fields missing
    assert store.read_lock() is None


# -- transient reads and damaged files ------------------------------------------------------------------

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


def test_object_store_reads_are_retried_and_a_store_that_keeps_failing_is_not_a_damaged_file(endpoint, monkeypatch):
    from cluster.summary import ShardSummary
    from cluster.tables import GAMES_SCHEMA, read_contents, read_summaries, shard_file_table

    monkeypatch.setattr(storage, "READ_BACKOFF_S", 0.0)
    store = RunStore(f"s3://{BUCKET}/{uuid.uuid4().hex}/run?endpoint_override={endpoint}")
    summary = ShardSummary.of(0, "random", {"seed": 1}, None, status="failed", elapsed_s=0, attempts=1, worker="",
                              finished_at=0)
    store.write_parquet("shards/000000000000.parquet", shard_file_table(GAMES_SCHEMA.empty_table(), [summary]))
    real = store.fs
    store.fs = FlakyStore(real, storage.READ_RETRIES)  # fails all but the last try
    contents = read_contents(store)
    assert list(contents.summaries) == [0] and not contents.damaged and store.fs.opens == storage.READ_RETRIES + 1
    store.fs = FlakyStore(real, storage.READ_RETRIES + 1)  # fails every try
    with pytest.raises(storage.StoreUnavailable) as caught:
        read_contents(store)
    assert "after 5 tries (AWS Error SLOW_DOWN" in one_sentence(caught.value) and "try again later" in str(caught.value)
    store.fs = FlakyStore(real, storage.READ_RETRIES + 1)
    with pytest.raises(storage.StoreUnavailable):
        read_summaries(store, damaged := {})
    assert damaged == {}  # nothing taken for damage, nothing to set aside
    store.fs = real
    assert store.exists("shards/000000000000.parquet")


def test_a_flipped_bit_in_a_page_is_caught_by_its_checksum(store):
    """Shard files are written with page checksums and read with them verified: a corrupted page is a
    damaged file, not wrong results."""
    table = pa.table({"hands": ["ABCDEFGHIJ" * 5] * 50, "n": list(range(50))})
    store.write_parquet("t.parquet", table)
    assert store.read_parquet("t.parquet").equals(table)
    data = bytearray(store.read_bytes("t.parquet"))
    data[data.find(b"ABCDEFGHIJ") + 3] ^= 0x01
    store.write_bytes("t.parquet", bytes(data))
    with pytest.raises(OSError, match="CRC checksum verification failed"):
        store.read_parquet("t.parquet")


def test_a_store_that_fails_for_a_while_does_not_lose_the_lease(endpoint, monkeypatch):
    """The renewals meet a store that fails every read for a while (StoreUnavailable): that is not
    another job taking the run over, and the lease is renewed again once the store answers."""
    monkeypatch.setattr(storage, "LOCK_STALE_S", 0.3)
    monkeypatch.setattr(storage, "READ_BACKOFF_S", 0.0)
    store = RunStore(f"s3://{BUCKET}/{uuid.uuid4().hex}/run?endpoint_override={endpoint}")
    store.acquire()
    # The lock is written with S3's conditional requests (boto3): its client fails, as a store that
    # does not answer would, while the files' reads (pyarrow) fail too.
    from botocore.exceptions import EndpointConnectionError

    real_client, real_fs, failed = store.conditional.client, store.fs, []

    class Down:
        def __getattr__(self, name):
            def call(**kwargs):
                failed.append(name)
                raise EndpointConnectionError(endpoint_url=endpoint)
            return call

    store.conditional.client, store.fs = Down(), FlakyStore(real_fs, 10 ** 6)
    assert wait_until(lambda: failed.count("put_object") >= 3)  # renewals that failed
    store.conditional.client, store.fs = real_client, real_fs
    before = store.read_lock().renewal
    assert wait_until(lambda: (store.read_lock() or LockInfo("", "", 0, 0, 0)).renewal > before)
    assert store.lost is None and store.read_lock().owner == store.owner
    store.heartbeat()
    store.release()
    assert not store.exists(LOCK)


@pytest.mark.parametrize("left", ["nothing", "a dead job's lock from another machine"])
def test_on_s3_a_job_that_finds_the_run_free_a_moment_too_late_is_refused(endpoint, monkeypatch, left):
    """Job B reads the lock (absent, or a dead job's, watched unchanged), then is held just before
    it writes; meanwhile job A takes the run. A read, compare and write would let B overwrite A's
    lock and both would search; S3's conditional write (If-None-Match: *, If-Match: the ETag B
    saw) refuses B."""
    monkeypatch.setattr(storage, "LOCK_STALE_S", 0.3)
    uri = f"s3://{BUCKET}/{uuid.uuid4().hex}/run?endpoint_override={endpoint}"
    if left != "nothing":
        RunStore(uri).write_json(LOCK, LockInfo("dead", "another-machine", 1, 0.0, 0.0).__dict__)
    a, b = RunStore(uri), RunStore(uri)
    about_to_write, a_holds = threading.Event(), threading.Event()
    for name in ("create", "replace"):
        real = getattr(b.conditional, name)

        def held(*args, real=real):
            about_to_write.set()
            assert a_holds.wait(timeout=60)
            return real(*args)

        setattr(b.conditional, name, held)
    outcome = {}

    def job_b():
        try:
            b.acquire(notice=lambda text: None)
            outcome["b"] = "holds"
        except BmnError as error:
            outcome["b"] = one_sentence(error)

    thread = threading.Thread(target=job_b)
    thread.start()
    assert about_to_write.wait(timeout=60)  # B has seen the run free and is about to write
    a.acquire(notice=lambda text: None)
    a_holds.set()
    thread.join(timeout=60)
    try:
        assert outcome["b"] == f"run {uri} was taken by another job starting at the same time"
        assert a.read_lock().owner == a.owner
        a.heartbeat()  # A's lease is still A's
    finally:
        a.release()
    assert not a.exists(LOCK)
