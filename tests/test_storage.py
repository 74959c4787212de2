"""cluster/runs/storage.py: a run's files on a local disk or S3 (moto's server on loopback), written
atomically, listed, read again when the store fails for a while, and its errors as one sentence.
(The run's lock: tests/test_lease.py.)"""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cluster_helpers import FlakyStore, endpoint, one_sentence, s3_run_uri, store  # noqa: F401 (fixtures: endpoint, store)

import cluster.runs.storage as storage
from cluster.runs.storage import RunStore, open_filesystem
from kernels.errors import BmnError


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


# -- transient reads and damaged files ------------------------------------------------------------------

def test_object_store_reads_are_retried_and_a_store_that_keeps_failing_is_not_a_damaged_file(endpoint, monkeypatch):
    from cluster.runs.summary import ShardSummary
    from cluster.runs.tables import GAMES_SCHEMA, read_contents, read_summaries, shard_file_table
    from kernels.strategies.base import StreamShard

    monkeypatch.setattr(storage, "READ_BACKOFF_S", 0.0)
    store = RunStore(s3_run_uri(endpoint))
    summary = ShardSummary(0, "random", StreamShard(seed=1, shard=0, count=1, min_cards=0, min_tricks=0), "failed")
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
