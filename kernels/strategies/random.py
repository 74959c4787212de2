"""`random`: uniformly random deals from a counter-based stream keyed by (seed, shard).

The baseline search, and the one whose histogram estimates the distribution of game lengths.
Shard k = deals 0..size-1 of the stream (seed, k) (kernels/rng.py): deal j of shard k is a pure
function of (seed, k, j), so any candidate can be regenerated from its index. The kernel is the
sweep kernel (kernels/sweep/cpu.py).
"""

from __future__ import annotations

from ..sweep import run_random, run_random_batch
from .base import Example, StreamShard, StreamShards


class Random(StreamShards):
    name = "random"
    summary = "uniformly random deals from a counter-based stream keyed by (seed, shard)"
    example = Example(
        search=dict(deals=40_000, shard_size=10_000, min_cards=900, seed=3),
        pin="526c680bc03e9dc76ee94b55eaceb00dd6437882903243f0fd010f1f07ec399c",
    )
    warm_group = "sweep"
    gpu = True

    def run(self, space, params: StreamShard, deals=(), device="cpu"):
        return run_random(space, params.seed, params.shard, params.count, min_cards=params.min_cards,
                          min_tricks=params.min_tricks, device=device)

    def run_batch(self, space, params, deals, device="cpu"):
        if len({(p.min_cards, p.min_tricks) for p in params}) != 1:
            return super().run_batch(space, params, deals, device)
        return run_random_batch(space, [(p.seed, p.shard, p.count, 0) for p in params], min_cards=params[0].min_cards,
                                min_tricks=params[0].min_tricks, device=device)

    def warm_up(self, space, device="cpu"):
        run_random(space, 0, 0, 16, min_cards=0, device=device)


STRATEGY = Random()
