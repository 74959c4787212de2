"""What the run loop does with each shard the pool hands back (a `PlayedShard`, done or given up): its
summary made and its file handed to the writer (writer.py), a GPU shard the run audits held while a CPU
actor plays it again (audit.py), and the session's counters (one `SessionTotals`) kept as the files are
written."""

from __future__ import annotations

import time
from collections.abc import Callable

from kernels.errors import BmnError

from ..runs.figures import PlayedShard
from ..runs.storage import RunStore
from ..runs.summary import ShardSummary
from ..runs.tables import GAMES_SCHEMA, games_table, shard_file_name, shard_file_table
from ..runs.totals import SessionTotals
from .audit import Audits
from .runfiles import RunFiles
from .writer import ShardWriter

INTERRUPT_WRITES_S = 1.0  # how long an interrupted search waits for the shard files being written


class Recorder:
    def __init__(self, store: RunStore, files: RunFiles, audits: Audits, counts: SessionTotals, pool,
                 say: Callable[[str], None]):
        self.store = store
        self.pool = pool  # (the one that plays an audit again)
        self.files = files
        self.audits = audits
        self.counts = counts
        self.say = say  # a sentence for the user (the progress view's)
        self.writer: ShardWriter | None = None  # once started
        self.on_shard_done = None  # a hook for tests: called with the run loop after each shard written

    def start(self) -> None:
        self.writer = ShardWriter(self.store, lambda: self.counts.run.done)

    def record(self, played: PlayedShard) -> None:
        """A shard back from the pool: written, or (a GPU shard the run audits) held while the pool plays it
        again on a CPU. An audit that differs: a BmnError, once the CPU's result is written."""
        if played.audit:
            self._audited(played)
        elif self.audits.wants(played):
            self.audits.held[played.shard.id] = played
            self.pool.audit(played.shard)
        else:
            self._write(played)

    def _audited(self, cpu: PlayedShard) -> None:
        """A GPU shard's audit back: the GPU's result written if the CPU's equals it; else the CPU's written and
        the search stopped, naming the shard, the GPU worker and its device. An audit that could not be played
        leaves the GPU's result, said unaudited."""
        gpu_worker = self.audits.held[cpu.shard.id].figures.worker
        played, mark, what = self.audits.back(cpu)
        if not cpu.done:
            self.say(f"bmn: the audit of shard {cpu.shard.id} could not be played ({cpu.error}); its GPU "
                     f"result is kept unaudited")
        self._write(played, audit=mark)
        if what is not None:
            raise BmnError(f"the GPU worker {gpu_worker} ({self.pool.device_of(gpu_worker)}) computed shard "
                           f"{cpu.shard.id} differently from a CPU ({what}); the CPU's result is written, and the "
                           f"search stops: check that GPU (`bmn resume {self.store.uri} --device cpu` goes on "
                           f"without GPUs)")

    def _write(self, played: PlayedShard, audit: str | None = None) -> None:
        summary = ShardSummary.of(played, run=self.files.owner.fingerprint, audit=audit)
        self.counts.handed(summary)
        rows = games_table(played) if played.done else GAMES_SCHEMA.empty_table()
        rel = shard_file_name(played.shard.id)
        self.files.rewritten(rel)
        self.writer.write(rel, shard_file_table(rows, [summary]), summary)

    def count_written(self, loop, wait_all: bool = False, until: float | None = None, hooks: bool = True) -> None:
        """Take the shards whose files are written (ShardWriter.written), each counted into the session's
        totals; the hook called with `loop` after each one done."""
        for summary in self.writer.written(wait_all, until):
            self.counts.count(summary)
            if summary.done:
                if hooks and self.on_shard_done is not None:
                    self.on_shard_done(loop)

    def close(self, interrupted: bool) -> BmnError | None:
        """The writes under way taken (an interrupted search gives them INTERRUPT_WRITES_S; those not started
        are dropped: their shards are simply not done), the threads stopped. A write that failed: its sentence."""
        failure = None
        try:
            until = time.monotonic() + INTERRUPT_WRITES_S if interrupted else None
            self.count_written(None, wait_all=True, until=until, hooks=False)
        except BmnError as error:
            failure = error
        self.writer.close()
        return failure

