"""`longest` against `random` and `climb` at equal CPU time: the longest game each finds, seed by seed.

For each seed, each strategy runs on this process's core for CPU_SECONDS of CPU time
(time.process_time; compilation and cache loading excluded): `random` and `climb` in chunks of
their own shards (streams (seed, 0), (seed, 1), ...), `longest` in shards of SHARD_DEALS deals
(rounds of 2,000,000, its defaults). Each stops after the chunk in which its time ran out, so
each overshoots by up to one chunk; the CPU time actually used is printed beside each figure.
Every strategy starts a new shard afresh, as it would on a cluster. Usage:

    .venv/bin/python benchmarks/longest_vs_random.py [CPU_SECONDS] [SEEDS] [SHARD_DEALS]

Run it on an otherwise idle core (`taskset -c 0`) for figures worth comparing across machines.
"""

from __future__ import annotations

import json
import sys
import time

from kernels.dealspace import DealSpace
from kernels.decks import parse_deck
from kernels.strategies import REGISTRY, run_climb, run_longest, run_random

NOTHING = 10**9  # min_cards: keep no candidates (the tally's longest game is all we need)


def until(budget: float, chunk) -> dict:
    """Call chunk(k) for k = 0, 1, ... until `budget` CPU seconds are spent; the longest game and deals."""
    t0 = time.process_time()
    best, deals, k = 0, 0, 0
    while time.process_time() - t0 < budget:
        result = chunk(k)
        best, deals, k = max(best, result.max_cards), deals + result.deals, k + 1
    return {"longest": best, "deals": deals, "chunks": k, "cpu_s": round(time.process_time() - t0, 1)}


def main() -> None:
    budget = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
    seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    shard_deals = int(sys.argv[3]) if len(sys.argv) > 3 else 40_000_000
    space = DealSpace.of(parse_deck("standard"))
    for name in ("random", "climb", "longest"):  # compile / load kernels
        REGISTRY[name].warm_up(space)
    rows = []
    for seed in range(1, seeds + 1):
        row = {"seed": seed, "cpu_budget_s": budget}
        row["random"] = until(budget, lambda k, seed=seed: run_random(space, seed, k, 2_000_000, min_cards=NOTHING))
        row["climb"] = until(budget, lambda k, seed=seed: run_climb(space, seed, k, 2_000_000, min_cards=NOTHING))
        row["longest"] = until(budget, lambda k, seed=seed: run_longest(space, seed, k, shard_deals,
                                                                        min_cards=NOTHING))
        rows.append(row)
        print(f"seed {seed}: " + "  ".join(
            f"{name} {row[name]['longest']:5d} cards ({row[name]['deals']:,} games, {row[name]['cpu_s']} s)"
            for name in ("random", "climb", "longest")), flush=True)
    for rival in ("random", "climb"):
        wins = sum(r["longest"]["longest"] > r[rival]["longest"] for r in rows)
        print(f"longest longer than {rival} in {wins} of {len(rows)} seeds")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
