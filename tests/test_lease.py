"""cluster/runs/lease.py: one job writes a run at a time. The lock taken (or refused), renewed by one
thread until release, taken over only after a lease unchanged on the taker's own clock, a lease
lost to another job noticed; on a local disk and on S3 (moto's server on loopback)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time

import pytest
from cluster_helpers import FlakyStore, endpoint, one_sentence, s3_run_uri, store, wait_for  # noqa: F401 (fixtures: endpoint, store)

import cluster.runs.lease as lease_module
import cluster.runs.storage as storage
from cluster.runs.lease import LOCK, LOCK_STALE_S, RENEWALS_PER_LEASE, Lease, LockInfo, is_live, live_holder, read_lock
from cluster.runs.storage import RunStore
from kernels.errors import BmnError


def renewers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "bmn-lease"]


def test_the_stale_lock_age_is_ninety_seconds():
    assert LOCK_STALE_S == 90.0 and RENEWALS_PER_LEASE == 6  # docs/failures.md: 90 s and 15 s (test_docs)


def test_one_job_holds_the_lock_and_releases_it(store):
    lease = Lease(store).acquire()
    holder = read_lock(store)
    assert holder.owner == lease.owner and holder.pid == os.getpid() and holder.host == socket.gethostname()
    assert live_holder(store) == holder
    other = Lease(store)
    with pytest.raises(BmnError) as caught:
        other.acquire()
    assert f"pid {os.getpid()} on {socket.gethostname()}" in one_sentence(caught.value)
    assert "being written by another job" in str(caught.value)
    before = holder.heartbeat
    time.sleep(0.01)
    lease.renew()
    assert read_lock(store).heartbeat > before
    lease.release()
    assert not store.exists(LOCK) and lease.owner is None and live_holder(store) is None
    other.acquire()
    other.release()


def test_one_thread_renews_a_lease_from_acquire_to_release(store, monkeypatch):
    """The lease's renewer is the only writer of the lock while it is held: one thread, renewing
    RENEWALS_PER_LEASE times per lease, without being asked."""
    monkeypatch.setattr(lease_module, "LOCK_STALE_S", 0.6)  # a renewal every 0.1 s
    t0 = time.monotonic()
    lease = Lease(store).acquire()
    first = read_lock(store)
    assert len(renewers()) == 1
    time.sleep(1.0)
    now = read_lock(store)
    assert 3 <= now.renewal <= (time.monotonic() - t0) / 0.1, now  # one renewal every 0.1 s, not two
    assert (now.owner, now.started) == (first.owner, first.started)
    lease.release()
    assert not store.exists(LOCK) and not renewers()


def test_a_taken_over_lock_is_noticed_and_not_released(store):
    lease = Lease(store).acquire()
    thief = LockInfo("someone-else", "elsewhere", 1, time.time(), time.time())
    store.write_json(LOCK, thief.__dict__)
    with pytest.raises(BmnError) as caught:
        lease.renew()
    assert one_sentence(caught.value).startswith(f"another job took over run {store.uri} (pid 1 on elsewhere")
    assert lease.lost == str(caught.value)
    lease.release()
    assert read_lock(store) == thief


def test_the_renewer_notices_a_take_over_and_says_so_in_lost(store, monkeypatch):
    """What stops a search whose run another job took over: the renewer finds the lock another's and
    `lost` holds the sentence; the renewer stops, and the lock is left to its new holder."""
    monkeypatch.setattr(lease_module, "LOCK_STALE_S", 0.3)
    lease = Lease(store).acquire()
    assert lease.lost is None
    thief = LockInfo("someone-else", "elsewhere", 1, time.time(), time.time())
    # Written until the renewer reads it (a renewal under way may write over it once).
    assert wait_for(lambda: lease.lost or store.write_json(LOCK, thief.__dict__), timeout=10, step=0.02)
    assert lease.lost.startswith(f"another job took over run {store.uri} (pid 1 on elsewhere")
    assert wait_for(lambda: not renewers(), timeout=10)
    with pytest.raises(BmnError, match="another job took over"):
        lease.renew()
    lease.release()
    assert read_lock(store) == thief


def test_a_lock_is_taken_over_only_after_a_lease_unchanged_on_this_clock(store, monkeypatch):
    """Another machine's lock is watched for the lease time on this machine's monotonic clock: its
    own clock (skewed either way) is never compared with this one."""
    monkeypatch.setattr(lease_module, "LOCK_STALE_S", 0.5)
    notices: list[str] = []
    now = time.time()
    # Left unchanged, though its clock says it was renewed in the future (a clock running fast): taken
    # over once the lease has passed.
    store.write_json(LOCK, LockInfo("a", "another-host", 1, now, now + 90).__dict__)
    t0 = time.monotonic()
    lease = Lease(store).acquire(notice=notices.append)
    assert time.monotonic() - t0 >= 0.5 and read_lock(store).owner == lease.owner
    assert "(pid 1 on another-host" in notices[0] and "watching it for 0.5 s" in notices[0]
    lease.release()
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
            lease.acquire(notice=notices.append)
    finally:
        stop.set()
        renewer.join()
    assert lease.owner is None and read_lock(store).owner == "b"
    store.delete(LOCK)


def test_an_empty_or_garbled_lock_expires_like_any_other(store, monkeypatch):
    """A job that died while writing its lock (a crash, a full disk) left it empty or cut short."""
    monkeypatch.setattr(lease_module, "LOCK_STALE_S", 0.3)
    for junk in (b"", b"{not json", b'{"owner": "x"}'):
        notices: list[str] = []
        store.write_bytes(LOCK, junk)
        lease = Lease(store).acquire(notice=notices.append)
        assert "an unreadable lock" in notices[0] and read_lock(store).owner == lease.owner
        lease.release()


def test_this_machines_locks_are_told_by_their_process(store, monkeypatch):
    """On this machine a lock is dead as soon as its process is (taken at once, however fresh its
    heartbeat), and live while it runs (refused at once)."""
    monkeypatch.setattr(lease_module, "LOCK_STALE_S", 30.0)
    now = time.time()
    dead_pid = max(int(p) for p in os.listdir("/proc") if p.isdigit()) + 100_000
    store.write_json(LOCK, LockInfo("c", socket.gethostname(), dead_pid, now, now).__dict__)
    notices: list[str] = []
    t0 = time.monotonic()
    lease = Lease(store).acquire(notice=notices.append)
    assert time.monotonic() - t0 < 5 and not notices and read_lock(store).owner == lease.owner
    lease.release()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        store.write_json(LOCK, LockInfo("d", socket.gethostname(), live.pid, now, now - 10_000).__dict__)
        with pytest.raises(BmnError, match=f"pid {live.pid} on {socket.gethostname()}"):
            lease.acquire(notice=notices.append)
        assert not notices
    finally:
        live.kill()
        live.wait()
    # What a reader (bmn status, bmn query) makes of a lock at a glance.
    assert not is_live(LockInfo("c", socket.gethostname(), dead_pid, now, now))
    assert is_live(LockInfo("e", socket.gethostname(), os.getpid(), now, now))
    store.delete(LOCK)


def test_a_glance_at_another_machines_lock_compares_its_clock_with_ours():
    """For display only (bmn status, bmn query): another machine's lock looks live while its last
    renewal, by its clock, is within the lease time of this machine's clock."""
    now = time.time()
    assert is_live(LockInfo("f", "another-host", 1, now, now - LOCK_STALE_S + 5))
    assert not is_live(LockInfo("f", "another-host", 1, now, now - LOCK_STALE_S - 5))


def test_a_garbled_lock_counts_as_none(store):
    store.write_bytes(LOCK, b"{not json")
    assert read_lock(store) is None
    store.write_json(LOCK, {"owner": "x"})  # fields missing
    assert read_lock(store) is None


def test_a_store_that_fails_for_a_while_does_not_lose_the_lease(endpoint, monkeypatch):
    """The renewals meet a store that fails every read for a while (StoreUnavailable): that is not
    another job taking the run over, and the lease is renewed again once the store answers."""
    monkeypatch.setattr(lease_module, "LOCK_STALE_S", 0.3)
    monkeypatch.setattr(storage, "READ_BACKOFF_S", 0.0)
    store = RunStore(s3_run_uri(endpoint))
    lease = Lease(store).acquire()
    # The lock is written with S3's conditional requests (boto3): its client fails, as a store that
    # does not answer would, while the files' reads (pyarrow) fail too.
    from botocore.exceptions import EndpointConnectionError

    real_client, real_fs, failed = lease.conditional.client, store.fs, []

    class Down:
        def __getattr__(self, name):
            def call(**kwargs):
                failed.append(name)
                raise EndpointConnectionError(endpoint_url=endpoint)
            return call

    lease.conditional.client, store.fs = Down(), FlakyStore(real_fs, 10 ** 6)
    assert wait_for(lambda: failed.count("put_object") >= 3, timeout=10)  # renewals that failed
    lease.conditional.client, store.fs = real_client, real_fs
    before = read_lock(store).renewal
    assert wait_for(lambda: (read_lock(store) or LockInfo("", "", 0, 0, 0)).renewal > before, timeout=10)
    assert lease.lost is None and read_lock(store).owner == lease.owner
    lease.renew()
    lease.release()
    assert not store.exists(LOCK)


@pytest.mark.parametrize("left", ["nothing", "a dead job's lock from another machine"])
def test_on_s3_a_job_that_finds_the_run_free_a_moment_too_late_is_refused(endpoint, monkeypatch, left):
    """Job B reads the lock (absent, or a dead job's, watched unchanged), then is held just before
    it writes; meanwhile job A takes the run. A read, compare and write would let B overwrite A's
    lock and both would search; S3's conditional write (If-None-Match: *, If-Match: the ETag B
    saw) refuses B."""
    monkeypatch.setattr(lease_module, "LOCK_STALE_S", 0.3)
    uri = s3_run_uri(endpoint)
    if left != "nothing":
        RunStore(uri).write_json(LOCK, LockInfo("dead", "another-machine", 1, 0.0, 0.0).__dict__)
    a, b = Lease(RunStore(uri)), Lease(RunStore(uri))
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
        assert a.holder().owner == a.owner
        a.renew()  # A's lease is still A's
    finally:
        a.release()
    assert not a.store.exists(LOCK)
