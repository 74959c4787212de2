"""A run's directory or object-store prefix, through pyarrow's filesystems.

`RunStore("runs/x")` is a local directory; `RunStore("s3://bucket/prefix")` is S3 (or any
S3-compatible store: the endpoint comes from `?endpoint_override=http://host:port` in the URI or
from the AWS_ENDPOINT_URL variable; credentials from the usual AWS variables).

Every file is written atomically: locally to a temporary name then renamed, on S3 as one object
PUT (an object appears only once complete). So a reader never sees half a file, and a shard
written twice (a retry) replaces itself instead of adding rows.

Which job may write a run (its lock, run.lock) is the lease's: lease.py.
"""

from __future__ import annotations

import json
import os
import posixpath
import time
import uuid
from urllib.parse import parse_qs, urlparse

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from kernels.errors import BmnError

RUN_JSON = "run.json"  # a run's config and versions: its presence makes a folder a run
PROGRESS_JSON = "progress.json"
# Object-store writes that fail are tried again this many times, waiting 0.5, 1, 2, 4 s between.
WRITE_RETRIES = 4
WRITE_BACKOFF_S = 0.5
# Object-store reads too: a 503 or a timeout is not a damaged file.
READ_RETRIES = 4
READ_BACKOFF_S = 0.5
SMALL_TABLE_ROWS = 1000  # tables with fewer rows are written with a cheaper compression


def s3_options(uri: str) -> dict:
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
    options = s3_options(uri)
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


class RunStore:
    def __init__(self, uri: str):
        self.uri = uri
        self.fs, self.root, self.local = open_filesystem(uri)

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
