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


def main() -> None:
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
    print(json.dumps(report))


if __name__ == "__main__":
    main()
