"""The elastic pool of shard actors, apart from the run loop (the shape of Ray's ActorPool, with
what a long run on spot nodes needs).

The run loop (coordinator.py) owns the plan, the writes and the totals; the pool owns the actors and
the shards in flight on them. The loop hands shards over (`dispatch`) and takes back outcomes
(`wait`): a shard done (its rows and figures) or given up (after `max_attempts` tries, with its
last error); what else it needs of the pool it reads from one `PoolReport` (`report`). Everything
in between is the pool's:

- scaling: as many live actors of each kind as `wanted` says now (CPU actors: the configured
  number, or one per CPU of the cluster; GPU actors: one per GPU, where the run uses GPUs); an
  actor lost is replaced at the next `scale()`.
- batches: a GPU actor takes `gpu_batch` shards per call (the first of them to try again, the
  others the plan's next ones), played one after another in the actor, each its own outcome: a GPU
  plays as much as many CPU actors, and its calls would otherwise be too short for their fixed costs
  (a Ray call, the launch). The plan's shards are the same on every device. A batch counts as one
  entry of the actor's queue (`in_flight` of them), and its deadline is the shard deadline times
  its shards.
- GPUs: a GPU actor that fails (it cannot start: no driver, no numba-cuda on its node; or a shard
  raises on it: out of memory, a driver error) is not replaced by another on that GPU: the pool
  counts it (`gpu_failures`, which it tells `wanted`, which takes them off the GPUs it asks for),
  says so in one sentence (the report's `notes`), and its shards go back untried, to CPU actors
  where the run has any.
- starting: an actor takes shards once its warm-up has returned. One that fails to start (its
  constructor or its warm-up raises: bmn or a dependency missing on a node) counts toward "the
  workers cannot start", which stops the run when it keeps happening before any shard is done. One
  lost before it started because its node went (a spot node preempted while warming up) is
  capacity lost: it is only replaced.
- loss: an actor that dies mid-shard gives its shards back; they run on another actor.
- deadlines: an actor that has been on one shard for longer than the shard deadline is stuck (a
  hung node, a kernel that does not return): it is killed, that shard goes back (its try counted,
  so one stuck on every try is given up), those queued behind it go back uncounted (they never
  ran), and whatever it might still return is never read. The deadline is `shard_timeout` when set, else
  AUTO_FACTOR times the slowest shard measured so far (the shards of a run are of one size, so
  this is their size at the slowest rate seen), at least AUTO_MIN_S, and AUTO_FIRST_S until a
  shard has been measured.
- placing: with a fixed number of workers, if for START_WAIT_S the pool has had actors asked for
  and none started, the cluster cannot place them (no free CPU, or too few): `wait` raises a
  BmnError saying so. (With workers = 0 the run waits for CPUs to join, as long as it takes.)
"""

from __future__ import annotations

import collections
import contextlib
import time
from typing import Callable, Iterator, NamedTuple

import ray

from kernels.errors import BmnError
from kernels.strategies import Shard

from .figures import PlayedShard

AUTO_FACTOR = 10.0  # an automatic deadline: this many times the slowest shard so far ...
AUTO_MIN_S = 300.0  # ... and at least this long
AUTO_FIRST_S = 3600.0  # before any shard has been measured
START_WAIT_S = 600.0  # how long a fixed number of workers may wait to be placed at all


class PoolReport(NamedTuple):
    """What the pool tells the run loop (`ShardPool.report`)."""

    notes: tuple[str, ...]  # sentences for the user since the last report (a GPU worker failed)
    workers: int  # live actors
    in_flight: int  # shards in flight on them
    placing: bool  # actors asked for and none started: the run waits for the cluster to place them
    gpu_failures: int  # GPU actors that failed (never replaced on their GPU)
    first_dispatch: float | None  # when the first shard was handed out, and the last one came back
    last_result: float | None  # (wall-clock times, for the run's report)


class PoolActor:
    def __init__(self, handle, warm_ref, kind: str = "cpu"):
        self.handle = handle
        self.kind = kind  # "cpu" or "gpu"
        self.warm_ref = warm_ref
        self.ready = False
        self.alive = True
        self.where = "?"
        self.batch = 1  # shards per call (a GPU actor's: the pool's gpu_batch, once warmed up)
        self.pid: int | None = None  # known once warmed up (so a test can kill it mid-shard)
        self.node_id: str | None = None
        self.queue: collections.deque = collections.deque()  # its refs in flight, oldest first
        self.busy_since: float | None = None  # when its oldest shard in flight began to run


def _raised(error: BaseException) -> bool:
    """The actor's own code raised (its constructor or a method), as opposed to its process or node going."""
    return isinstance(error, ray.exceptions.RayTaskError) or getattr(error, "actor_init_failed", False)


def _reason(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[-1] if text else type(error).__name__


class ShardPool:
    def __init__(self, new_actor: Callable[[str], object], wanted: Callable[[int], int | dict[str, int]], *,
                 in_flight: int, max_attempts: int, shard_timeout: float = 0.0, fixed: bool = False,
                 gpu_batch: int | Callable[[dict], int] = 1, clock: Callable[[], float] = time.monotonic):
        """`new_actor(kind)` makes an actor of a kind, "cpu" or "gpu" (a Ray actor handle with warm_up()
        and run_batch(shards): one shard for a CPU actor); `wanted(gpu_failures)` says how many the run
        wants now, told how many GPU actors have failed: a number of CPU actors, or a count per kind;
        `fixed`: the number of CPU actors is the user's (workers = N); `gpu_batch`: shards per call to a
        GPU actor (or a function of what its warm-up said of it: its lanes)."""
        self.new_actor = new_actor
        self.wanted = wanted
        self.per_actor = in_flight
        self.gpu_batch = gpu_batch
        self.max_attempts = max_attempts
        self.shard_timeout = shard_timeout
        self.fixed = fixed
        self.clock = clock
        self.actors: list[PoolActor] = []
        self.attempts: collections.Counter = collections.Counter()
        self.retry: collections.deque[Shard] = collections.deque()
        self.retry_cpu: collections.deque[Shard] = collections.deque()  # shards a failed GPU gave back, audits
        self.auditing: set[int] = set()  # GPU shards played again on CPU actors to audit them
        self.devices: dict[str, str] = {}  # a GPU actor's `where` -> its device, in a few words
        self.in_flight: dict = {}  # ref -> (its shards, actor): one shard, or a GPU actor's batch
        self.slowest: float | None = None  # the longest a shard has taken on an actor, in s
        self.lost_actors = 0  # actors lost, all causes
        self.start_failures = 0  # actors that could not start (constructor or warm-up raised)
        self.stuck = 0  # actors killed past the shard deadline
        self.completed = 0  # shards done by this pool
        self.first_dispatch: float | None = None  # wall-clock times, for the run's report
        self.last_result: float | None = None
        self._unplaced_since: float | None = None  # since when no actor has been ready
        self.unplaceable = False  # the cluster could not place a fixed number of workers
        self.gpu_failures = 0  # GPU actors that failed (never replaced on their GPU)
        self.notes: list[str] = []  # sentences for the user (a GPU failed), taken by the next report

    # -- actors -----------------------------------------------------------------------------------
    @property
    def alive(self) -> int:
        return sum(a.alive for a in self.actors)

    @property
    def ready(self) -> int:
        return sum(a.alive and a.ready for a in self.actors)

    def report(self) -> PoolReport:
        """The pool as it stands, with the notes made since the last report (taken: each is reported once)."""
        notes, self.notes = tuple(self.notes), []
        in_flight = sum(len(shards) for shards, _ in self.in_flight.values())
        return PoolReport(notes, self.alive, in_flight, self.placing(), self.gpu_failures, self.first_dispatch,
                          self.last_result)

    def wanted_by_kind(self) -> dict[str, int]:
        wanted = self.wanted(self.gpu_failures)
        return dict(wanted) if isinstance(wanted, dict) else {"cpu": wanted}

    def scale(self) -> int:
        """Start actors until as many live ones of each kind as wanted; returns the number wanted."""
        wanted = self.wanted_by_kind()
        for kind, count in wanted.items():
            for _ in range(count - sum(a.alive and a.kind == kind for a in self.actors)):
                handle = self.new_actor(kind)
                self.actors.append(PoolActor(handle, handle.warm_up.remote(), kind))
        return sum(wanted.values())

    def close(self, grace_s: float = 0.0) -> None:
        """Kill every actor. Ray ignores the kill of an actor still being created (its worker leased, its
        constructor not run), which keeps its CPU until the driver's job ends: a notebook running search after
        search would lose a CPU each time, so actors still starting get up to `grace_s` to start first."""
        starting = [a.warm_ref for a in self.actors if a.alive and not a.ready]
        if starting and grace_s > 0 and not self.unplaceable:  # (actors never placed hold nothing)
            try:
                ray.wait(starting, num_returns=len(starting), timeout=grace_s)
            except Exception:
                pass  # the cluster is gone: nothing is held on it any more
        for actor in self.actors:
            if actor.alive and not actor.ready and actor.kind == "gpu":
                self._note_failed_start(actor)
            if actor.alive:
                self._kill(actor)

    def _note_failed_start(self, actor: PoolActor) -> None:
        # A GPU actor whose warm-up failed after the last shard was played (CPU actors, started
        # sooner, may play a short run alone): said all the same, the GPU being what the user asked for.
        try:
            ready, _ = ray.wait([actor.warm_ref], timeout=0)
            if ready:
                ray.get(actor.warm_ref)
        except ray.exceptions.RayError as error:
            if _raised(error):
                self.gpu_failures += 1
                self.notes.append(f"the GPU worker {actor.where} failed ({_reason(error)}); the run did without it")
        except Exception:
            pass  # the cluster is gone: nothing to say about the actor

    # -- shards -----------------------------------------------------------------------------------
    def busy(self) -> bool:
        """Shards in flight, or waiting to be tried again."""
        return bool(self.in_flight or self.retry or self.retry_cpu)

    def dispatch(self, shards: Iterator[Shard]) -> bool:
        """Give ready actors shards (those to try again first; those a failed GPU gave back to CPU
        actors only; a GPU actor a batch of them); True once `shards` is exhausted."""
        exhausted = False
        for actor in self.actors:
            while actor.alive and actor.ready and len(actor.queue) < self.per_actor:
                batch: list[Shard] = []
                while len(batch) < actor.batch:
                    if actor.kind == "cpu" and self.retry_cpu:
                        batch.append(self.retry_cpu.popleft())
                    elif self.retry:
                        batch.append(self.retry.popleft())
                    elif not exhausted and (shard := next(shards, None)) is not None:
                        batch.append(shard)
                    else:
                        exhausted = True
                        break
                if not batch:
                    break
                ref = actor.handle.run_batch.remote(batch)
                if self.first_dispatch is None:
                    self.first_dispatch = time.time()
                if not actor.queue:
                    actor.busy_since = self.clock()
                actor.queue.append(ref)
                for shard in batch:
                    self.attempts[shard.id] += 1
                self.in_flight[ref] = (batch, actor)
        return exhausted

    def wait(self, timeout: float) -> list[PlayedShard]:
        """Wait up to `timeout` s for actors to start or shards to return; the outcomes (done or
        given up) of those that did. Also enforces the shard deadline and the placing wait."""
        waiting = list(self.in_flight) + [a.warm_ref for a in self.actors if a.alive and not a.ready]
        if waiting:
            ready, _ = ray.wait(waiting, num_returns=1, timeout=timeout)
        else:
            time.sleep(timeout)
            ready = []
        outcomes: list[PlayedShard] = []
        for ref in ready:
            outcomes += self._collect(ref)
        outcomes += self._expire()
        self._check_placed()
        return outcomes

    def deadline(self) -> float:
        if self.shard_timeout:
            return self.shard_timeout
        return AUTO_FIRST_S if self.slowest is None else max(AUTO_MIN_S, AUTO_FACTOR * self.slowest)

    # -- inside -----------------------------------------------------------------------------------
    def _collect(self, ref) -> list[PlayedShard]:
        for actor in self.actors:
            if actor.warm_ref == ref and not actor.ready:
                if not actor.alive:
                    return []
                try:
                    info = ray.get(ref)
                    actor.where, actor.pid, actor.node_id = info["where"], info["pid"], info["node_id"]
                    if actor.kind == "gpu":
                        actor.batch = self.gpu_batch(info) if callable(self.gpu_batch) else self.gpu_batch
                        self.devices[actor.where] = info.get("gpu") or "a GPU"
                    actor.ready = True
                except ray.exceptions.RayError as error:
                    if actor.kind == "gpu" and _raised(error):
                        self._gpu_failed(actor, error)
                    else:
                        self._lose(actor, error, starting=True)
                return []
        if ref not in self.in_flight:
            return []  # the late result of an actor given up on: never read
        shards, actor = self.in_flight.pop(ref)
        if actor.queue and actor.queue[0] == ref:
            actor.queue.popleft()
            actor.busy_since = self.clock() if actor.queue else None
        elif ref in actor.queue:
            actor.queue.remove(ref)
        try:
            results = ray.get(ref)
        except ray.exceptions.RayTaskError as error:
            if actor.kind == "gpu":
                # A GPU that fails (out of memory, a driver error): its shards were not played; they go
                # back untried, with those queued behind them, and the GPU is given up.
                for shard in shards:
                    self.attempts[shard.id] -= 1
                self._gpu_failed(actor, error, shards)
                return []
            # The shard raised inside a live actor: try it again, then give it up.
            return self._retry_or_give_up(shards[0], f"{type(error.cause).__name__}: {error.cause}"
                                          if error.cause else str(error))
        except ray.exceptions.RayError as error:
            # The actor's process or node is gone: a new actor replaces it, the shards run elsewhere.
            if actor.alive:
                self._lose(actor, error)
            return [o for shard in shards for o in self._retry_or_give_up(shard, f"worker lost: {type(error).__name__}")]
        self.completed += len(shards)
        self.last_result = time.time()
        outcomes = []
        for shard, played in zip(shards, results):
            self.slowest = max(self.slowest or 0.0, played.figures.elapsed_s)
            audit = actor.kind == "cpu" and shard.id in self.auditing
            self.auditing.discard(shard.id) if audit else None
            outcomes.append(played._replace(shard=shard, attempts=self.attempts[shard.id], audit=audit))
        return outcomes

    def _expire(self) -> list[PlayedShard]:
        """Kill the actors stuck on a shard past the deadline; their shards go back."""
        now = self.clock()
        outcomes: list[PlayedShard] = []
        for actor in self.actors:
            if not (actor.alive and actor.queue and actor.busy_since is not None):
                continue
            limit = self.deadline() * len(self.in_flight[actor.queue[0]][0])  # a batch: each of its shards
            if now - actor.busy_since > limit:
                self.stuck += 1
                self._kill(actor)
                running, *queued = self._take_back(actor)
                # The shards queued behind the stuck call never ran: they go first, their try not counted.
                for shard in reversed([s for batch in queued for s in batch]):
                    self.attempts[shard.id] -= 1
                    self.retry.appendleft(shard)
                for shard in running:
                    outcomes += self._retry_or_give_up(
                        shard, f"past its deadline: no result from {actor.where} in {limit:,.0f} s")
                self.scale()  # its replacement
        return outcomes

    def placing(self) -> bool:
        """Actors asked for and none of them started: the run waits for the cluster to place them."""
        return not self.ready and any(a.alive and not a.ready for a in self.actors)

    def _check_placed(self) -> None:
        if not self.placing():
            self._unplaced_since = None
            return
        now = self.clock()
        if self._unplaced_since is None:
            self._unplaced_since = now
        waited = now - self._unplaced_since
        if self.fixed and waited >= START_WAIT_S:
            self.unplaceable = True
            cpus = int(ray.cluster_resources().get("CPU", 0))
            free = int(ray.available_resources().get("CPU", 0))
            wanted = sum(self.wanted_by_kind().values())
            raise BmnError(f"none of the {wanted} workers asked for could be placed in {waited:,.0f} s: the Ray "
                           f"cluster has {cpus} CPU{'s' if cpus != 1 else ''} ({free} free) and each worker needs "
                           f"one; give it CPUs, or set workers = 0 to use whatever it has")

    def _gpu_failed(self, actor: PoolActor, error: Exception, shards: list[Shard] = ()) -> None:
        """A GPU actor failed: kill it, count it (so no new actor is asked for on its GPU), say so, and
        give its shards back untried (to CPU actors, where the run has any)."""
        self._kill(actor)
        self.gpu_failures += 1
        queued = [shard for batch in self._take_back(actor) for shard in batch]
        for shard in queued:
            self.attempts[shard.id] -= 1
        back = [*shards, *queued]
        cpu_actors = self.wanted_by_kind().get("cpu", 0) > 0
        (self.retry_cpu if cpu_actors else self.retry).extend(back)
        went = "to CPU workers" if cpu_actors else "to the other GPUs"
        self.notes.append(f"the GPU worker {actor.where} failed ({_reason(error)}); "
                          f"{'its shards go ' + went if back else 'the run goes on without it'}")
        self.scale()

    def _take_back(self, actor: PoolActor) -> list[list[Shard]]:
        """The shards in flight on an actor given up on, call by call, oldest first (its refs are never read)."""
        shards = [self.in_flight.pop(ref)[0] for ref in actor.queue]
        actor.queue.clear()
        actor.busy_since = None
        return shards

    def _retry_or_give_up(self, shard: Shard, error: str) -> list[PlayedShard]:
        audit = shard.id in self.auditing
        if self.attempts[shard.id] < self.max_attempts:
            (self.retry_cpu if audit else self.retry).append(shard)  # (an audit on a CPU actor again)
            return []
        self.auditing.discard(shard.id)
        return [PlayedShard.given_up(shard, self.attempts[shard.id], error, audit)]

    def audit(self, shard: Shard) -> None:
        """Play a shard a GPU actor played again, on a CPU actor (its outcome comes back with `audit` set)."""
        self.auditing.add(shard.id)
        self.attempts[shard.id] = 0
        self.retry_cpu.append(shard)

    def device_of(self, where: str) -> str:
        """The device of the GPU actor at `where` (its warm-up's words)."""
        return self.devices.get(where, "a GPU")

    def _kill(self, actor: PoolActor) -> None:
        actor.alive = False
        with contextlib.suppress(Exception):  # (an actor already gone, or the cluster)
            ray.kill(actor.handle, no_restart=True)

    def _lose(self, actor: PoolActor, error: Exception, starting: bool = False) -> None:
        self._kill(actor)
        self.lost_actors += 1
        # Failing to start is the actor's own constructor or warm-up raising; an actor lost with its
        # node (preempted, terminated) before it started is only capacity lost.
        if starting and _raised(error):
            self.start_failures += 1
            if self.completed == 0 and self.start_failures > 2 * max(1, sum(self.wanted_by_kind().values())) + 2:
                # Workers fail to start again and again (bmn or its dependencies missing on the
                # cluster's nodes, say): replacing them for ever helps nobody.
                raise BmnError(f"the workers cannot start ({self.start_failures} failed): {_reason(error)}")
        self.scale()
