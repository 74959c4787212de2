"""The Ray actor that runs shards: one per CPU (and one per GPU, holding a CPU to drive it, for the
strategies with GPU kernels), created once, warmed up, fed shard after shard; and which of them a
run wants (`Workers`: the run's policy for CPUs and GPUs, which the pool asks).

Only the shard's small description travels to the actor (its `Shard`: id and typed parameters, and
the input deals for strategies that take a deals file); the deals are generated in the actor, the
kernels run there (a `ShardResult`), and one `PlayedShard` travels back to the coordinator (its
candidate deals as plain values, and its figures), which makes the shard's games rows and summary
and writes its file.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

import numba
import ray

from kernels import strategies
from kernels.dealspace import DealSpace
from kernels.decks import parse_deck
from kernels.errors import BmnError
from kernels.strategies import Shard, ShardResult, get, run_shard_batch

from ..runs.figures import PlayedShard

if TYPE_CHECKING:  # (the actors import this module: the config's modules would bring pyarrow)
    from ..runs.config import SearchConfig
    from ..runs.plan import Plan


def play_shard(deck: str, split: tuple[int, ...], shard: Shard, device: str = "cpu") -> ShardResult:
    """Play one shard of a run's deck (as its config writes it) and split with the kernels (what a worker
    does: kernels.strategies.run_shard over that deal space); returns the kernels' ShardResult."""
    return strategies.run_shard(DealSpace(parse_deck(deck), tuple(split)), shard, device)


class ShardRunner:
    """Runs shards of one run's deck and split on this CPU, or on this actor's GPU (`device="gpu"`: the
    same results); usable without Ray, for tests and debugging."""

    def __init__(self, deck: str, split: tuple[int, ...], strategy: str, device: str = "cpu"):
        self.deck = deck
        self.split = tuple(split)
        self.strategy = strategy
        self.device = device
        try:
            node = ray.util.get_node_ip_address() if ray.is_initialized() else "local"
        except Exception:
            node = "local"
        self.where = f"{node}:{os.getpid()}"  # (its device is `device`)
        self.gpu: str | None = None
        # An actor holds one CPU: its Numba kernels run on one thread (Ray gives the actor
        # OMP_NUM_THREADS=1 itself). Set in the process rather than through a runtime environment,
        # which would make Ray start a process of its own for every actor instead of a waiting one
        # (about 0.7 s of CPU more per actor).
        self.one_core = ray.is_initialized() and ray.get_runtime_context().get_actor_id() is not None

    def _on_its_core(self) -> None:
        # Numba keeps the thread count per calling thread: set on the thread that runs this call.
        if self.one_core:
            numba.set_num_threads(1)

    def warm_up(self) -> dict:
        """Compile (or load) the strategy's kernels, on the GPU too for a GPU actor (which raises a
        BmnError with one sentence where this process has no usable GPU); say where this worker runs."""
        self._on_its_core()
        space = DealSpace(parse_deck(self.deck), self.split)
        lanes = None
        if self.device == "gpu":
            from kernels.sweep.gpu import describe_gpu, resident_blocks
            self.gpu = describe_gpu()
            get(self.strategy).warm_up(space, device="gpu")
            lanes = resident_blocks() * 32  # the lanes the device holds at once (what gpu_batch = 0 fills)
        else:
            get(self.strategy).warm_up(space)
        node_id = ray.get_runtime_context().get_node_id() if ray.is_initialized() else "local"
        return {"where": self.where, "pid": os.getpid(), "node_id": node_id, "gpu": self.gpu, "lanes": lanes}

    def run(self, shard: Shard) -> PlayedShard:
        """The shard played: its candidate deals (its games rows once the driver makes the table) and figures."""
        t0 = time.perf_counter()
        result = play_shard(self.deck, self.split, shard, self.device)
        return PlayedShard.of(shard, result, deck=self.deck, elapsed_s=time.perf_counter() - t0, worker=self.where,
                              device=self.device)

    def run_batch(self, shards: list[Shard]) -> list[PlayedShard]:
        """Shards, each its own candidates and figures: what the pool calls (one shard on a CPU actor; a GPU
        batch on a GPU actor, played in as few launches as it allows, each shard's time its share of the
        batch's by its deals)."""
        self._on_its_core()
        if self.device != "gpu" or len(shards) == 1:
            return [self.run(shard) for shard in shards]
        t0 = time.perf_counter()
        space = DealSpace(parse_deck(self.deck), self.split)
        results = run_shard_batch(space, shards, self.device)
        elapsed = time.perf_counter() - t0
        deals = sum(r.deals for r in results) or len(results)
        return [PlayedShard.of(shard, result, deck=self.deck, worker=self.where, device=self.device,
                               elapsed_s=elapsed * (result.deals or (deals == len(results))) / deals)
                for shard, result in zip(shards, results)]


ShardWorker = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(ShardRunner)
# A GPU actor is the same class holding one GPU and the CPU that drives it (ShardWorker.options(num_gpus=1)).


class Workers:
    """The workers a run asks its pool for (pool.py: `ShardPool(workers.new_actor, workers.wanted)`): an
    actor of either kind for the run's deck, split and strategy, and how many of each kind it wants of
    the cluster now. GPUs (`device`): "auto" gives every GPU of the cluster an actor (which holds one
    CPU to drive it) and the other CPUs CPU actors; "gpu" only GPU actors; "cpu" no GPU actor."""

    def __init__(self, config: SearchConfig, plan: Plan):
        self.config = config
        self.plan = plan

    def new_actor(self, kind: str = "cpu"):
        space = self.plan.space
        # The deck as the config writes it (the games table's deck column), unless the strategy's
        # deal space is not the config's deck (the atlas: the family's first deck).
        deck = self.config.deck if space.deck == parse_deck(self.config.deck) else space.deck.spec()
        options: dict = {}
        if kind == "gpu":
            options["num_gpus"] = 1
            # numba-cuda's simulator, where the driver runs under it (trying a GPU run without a GPU,
            # on a Ray cluster that declares one): the GPU actors run under it too.
            if os.environ.get("NUMBA_ENABLE_CUDASIM"):
                options["runtime_env"] = {"env_vars": {"NUMBA_ENABLE_CUDASIM": os.environ["NUMBA_ENABLE_CUDASIM"]}}
        return ShardWorker.options(**options).remote(deck, space.split, self.config.strategy, kind)

    def gpu_batch(self, info: dict) -> int:
        """Shards a GPU actor takes per call: the config's gpu_batch, or (0) as many as fill its device: FILL
        deals for each lane it holds at once, shards of shard_size deals (kernels/sweep/gpu.py `batch_for`)."""
        if self.config.gpu_batch:
            return self.config.gpu_batch
        from kernels.sweep.gpu import batch_for
        return batch_for(self.config.shard_size, info.get("lanes") or 32)

    def uses_gpus(self) -> bool:
        """Whether this run gives GPUs actors: device "gpu", or "auto" for a strategy with GPU kernels
        and deals the GPU engine holds."""
        if self.config.device == "cpu" or not self.plan.strategy.gpu:
            return False
        from kernels.sweep.gpu import holds
        return holds(self.plan.space)

    def wanted(self, gpu_failures: int) -> dict[str, int]:
        """How many actors of each kind the search wants now: one per GPU of the cluster (less those
        that failed) where the run uses GPUs; CPU actors: the configured number, or one per CPU of the
        cluster not driving a GPU (within max_workers); none with device "gpu"."""
        resources = ray.cluster_resources()
        gpus = max(0, int(resources.get("GPU", 0)) - gpu_failures) if self.uses_gpus() else 0
        if self.config.device == "gpu":
            return {"gpu": gpus, "cpu": 0}
        if self.config.workers:
            return {"gpu": gpus, "cpu": self.config.workers}
        cpus = max(0, int(resources.get("CPU", 0)) - gpus)
        return {"gpu": gpus, "cpu": min(cpus, self.config.max_workers) if self.config.max_workers else cpus}

    def check(self, wanted: int, gpu_failures: int, uri: str) -> None:
        """device = "gpu" (where the pool wants GPU actors only) on a cluster without a GPU left to use:
        one sentence (`uri`: the run's, for the command that resumes it)."""
        if self.config.device != "gpu" or wanted > 0:
            return
        if gpu_failures:
            raise BmnError(f"every GPU of the cluster failed ({gpu_failures} of them; see above); run with "
                           f"--device auto or cpu to go on with CPUs: `bmn resume {uri} --device auto`")
        raise BmnError("device = \"gpu\", but the Ray cluster has no GPUs; start it with GPU nodes (a GPU worker "
                       "type with min_workers >= 1), or use --device auto or cpu")
