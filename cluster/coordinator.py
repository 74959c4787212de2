"""The coordinator: the run loop. It hands a plan's shards to the pool of Ray actors (pool.py: the
actors, their scaling, loss, retries and deadlines) and has what comes back written (writer.py).

A shard's path from the plan to its file, in five forms (Shard, ShardResult, PlayedShard, ShardSummary, the
shard file), is drawn in docs/development.md ("The path of a shard"): the pool hands the loop each shard as
a `PlayedShard` (done, or given up), and the loop makes its `ShardSummary` and has its file written.

The cluster may change under a search:
- `workers = 0` follows the cluster: one actor per CPU it has, now or later. While it has none the
  search waits (and says so); an actor is added for every CPU that joins, those of nodes that leave
  go with them, and on a cluster with an autoscaler the capacity the pending shards need is asked
  for (`max_workers` caps both). `workers = N` keeps N actors.
- GPUs (`device`, for the strategies with GPU kernels): "auto" gives every GPU of the cluster an
  actor, which holds one CPU to drive it, and the other CPUs CPU actors; "gpu" only GPU actors. A
  GPU actor that fails is not replaced on its GPU: its shards go to CPU actors, with one sentence
  (pool.py); with "gpu", a run whose GPUs have all failed, or a cluster with none, stops with one.
- an actor that dies mid-shard (killed, out of memory, node lost), or stays on one shard past its
  deadline: its shards go back in the queue and run on another actor. After `max_attempts`
  attempts a shard is written as failed (no rows) and the run goes on; `bmn resume` tries it again.
- the cluster itself gone (the node the driver runs on, or the head, dead; its control store
  unreachable for a minute): the search stops with one sentence saying so; what was written is
  kept and `bmn resume RUN` continues.
- a driver stopped (Ctrl-C, or SIGTERM from `ray job stop`) ends "interrupted" within a second or
  two, its lease released; one that dies (SIGKILL, preempted): finished shards are on disk; `bmn resume RUN`
  (or the same command again) skips them and runs the rest. Shard files are named by shard id and
  written in one step, so nothing is lost and nothing is counted twice.

The driver's own I/O stays off the loop: shard files are written by a bounded pool of threads (a
shard counts as done once its file is written: writer.py), and progress.json by its one owner,
`ProgressFile`, whose thread writes it while the search runs and which writes the last state at the
end (the run's lease is renewed by its own thread: lease.py; a lease another job took over stops the
search with a sentence). A write that fails for good (disk full, permission denied, an object store
that keeps failing) stops the search with a sentence; resume finishes the run.

How a search ends is decided in one place: `Course` (the plan handed out, the time limit and its
overtime: "finished" or "time limit") and `Coordinator._turn` (the cluster gone: "stopped: cluster
lost"; the lease lost or a write failed: a sentence); an interrupt ends it "interrupted".
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

import pyarrow as pa
import ray

from kernels.errors import BmnError

from . import known
from .config import SearchConfig
from .lease import Lease
from .audit import Audits
from .course import Course, ProgressFile, Stop
from .figures import PlayedShard, game_json
from .plan import Plan
from .pool import ShardPool
from .progress import ProgressView
from .raycluster import ClusterHealth, cluster_address, connect, request_capacity, withdraw_capacity
from .runmeta import check_new_run_folder, open_run
from .storage import PROGRESS_JSON, RunStore
from .summary import ShardSummary
from .tables import (FOREIGN_DIR, GAMES_SCHEMA, Ownership, build_tables, games_table, read_contents, set_aside,
                     shard_file_name, shard_file_table, write_tables)
from .totals import RunTotals
from .worker import Workers
from .writer import ShardWriter, write_failure

HEALTH_S = 2.0  # how often the cluster's health is checked (a cheap call to the control store)
SCALE_S = 2.0  # how often the actor pool is matched to the cluster's CPUs
KILL_GRACE_S = 20.0  # how long a search's end waits for actors still starting (see ShardPool.close)
INTERRUPT_WRITES_S = 1.0  # how long an interrupted search waits for the shard files being written


@dataclass
class RunReport:
    uri: str
    state: str  # "finished", "time limit", "interrupted", "incomplete" (ran to its end, tables miss shards)
    shards_total: int
    shards_done: int
    shards_failed: int
    deals: int
    cards: int
    elapsed_s: float
    cycles: int
    longest: list[dict] = field(default_factory=list)
    new_shards: int = 0
    session_deals: int = 0  # deals played by this run of the coordinator
    work_s: float = 0.0  # from the first shard handed out to the last one collected
    set_aside: list[str] = field(default_factory=list)  # damaged shard files moved into damaged/
    table: str | None = None  # the strategy's own summary table, if it has one (the atlas)
    missing: list[int] = field(default_factory=list)  # "incomplete": the shards the tables miss
    unit: str = "deals"  # what the strategy's shards play: "deals" (counted by `deals`) or "states"
    finite_games: bool = True  # whether the strategy keeps finite games (a longest game to show)
    # Each distinct cycle's label by the catalogue of known cycles (cluster/known.py; None: new), and
    # the cycles that contradict a complete exhaustive search (one sentence each)
    cycle_labels: list = field(default_factory=list)
    contradictions: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return self.__dict__.copy()


class Coordinator:
    def __init__(self, config: SearchConfig, store: RunStore, lease: Lease, progress: ProgressView | None = None,
                 local: bool = False, pool=None, health=None):
        """`pool` and `health`: the actors and the cluster's health checks (by default a ShardPool of Ray
        actors and ClusterHealth; a test passes plain ones and runs the loop without Ray)."""
        self.config = config
        self.local = local  # the Ray cluster is this machine, started by bmn
        self.store = store
        self.lease = lease  # held on the run by this job; the loop stops if another job takes it over
        self.plan = Plan(config)
        self.owner = Ownership(self.plan, config.fingerprint())  # which shard files are this run's
        self.progress = progress or ProgressView(enabled=False)
        self.workers = Workers(config, self.plan) if pool is None else None
        self.pool = pool or ShardPool(self.workers.new_actor, self.workers.wanted, in_flight=config.in_flight,
                                      max_attempts=config.max_attempts, shard_timeout=config.shard_timeout,
                                      fixed=bool(config.workers), gpu_batch=self.workers.gpu_batch)
        self._health = health
        # The pool as the loop last read it (progress.json, written by its own thread, reads it too).
        self.pool_report = self.pool.report()
        self.writer: ShardWriter | None = None
        self.totals = RunTotals()
        self.session_deals = 0
        self.new = 0
        self._finished: set[int] | None = None
        # The shard files read when the run was opened: the end of the run reads only the others.
        self._read: dict[str, tuple] = {}
        self.set_aside: list[str] = []
        self.on_shard_done = None  # a hook for tests: called with the coordinator after each shard
        self.health = None
        self.waiting_for_cpus = False
        self.missing: list[int] = []  # shards in neither a done nor a failed file at the end
        self.cycles: pa.Table | None = None  # the cycles table, once the end of the run has written it
        self.t0 = 0.0
        self._last_scale = self._last_health = 0.0
        self.lost: str | None = None  # the cluster gone: why
        self.progress_file = ProgressFile(store, self._figures)
        self.audits = Audits(config.audit, config.fingerprint())  # GPU shards played again on CPUs

    # -- the loop -------------------------------------------------------------------------------
    def run(self) -> RunReport:
        self.t0 = time.time()
        finished = self._load()
        if not self.has_work():
            return self.report(self._finish(Stop.FINISHED))
        deadline = self.t0 + self.config.time_limit if self.config.time_limit else None
        course = Course((self.plan.shard(k) for k in range(self.plan.count) if k not in finished), deadline)
        self.progress.start(self.plan.count, self.totals.done, self.plan.strategy.unit, self.plan.strategy.finite_games)
        if self.local:
            # Every worker on this machine shares Numba's disk cache: compile the kernels here,
            # once, rather than in every worker at the same time (CPU and memory times the workers).
            self.plan.strategy.warm_up(self.plan.space)
        self.health = self._health or ClusterHealth()
        self.writer = ShardWriter(self.store, self.totals)
        self.progress_file.start()
        stop: Stop | None = None
        failure: BmnError | None = None
        try:
            while stop is None:
                stop = self._turn(course)
        except KeyboardInterrupt:
            stop = Stop.INTERRUPTED
        except OSError as error:
            failure = write_failure(self.store, PROGRESS_JSON, error, self.totals.done)
        except BmnError as error:
            failure = error
        finally:
            closing = self._close(stop)
            failure = failure or closing
        if failure is not None:
            raise failure
        if stop is Stop.CLUSTER_LOST:
            self._finish(stop)
            raise BmnError(f"{self.lost}; the search stopped with {self.totals.done:,} of {self.plan.count:,} shards "
                           f"done and written: `bmn resume {self.store.uri}` continues it")
        return self.report(self._finish(stop))

    def _turn(self, course: Course) -> Stop | None:
        """One turn of the loop: shards handed out, outcomes taken, files counted; why the search stops
        now, if it does. The lease lost, a write that failed: a BmnError (or OSError) that stops it."""
        now = time.time()
        if course.expired(now, played=bool(self.session_deals)):
            return Stop.TIME_LIMIT
        if now - self._last_scale >= SCALE_S:
            self._scale()
            self._last_scale = now
        course.hand_out(self.pool)
        self._count_written()
        ended = course.ended(self.pool)
        if ended is not None:
            # The last files are waited for here, so that each shard is counted (and its hook called) in
            # the loop, as every earlier one was.
            self._count_written(wait_all=True)
            return ended
        for played in self.pool.wait(course.wait_s(time.time())):
            self._record(played)
        self._read_pool()
        if time.time() - self._last_health >= HEALTH_S:
            self.lost = self.health.problem()
            self._last_health = time.time()
            if self.lost:
                return Stop.CLUSTER_LOST
        if self.lease.lost:
            raise BmnError(self.lease.lost)
        if self.progress_file.error is not None:
            raise self.progress_file.error
        self.progress.update(self.totals.done, self.session_deals, self.totals.longest_cards, len(self.totals.cycle_ids),
                             self.totals.failed, self.pool_report.first_dispatch, note=self._waiting())
        return None

    def _close(self, stop: Stop | None) -> BmnError | None:
        """After the loop, whatever ended it: the actors killed, the progress thread stopped, the writes
        under way taken (an interrupted search gives them a moment; those not started are dropped: their
        shards are simply not done, and the next session runs them). A write that failed meanwhile: its
        sentence."""
        failure = None
        interrupted, lost = stop is Stop.INTERRUPTED, stop is Stop.CLUSTER_LOST
        # (no waiting for actors still starting when the user interrupts or the cluster is gone)
        self.pool.close(grace_s=0.0 if interrupted or lost else KILL_GRACE_S)
        self._read_pool()  # (and what closing found: a GPU actor that failed to start)
        if not lost:
            withdraw_capacity()
        self.health.close()
        self.progress_file.stop()
        try:
            until = time.monotonic() + INTERRUPT_WRITES_S if interrupted else None
            self._count_written(wait_all=True, until=until, hooks=False)
        except BmnError as error:
            failure = error
        self.writer.close()
        self.progress.stop()
        return failure

    def _scale(self) -> None:
        """Match the pool to the cluster (the workers the run wants: worker.py); on an autoscaling
        cluster, ask for the CPUs the pending shards could use."""
        wanted = self.pool.scale()
        self.waiting_for_cpus = wanted == 0
        if self.workers is None:
            return
        self.workers.check(wanted, self.pool_report.gpu_failures, self.store.uri)
        if not self.local and not self.config.workers:
            left = self.plan.count - self.totals.done - self.totals.failed
            request_capacity(min(left, self.config.max_workers) if self.config.max_workers else left)

    def _load(self) -> set[int]:
        if self._finished is None:
            contents = read_contents(self.store, self._read, self.owner)
            self._set_aside_foreign(contents)
            if contents.damaged:
                # A truncated or garbled shard file (a full disk, a half-copied run): kept aside,
                # its shards counted as not done, so this run recomputes them.
                self.set_aside += set_aside(self.store, contents.damaged)
                for rel, why in contents.damaged.items():
                    print(f"bmn: {rel} is damaged ({why}); moved it to damaged/ and its shards will be "
                          f"recomputed", file=sys.stderr)
            done = {k: s for k, s in contents.summaries.items() if s.done}
            self._finished = set(done)
            self.totals = RunTotals.of(done)
        return self._finished

    def _set_aside_foreign(self, contents) -> None:
        """Shard files of another run (copied in, or a wrong --out) are never counted: a file wholly
        another's is moved to foreign/, one that also holds shards of this run is left in place."""
        whole = [rel for rel in contents.foreign if rel not in contents.files]
        moved = set_aside(self.store, whole, FOREIGN_DIR)
        self.set_aside += moved
        for rel, why in contents.foreign.items():
            fate = "moved it to foreign/" if rel in whole else "its other shards are this run's and are counted"
            print(f"bmn: {rel} is not this run's ({why}); {fate}; its shards are never counted", file=sys.stderr)

    def has_work(self) -> bool:
        return len(self._load()) < self.plan.count

    def _read_pool(self) -> None:
        """What the pool reports: its notes said, the rest kept (pool_report)."""
        self.pool_report = self.pool.report()
        for note in self.pool_report.notes:
            self.progress.say(f"bmn: {note}")

    def _waiting(self) -> str:
        if self.waiting_for_cpus:
            return "waiting for CPUs to join the cluster"
        if self.pool_report.placing:
            return "waiting for the cluster to place the workers"
        return ""

    def _record(self, played: PlayedShard) -> None:
        """A shard back from the pool: its summary made (done, or given up), its file written. A GPU
        shard the run audits is held while a CPU actor plays it again (cluster/audit.py)."""
        if played.audit:
            self._audited(played)
            return
        if self.audits.wants(played):
            self.audits.held[played.shard.id] = played
            self.pool.audit(played.shard)
            return
        self._write(played)

    def _audited(self, cpu: PlayedShard) -> None:
        """A GPU shard's audit back: the GPU's result written if the CPU's equals it; else the CPU's written and
        the search stopped, naming the shard, the GPU worker and its device. An audit that could not be played
        leaves the GPU's result, said unaudited."""
        gpu_worker = self.audits.held[cpu.shard.id].figures.worker
        played, mark, what = self.audits.back(cpu)
        if not cpu.done:
            self.progress.say(f"bmn: the audit of shard {cpu.shard.id} could not be played ({cpu.error}); its GPU "
                              f"result is kept unaudited")
        self._write(played, audit=mark)
        if what is not None:
            raise BmnError(f"the GPU worker {gpu_worker} ({self.pool.device_of(gpu_worker)}) computed shard "
                           f"{cpu.shard.id} differently from a CPU ({what}); the CPU's result is written, and the search "
                           f"stops: check that GPU (`bmn resume {self.store.uri} --device cpu` goes on without GPUs)")

    def _write(self, played: PlayedShard, audit: str | None = None) -> None:
        summary = ShardSummary.of(played, run=self.owner.fingerprint, audit=audit)
        self.session_deals += summary.figures.counts.deals
        rows = games_table(played) if played.done else GAMES_SCHEMA.empty_table()
        rel = shard_file_name(played.shard.id)
        self._read.pop(rel, None)  # a shard recomputed now: its file is read again at the end
        self.writer.write(rel, shard_file_table(rows, [summary]), summary)

    def _count_written(self, wait_all: bool = False, until: float | None = None, hooks: bool = True) -> None:
        """Take the shards whose files are written (ShardWriter.written: counted in the totals there)."""
        for summary in self.writer.written(wait_all, until):
            if summary.done:
                self.new += 1
                if hooks and self.on_shard_done is not None:
                    self.on_shard_done(self)

    def _figures(self) -> dict:
        """The run's figures as progress.json holds them (ProgressFile writes them)."""
        return {
            "elapsed_s": round(time.time() - self.t0, 2), "shards_total": self.plan.count,
            "shards_done": self.totals.done, "shards_failed": self.totals.failed,
            "shards_in_flight": self.pool_report.in_flight, "deals": self.totals.counts.deals, "cards": self.totals.counts.cards,
            "new_shards": self.new, "session_deals": self.session_deals, "longest": self.totals.longest_cards,
            "best": self.totals.best and game_json(self.totals.best), "cycles": len(self.totals.cycle_ids),
            "workers": self.pool_report.workers,
        }

    def _finish(self, stop: Stop) -> str:
        """Write the summary tables from the shard files; returns the run's state, "incomplete" for a
        search that ran to its end but whose tables miss shards (a file that cannot be read now).
        An interrupted search writes only its state: rebuilding the tables reads every shard file,
        which can take longer than the grace `ray job stop` gives; readers build them meanwhile."""
        state = stop.value
        if stop is Stop.INTERRUPTED:
            try:
                self.progress_file.last(state, tables=False)
            except OSError as error:
                raise write_failure(self.store, "progress.json", error, self.totals.done) from None
            return state
        try:
            contents = read_contents(self.store, self._read, self.owner)
            tables = build_tables(contents)
            write_tables(self.store, tables)
            self.cycles = tables["cycles"]
            self.totals.cycle_ids = set(tables["cycles"].column("cycle_id").to_pylist())
            self.totals.failed = sum(1 for s in contents.summaries.values() if not s.done)
            self.totals.done = len(contents.done)
            self.missing = sorted(set(range(self.plan.count)) - set(contents.summaries))
            if stop is Stop.FINISHED and self.missing:
                state = "incomplete"
                for rel, why in contents.damaged.items():
                    print(f"bmn: {rel} cannot be read ({why}); its shards are missing from the tables",
                          file=sys.stderr)
            self.progress_file.last(state, tables=True)
            return state
        except OSError as error:
            raise write_failure(self.store, "the summary tables", error, self.totals.done) from None

    def report(self, state: str) -> RunReport:
        first, last = self.pool_report.first_dispatch, self.pool_report.last_result
        work = (last - first) if first and last else 0.0
        t = self.totals
        if self.cycles is not None:
            labels, contradictions = self.cycles.column("known").to_pylist(), known.contradictions(self.cycles)
        else:  # (an interrupted search writes no tables: its cycles as the shards name them)
            labels, contradictions = known.labels_of(t.cycle_ids, None), []
        strategy = self.plan.strategy
        return RunReport(self.store.uri, state, self.plan.count, t.done, t.failed, t.counts.deals, t.counts.cards,
                         round(time.time() - self.t0, 2), len(t.cycle_ids), [game_json(g) for g in t.longest],
                         self.new, self.session_deals, round(work, 3), list(self.set_aside), strategy.own_table,
                         list(self.missing), strategy.unit, strategy.finite_games, labels, contradictions)


def run_search(config: SearchConfig, *, resume: bool = False, progress: ProgressView | None = None,
               on_shard_done=None) -> RunReport:
    """Run (or resume) a search to the end, the time limit, or an interrupt."""
    store = RunStore(config.out)
    if not resume:
        check_new_run_folder(store)
    store.make_root()
    lease = Lease(store).acquire()
    started_ray = False
    try:
        config = open_run(config, store, resume)
        local = not cluster_address(config.address) and not ray.is_initialized()
        coordinator = Coordinator(config, store, lease, progress, local=local)
        coordinator.on_shard_done = on_shard_done
        if coordinator.has_work():
            started_ray = connect(config.address, config.workers)
        return coordinator.run()
    finally:
        lease.release()
        if started_ray:
            ray.shutdown()
