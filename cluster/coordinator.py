"""The coordinator: schedules a plan's shards on Ray actors, retries the lost ones, writes results.

One path for data: plan -> shard description to an actor -> the actor runs the kernels ->
candidate rows and summary back -> the coordinator writes the shard file atomically -> at the
end (and whenever asked) the summary tables are rebuilt from the shard files.

The cluster may change under a search:
- `workers = 0` follows the cluster: one actor per CPU it has, now or later. While it has none the
  search waits (and says so); an actor is added for every CPU that joins, those of nodes that leave
  go with them, and on a cluster with an autoscaler the capacity the pending shards need is asked
  for (`max_workers` caps both). `workers = N` keeps N actors.
- an actor that dies mid-shard (killed, out of memory, node lost): its shards go back in the
  queue and run on another actor. After `max_attempts` attempts a shard is written as failed (no
  rows) and the run goes on; `bmn resume` tries it again.
- the cluster itself gone (the node the driver runs on, or the head, dead; its control store
  unreachable for a minute): the search stops with one sentence saying so; what was written is
  kept and `bmn resume RUN` continues.
- a driver that dies (Ctrl-C, SIGKILL, preempted): finished shards are on disk; `bmn resume RUN`
  (or the same command again) skips them and runs the rest. Shard files are named by shard id and
  written in one step, so nothing is lost and nothing is counted twice.

The driver's own I/O stays off the loop: shard files are written by a bounded pool of threads (a
shard counts as done once its file is written), and the lock's heartbeat and progress.json are
written by a thread of their own. A write that fails for good (disk full, permission denied, an
object store that keeps failing) stops the search with a sentence; resume finishes the run.
"""

from __future__ import annotations

import collections
import concurrent.futures as futures
import sys
import threading
import time
from dataclasses import dataclass, field, replace

import ray

from kernels.decks import parse_deck
from kernels.errors import BmnError

from .config import SearchConfig
from .plan import Plan, Shard
from .progress import ProgressView
from .raycluster import ClusterHealth, cluster_address, connect, request_capacity, withdraw_capacity
from .runmeta import check_new_run_folder, open_run
from .storage import PROGRESS_JSON, RunStore
from .summary import ShardSummary
from .tables import (FOREIGN_DIR, GAMES_SCHEMA, Ownership, build_tables, read_contents, set_aside, shard_file_name,
                     shard_file_table, write_tables)
from .totals import RunTotals
from .worker import WORKER_ENV, ShardWorker

HEARTBEAT_S = 5.0
HEALTH_S = 2.0  # how often the cluster's health is checked (a cheap call to the control store)
SCALE_S = 2.0  # how often the actor pool is matched to the cluster's CPUs
KILL_GRACE_S = 20.0  # how long a search's end waits for actors still starting (see _kill_all)
WRITE_THREADS = 32  # shard files written at once (an object store answers each in tens of ms)
WRITE_BACKLOG = 256  # shard results waiting to be written before the loop waits for the writers


class WriteFailed(BmnError):
    pass


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

    def to_json(self) -> dict:
        return self.__dict__.copy()


class _Actor:
    def __init__(self, handle, warm_ref):
        self.handle = handle
        self.warm_ref = warm_ref
        self.ready = False
        self.alive = True
        self.where = "?"
        self.pid: int | None = None  # known once warmed up (so a test can kill it mid-shard)
        self.node_id: str | None = None
        self.in_flight = 0


class _Heartbeat(threading.Thread):
    """Writes the lock's heartbeat and progress.json every HEARTBEAT_S, off the scheduling loop."""

    def __init__(self, coordinator: "Coordinator", t0: float):
        super().__init__(name="bmn-heartbeat", daemon=True)
        self.coordinator = coordinator
        self.t0 = t0
        self.error: Exception | None = None
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.wait(HEARTBEAT_S):
            try:
                self.coordinator.store.heartbeat()
                self.coordinator._write_progress("running", self.t0)
            except Exception as error:  # reported by the loop, which stops the search
                self.error = error
                return

    def stop(self) -> None:
        self.stopping.set()
        self.join(timeout=30)


class Coordinator:
    def __init__(self, config: SearchConfig, store: RunStore, progress: ProgressView | None = None,
                 local: bool = False):
        self.config = config
        self.local = local  # the Ray cluster is this machine, started by bmn
        self.store = store
        self.plan = Plan(config)
        self.owner = Ownership(self.plan, config.fingerprint())  # which shard files are this run's
        self.progress = progress or ProgressView(enabled=False)
        self.actors: list[_Actor] = []
        self.attempts: dict[int, int] = collections.Counter()
        self.retry: collections.deque[int] = collections.deque()
        self.in_flight: dict = {}  # ref -> (shard, actor, started)
        self.writes: collections.deque = collections.deque()  # (future, shard file, summary), in order
        self.writer: futures.ThreadPoolExecutor | None = None
        self.totals = RunTotals()
        self.session_deals = 0
        self.new = 0
        self._finished: set[int] | None = None
        # The shard files read when the run was opened: the end of the run reads only the others.
        self._read: dict[str, tuple] = {}
        self.set_aside: list[str] = []
        self.first_dispatch: float | None = None
        self.last_collect: float | None = None
        self.on_shard_done = None  # a hook for tests: called with the coordinator after each shard
        self.lost_actors = 0
        self.health: ClusterHealth | None = None
        self.waiting_for_cpus = False
        self.missing: list[int] = []  # shards in neither a done nor a failed file at the end

    # -- actors ---------------------------------------------------------------------------------
    def _start_actor(self) -> None:
        space = self.plan.space
        # The deck as the config writes it (the games table's deck column), unless the strategy's
        # deal space is not the config's deck (the atlas: the family's first deck).
        deck = self.config.deck if space.deck == parse_deck(self.config.deck) else space.deck.spec()
        handle = ShardWorker.options(runtime_env={"env_vars": WORKER_ENV}).remote(deck, space.split,
                                                                                  self.config.strategy)
        self.actors.append(_Actor(handle, handle.warm_up.remote()))

    def _workers_wanted(self) -> int:
        """How many actors the search wants now: the configured number, or one per CPU of the
        cluster (within max_workers)."""
        if self.config.workers:
            return self.config.workers
        cpus = int(ray.cluster_resources().get("CPU", 0))
        return min(cpus, self.config.max_workers) if self.config.max_workers else cpus

    def _scale(self) -> None:
        """Start actors until the pool has as many as wanted (dead ones no longer count)."""
        alive = sum(a.alive for a in self.actors)
        wanted = self._workers_wanted()
        for _ in range(wanted - alive):
            self._start_actor()
        self.waiting_for_cpus = wanted == 0
        if not self.local and not self.config.workers:
            # On an autoscaling cluster, ask for the CPUs the pending shards could use.
            left = self.plan.count - self.totals.done - self.totals.failed
            request_capacity(min(left, self.config.max_workers) if self.config.max_workers else left)

    def _kill_all(self, grace: bool = True) -> None:
        # An actor killed while Ray is still creating it (its worker leased, its constructor not yet
        # run) keeps its CPU until the driver's job ends: Ray ignores the kill on that worker. A
        # notebook or service running search after search would lose a CPU each time, and a search
        # asking for every CPU would wait for ever. So actors still starting are given a moment to
        # finish starting (they are ready, or failed, once their warm-up returns) before the kill.
        starting = [a.warm_ref for a in self.actors if a.alive and not a.ready]
        if starting and grace:
            try:
                ray.wait(starting, num_returns=len(starting), timeout=KILL_GRACE_S)
            except Exception:
                pass  # the cluster is gone: nothing is held on it any more
        for actor in self.actors:
            if actor.alive:
                try:
                    ray.kill(actor.handle, no_restart=True)
                except Exception:
                    pass
                actor.alive = False

    # -- the loop -------------------------------------------------------------------------------
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

    def run(self) -> RunReport:
        t0 = time.time()
        finished = self._load()
        if not self.has_work():
            state = self._finish("finished", t0)
            return self.report(state, t0)
        pending = (k for k in range(self.plan.count) if k not in finished)
        deadline = t0 + self.config.time_limit if self.config.time_limit else None
        state = "finished"
        self.progress.start(self.plan.count, self.totals.done)
        if self.local:
            # Every worker on this machine shares Numba's disk cache: compile the kernels here,
            # once, rather than in every worker at the same time (CPU and memory times the workers).
            self.plan.strategy.warm_up(self.plan.space)
        self.health = ClusterHealth()
        self.writer = futures.ThreadPoolExecutor(WRITE_THREADS, thread_name_prefix="bmn-write")
        beat = _Heartbeat(self, t0)
        beat.start()
        lost: str | None = None
        failure: BmnError | None = None
        last_scale = last_health = 0.0
        exhausted = False
        try:
            while True:
                now = time.time()
                if deadline is not None and now >= deadline:
                    state = "time limit"
                    break
                if now - last_scale >= SCALE_S:
                    self._scale()
                    last_scale = now
                exhausted = self._submit(pending) or exhausted
                self._drain_writes(block=len(self.writes) > WRITE_BACKLOG)
                if exhausted and not self.retry and not self.in_flight:
                    break
                waiting = list(self.in_flight) + [a.warm_ref for a in self.actors if a.alive and not a.ready]
                timeout = 0.5 if deadline is None else max(0.0, min(0.5, deadline - time.time()))
                ready, _ = ray.wait(waiting, num_returns=1, timeout=timeout) if waiting else ([], [])
                if not waiting:
                    time.sleep(timeout)
                for ref in ready:
                    self._collect(ref)
                if time.time() - last_health >= HEALTH_S:
                    lost = self.health.problem()
                    last_health = time.time()
                    if lost:
                        break
                if beat.error is not None:
                    raise beat.error
                self.progress.update(self.totals.done, self.session_deals, self.totals.longest_cards,
                                     len(self.totals.cycle_ids), self.totals.failed, self.first_dispatch,
                                     note="waiting for CPUs to join the cluster" if self.waiting_for_cpus else "")
        except KeyboardInterrupt:
            state = "interrupted"
        except OSError as error:
            failure = _write_failure(self.store, "the run's lock", error, self.totals.done)
        except BmnError as error:
            failure = error
        finally:
            # (no waiting for actors still starting when the user interrupts or the cluster is gone)
            self._kill_all(grace=state != "interrupted" and lost is None)
            if lost is None:
                withdraw_capacity()
            self.health.close()
            beat.stop()
            try:
                self._drain_writes(block=True, wait_all=True, hooks=False)
            except BmnError as error:
                failure = failure or error
            self.writer.shutdown(wait=True)
            self.progress.stop()
        if failure is not None:
            raise failure
        if lost:
            self._finish("stopped: cluster lost", t0)
            raise BmnError(f"{lost}; the search stopped with {self.totals.done:,} of {self.plan.count:,} shards "
                           f"done and written: `bmn resume {self.store.uri}` continues it")
        state = self._finish(state, t0)
        return self.report(state, t0)

    def _submit(self, pending) -> bool:
        """Give free actors shards; True once the plan has no more new shards."""
        for actor in self.actors:
            while actor.alive and actor.ready and actor.in_flight < self.config.in_flight:
                if self.retry:
                    k = self.retry.popleft()
                else:
                    k = next(pending, None)
                    if k is None:
                        return True
                shard = self.plan.shard(k)
                if self.first_dispatch is None:
                    self.first_dispatch = time.time()
                ref = actor.handle.run.remote(shard)
                actor.in_flight += 1
                self.attempts[k] += 1
                self.in_flight[ref] = (shard, actor, time.time())
        return False

    def _collect(self, ref) -> None:
        for actor in self.actors:
            if actor.warm_ref == ref and not actor.ready:
                try:
                    info = ray.get(ref)
                    actor.where, actor.pid, actor.node_id = info["where"], info["pid"], info["node_id"]
                    actor.ready = True
                except ray.exceptions.RayError as error:
                    self._lose(actor, error)
                return
        shard, actor, started = self.in_flight.pop(ref)
        actor.in_flight -= 1
        try:
            table, summary = ray.get(ref)
        except ray.exceptions.RayTaskError as error:
            # The shard raised inside a live actor: retry it, then record it as failed.
            self._retry_or_fail(shard, f"{type(error.cause).__name__}: {error.cause}" if error.cause else str(error))
            return
        except ray.exceptions.RayError as error:
            # The actor's process or node is gone: the pool gets a new actor, the shard runs elsewhere.
            if actor.alive:
                self._lose(actor, error)
            self._retry_or_fail(shard, f"worker lost: {type(error).__name__}")
            return
        summary = replace(summary, attempts=self.attempts[shard.id], run=self.owner.fingerprint)
        self.session_deals += summary.deals
        self.last_collect = time.time()
        self._write(shard_file_name(shard.id), shard_file_table(table, [summary]), summary)

    def _write(self, rel: str, table, summary: ShardSummary) -> None:
        self._read.pop(rel, None)  # a shard recomputed now: its file is read again at the end
        self.writes.append((self.writer.submit(self.store.write_parquet, rel, table), rel, summary))

    def _drain_writes(self, block: bool = False, wait_all: bool = False, hooks: bool = True) -> None:
        """Count the shards whose files are written (in the order they were collected). A write that
        failed stops the search: nothing half-written is ever counted as done."""
        while self.writes:
            future, rel, summary = self.writes[0]
            if not future.done():
                if not (block or wait_all):
                    return
                futures.wait([future])
                block = False
            self.writes.popleft()
            if future.cancelled():
                continue  # a write given up after an earlier one failed: its shard is simply not done
            error = future.exception()
            if error is not None:
                for other, _, _ in self.writes:
                    other.cancel()
                raise _write_failure(self.store, rel, error, self.totals.done)
            if summary.done:
                self.new += 1
            self.totals.add(summary)
            if hooks and self.on_shard_done is not None and summary.done:
                self.on_shard_done(self)

    def _lose(self, actor: _Actor, error: Exception) -> None:
        actor.alive = False
        try:
            ray.kill(actor.handle, no_restart=True)
        except Exception:
            pass
        self.lost_actors += 1
        if not actor.ready and self.new == 0 and self.lost_actors > 2 * max(1, self._workers_wanted()) + 2:
            # Workers die before doing anything, again and again: they cannot start (bmn or its
            # dependencies missing on the cluster's nodes, say). Replacing them forever helps nobody.
            reason = str(error).strip().splitlines()[-1] if str(error).strip() else type(error).__name__
            raise BmnError(f"the workers cannot start ({self.lost_actors} failed): {reason}")
        self._scale()

    def _retry_or_fail(self, shard: Shard, error: str) -> None:
        if self.attempts[shard.id] < self.config.max_attempts:
            self.retry.append(shard.id)
            return
        summary = ShardSummary.of(shard.id, shard.strategy, shard.params, None, status="failed", elapsed_s=0.0,
                                  attempts=self.attempts[shard.id], worker="", finished_at=time.time(), error=error)
        summary = replace(summary, run=self.owner.fingerprint)
        self._write(shard_file_name(shard.id), shard_file_table(GAMES_SCHEMA.empty_table(), [summary]), summary)

    def _write_progress(self, state: str, t0: float) -> None:
        elapsed = time.time() - t0
        self.store.write_json(PROGRESS_JSON, {
            "state": state, "updated_at": time.time(), "elapsed_s": round(elapsed, 2),
            "shards_total": self.plan.count, "shards_done": self.totals.done, "shards_failed": self.totals.failed,
            "shards_in_flight": len(self.in_flight), "deals": self.totals.deals, "cards": self.totals.cards,
            "new_shards": self.new, "session_deals": self.session_deals, "longest": self.totals.longest_cards,
            "best": self.totals.best, "cycles": len(self.totals.cycle_ids),
            "workers": sum(a.alive for a in self.actors),
        })

    def _finish(self, state: str, t0: float) -> str:
        """Write the summary tables from the shard files; returns the run's state, "incomplete" for a
        search that ran to its end but whose tables miss shards (a file that cannot be read now)."""
        try:
            contents = read_contents(self.store, self._read, self.owner)
            tables = build_tables(contents)
            write_tables(self.store, tables)
            self.totals.cycle_ids = set(tables["cycles"].column("cycle_id").to_pylist())
            self.totals.failed = sum(1 for s in contents.summaries.values() if not s.done)
            self.totals.done = len(contents.done)
            self.missing = sorted(set(range(self.plan.count)) - set(contents.summaries))
            if state == "finished" and self.missing:
                state = "incomplete"
                for rel, why in contents.damaged.items():
                    print(f"bmn: {rel} cannot be read ({why}); its shards are missing from the tables",
                          file=sys.stderr)
            self._write_progress(state, t0)
            return state
        except OSError as error:
            raise _write_failure(self.store, "the summary tables", error, self.totals.done) from None

    def report(self, state: str, t0: float) -> RunReport:
        work = (self.last_collect - self.first_dispatch) if self.first_dispatch and self.last_collect else 0.0
        t = self.totals
        return RunReport(self.store.uri, state, self.plan.count, t.done, t.failed, t.deals, t.cards,
                         round(time.time() - t0, 2), len(t.cycle_ids), list(t.longest), self.new,
                         self.session_deals, round(work, 3), list(self.set_aside), self.plan.strategy.own_table,
                         list(self.missing))


def _write_failure(store: RunStore, what: str, error: BaseException, done: int) -> WriteFailed:
    if isinstance(error, BmnError):
        return WriteFailed(str(error))
    reason = getattr(error, "strerror", None) or str(error).strip().splitlines()[0] or type(error).__name__
    return WriteFailed(f"cannot write {what} to {store.uri} ({reason}); the search stopped with {done:,} shards "
                       f"written and kept: fix the cause, then `bmn resume {store.uri}` finishes the run")


def run_search(config: SearchConfig, *, resume: bool = False, progress: ProgressView | None = None,
               on_shard_done=None) -> RunReport:
    """Run (or resume) a search to the end, the time limit, or an interrupt."""
    store = RunStore(config.out)
    if not resume:
        check_new_run_folder(store)
    store.make_root()
    store.acquire()
    started_ray = False
    try:
        config = open_run(config, store, resume)
        local = not cluster_address(config.address) and not ray.is_initialized()
        coordinator = Coordinator(config, store, progress, local=local)
        coordinator.on_shard_done = on_shard_done
        if coordinator.has_work():
            started_ray = connect(config.address, config.workers)
        return coordinator.run()
    finally:
        store.release()
        if started_ray:
            ray.shutdown()
