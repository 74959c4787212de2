"""cluster/loop/writer.py: shard files written by threads and taken in the order they were handed over (counted by
whoever takes them: the run loop); a write that fails stops the search with one sentence and gives up the
writes behind it; an interrupted search drops the writes not started."""

from __future__ import annotations

import threading
import time

import pytest

import cluster.loop.writer
from cluster.loop.writer import ShardWriter, WriteFailed, write_failure
from cluster.runs.figures import ShardFigures
from cluster.runs.summary import ShardSummary
from cluster.runs.tables import GAMES_SCHEMA
from kernels.errors import BmnError
from kernels.tally import Counts

ROWS = GAMES_SCHEMA.empty_table()


class GatedStore:
    """A run store whose writes of the files in `gates` wait until their gate is set; a file in `fail`
    raises as a full disk does. It records the files it wrote, in the order it wrote them."""

    uri = "file:///runs/r"

    def __init__(self, gates=(), fail=()):
        self.gates = {rel: threading.Event() for rel in gates}
        self.fail = set(fail)
        self.wrote: list[str] = []

    def write_parquet(self, rel, table):
        if rel in self.gates:
            self.gates[rel].wait(10)
        if rel in self.fail:
            raise OSError(28, "No space left on device")
        self.wrote.append(rel)


def summary(k: int, status: str = "done") -> ShardSummary:
    return ShardSummary(k, "random", "{}", status, ShardFigures(counts=Counts(deals=10 * (status == "done"))))


def hand_over(writer: ShardWriter, shards) -> None:
    for k in shards:
        writer.write(f"shards/{k}", ROWS, summary(k))


def eventually(predicate, timeout=10.0) -> bool:
    end = time.monotonic() + timeout
    while not predicate() and time.monotonic() < end:
        time.sleep(0.01)
    return predicate()


def done():
    return 0


def test_shards_are_taken_in_the_order_handed_over_once_written():
    store = GatedStore(gates=["shards/0"])
    writer = ShardWriter(store, done, threads=4)
    hand_over(writer, range(4))
    assert eventually(lambda: set(store.wrote) == {"shards/1", "shards/2", "shards/3"})
    assert list(writer.written()) == []  # shard 0 first: not written yet
    store.gates["shards/0"].set()
    taken = list(writer.written(wait_all=True))
    assert [s.shard for s in taken] == [0, 1, 2, 3] and sum(s.figures.counts.deals for s in taken) == 40
    assert list(writer.written()) == []
    writer.close()


def test_a_backlog_waits_for_the_oldest_write(monkeypatch):
    monkeypatch.setattr(cluster.loop.writer, "WRITE_BACKLOG", 2)
    store = GatedStore(gates=["shards/0"])
    writer = ShardWriter(store, done, threads=1)
    hand_over(writer, range(3))
    threading.Timer(0.2, store.gates["shards/0"].set).start()
    assert [s.shard for s in writer.written()][:1] == [0]  # more than 2 waiting: it waited for shard 0
    writer.close()


def test_a_failed_write_stops_with_a_sentence_and_gives_up_the_writes_behind_it():
    # One thread: shard 0 is written, shard 1 fails, shard 2 waits at its gate, shard 3 behind it.
    store = GatedStore(gates=["shards/2"], fail=["shards/1"])
    taken = []
    writer = ShardWriter(store, lambda: 7 + len(taken), threads=1)  # (the loop's count: 7 before, and those taken)
    hand_over(writer, range(4))
    with pytest.raises(WriteFailed, match=r"^cannot write shards/1 to file:///runs/r \(No space left on device\); "
                                          r"the search stopped with 8 shards written and kept: fix the cause, then "
                                          r"`bmn resume file:///runs/r` finishes the run$"):
        for s in writer.written(wait_all=True):
            taken.append(s.shard)
    store.gates["shards/2"].set()  # (a write under way finishes, in one step; it is not taken)
    writer.close()
    assert taken == [0] and "shards/3" not in store.wrote  # never started
    assert list(writer.written(wait_all=True)) == []


def test_an_interrupt_drops_the_writes_not_started():
    store = GatedStore(gates=["shards/0"])
    writer = ShardWriter(store, done, threads=1)
    hand_over(writer, range(3))
    t0 = time.monotonic()
    assert list(writer.written(wait_all=True, until=t0 + 0.2)) == []
    assert 0.2 <= time.monotonic() - t0 < 5
    store.gates["shards/0"].set()  # the write under way finishes; those not started never start
    writer.close()
    assert store.wrote == ["shards/0"] and list(writer.written()) == []


def test_a_failed_shard_is_taken_as_failed():
    writer = ShardWriter(GatedStore(), done, threads=1)
    writer.write("shards/5", ROWS, summary(5, status="failed"))
    assert [s.status for s in writer.written(wait_all=True)] == ["failed"]
    writer.close()


def test_a_bmn_error_is_its_own_sentence():
    store = GatedStore()
    assert str(write_failure(store, "progress.json", BmnError("the bucket is gone"), 3)) == \
        "the bucket is gone"
    assert "cannot write progress.json to file:///runs/r (boom); the search stopped with 1,234 shards" in \
        str(write_failure(store, "progress.json", RuntimeError("boom\nmore"), 1234))
