"""The GPU sweeps under numba-cuda's simulator, held to the CPU sweeps (run by tests/test_gpu.py).

The simulator is chosen when numba.cuda is first imported (NUMBA_ENABLE_CUDASIM=1), so these cases
run in a process of their own: `python tests/gpu_sim_cases.py` prints one JSON object, each case's
name with "" where the GPU's ShardResult equals the CPU's field by field (candidates, their rows
and cycle ids, the histogram, the longest game) or the first difference. Keep the cases small: the
simulator plays a random standard deal in about 8 milliseconds (a Python thread per lane, a block
barrier every few segments).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from helpers import CASELLA, ZANOTTO, space  # noqa: E402

from kernels.notation import parse_deal  # noqa: E402
from kernels.strategies.states import run_states  # noqa: E402
from kernels.sweep import run_exhaustive, run_random  # noqa: E402


def difference(cpu, gpu) -> str:
    """'' when the two ShardResults are equal in every field, else the first field that differs."""
    for f in dataclasses.fields(cpu):
        a, b = getattr(cpu, f.name), getattr(gpu, f.name)
        equal = np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b
        if not equal:
            return f"{f.name}: cpu {str(a)[:300]} gpu {str(b)[:300]}"
    return ""


def around(deal: str, before: int, after: int) -> tuple:
    """A deal's space and a rank range around it."""
    sp = space("standard" if len(deal) > 45 else "camicia")
    rank = sp.rank(parse_deal(deal))
    return sp, rank - before, rank + after


def cases() -> dict:
    standard = space("standard")
    small = space("0:6,1:2,2:2")  # 1,260 deals, 7 of them never end
    casella = around(CASELLA, 3, 3)
    zanotto = around(ZANOTTO, 2, 4)
    return {
        # random standard deals: the stream, the candidates over a threshold, the longest game
        "random standard": lambda run, **kw: run(standard, 7, 3, 500, min_cards=400, **kw),
        "random standard, min_tricks": lambda run, **kw: run(standard, 11, 0, 600, start=250, min_cards=10**6,
                                                             min_tricks=60, **kw),
        # random deals of a small deck that holds cycles (found by Brent on the device, replayed on the CPU)
        "random small deck": lambda run, **kw: run(small, 5, 2, 400, min_cards=40, **kw),
        # every deal of a small deck with cycles (ranks unranked on the device)
        "exhaustive small deck": lambda run, **kw: run(small, 0, small.count, min_cards=50, **kw),
        "exhaustive 14 cards, a range": lambda run, **kw: run(space("0:8,1:2,2:2,3:2"), 100_003, 101_000,
                                                               min_cards=70, **kw),
        # the published cycles, inside rank ranges: Casella's (standard: ranks beyond 2^63, unranked on the
        # host) and Zanotto's (Camicia)
        "exhaustive around Casella's cycle": lambda run, **kw: run(*casella, min_cards=10**6, **kw),
        "exhaustive around Zanotto's cycle": lambda run, **kw: run(*zanotto, min_cards=10**6, **kw),
        "exhaustive, empty range": lambda run, **kw: run(small, 5, 5, min_cards=0, **kw),
        # random trick-boundary states (each cut at its own place): the whole states shard, cycles with
        # their closures and balanced deals (the test holds them to the census)
        "states small deck": lambda run, **kw: run(small, 3, 1, 2500, **kw),
        "states standard": lambda run, **kw: run(standard, 2, 0, 300, start=40, **kw),
        # only states near equal hands: random deals of each near-equal split (the random sweep)
        "states near equal hands": lambda run, **kw: run(small, 3, 1, 400, start=7, max_imbalance=1, **kw),
    }


def batch_cases() -> dict:
    """Cases of several shards at once, several blocks (the global work counter, the pieces' tallies from
    many lanes), a kept-deal buffer that fills (the continued launch), launches cut at a limit: each
    job's ShardResult against the CPU's of that shard alone (a list of differences, '' where equal)."""
    from kernels.sweep import gpu, run_exhaustive_batch, run_random_batch, run_random_states_batch

    small = space("0:6,1:2,2:2")
    standard = space("standard")
    casella = around(CASELLA, 3, 3)[0].rank(parse_deal(CASELLA))
    # Standard ranks across the end of the suffix space Casella's deal is in: pieces with different prefixes.
    (piece,) = gpu.exhaustive_pieces(standard, [(casella, casella + 1)])
    edge = casella - piece.first + piece.suffix_size - 40

    def random_batch(**kw):
        shards = [(5, 2, 150, 0), (5, 3, 200, 10), (6, 0, 90, 0)]
        return run_random_batch(small, shards, min_cards=20, **kw)

    def exhaustive_batch(**kw):
        ranges = [(0, 400), (400, 1000), (1000, small.count)]
        return run_exhaustive_batch(small, ranges, min_cards=0, **kw)  # every deal kept: the buffer fills

    def standard_pieces(**kw):
        ranges = [(edge, edge + 80), (casella - 2, casella + 3)]
        return run_exhaustive_batch(standard, ranges, min_cards=10**6, **kw)

    def states_batch(**kw):
        return run_random_states_batch(small, [(3, 1, 500, 0), (3, 2, 300, 5)], **kw)

    def near_states_batch(**kw):
        return run_random_states_batch(small, [(3, 1, 200, 7), (4, 0, 100, 0)], max_imbalance=1, **kw)

    pieces = gpu.exhaustive_pieces(standard, [(edge, edge + 80)])
    assert len(pieces) > 1 and len({p.prefix for p in pieces}) > 1, pieces  # the case plays what it is for
    return {"batch of random shards, three blocks": random_batch,
            "batch of exhaustive shards, every deal kept, a small buffer": exhaustive_batch,
            "standard ranks across prefixes, and around Casella's cycle": standard_pieces,
            "batch of states shards": states_batch,
            "batch of near-equal states shards": near_states_batch}


def launches_cut() -> str:
    """A job cut into launches of at most 150 deals (pieces across launches), as the CPU's."""
    from kernels.rng import stream_key
    from kernels.sweep import gpu, run_random
    from kernels.sweep.modes import RANDOM

    small = space("0:6,1:2,2:2")
    penalties = np.array([v for v in small.deck.cards() if v], dtype=np.uint8)
    key = int(stream_key(9, 4))
    tallies = gpu.sweep(small, RANDOM, gpu.stream_pieces([(key, 3, 500, 5), (key, 600, 40, 5)]), 2, penalties, 30, 0,
                        gpu.random_deals(small, penalties), limit=150)
    from kernels.tally import ShardResult
    gpu_results = [ShardResult.from_tally(t, small) for t in tallies]
    cpu_results = [run_random(small, 9, 4, 500, start=3, min_cards=30), run_random(small, 9, 4, 40, start=600,
                                                                                   min_cards=30)]
    return "; ".join(d for d in (difference(c, g) for c, g in zip(cpu_results, gpu_results)) if d)


def main() -> None:
    from kernels.sweep import gpu as host

    report = {}
    for name, case in cases().items():
        if name.startswith("states"):
            cpu, gpu = case(run_states), case(run_states, device="gpu")
        else:
            random = name.startswith("random")
            run = run_random if random else run_exhaustive
            cpu, gpu = case(run), case(run, device="gpu")
        report[name] = {"difference": difference(cpu, gpu), "deals": cpu.deals, "cycles": cpu.cycles,
                        "candidates": len(cpu.candidates), "cycle_rows": [r.to_json() for r in cpu.cycle_rows]}
    host.SIM_BLOCKS, host.MIN_CAPACITY = 3, 0  # several blocks; a kept-deal buffer of 4 lanes' runs
    for name, case in batch_cases().items():
        before = dict(host.STATS)
        cpu, on_gpu = case(device="cpu"), case(device="gpu")
        report[name] = {"difference": "; ".join(d for d in map(difference, cpu, on_gpu) if d),
                        "deals": sum(r.deals for r in cpu), "cycles": sum(r.cycles for r in cpu),
                        "candidates": sum(len(r.candidates) for r in cpu), "shards": len(cpu),
                        "launches": host.STATS["launches"] - before["launches"],
                        "continued": host.STATS["continued"] - before["continued"]}
    before = host.STATS["launches"]
    report["launches cut at a limit"] = {"difference": launches_cut(), "launches": host.STATS["launches"] - before}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
