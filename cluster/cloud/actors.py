"""A pool's actors (pool.py holds the shards in flight on them): how many of each kind the run wants,
starting them, their warm-up, losing them, GPUs that fail, and a cluster that cannot place them.

- scaling: as many live actors of each kind as `wanted` says now (CPU actors: the configured
  number, or one per CPU of the cluster; GPU actors: one per GPU, where the run uses GPUs); an
  actor lost is replaced at the next `scale()`.
- starting: an actor takes shards once its warm-up has returned. One that fails to start (its
  constructor or its warm-up raises: bmn or a dependency missing on a node) counts toward "the
  workers cannot start", which stops the run when it keeps happening before any shard is done. One
  lost before it started because its node went (a spot node preempted while warming up) is
  capacity lost: it is only replaced.
- GPUs: a GPU actor that fails (it cannot start: no driver, no numba-cuda on its node; or a shard
  raises on it: out of memory, a driver error) is not replaced by another on that GPU: it is
  counted (`gpu_failures`, which `wanted` is told, which takes them off the GPUs it asks for), and
  one sentence says so (`notes`, which the pool's report hands on).
- placing: with a fixed number of workers, if for START_WAIT_S actors have been asked for and none
  started, the cluster cannot place them (no free CPU, or too few): `check_placed` raises a BmnError
  saying so. (With workers = 0 the run waits for CPUs to join, as long as it takes.)
"""

from __future__ import annotations

import collections
import contextlib
import time
from collections.abc import Callable

import ray

from kernels.errors import BmnError

START_WAIT_S = 600.0  # how long a fixed number of workers may wait to be placed at all


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


def raised(error: BaseException) -> bool:
    """The actor's own code raised (its constructor or a method), as opposed to its process or node going."""
    return isinstance(error, ray.exceptions.RayTaskError) or getattr(error, "actor_init_failed", False)


def reason(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[-1] if text else type(error).__name__


class Actors:
    """The actors of one pool, in the order they were asked for (iterating gives them, as `PoolActor`s)."""

    def __init__(self, new_actor: Callable[[str], object], wanted: Callable[[int], int | dict[str, int]], *,
                 fixed: bool = False, gpu_batch: int | Callable[[dict], int] = 1,
                 clock: Callable[[], float] = time.monotonic):
        self.new_actor = new_actor
        self.wanted = wanted
        self.fixed = fixed
        self.gpu_batch = gpu_batch
        self.clock = clock
        self.members: list[PoolActor] = []
        self.devices: dict[str, str] = {}  # a GPU actor's `where` -> its device, in a few words
        self.lost = 0  # actors lost, all causes
        self.start_failures = 0  # actors that could not start (constructor or warm-up raised)
        self.gpu_failures = 0  # GPU actors that failed (never replaced on their GPU)
        self.notes: list[str] = []  # sentences for the user (a GPU failed), taken by the pool's next report
        self._unplaced_since: float | None = None  # since when no actor has been ready
        self.unplaceable = False  # the cluster could not place a fixed number of workers

    def __iter__(self):
        return iter(self.members)

    def __len__(self) -> int:
        return len(self.members)

    def __getitem__(self, k: int) -> PoolActor:
        return self.members[k]

    @property
    def alive(self) -> int:
        return sum(a.alive for a in self.members)

    @property
    def ready(self) -> int:
        return sum(a.alive and a.ready for a in self.members)

    def starting(self) -> list:
        """The warm-ups of the live actors not started yet."""
        return [a.warm_ref for a in self.members if a.alive and not a.ready]

    def wanted_by_kind(self) -> dict[str, int]:
        wanted = self.wanted(self.gpu_failures)
        return dict(wanted) if isinstance(wanted, dict) else {"cpu": wanted}

    def scale(self) -> int:
        """Start actors until as many live ones of each kind as wanted; returns the number wanted."""
        wanted = self.wanted_by_kind()
        for kind, count in wanted.items():
            for _ in range(count - sum(a.alive and a.kind == kind for a in self.members)):
                handle = self.new_actor(kind)
                self.members.append(PoolActor(handle, handle.warm_up.remote(), kind))
        return sum(wanted.values())

    def started(self, ref, played_any: bool) -> bool:
        """Whether `ref` is an actor's warm-up; if so, the actor is ready (or, its warm-up failed, lost)."""
        actor = next((a for a in self.members if a.warm_ref == ref and not a.ready), None)
        if actor is None:
            return False
        if not actor.alive:
            return True
        try:
            info = ray.get(ref)
            actor.where, actor.pid, actor.node_id = info["where"], info["pid"], info["node_id"]
            if actor.kind == "gpu":
                actor.batch = self.gpu_batch(info) if callable(self.gpu_batch) else self.gpu_batch
                self.devices[actor.where] = info.get("gpu") or "a GPU"
            actor.ready = True
        except ray.exceptions.RayError as error:
            if actor.kind == "gpu" and raised(error):
                self.gpu_failed(actor, error)
            else:
                self.lose(actor, error, played_any, starting=True)
        return True

    def close(self, grace_s: float = 0.0) -> None:
        """Kill every actor. Ray ignores the kill of an actor still being created (its worker leased, its
        constructor not run), which keeps its CPU until the driver's job ends: a notebook running search after
        search would lose a CPU each time, so actors still starting get up to `grace_s` to start first."""
        starting = self.starting()
        if starting and grace_s > 0 and not self.unplaceable:  # (actors never placed hold nothing)
            try:
                ray.wait(starting, num_returns=len(starting), timeout=grace_s)
            except Exception:
                pass  # the cluster is gone: nothing is held on it any more
        for actor in self.members:
            if actor.alive and not actor.ready and actor.kind == "gpu":
                self._note_failed_start(actor)
            if actor.alive:
                self.kill(actor)

    def _note_failed_start(self, actor: PoolActor) -> None:
        # A GPU actor whose warm-up failed after the last shard was played (CPU actors, started
        # sooner, may play a short run alone): said all the same, the GPU being what the user asked for.
        try:
            ready, _ = ray.wait([actor.warm_ref], timeout=0)
            if ready:
                ray.get(actor.warm_ref)
        except ray.exceptions.RayError as error:
            if raised(error):
                self.gpu_failures += 1
                self.notes.append(f"the GPU worker {actor.where} failed ({reason(error)}); the run did without it")
        except Exception:
            pass  # the cluster is gone: nothing to say about the actor

    def placing(self) -> bool:
        """Actors asked for and none of them started: the run waits for the cluster to place them."""
        return not self.ready and any(a.alive and not a.ready for a in self.members)

    def check_placed(self) -> None:
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

    def gpu_failed(self, actor: PoolActor, error: Exception, gave_back: bool = False) -> bool:
        """A GPU actor failed: kill it, count it (so no new actor is asked for on its GPU), say so (and, where it
        `gave_back` shards, where they go), and ask for what the run wants now. Whether CPU actors take them."""
        self.kill(actor)
        self.gpu_failures += 1
        cpu_actors = self.wanted_by_kind().get("cpu", 0) > 0
        went = "to CPU workers" if cpu_actors else "to the other GPUs"
        self.notes.append(f"the GPU worker {actor.where} failed ({reason(error)}); "
                          f"{'its shards go ' + went if gave_back else 'the run goes on without it'}")
        self.scale()
        return cpu_actors

    def device_of(self, where: str) -> str:
        """The device of the GPU actor at `where` (its warm-up's words)."""
        return self.devices.get(where, "a GPU")

    def kill(self, actor: PoolActor) -> None:
        actor.alive = False
        with contextlib.suppress(Exception):  # (an actor already gone, or the cluster)
            ray.kill(actor.handle, no_restart=True)

    def lose(self, actor: PoolActor, error: Exception, played_any: bool, starting: bool = False) -> None:
        """An actor gone (its process or node), or that failed to start (`starting`): killed and replaced."""
        self.kill(actor)
        self.lost += 1
        # Failing to start is the actor's own constructor or warm-up raising; an actor lost with its
        # node (preempted, terminated) before it started is only capacity lost.
        if starting and raised(error):
            self.start_failures += 1
            if not played_any and self.start_failures > 2 * max(1, sum(self.wanted_by_kind().values())) + 2:
                # Workers fail to start again and again (bmn or its dependencies missing on the
                # cluster's nodes, say): replacing them for ever helps nobody.
                raise BmnError(f"the workers cannot start ({self.start_failures} failed): {reason(error)}")
        self.scale()
