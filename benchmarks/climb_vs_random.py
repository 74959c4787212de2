"""Does `climb` beat `random` at equal CPU time? The longest game each finds, seed by seed.

For each seed, climb runs DEALS random deals (rounds of its pool, the top games of each round
climbed by backward play) and its CPU time is measured; random then plays deals of another
stream for the same CPU time. Usage:

    .venv/bin/python benchmarks/climb_vs_random.py [DEALS] [SEEDS]
"""

from __future__ import annotations

import json
import sys
import time

from kernels.dealspace import DealSpace
from kernels.decks import parse_deck
from kernels.strategies import run_climb, run_random


def main() -> None:
    deals = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
    seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    space = DealSpace.of(parse_deck("standard"))
    run_climb(space, 0, 0, 2000, pool=1000, top=1, min_cards=10**9)  # compile / load kernels
    run_random(space, 0, 0, 1000, min_cards=10**9)
    rows = []
    for seed in range(1, seeds + 1):
        t0 = time.process_time()
        climb = run_climb(space, seed, 0, deals, min_cards=10**9)
        budget = time.process_time() - t0
        t0 = time.process_time()
        best, played, chunk = 0, 0, 0
        while time.process_time() - t0 < budget:
            r = run_random(space, seed + 1000, chunk, 250_000, min_cards=10**9)
            best, played, chunk = max(best, r.max_cards), played + r.deals, chunk + 1
        rows.append({"seed": seed, "cpu_s": round(budget, 1), "climb_longest": climb.max_cards,
                     "climb_deals": climb.deals, "random_longest": best, "random_deals": played})
        print(f"seed {seed}: {budget:6.1f} s CPU  climb {climb.max_cards:5d} cards ({climb.deals:,} deals)"
              f"  random {best:5d} cards ({played:,} deals)", flush=True)
    wins = sum(r["climb_longest"] > r["random_longest"] for r in rows)
    print(f"climb longer in {wins} of {len(rows)} seeds")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
