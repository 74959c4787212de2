"""The CPU lanes engine against the bitmask engine's sweep: games/s on one core, and its vector code.

    python benchmarks/lanes_bench.py [DEALS] [ROUNDS]

Both play the same random standard deals (one stream), alternately, ROUNDS times each; CPU time. Then
the lanes kernel is compiled once more without the cache and its assembly counted: instructions on
vector registers, and the scalar tzcnt/popcnt of the segment step (one copy each: the lane loop was
not vectorized).
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernels.decks import parse_deck  # noqa: E402
from kernels.dealspace import DealSpace  # noqa: E402
from kernels.rng import stream_key  # noqa: E402
from kernels.sweep import cpu, lanes  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    deals = int(args[0]) if args else 300_000
    rounds = int(args[1]) if len(args) > 1 else 2
    space = DealSpace.of(parse_deck("standard"))
    penalties = np.array([v for v in space.deck.cards() if v], dtype=np.uint8)
    key = stream_key(9, 9)
    for engine in (cpu.run_random, lanes.run_random):
        engine(space, key, penalties, 0, 10, min_cards=10**6)  # compiled (or loaded) before timing
    for r in range(rounds):
        for name, engine in (("bitmask", cpu.run_random), (f"lanes (L={lanes.LANES})", lanes.run_random)):
            t = time.process_time()
            engine(space, key, penalties, 0, deals, min_cards=10**6)
            print(f"round {r + 1}: {name:<14} {deals / (time.process_time() - t) / 1e6:.3f} M games/s", flush=True)
    import numba
    fresh = numba.njit(lanes.lanes_random.py_func)  # uncached, so that its assembly can be read
    acc = np.zeros((lanes.LANES, lanes.N_ACC), np.int64)
    fresh(key, penalties, 52, 26, 0, 10, 416, 10**6, 0, acc, np.zeros(16384, np.int64), np.zeros(8, np.int64))
    asm = next(iter(fresh.inspect_asm().values())).splitlines()
    ops = [line.split()[0] for line in asm if line.startswith("\t") and line.strip() and line.strip()[0] not in ".#"]
    vector = Counter(op for op in ops if op.startswith("v"))
    print(f"assembly: {len(ops)} instructions, {sum(vector.values())} on vector registers "
          f"({', '.join(f'{k} {v}' for k, v in vector.most_common(6))}); scalar tzcnt "
          f"{sum(op.startswith('tzcnt') for op in ops)}, popcnt {sum(op.startswith('popcnt') for op in ops)}, "
          f"lines naming ymm {sum('%ymm' in line for line in asm)}")


if __name__ == "__main__":
    main()
