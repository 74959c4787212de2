"""The run's lease: one job writes a run at a time.

A job writing a run (a search from the moment it opens the run, `bmn compact`) holds its lock,
run.lock, and renews it RENEWALS_PER_LEASE times per LOCK_STALE_S, from one thread of its own (a
`Lease`'s renewer: nothing else writes the lock while it is held). Another job finding the lock:

- of a process on this machine: refuses at once if that process is alive, takes the lock over at
  once if it is gone;
- of another machine, or empty or garbled (a job that died while writing it): watches it for
  LOCK_STALE_S on its own monotonic clock. Renewed meanwhile, its job is alive and the run is
  refused; unchanged, its job is dead and the lock is taken over, only if it is still the one
  watched. Taking a run over never compares two machines' clocks, so a skewed clock cannot make a
  live job look dead.

Of two jobs taking a run at once exactly one gets it: locally the lock is created exclusively
(O_EXCL); on S3 every write is conditional (created only if absent, replaced or deleted only if it
is still the one read); other object stores get read, compare and write, then read back.

A job whose lock was taken over (its renewals stopped past the lease: a paused process, a store
that did not answer) learns it at its next renewal: `Lease.lost` says so, and the search stops on it.

`bmn status` and `bmn query` only glance at a lock (`live_holder`, `is_live`): that is the one place
a holder's clock is compared with the reader's, and only to say whether the run looks alive.
"""

from __future__ import annotations

import json
import os
import posixpath
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from kernels.errors import BmnError

from .storage import RunStore, StoreUnavailable, first_line, s3_options

LOCK = "run.lock"
# A job holding a run renews its lock RENEWALS_PER_LEASE times within LOCK_STALE_S; a lock seen
# unchanged that long (on the watcher's own clock) belongs to a job that died (Ctrl-C, SIGKILL, a
# lost node).
LOCK_STALE_S = 90.0
RENEWALS_PER_LEASE = 6


@dataclass
class LockInfo:
    owner: str
    host: str
    pid: int
    started: float
    # The holder's clock at its last renewal: shown to people, and compared with a reader's clock only
    # by is_live, for display; never to take a run over.
    heartbeat: float
    renewal: int = 0  # how many times it was renewed: every renewal changes the lock

    def describe(self) -> str:
        return (f"pid {self.pid} on {self.host}, started "
                f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(self.started))}")


class LockConflict(Exception):
    """A conditional write of the lock found it other than expected (created, replaced or gone)."""


class S3Lock:
    """The run's lock on S3, written only conditionally: created only if absent (If-None-Match: *),
    replaced and deleted only if unchanged since it was read (If-Match: its ETag). Of two jobs
    taking a run at once, exactly one succeeds; a job renews its lease only while the lock is the
    one it wrote. (pyarrow's S3 file system cannot send these headers; boto3 does.)"""

    CONFLICT = {"PreconditionFailed", "ConditionalRequestConflict", "NoSuchKey", "412", "409"}

    def __init__(self, uri: str, root: str):
        import boto3
        import botocore.config

        options = s3_options(uri)
        endpoint = None
        if "endpoint_override" in options:
            endpoint = f"{options.get('scheme', 'https')}://{options['endpoint_override']}"
        self.client = boto3.client("s3", endpoint_url=endpoint, region_name=options.get("region"),
                                   config=botocore.config.Config(retries={"max_attempts": 5, "mode": "standard"}))
        self.bucket, _, prefix = root.partition("/")
        self.key = posixpath.join(prefix, LOCK) if prefix else LOCK

    def _call(self, method, **kwargs):
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return method(Bucket=self.bucket, Key=self.key, **kwargs)
        except ClientError as error:
            code = str(error.response.get("Error", {}).get("Code", ""))
            status = str(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", ""))
            if code in self.CONFLICT or status in ("412", "409"):
                raise LockConflict(code or status) from None
            raise OSError(f"{code or status}: {error}") from None
        except BotoCoreError as error:
            raise OSError(str(error)) from None

    def read(self) -> tuple[bytes | None, str | None]:
        """The lock's content and ETag; (None, None) if there is none."""
        try:
            got = self._call(self.client.get_object)
        except LockConflict:  # NoSuchKey
            return None, None
        return got["Body"].read(), got["ETag"]

    def create(self, data: bytes) -> str:
        return self._call(self.client.put_object, Body=data, IfNoneMatch="*")["ETag"]

    def replace(self, data: bytes, etag: str) -> str:
        return self._call(self.client.put_object, Body=data, IfMatch=etag)["ETag"]

    def delete(self, etag: str) -> None:
        self._call(self.client.delete_object, IfMatch=etag)


def _conditional(store: RunStore) -> S3Lock | None:
    """The lock's conditional writer on S3; None elsewhere (a local lock is created exclusively, other
    object stores get read, compare and write)."""
    return S3Lock(store.uri, store.root) if not store.local and store.uri.lower().startswith("s3://") else None


def _lock_state(store: RunStore, conditional: S3Lock | None) -> tuple[bytes | None, str | None]:
    """The lock's content and (on S3) its ETag; (None, None) if absent or unreadable."""
    try:
        if conditional is not None:
            return conditional.read()
        return store.read_bytes(LOCK), None
    except OSError:
        return None, None


def _parse_lock(data: bytes | None) -> LockInfo | None:
    """A lock's content, or None (absent, empty, garbled: a job that died while writing it)."""
    if not data:
        return None
    try:
        return LockInfo(**json.loads(data))
    except (ValueError, TypeError):
        return None


def _encode(info: LockInfo) -> bytes:
    return json.dumps(info.__dict__).encode()


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stderr(text: str) -> None:
    print(f"bmn: {text}", file=sys.stderr)


class Lease:
    """A job's hold on one run: `Lease(store).acquire()` takes the run's lock (or refuses with one
    sentence), renews it from one thread of its own (`bmn-lease`) until `release()`. `lost` is None
    while the lease holds, or the sentence saying that another job took the run over."""

    def __init__(self, store: RunStore):
        self.store = store
        self.conditional = _conditional(store)
        self.owner: str | None = None  # this job's mark in the lock, while it holds it
        self.lost: str | None = None
        self._started = 0.0
        self._renewal = 0
        self._etag: str | None = None  # on S3: the ETag of the lock this job last wrote
        self._writing = threading.Lock()  # a renewal and the release never interleave
        self._released = threading.Event()
        self._renewer: threading.Thread | None = None

    def holder(self) -> LockInfo | None:
        """The run's lock as it is now (this job's or another's), or None."""
        return _parse_lock(self._state()[0])

    def _state(self) -> tuple[bytes | None, str | None]:
        return _lock_state(self.store, self.conditional)

    # -- taking the run -------------------------------------------------------------------------------
    def acquire(self, notice: Callable[[str], None] | None = None) -> Lease:
        """Take the run's lock and start renewing it, or refuse with one sentence if a live job holds
        it (the rules in this module's header). `notice` (default: a line on stderr) is told when a
        watch of another machine's lock starts."""
        uri = self.store.uri
        seen, seen_etag = self._state()
        if seen is not None:
            self._refuse_a_live_holder(seen, notice or _stderr)
        self.owner = uuid.uuid4().hex
        self._started = time.time()
        self._renewal = 0
        self.lost = None
        info = _encode(self._info())
        if self.conditional is not None:
            # Created only if still absent, or replaced only if still the lock watched: of two jobs
            # doing this at once, the store lets exactly one through.
            try:
                self._etag = (self.conditional.create(info) if seen is None
                              else self.conditional.replace(info, seen_etag))
            except LockConflict:
                self.owner = None
                raise BmnError(f"run {uri} was taken by another job starting at the same time") from None
            except OSError as error:
                self.owner = None
                raise BmnError(f"cannot write the lock of {uri}: {first_line(error)}") from None
        elif self.store.local and seen is None:
            # Exclusive create: of two jobs starting at once, exactly one gets here first.
            try:
                fd = os.open(self.store.path(LOCK), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                self.owner = None
                other = self.holder()
                raise BmnError(f"run {uri} is being written by another job "
                               f"({other.describe() if other else 'just started'})") from None
            with os.fdopen(fd, "wb") as handle:
                handle.write(info)
        else:
            # Replace the watched (dead, or absent) lock only if it is still that one (read, compare
            # and write: a store without conditional writes cannot do better).
            if self._state()[0] != seen:
                self.owner = None
                raise BmnError(f"run {uri} was taken by another job starting at the same time")
            self.store.write_bytes(LOCK, info)
            time.sleep(0.05)
            # Without an exclusive or conditional write, only reading it back tells who won.
            mine = self.holder()
            if mine is None or mine.owner != self.owner:
                self.owner = None
                raise BmnError(f"run {uri} was taken by another job starting at the same time")
        self._released = threading.Event()
        self._renewer = threading.Thread(target=self._renew_until_released, name="bmn-lease", daemon=True)
        self._renewer.start()
        return self

    def _refuse_a_live_holder(self, seen: bytes, notice: Callable[[str], None]) -> None:
        """A BmnError if the lock `seen` is a live job's: a process alive on this machine, or a lock
        that changes while watched for the lease time; returns when it is a dead job's."""
        uri = self.store.uri
        holder = _parse_lock(seen)
        here = socket.gethostname()
        if holder is not None and holder.host == here and _process_alive(holder.pid):
            raise BmnError(f"run {uri} is being written by another job ({holder.describe()}); "
                           f"wait for it to finish or stop it first")
        if holder is None or holder.host != here:
            who = holder.describe() if holder is not None else "an unreadable lock"
            notice(f"run {uri} has a lock ({who}); watching it for {LOCK_STALE_S:g} s "
                   f"to tell whether its job is alive")
            changed = self._watch(seen)
            if changed is not None:
                other = _parse_lock(changed)
                raise BmnError(f"run {uri} is being written by another job "
                               f"({other.describe() if other else 'its lock changed'}); wait for it to "
                               f"finish or stop it first")

    def _watch(self, seen: bytes) -> bytes | None:
        """Watch the lock for the lease time on this machine's monotonic clock; returns what it changed
        to (None: it stayed the same, or went away)."""
        t0 = time.monotonic()
        step = max(0.01, min(1.0, LOCK_STALE_S / 20))
        while time.monotonic() - t0 < LOCK_STALE_S:
            time.sleep(step)
            now = self._state()[0]
            if now is None:
                if not self.store.exists(LOCK):
                    return None  # released meanwhile
                continue  # a read that failed: keep watching
            if now != seen:
                return now
        return None

    # -- holding it -----------------------------------------------------------------------------------
    def _renew_until_released(self) -> None:
        """The renewer: the lease renewed until release (while the run opens, compiles, searches,
        finishes, compacts), the only writer of the lock meanwhile."""
        while not self._released.wait(LOCK_STALE_S / RENEWALS_PER_LEASE):
            try:
                self.renew()
            except (StoreUnavailable, OSError):
                pass  # a store that fails for a while: the next renewal tries again
            except BmnError:  # another job took the run over: `lost` says so
                return

    def renew(self) -> None:
        """Renew the lease now; a BmnError (kept in `lost`) once another job has taken the run over."""
        with self._writing:
            if self.owner is None:
                return
            if self.lost is None:
                self.lost = self._write_renewal()
            if self.lost is not None:
                raise BmnError(self.lost)

    def _write_renewal(self) -> str | None:
        """Write the next renewal if the lock is still this job's; otherwise write nothing and return
        the sentence that says who took the run over."""
        uri = self.store.uri
        if self.conditional is not None:
            self._renewal += 1
            try:
                self._etag = self.conditional.replace(_encode(self._info()), self._etag)
            except LockConflict:
                holder = self.holder()
                return f"another job took over run {uri}{f' ({holder.describe()})' if holder else ''}"
            return None
        holder = self.holder()
        if holder is not None and holder.owner != self.owner:
            return f"another job took over run {uri} ({holder.describe()})"
        self._renewal += 1
        self.store.write_json(LOCK, self._info().__dict__)
        return None

    def release(self) -> None:
        """Stop renewing and delete the lock, only if it is still this job's."""
        self._released.set()
        if self._renewer is not None:
            self._renewer.join(timeout=30)
            self._renewer = None
        with self._writing:
            if self.owner is None:
                return
            if self.conditional is not None:
                try:
                    self.conditional.delete(self._etag)  # only the lock this job wrote
                except LockConflict:
                    pass  # another job's now: not ours to delete
                except OSError:
                    self._delete_if_mine()  # a store without conditional deletes
            else:
                self._delete_if_mine()
            self.owner = None

    def _delete_if_mine(self) -> None:
        holder = self.holder()
        if holder is None or holder.owner == self.owner:
            self.store.delete(LOCK)

    def _info(self) -> LockInfo:
        """The lock as this job writes it now."""
        return LockInfo(self.owner, socket.gethostname(), os.getpid(), self._started, time.time(), self._renewal)


# -- a glance at a run's lock, for display (`bmn status`, `bmn query`) ----------------------------------

def read_lock(store: RunStore) -> LockInfo | None:
    """The run's lock as it is now, or None (absent, unreadable, garbled)."""
    return _parse_lock(_lock_state(store, _conditional(store))[0])


def live_holder(store: RunStore) -> LockInfo | None:
    """The lock of a job writing this run now, or None (no lock, or a dead job's), as far as a reader
    can tell at a glance; see is_live."""
    holder = read_lock(store)
    return holder if holder is not None and is_live(holder) else None


def is_live(holder: LockInfo) -> bool:
    """Whether a lock's job looks alive, for display only: a process of this machine while it runs;
    another machine's lock while its last renewal, by its holder's clock, is within the lease time of
    this machine's clock. The one place two machines' clocks are compared: a skewed clock can make a
    run look stopped or running when it is not, but never lets two jobs write it (only acquire, which
    watches the lock on its own clock, takes a run over)."""
    if holder.host == socket.gethostname():
        if not _process_alive(holder.pid):
            return False  # that job is gone
        if holder.pid == os.getpid():
            return True
    return time.time() - holder.heartbeat <= LOCK_STALE_S
