"""The shard writer: shard files written off the run loop, each shard counted once its file is written.

The run loop hands over each shard's file as the shard comes back (`write`), and goes on; a
bounded pool of threads writes the files (an object store answers each in tens of ms, so many are
written at once), and the loop takes the shards whose files are written (`written`), in the order
it handed them over, and counts each into the run's totals as it takes it. Nothing half-written is
ever counted as done: a write that fails for good (disk full, permission denied, an object store
that keeps failing; the store retries what may pass) gives up the writes behind it and stops the
search with one sentence (`WriteFailed`); the shards not written are simply not done, and
`bmn resume` runs them.
"""

from __future__ import annotations

import collections
import concurrent.futures as futures
import time
from collections.abc import Callable, Iterator
from typing import NamedTuple

import pyarrow as pa

from kernels.errors import BmnError

from ..runs.storage import RunStore
from ..runs.summary import ShardSummary

WRITE_THREADS = 32  # shard files written at once (an object store answers each in tens of ms)
WRITE_BACKLOG = 256  # files waiting to be written before the loop waits for the oldest


class WriteFailed(BmnError):
    pass


class _Pending(NamedTuple):
    """A shard file handed over and not yet taken: its write, its path in the run, its summary."""

    future: futures.Future
    rel: str
    summary: ShardSummary


class ShardWriter:
    def __init__(self, store: RunStore, done: Callable[[], int], threads: int = WRITE_THREADS):
        self.store = store
        self.done = done  # the run's shards done (what a write that fails says was kept)
        self.threads = futures.ThreadPoolExecutor(threads, thread_name_prefix="bmn-write")
        self.writes: collections.deque[_Pending] = collections.deque()  # handed over, not yet taken; oldest first

    def write(self, rel: str, table: pa.Table, summary: ShardSummary) -> None:
        """Start writing one shard's file (`rel`, in the run): its table, the summary in its metadata."""
        self.writes.append(_Pending(self.threads.submit(self.store.write_parquet, rel, table), rel, summary))

    def written(self, wait_all: bool = False, until: float | None = None) -> Iterator[ShardSummary]:
        """The summaries of the shards whose files are written, in the order they were handed over (the
        loop counts each as it takes it); the first file not yet written ends them. While more than
        WRITE_BACKLOG files wait, waits for the oldest. `wait_all`: waits for every file, or until
        `until` (a monotonic time), when the files not written by then are given up. A write that
        failed gives up those behind it and raises WriteFailed."""
        block = len(self.writes) > WRITE_BACKLOG
        while self.writes:
            future, rel, summary = self.writes[0]
            if not future.done():
                if not (block or wait_all):
                    return
                futures.wait([future], timeout=None if until is None else max(0.0, until - time.monotonic()))
                if not future.done():
                    self._give_up()
                    return
                block = False
            self.writes.popleft()
            if future.cancelled():
                continue  # a write given up after an earlier one failed: its shard is simply not done
            error = future.exception()
            if error is not None:
                self._give_up()
                raise write_failure(self.store, rel, error, self.done())
            yield summary

    def close(self) -> None:
        """Stop the threads, once the writes have been taken (or given up)."""
        self.threads.shutdown(wait=True, cancel_futures=True)

    def _give_up(self) -> None:
        # Writes under way finish (a file is written in one step: wholly or not at all); those not
        # started never start. None of them is counted.
        for pending in self.writes:
            pending.future.cancel()
        self.writes.clear()


def write_failure(store: RunStore, what: str, error: BaseException, done: int) -> WriteFailed:
    """The sentence for a run file that cannot be written (`what`): the search stops, what was written is kept."""
    if isinstance(error, BmnError):
        return WriteFailed(str(error))
    reason = getattr(error, "strerror", None) or str(error).strip().splitlines()[0] or type(error).__name__
    return WriteFailed(f"cannot write {what} to {store.uri} ({reason}); the search stopped with {done:,} shards "
                       f"written and kept: fix the cause, then `bmn resume {store.uri}` finishes the run")
