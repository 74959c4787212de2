"""The elastic pool of shard actors, apart from the run loop (the shape of Ray's ActorPool, with
what a long run on spot nodes needs): the shards in flight on its actors (the actors themselves, their
number, start, loss and GPUs: actors.py).

The run loop (coordinator.py) owns the plan, the writes and the totals; the pool owns the actors and
the shards in flight on them. The loop hands shards over (`dispatch`) and takes back each shard played
(`wait`: a `PlayedShard`, done, or given up after `max_attempts` tries with its last error); what else
it needs of the pool it reads from one `PoolReport` (`report`). Everything in between is the pool's:

- batches: a GPU actor takes `gpu_batch` shards per call (the first of them to try again, the
  others the plan's next ones), played one after another in the actor, each its own result: a GPU
  plays as much as many CPU actors, and its calls would otherwise be too short for their fixed costs
  (a Ray call, the launch). The plan's shards are the same on every device. A batch counts as one
  entry of the actor's queue (`in_flight` of them), and its deadline is the shard deadline times
  its shards.
- GPUs: the shards of a GPU actor that fails go back untried, to CPU actors where the run has any.
- loss: an actor that dies mid-shard gives its shards back; they run on another actor.
- deadlines: an actor that has been on one shard for longer than the shard deadline is stuck (a
  hung node, a kernel that does not return): it is killed, that shard goes back (its try counted,
  so one stuck on every try is given up), those queued behind it go back uncounted (they never
  ran), and whatever it might still return is never read. The deadline is `shard_timeout` when set, else
  AUTO_FACTOR times the slowest shard measured so far (the shards of a run are of one size, so
  this is their size at the slowest rate seen), at least AUTO_MIN_S, and AUTO_FIRST_S until a
  shard has been measured.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable, Iterator
from typing import NamedTuple

import ray

from kernels.strategies import Shard

from ..cloud.actors import Actors, PoolActor
from ..runs.figures import PlayedShard

AUTO_FACTOR = 10.0  # an automatic deadline: this many times the slowest shard so far ...
AUTO_MIN_S = 300.0  # ... and at least this long
AUTO_FIRST_S = 3600.0  # before any shard has been measured


class PoolReport(NamedTuple):
    """What the pool tells the run loop (`ShardPool.report`)."""

    notes: tuple[str, ...]  # sentences for the user since the last report (a GPU worker failed)
    workers: int  # live actors
    in_flight: int  # shards in flight on them
    placing: bool  # actors asked for and none started: the run waits for the cluster to place them
    gpu_failures: int  # GPU actors that failed (never replaced on their GPU)
    first_dispatch: float | None  # when the first shard was handed out, and the last one came back
    last_result: float | None  # (wall-clock times, for the run's report)


class ShardPool:
    def __init__(self, new_actor: Callable[[str], object], wanted: Callable[[int], int | dict[str, int]], *,
                 in_flight: int, max_attempts: int, shard_timeout: float = 0.0, fixed: bool = False,
                 gpu_batch: int | Callable[[dict], int] = 1, clock: Callable[[], float] = time.monotonic):
        """`new_actor(kind)` makes an actor of a kind, "cpu" or "gpu" (a Ray actor handle with warm_up()
        and run_batch(shards): one shard for a CPU actor); `wanted(gpu_failures)` says how many the run
        wants now, told how many GPU actors have failed: a number of CPU actors, or a count per kind;
        `fixed`: the number of CPU actors is the user's (workers = N); `gpu_batch`: shards per call to a
        GPU actor (or a function of what its warm-up said of it: its lanes)."""
        self.actors = Actors(new_actor, wanted, fixed=fixed, gpu_batch=gpu_batch, clock=clock)
        self.per_actor = in_flight
        self.max_attempts = max_attempts
        self.shard_timeout = shard_timeout
        self.clock = clock
        self.attempts: collections.Counter = collections.Counter()
        self.retry: collections.deque[Shard] = collections.deque()
        self.retry_cpu: collections.deque[Shard] = collections.deque()  # shards a failed GPU gave back, audits
        self.auditing: set[int] = set()  # GPU shards played again on CPU actors to audit them
        self.in_flight: dict = {}  # ref -> (its shards, actor): one shard, or a GPU actor's batch
        self.slowest: float | None = None  # the longest a shard has taken on an actor, in s
        self.stuck = 0  # actors killed past the shard deadline
        self.completed = 0  # shards done by this pool
        self.first_dispatch: float | None = None  # wall-clock times, for the run's report
        self.last_result: float | None = None

    def report(self) -> PoolReport:
        """The pool as it stands, with the notes made since the last report (taken: each is reported once)."""
        notes, self.actors.notes = tuple(self.actors.notes), []
        in_flight = sum(len(shards) for shards, _ in self.in_flight.values())
        return PoolReport(notes, self.actors.alive, in_flight, self.actors.placing(), self.actors.gpu_failures,
                          self.first_dispatch, self.last_result)

    def scale(self) -> int:
        """Start actors until as many live ones of each kind as wanted; returns the number wanted."""
        return self.actors.scale()

    def close(self, grace_s: float = 0.0) -> None:
        """Kill every actor (those still starting get up to `grace_s` to start first: actors.py)."""
        self.actors.close(grace_s)

    def device_of(self, where: str) -> str:
        return self.actors.device_of(where)

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
        """Wait up to `timeout` s for actors to start or shards to return; the shards played (done or
        given up) of those that did. Also enforces the shard deadline and the placing wait."""
        waiting = list(self.in_flight) + self.actors.starting()
        if waiting:
            ready, _ = ray.wait(waiting, num_returns=1, timeout=timeout)
        else:
            time.sleep(timeout)
            ready = []
        played: list[PlayedShard] = []
        for ref in ready:
            if not self.actors.started(ref, played_any=self.completed > 0):
                played += self._collect(ref)
        played += self._expire()
        self.actors.check_placed()
        return played

    def deadline(self) -> float:
        if self.shard_timeout:
            return self.shard_timeout
        return AUTO_FIRST_S if self.slowest is None else max(AUTO_MIN_S, AUTO_FACTOR * self.slowest)

    def audit(self, shard: Shard) -> None:
        """Play a shard a GPU actor played again, on a CPU actor (it comes back with `audit` set)."""
        self.auditing.add(shard.id)
        self.attempts[shard.id] = 0
        self.retry_cpu.append(shard)

    # -- inside -----------------------------------------------------------------------------------
    def _collect(self, ref) -> list[PlayedShard]:
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
                self.actors.lose(actor, error, played_any=self.completed > 0)
            return [p for shard in shards
                    for p in self._retry_or_give_up(shard, f"worker lost: {type(error).__name__}")]
        self.completed += len(shards)
        self.last_result = time.time()
        played = []
        for shard, one in zip(shards, results):
            self.slowest = max(self.slowest or 0.0, one.figures.elapsed_s)
            audit = actor.kind == "cpu" and shard.id in self.auditing
            self.auditing.discard(shard.id) if audit else None
            played.append(one._replace(shard=shard, attempts=self.attempts[shard.id], audit=audit))
        return played

    def _expire(self) -> list[PlayedShard]:
        """Kill the actors stuck on a shard past the deadline; their shards go back."""
        now = self.clock()
        played: list[PlayedShard] = []
        for actor in self.actors:
            if not (actor.alive and actor.queue and actor.busy_since is not None):
                continue
            limit = self.deadline() * len(self.in_flight[actor.queue[0]][0])  # a batch: each of its shards
            if now - actor.busy_since > limit:
                self.stuck += 1
                self.actors.kill(actor)
                running, *queued = self._take_back(actor)
                # The shards queued behind the stuck call never ran: they go first, their try not counted.
                for shard in reversed([s for batch in queued for s in batch]):
                    self.attempts[shard.id] -= 1
                    self.retry.appendleft(shard)
                for shard in running:
                    played += self._retry_or_give_up(
                        shard, f"past its deadline: no result from {actor.where} in {limit:,.0f} s")
                self.actors.scale()  # its replacement
        return played

    def _gpu_failed(self, actor: PoolActor, error: Exception, shards: list[Shard]) -> None:
        """A GPU actor failed on a call: its shards, and those queued behind them, go back untried (to CPU
        actors, where the run has any); the actor is given up (actors.py)."""
        queued = [shard for batch in self._take_back(actor) for shard in batch]
        for shard in queued:
            self.attempts[shard.id] -= 1
        back = [*shards, *queued]
        cpu_actors = self.actors.gpu_failed(actor, error, gave_back=bool(back))
        (self.retry_cpu if cpu_actors else self.retry).extend(back)

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
