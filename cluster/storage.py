"""A run's directory or object-store prefix, through pyarrow's filesystems.

`RunStore("runs/x")` is a local directory; `RunStore("s3://bucket/prefix")` is S3 (or any
S3-compatible store: the endpoint comes from `?endpoint_override=http://host:port` in the URI or
from the AWS_ENDPOINT_URL variable; credentials from the usual AWS variables).

Every file is written atomically: locally to a temporary name then renamed, on S3 as one object
PUT (an object appears only once complete). So a reader never sees half a file, and a shard
written twice (a retry) replaces itself instead of adding rows.
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
from dataclasses import dataclass
from urllib.parse import parse_qs, urlparse

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from kernels.errors import BmnError

RUN_JSON = "run.json"  # a run's config and versions: its presence makes a folder a run
PROGRESS_JSON = "progress.json"
LOCK = "run.lock"
# The lease: a job holding a run renews its lock several times within this many seconds, from acquire
# to release. A lock seen unchanged for this long, on the watcher's own monotonic clock, belongs to a
# job that died (Ctrl-C, SIGKILL, a lost node); no two machines' clocks are ever compared.
LOCK_STALE_S = 90.0
RENEWALS_PER_LEASE = 6
# Object-store writes that fail are tried again this many times, waiting 0.5, 1, 2, 4 s between.
WRITE_RETRIES = 4
WRITE_BACKOFF_S = 0.5
# Object-store reads too: a 503 or a timeout is not a damaged file.
READ_RETRIES = 4
READ_BACKOFF_S = 0.5
SMALL_TABLE_ROWS = 1000  # tables with fewer rows are written with a cheaper compression


def _s3_options(uri: str) -> dict:
    """Where an s3:// URI's store is: pyarrow's S3FileSystem options (endpoint_override, scheme,
    region), from the URI's query and the usual AWS variables."""
    parsed = urlparse(uri)
    query = {k: v[-1] for k, v in parse_qs(parsed.query).items()}
    options = {}
    endpoint = query.get("endpoint_override") or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get(
        "AWS_ENDPOINT_URL")
    if endpoint:
        scheme, _, host = endpoint.partition("://")
        options["endpoint_override"] = host or scheme
        options["scheme"] = scheme if host else query.get("scheme", "https")
    if "region" in query or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION"):
        options["region"] = query.get("region") or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    elif endpoint:
        options["region"] = "us-east-1"
    if "scheme" in query:
        options["scheme"] = query["scheme"]
    return options


def _s3(uri: str) -> tuple[pafs.FileSystem, str]:
    parsed = urlparse(uri)
    options = _s3_options(uri)
    try:
        # A delayed open lets pyarrow send a small file as one PutObject instead of a three-request
        # multipart upload: a third of the round trips for every shard file. Writes are made in the
        # calling thread (the coordinator's writer pool), not handed to pyarrow's I/O pool of 8
        # threads, which would cap a slow store at 8 requests in flight.
        fs = pafs.S3FileSystem(allow_delayed_open=True, background_writes=False, **options)
    except Exception as error:  # pyarrow raises ArrowInvalid and friends
        raise BmnError(f"cannot open {uri}: {error}") from None
    path = (parsed.netloc + parsed.path).rstrip("/")
    if not parsed.netloc:
        raise BmnError(f"{uri} names no bucket")
    return fs, path


def refuse_credentials(uri: str, where: str = "out") -> None:
    """A URI that holds credentials (s3://KEY:SECRET@bucket/...) is refused before it is used or
    written anywhere; the sentence does not repeat it."""
    if "://" in uri and "@" in urlparse(uri).netloc:
        raise BmnError(f"{where}: a URI must not hold credentials (NAME:SECRET@); give them as the usual "
                       f"AWS variables or an instance role instead")


class StoreUnavailable(BmnError):
    """The object store kept failing to answer a read: the run's files are not known to be damaged."""


def first_line(error: BaseException) -> str:
    """An error's first line (its type's name if it has no text)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _parse_lock(data: bytes | None) -> LockInfo | None:
    """A lock's content, or None (absent, empty, garbled: a job that died while writing it)."""
    if not data:
        return None
    try:
        return LockInfo(**json.loads(data))
    except (ValueError, TypeError):
        return None


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


def open_filesystem(uri: str) -> tuple[pafs.FileSystem, str, bool]:
    """(filesystem, root path, is_local) for a directory path or URI."""
    refuse_credentials(uri, "run")
    if "://" in uri:
        scheme = uri.split("://", 1)[0].lower()
        if scheme == "s3":
            fs, path = _s3(uri)
            return fs, path, False
        if scheme == "file":
            return pafs.LocalFileSystem(), os.path.abspath(urlparse(uri).path), True
        try:
            fs, path = pafs.FileSystem.from_uri(uri)
        except Exception as error:
            raise BmnError(f"cannot open {uri}: {error}") from None
        return fs, path.rstrip("/"), False
    return pafs.LocalFileSystem(), os.path.abspath(os.path.expanduser(uri)), True


@dataclass
class LockInfo:
    owner: str
    host: str
    pid: int
    started: float
    heartbeat: float  # the holder's clock at its last renewal (shown to people, never compared)
    renewal: int = 0  # how many times it was renewed: every renewal changes the lock

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host}, started {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(self.started))}"


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

        options = _s3_options(uri)
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


class RunStore:
    def __init__(self, uri: str):
        self.uri = uri
        self.fs, self.root, self.local = open_filesystem(uri)
        self._s3_lock: S3Lock | None = None
        self._etag: str | None = None  # on S3: the ETag of the lock this job last wrote
        self.owner: str | None = None
        self._lock_started = 0.0
        self._renewal = 0
        self._renewer: threading.Thread | None = None
        self._stop_renewing = threading.Event()
        self._renew_lock = threading.Lock()
        self.lost: str | None = None  # why the lease was lost (another job took the run over)

    def path(self, rel: str) -> str:
        return posixpath.join(self.root, rel) if not self.local else os.path.join(self.root, rel)

    # -- reading ----------------------------------------------------------------------------
    def exists(self, rel: str) -> bool:
        try:
            return self.fs.get_file_info(self.path(rel)).type != pafs.FileType.NotFound
        except OSError as error:
            raise BmnError(f"cannot reach {self.uri}: {error}") from None

    def read_bytes(self, rel: str) -> bytes:
        """A whole file. On an object store a read that fails (not a missing file) is tried again with
        backoff (READ_RETRIES times), then is StoreUnavailable: the store failed, not the file."""
        for attempt in range(READ_RETRIES + 1):
            try:
                with self.fs.open_input_stream(self.path(rel)) as stream:
                    return stream.read()
            except FileNotFoundError:
                raise
            except OSError as error:
                if self.local:
                    raise
                if attempt == READ_RETRIES:
                    raise StoreUnavailable(f"cannot read {self.path(rel)} from the store after {READ_RETRIES + 1} "
                                           f"tries ({first_line(error)}); the run is intact: try again later") from None
                time.sleep(READ_BACKOFF_S * 2 ** attempt)

    def read_json(self, rel: str):
        """A JSON file of the run; a damaged one is one sentence naming it."""
        data = self.read_bytes(rel)
        try:
            return json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise BmnError(f"{self.path(rel)} is damaged (not JSON: {error})") from None

    def list(self, rel_dir: str, suffix: str = "") -> list[str]:
        """Names of the files in a sub-directory (sorted), [] if it does not exist."""
        selector = pafs.FileSelector(self.path(rel_dir), allow_not_found=True)
        try:
            infos = self.fs.get_file_info(selector)
        except OSError as error:
            raise BmnError(f"cannot list {self.uri}: {error}") from None
        names = [posixpath.basename(i.path) for i in infos if i.type == pafs.FileType.File]
        return sorted(n for n in names if n.endswith(suffix) and not n.startswith("."))

    def entries(self) -> list[str]:
        """Names of everything at the top of the run (files and folders), [] if it does not exist."""
        try:
            infos = self.fs.get_file_info(pafs.FileSelector(self.root, allow_not_found=True))
        except OSError as error:
            raise BmnError(f"cannot list {self.uri}: {error}") from None
        return sorted(posixpath.basename(i.path.rstrip("/")) for i in infos)

    def read_parquet(self, rel: str) -> pa.Table:
        # The whole file in one read (2 requests on an object store, where pyarrow's reader
        # makes 5: it asks for the size and the footer before the data), then parsed in memory: a
        # failure here is the file's (its pages' checksums are verified), never the store's.
        return pq.read_table(pa.BufferReader(self.read_bytes(rel)), page_checksum_verification=True)

    def parquet_metadata(self, rel: str) -> dict[bytes, bytes]:
        if not self.local:
            # Read whole (with retries), so that a store that fails is not taken for a damaged file.
            return pq.ParquetFile(pa.BufferReader(self.read_bytes(rel))).schema_arrow.metadata or {}
        with self.fs.open_input_file(self.path(rel)) as f:
            return pq.ParquetFile(f).schema_arrow.metadata or {}

    # -- writing (atomic) -----------------------------------------------------------------------
    def write_bytes(self, rel: str, data: bytes) -> None:
        """Write a whole file in one step: a reader sees the old file or the new one, never a part.

        Locally: a temporary file, fsync, rename (a failed write removes its temporary file). On an
        object store: one PUT, retried with backoff when the store fails (WRITE_RETRIES times)."""
        target = self.path(rel)
        if self.local:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            tmp = os.path.join(os.path.dirname(target), f".{os.path.basename(target)}.{uuid.uuid4().hex}.tmp")
            try:
                with open(tmp, "wb") as handle:
                    handle.write(data)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(tmp, target)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
            return
        for attempt in range(WRITE_RETRIES + 1):
            try:
                with self.fs.open_output_stream(target) as stream:
                    stream.write(data)
                return
            except OSError:
                if attempt == WRITE_RETRIES:
                    raise
                time.sleep(WRITE_BACKOFF_S * 2 ** attempt)

    def write_json(self, rel: str, value) -> None:
        self.write_bytes(rel, (json.dumps(value, indent=1, sort_keys=True) + "\n").encode())

    def write_parquet(self, rel: str, table: pa.Table) -> None:
        sink = pa.BufferOutputStream()
        # zstd for tables worth compressing (compacted files); a shard's small file is mostly its
        # footer, and zstd's set-up per column would double the driver's CPU time for each one.
        pq.write_table(table, sink, compression="zstd" if table.num_rows >= SMALL_TABLE_ROWS else "snappy",
                       write_page_checksum=True)
        self.write_bytes(rel, sink.getvalue().to_pybytes())

    def move(self, rel: str, target_rel: str) -> None:
        """Rename a file within the run (locally atomic; on object stores a copy, then a delete)."""
        if self.local:
            os.makedirs(os.path.dirname(self.path(target_rel)), exist_ok=True)
        self.fs.move(self.path(rel), self.path(target_rel))

    def delete(self, rel: str) -> None:
        try:
            self.fs.delete_file(self.path(rel))
        except FileNotFoundError:
            pass

    def make_root(self) -> None:
        if self.local:
            try:
                os.makedirs(self.root, exist_ok=True)
            except OSError as error:
                raise BmnError(f"cannot create run directory {self.uri}: {error.strerror}") from None
            if not os.path.isdir(self.root):
                raise BmnError(f"{self.uri} exists and is not a directory")

    # -- the lock: one job writes a run at a time -----------------------------------------------
    def read_lock(self) -> LockInfo | None:
        return _parse_lock(self._lock_bytes())

    @property
    def conditional(self) -> S3Lock | None:
        """The lock's conditional writer, on S3 (None elsewhere: a local file is created exclusively;
        other object stores get read, compare and write)."""
        if self._s3_lock is None and not self.local and self.uri.lower().startswith("s3://"):
            self._s3_lock = S3Lock(self.uri, self.root)
        return self._s3_lock

    def _lock_bytes(self) -> bytes | None:
        return self._lock_state()[0]

    def _lock_state(self) -> tuple[bytes | None, str | None]:
        """The lock's content and (on S3) its ETag; (None, None) if absent or unreadable."""
        try:
            if self.conditional is not None:
                return self.conditional.read()
            return self.read_bytes(LOCK), None
        except OSError:
            return None, None

    def acquire(self, notice=None) -> None:
        """Take the run's lock (a lease renewed until release), or refuse if a live job holds it.

        A lock of a process on this machine is live while that process is. Any other lock (another
        machine's, or an empty or garbled one) is watched: if it changes within the lease time, its
        job is alive and the run is refused; if it stays the same that long, its job is dead and the
        lock is taken over, only if it is still the one watched. `notice` (default: a line on stderr)
        is told when a watch starts."""
        seen, seen_etag = self._lock_state()
        if seen is not None:
            holder = _parse_lock(seen)
            if holder is not None and holder.host == socket.gethostname() and _process_alive(holder.pid):
                raise BmnError(f"run {self.uri} is being written by another job ({holder.describe()}); "
                               f"wait for it to finish or stop it first")
            if holder is None or holder.host != socket.gethostname():
                who = holder.describe() if holder is not None else "an unreadable lock"
                (notice or _stderr)(f"run {self.uri} has a lock ({who}); watching it for {LOCK_STALE_S:g} s "
                                    f"to tell whether its job is alive")
                changed = self._watch(seen)
                if changed is not None:
                    other = _parse_lock(changed)
                    raise BmnError(f"run {self.uri} is being written by another job "
                                   f"({other.describe() if other else 'its lock changed'}); wait for it to "
                                   f"finish or stop it first")
        self.owner = uuid.uuid4().hex
        self._lock_started = time.time()
        self._renewal = 0
        self.lost = None
        info = json.dumps(self._info().__dict__).encode()
        if self.conditional is not None:
            # Created only if still absent, or replaced only if still the lock watched: of two jobs
            # doing this at once, the store lets exactly one through.
            try:
                self._etag = (self.conditional.create(info) if seen is None
                              else self.conditional.replace(info, seen_etag))
            except LockConflict:
                self.owner = None
                raise BmnError(f"run {self.uri} was taken by another job starting at the same time") from None
            except OSError as error:
                self.owner = None
                raise BmnError(f"cannot write the lock of {self.uri}: {first_line(error)}") from None
        elif self.local and seen is None:
            # Exclusive create: of two jobs starting at once, exactly one gets here first.
            try:
                fd = os.open(self.path(LOCK), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                self.owner = None
                other = self.read_lock()
                raise BmnError(f"run {self.uri} is being written by another job "
                               f"({other.describe() if other else 'just started'})") from None
            with os.fdopen(fd, "wb") as handle:
                handle.write(info)
        else:
            # Replace the watched (dead, or absent) lock only if it is still that one (read, compare
            # and write: a store without conditional writes cannot do better).
            if self._lock_bytes() != seen:
                self.owner = None
                raise BmnError(f"run {self.uri} was taken by another job starting at the same time")
            self.write_bytes(LOCK, info)
            time.sleep(0.05)
            # Without an exclusive or conditional write, only reading it back tells who won.
            mine = self.read_lock()
            if mine is None or mine.owner != self.owner:
                self.owner = None
                raise BmnError(f"run {self.uri} was taken by another job starting at the same time")
        self._stop_renewing.clear()
        self._renewer = threading.Thread(target=self._renew, name="bmn-lease", daemon=True)
        self._renewer.start()

    def _watch(self, seen: bytes) -> bytes | None:
        """Watch the lock for the lease time; returns what it changed to (None: it stayed the same, or
        went away)."""
        t0 = time.monotonic()
        step = max(0.01, min(1.0, LOCK_STALE_S / 20))
        while time.monotonic() - t0 < LOCK_STALE_S:
            time.sleep(step)
            now = self._lock_bytes()
            if now is None:
                if not self.exists(LOCK):
                    return None  # released meanwhile
                continue  # a read that failed: keep watching
            if now != seen:
                return now
        return None

    def _renew(self) -> None:
        """Renew the lease until release (while the run opens, compiles, searches, finishes, compacts)."""
        while not self._stop_renewing.wait(LOCK_STALE_S / RENEWALS_PER_LEASE):
            try:
                self.heartbeat()
            except (StoreUnavailable, OSError):
                pass  # a store that fails for a while: the next renewal tries again
            except BmnError as error:  # another job took the run over
                self.lost = str(error)
                return

    def heartbeat(self) -> None:
        """Renew the lease now; a BmnError if another job took the run over."""
        with self._renew_lock:
            if self.owner is None:
                return
            if self.lost:
                raise BmnError(self.lost)
            if self.conditional is not None:
                self._renewal += 1
                try:
                    self._etag = self.conditional.replace(json.dumps(self._info().__dict__).encode(), self._etag)
                except LockConflict:
                    holder = self.read_lock()
                    raise BmnError(f"another job took over run {self.uri}"
                                   f"{f' ({holder.describe()})' if holder else ''}") from None
                return
            holder = self.read_lock()
            if holder is not None and holder.owner != self.owner:
                raise BmnError(f"another job took over run {self.uri} ({holder.describe()})")
            self._renewal += 1
            self.write_json(LOCK, self._info().__dict__)

    def release(self) -> None:
        self._stop_renewing.set()
        if self._renewer is not None and self._renewer is not threading.current_thread():
            self._renewer.join(timeout=30)
        self._renewer = None
        with self._renew_lock:
            if self.owner is not None and self.conditional is not None:
                try:
                    self.conditional.delete(self._etag)  # only the lock this job wrote
                except LockConflict:
                    pass  # another job's now: not ours to delete
                except OSError:
                    holder = self.read_lock()  # a store without conditional deletes
                    if holder is None or holder.owner == self.owner:
                        self.delete(LOCK)
                self.owner = None
            elif self.owner is not None:
                holder = self.read_lock()
                if holder is None or holder.owner == self.owner:
                    self.delete(LOCK)
                self.owner = None

    def _info(self) -> LockInfo:
        return LockInfo(self.owner, socket.gethostname(), os.getpid(), self._lock_started, time.time(), self._renewal)

    def live_holder(self) -> LockInfo | None:
        """The lock of a job writing this run now, or None (no lock, or a dead job's), as far as a
        reader can tell at a glance (`bmn status`, `bmn query`): a process of this machine is
        alive, another machine's lock renewed within the lease time by its own clock. Only taking
        the run over (acquire) waits to be sure."""
        holder = self.read_lock()
        return holder if holder is not None and self.is_live(holder) else None

    @classmethod
    def is_live(cls, holder: LockInfo) -> bool:
        return not cls._stale(holder)

    @staticmethod
    def _stale(holder: LockInfo) -> bool:
        if holder.host == socket.gethostname():
            if not _process_alive(holder.pid):
                return True  # that job is gone
            if holder.pid == os.getpid():
                return False
        return time.time() - holder.heartbeat > LOCK_STALE_S
