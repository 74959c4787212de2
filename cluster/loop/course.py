"""The course of a search: how far it has handed out its plan, when and why it stops (`Course`, `Stop`,
and the one outcome its loop ends by, `End`), and progress.json, written by its one owner
(`ProgressFile`). The coordinator's loop (coordinator.py) asks `Course` at every turn; everything that
ends a search from outside the plan (an interrupt, the lease, the cluster, a write that fails) it makes
an `End` of itself.
"""

from __future__ import annotations

import enum
import threading
import time
from collections.abc import Callable, Iterator
from typing import NamedTuple

from kernels.errors import BmnError
from kernels.strategies import Shard

from ..runs.storage import PROGRESS_JSON, RunStore

PROGRESS_S = 5.0  # how often progress.json is written while a search runs


class Stop(str, enum.Enum):
    """Why a search's loop ended (each the run's state as progress.json and the report say it)."""

    FINISHED = "finished"  # every shard handed out came back
    TIME_LIMIT = "time limit"  # the limit passed (the shards in flight abandoned), or overtime cut the plan short
    INTERRUPTED = "interrupted"  # Ctrl-C, or SIGTERM from `ray job stop`
    CLUSTER_LOST = "stopped: cluster lost"  # the node it runs on, or the head, is gone
    FAILED = "failed"  # a sentence stops it (its End's error; progress.json keeps its last state)


class End(NamedTuple):
    """How a search's loop ended, its one outcome: why (`stop`), and for a search that fails (FAILED; the
    cluster lost, once its tables are written), the sentence it fails with (`error`)."""

    stop: Stop
    error: BmnError | None = None


class Course:
    """How far a search has handed out its plan, and the rules of its time limit: whether it stops, and as
    finished or at its time limit.

    The time limit stops a session at the limit, the shards in flight abandoned. A session that has
    played no shard by then (a limit shorter than a shard, a GPU batch, or the workers' start) would stop
    so again on every resume under the same limit, the run never advancing: it runs over instead
    (`overtime`), handing out shards until some are in flight, then no more, and stops once those are
    back. So every session plays at least the shards it first hands out, and runs past its limit only
    when the limit left it nothing to show, by what those shards take (in_flight per worker). Finishing
    the shards in flight at every stop would instead make every time-limited session run over."""

    def __init__(self, shards: Iterator[Shard], deadline: float | None):
        self.shards = shards  # the plan's shards not yet handed out
        self.deadline = deadline
        self.overtime = False  # past the limit with nothing played this session
        self.exhausted = False  # no shard of the plan left to hand out
        self.cut_short = False  # overtime left some of the plan's shards never handed out

    def expired(self, now: float, played: bool) -> bool:
        """Whether the search stops at its time limit now: past it, having `played` a shard this session
        (else it runs over from now on)."""
        if self.deadline is None or now < self.deadline or self.overtime:
            return False
        if played:
            return True
        self.overtime = True
        return False

    def hand_out(self, pool) -> None:
        """Give the pool shards: the plan's, or in overtime only until some are in flight (those given back
        to try again still go out)."""
        self._stop_in_overtime(pool)
        self.exhausted = pool.dispatch(self.shards) or self.exhausted
        self._stop_in_overtime(pool)

    def _stop_in_overtime(self, pool) -> None:
        if self.overtime and pool.busy() and not self.exhausted:
            self.cut_short = next(self.shards, None) is not None
            self.shards, self.exhausted = iter(()), True

    def ended(self, pool) -> Stop | None:
        """Every shard handed out is back: finished, or at the time limit where overtime cut the plan short."""
        if self.exhausted and not pool.busy():
            return Stop.TIME_LIMIT if self.cut_short else Stop.FINISHED
        return None

    def wait_s(self, now: float) -> float:
        """How long the loop may wait for the pool: half a second, and not past the limit."""
        return 0.5 if self.deadline is None or self.overtime else max(0.0, min(0.5, self.deadline - now))


class ProgressFile:
    """progress.json's one owner: while the search runs, its thread writes the run's figures every
    PROGRESS_S (off the scheduling loop); at the end, `last` stops that thread and writes the final state.
    A write that fails is kept (`error`) for the loop, which stops the search with it."""

    def __init__(self, store: RunStore, figures: Callable[[], dict]):
        self.store = store
        self.figures = figures  # the run's figures now: what each write holds besides its state
        self.error: Exception | None = None
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bmn-progress", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while not self._stopping.wait(PROGRESS_S):
            try:
                self._write("running", tables=False)
            except Exception as error:  # reported by the loop, which stops the search
                self.error = error
                return

    def stop(self) -> None:
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)

    def last(self, state: str, tables: bool) -> None:
        """The run's final state; `tables`: whether the summary tables (games.parquet, ...) are this state's."""
        self.stop()
        self._write(state, tables)

    def _write(self, state: str, tables: bool) -> None:
        self.store.write_json(PROGRESS_JSON, {"state": state, "updated_at": time.time(), **self.figures(),
                                              "tables": tables})
