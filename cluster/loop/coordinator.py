"""The coordinator: the run loop. It hands a plan's shards to the pool of Ray actors (pool.py: the
shards in flight, retries and deadlines; actors.py: the actors, their scaling, loss and GPUs) and has
what comes back written (recorder.py: summaries, audits, the session's counters; writer.py: the files).
The run's files are read when it opens and its tables rebuilt at its end by runfiles.py; the cluster's
health is one object (health.py); what the caller gets is one RunReport (report.py).

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
  (actors.py, pool.py); with "gpu", a run whose GPUs have all failed, or a cluster with none, stops with one.
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

A search's loop ends by one kind of outcome, an `End` (course.py): its `Stop` ("finished" or "time
limit" by `Course`: the plan handed out, the time limit and its overtime; "stopped: cluster lost" by
the health; "interrupted"; "failed": the lease lost, a write failed, an audit that differs, the
workers that cannot start or be placed), and for a search that fails, its sentence. `_loop` makes it,
whatever ended the loop (what the parts raise is taken there, in one place), and `run` acts on it.
"""

from __future__ import annotations

import time

import ray

from kernels.errors import BmnError

from ..cloud.health import Health
from ..cloud.raycluster import cluster_address, connect, request_capacity, withdraw_capacity
from ..cloud.worker import Workers
from ..runs.config import SearchConfig
from ..runs.figures import game_json
from ..runs.lease import Lease
from ..runs.plan import Plan
from ..runs.runmeta import check_new_run_folder, open_run
from ..runs.storage import PROGRESS_JSON, RunStore
from ..runs.tables import Ownership
from ..runs.totals import SessionTotals
from .audit import Audits
from .course import Course, End, ProgressFile, Stop
from .pool import ShardPool
from .progress import ProgressView
from .recorder import Recorder
from .report import RunReport
from .runfiles import RunFiles
from .writer import write_failure

SCALE_S = 2.0  # how often the actor pool is matched to the cluster's CPUs
KILL_GRACE_S = 20.0  # how long a search's end waits for actors still starting (see actors.Actors.close)


class Coordinator:
    def __init__(self, config: SearchConfig, store: RunStore, lease: Lease, progress: ProgressView | None = None,
                 local: bool = False, pool=None, health=None):
        """`pool` and `health`: the actors and the cluster's health checks (by default a ShardPool of Ray
        actors and the cluster's checks: health.py; a test passes plain ones and runs the loop without Ray)."""
        self.config = config
        self.local = local  # the Ray cluster is this machine, started by bmn
        self.store = store
        self.lease = lease  # held on the run by this job; the loop stops if another job takes it over
        self.plan = Plan(config)
        self.files = RunFiles(store, self.plan, Ownership(self.plan, config.fingerprint()))
        self.progress = progress or ProgressView(enabled=False)
        self.workers = Workers(config, self.plan) if pool is None else None
        self.pool = pool or ShardPool(self.workers.new_actor, self.workers.wanted, in_flight=config.in_flight,
                                      max_attempts=config.max_attempts, shard_timeout=config.shard_timeout,
                                      fixed=bool(config.workers), gpu_batch=self.workers.gpu_batch)
        self.health = Health(health)
        # The pool as the loop last read it (progress.json, written by its own thread, reads it too).
        self.pool_report = self.pool.report()
        # The session's counters (the run's totals, shards written, deals played), the loop's alone; what the
        # progress thread reads is their snapshot, taken at the end of each turn.
        self.counts = SessionTotals()
        self.snapshot = self.counts.snapshot()
        self.recorder = Recorder(store, self.files, Audits(config.audit, config.fingerprint()), self.counts,
                                 self.pool, self.progress.say)
        self.waiting_for_cpus = False
        self.meter = None  # where a plan of unequal shards stands (its WorkMeter), once the run is open
        self.t0 = 0.0
        self._last_scale = 0.0
        self.progress_file = ProgressFile(store, self._figures)

    # -- the loop -------------------------------------------------------------------------------
    def run(self) -> RunReport:
        self.t0 = time.time()
        finished = self._open()
        self.meter = self.plan.shards.meter(finished) if self.plan.shards.meter else None
        if not self.has_work():
            return self._end(End(Stop.FINISHED))
        deadline = self.t0 + self.config.time_limit if self.config.time_limit else None
        course = Course((self.plan.shard(k) for k in range(self.plan.count) if k not in finished), deadline)
        self.progress.start(self.plan.count, self.counts.run.done, self.plan.strategy.unit,
                            self.plan.strategy.finite_games)
        if self.local:
            # Every worker on this machine shares Numba's disk cache: compile the kernels here,
            # once, rather than in every worker at the same time (CPU and memory times the workers).
            self.plan.strategy.warm_up(self.plan.space)
        self.health.start()
        self.recorder.start()
        self.progress_file.start()
        end = self._loop(course)
        closing = self._close(end.stop)
        return self._end(end if end.error or closing is None else End(Stop.FAILED, closing))

    def _loop(self, course: Course) -> End:
        """The turns of the loop until one ends the search; what ended it, whatever that was (what the parts
        raise is taken here: a sentence fails the search, an interrupt interrupts it)."""
        try:
            while True:
                end = self._turn(course)
                if end is not None:
                    return end
        except KeyboardInterrupt:
            return End(Stop.INTERRUPTED)
        except OSError as error:
            return End(Stop.FAILED, write_failure(self.store, PROGRESS_JSON, error, self.counts.run.done))
        except BmnError as error:
            return End(Stop.FAILED, error)

    def _turn(self, course: Course) -> End | None:
        """One turn of the loop: shards handed out, shards back taken, files counted; how the search ends
        now, if it does."""
        now = time.time()
        if course.expired(now, played=bool(self.counts.played.deals)):
            return End(Stop.TIME_LIMIT)
        if now - self._last_scale >= SCALE_S:
            self._scale()
            self._last_scale = now
        course.hand_out(self.pool)
        self.recorder.count_written(self)
        ended = course.ended(self.pool)
        if ended is not None:
            # The last files are waited for here, so that each shard is counted (and its hook called) in
            # the loop, as every earlier one was.
            self.recorder.count_written(self, wait_all=True)
            return End(ended)
        for played in self.pool.wait(course.wait_s(time.time())):
            self.recorder.record(played)
            if self.meter is not None and played.done:
                rows = played.figures.search_rows
                self.meter.done(played.shard.id, sum(r.choices for r in rows), sum(r.cpu_s for r in rows),
                                played.figures.elapsed_s)
        self._read_pool()
        if self.health.problem():
            return End(Stop.CLUSTER_LOST)
        if self.lease.lost:
            return End(Stop.FAILED, BmnError(self.lease.lost))
        if self.progress_file.error is not None:
            return End(Stop.FAILED, write_failure(self.store, PROGRESS_JSON, self.progress_file.error,
                                                   self.counts.run.done))
        self.snapshot = t = self.counts.snapshot()
        since = self.pool_report.first_dispatch
        work = "" if self.meter is None or since is None else self.meter.status(self.pool_report.workers)
        self.progress.update(t.done, t.session_deals, t.longest_cards, t.cycles, t.failed, since,
                             note=self._waiting(), work=work)
        return None

    def _close(self, stop: Stop) -> BmnError | None:
        """After the loop, whatever ended it: the actors killed, the progress thread stopped, the writes
        under way taken (recorder.py). A write that failed meanwhile: its sentence."""
        interrupted, lost = stop is Stop.INTERRUPTED, stop is Stop.CLUSTER_LOST
        # (no waiting for actors still starting when the user interrupts or the cluster is gone)
        self.pool.close(grace_s=0.0 if interrupted or lost else KILL_GRACE_S)
        self._read_pool()  # (and what closing found: a GPU actor that failed to start)
        if not lost:
            withdraw_capacity()
        self.health.close()
        self.progress_file.stop()
        failure = self.recorder.close(interrupted)
        self.snapshot = self.counts.snapshot()  # (with the files taken last)
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
            left = self.plan.count - self.counts.run.done - self.counts.run.failed
            request_capacity(min(left, self.config.max_workers) if self.config.max_workers else left)

    def _open(self) -> set[int]:
        """The shards done when the run opened (its files read once; the session's totals start from theirs)."""
        finished = self.files.open()
        self.counts.start(self.files.opened)
        self.snapshot = self.counts.snapshot()
        return finished

    def has_work(self) -> bool:
        return len(self.files.open()) < self.plan.count

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

    def _figures(self) -> dict:
        """The run's figures as progress.json holds them (ProgressFile writes them, from its own thread): the
        snapshot the loop left at the end of its last turn, and the pool's report of that turn."""
        t, pool = self.snapshot, self.pool_report
        return {
            "elapsed_s": round(time.time() - self.t0, 2), "shards_total": self.plan.count,
            "shards_done": t.done, "shards_failed": t.failed, "shards_in_flight": pool.in_flight, "deals": t.deals,
            "cards": t.cards, "new_shards": t.new, "session_deals": t.session_deals, "longest": t.longest_cards,
            "best": t.best and game_json(t.best), "cycles": t.cycles, "workers": pool.workers,
        }

    def _end(self, end: End) -> RunReport:
        """The search's end acted on: the summary tables written from the shard files (runfiles.py), unless it
        was interrupted (its state alone: rebuilding the tables reads every shard file, which can take longer
        than the grace `ray job stop` gives; readers build them meanwhile) or failed; its report, or the
        sentence it fails with. "incomplete": a search that ran to its end whose tables miss shards."""
        if end.stop is Stop.FAILED:
            raise end.error
        state = end.stop.value
        try:
            if end.stop is Stop.INTERRUPTED:
                self.snapshot = self.counts.snapshot()  # (the last files taken)
                self.progress_file.last(state, tables=False)
            else:
                rebuilt = self.files.rebuild(complete=end.stop is Stop.FINISHED)
                self.counts.tabled(rebuilt.done, rebuilt.failed, rebuilt.cycle_ids)
                if rebuilt.incomplete:
                    state = "incomplete"
                self.snapshot = self.counts.snapshot()  # (as the tables count them)
                self.progress_file.last(state, tables=True)
        except OSError as error:
            what = "progress.json" if end.stop is Stop.INTERRUPTED else "the summary tables"
            raise write_failure(self.store, what, error, self.counts.run.done) from None
        if end.stop is Stop.CLUSTER_LOST:
            raise BmnError(f"{self.health.lost}; the search stopped with {self.counts.run.done:,} of "
                           f"{self.plan.count:,} shards done and written: `bmn resume {self.store.uri}` continues it")
        return RunReport.of(state, self.files, self.counts, self.pool_report, self.t0)


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
        coordinator.recorder.on_shard_done = on_shard_done  # (a test's hook: called with the coordinator)
        if coordinator.has_work():
            started_ray = connect(config.address, config.workers)
        return coordinator.run()
    finally:
        lease.release()
        if started_ray:
            ray.shutdown()
