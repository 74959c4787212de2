"""Random states near equal hands against uniform random states, at equal CPU time.

Cycles favour hands near equal (the census of a deck, split by split, says so exactly: docs/atlas.md,
"Where to aim"). `[states] max_imbalance = K` samples only the states whose hands are at most K cards
from equal. This plays each way for the same CPU time on decks whose cycles are known (their census),
in alternating chunks so that both see the same machine, and prints per arm: states a CPU-second,
the states that cycle a CPU-second, the distinct cycles met, and the census's exact rate for the cuts
the arm samples (what the measured rate should be near).

    python benchmarks/states_bias.py                       # three decks, 20 CPU-seconds an arm
    python benchmarks/states_bias.py --seconds 60 --decks 0:10,1:2,2:2,3:2
    python benchmarks/states_bias.py --census              # only the census's rates by imbalance (exact)
"""

from __future__ import annotations

import argparse
import time

from kernels.dealspace import DealSpace, _multinomial
from kernels.decks import parse_deck
from kernels.strategies.census import run_census
from kernels.sweep import near_cuts, run_random_states

DECKS = ("0:6,1:2,2:2,3:2,4:2", "0:10,1:2,2:2,3:2", "0:12,1:2,2:2,3:2")
ARMS = (None, 2, 1)  # max_imbalance: None for every state
CHUNK = 200_000


def census_rates(deck: str) -> dict[int, float]:
    """cut -> the exact rate of cycling of the states cut there (every state of that split played)."""
    parsed = parse_deck(deck)
    orders = _multinomial(parsed.counts)
    return {cut: run_census(deck, (cut, parsed.total - cut), 0, orders, False).cycles / orders
            for cut in range(1, parsed.total)}


def compare(deck: str, seconds: float, seed: int = 1) -> list[dict]:
    space = DealSpace.of(parse_deck(deck))
    total = space.deck.total
    exact = census_rates(deck)
    arms = {k: {"arm": "every state" if k is None else f"max_imbalance {k}", "cpu_s": 0.0, "states": 0,
                "cycling": 0, "cycles": set(),
                "census_rate": sum(exact[c] for c in (range(1, total) if k is None else near_cuts(total, k)))
                / len(range(1, total) if k is None else near_cuts(total, k))} for k in ARMS}
    run_random_states(space, seed, 0, 100, max_imbalance=1)  # compiled before the clock starts
    chunk = 0
    while min(a["cpu_s"] for a in arms.values()) < seconds:
        for k, arm in arms.items():
            start = time.process_time()
            played = run_random_states(space, seed, chunk, CHUNK, max_imbalance=k)
            arm["cpu_s"] += time.process_time() - start
            arm["states"] += played.deals
            arm["cycling"] += played.cycles
            arm["cycles"].update(c.result.cycle_id for c in played.candidates)
        chunk += 1
    return [{**a, "cycles": len(a["cycles"])} for a in arms.values()]


def census_table(decks: list[str]) -> None:
    """Each deck's exact rate of cycling over all its states and over those near equal hands."""
    print("| deck | cards | states | cycling | rate, every state | imbalance <= 2 | imbalance <= 1 | equal hands |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for deck in decks:
        total = parse_deck(deck).total
        exact = census_rates(deck)
        orders = _multinomial(parse_deck(deck).counts)
        every = sum(exact.values()) / len(exact)
        near = {k: sum(exact[c] for c in near_cuts(total, k)) / len(near_cuts(total, k)) for k in (2, 1, 0)}
        print(f"| `{deck}` | {total} | {orders * (total - 1):,} | {round(every * orders * (total - 1)):,} "
              f"| {every * 1e6:.1f} per M | " + " | ".join(f"{near[k] * 1e6:.1f} per M ({near[k] / every:.2f}x)"
                                                        for k in (2, 1, 0)) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="CPU-seconds each arm plays (default 20)")
    parser.add_argument("--decks", default=";".join(DECKS), help="decks separated by ';'")
    parser.add_argument("--census", action="store_true", help="only the census's exact rates by imbalance")
    args = parser.parse_args()
    if args.census:
        census_table(args.decks.split(";"))
        return
    print("| deck | cards | arm | states/CPU-s | cycling states/CPU-s | vs every state | distinct cycles met "
          "| cycling rate measured | census rate of its cuts |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for deck in args.decks.split(";"):
        rows = compare(deck, args.seconds)
        base = rows[0]["cycling"] / rows[0]["cpu_s"]
        for r in rows:
            per_s = r["cycling"] / r["cpu_s"]
            print(f"| `{deck}` | {parse_deck(deck).total} | {r['arm']} | {r['states'] / r['cpu_s'] / 1e6:.2f} M "
                  f"| {per_s:.1f} | {per_s / base:.2f} | {r['cycles']} | {r['cycling'] / r['states'] * 1e6:.1f} per M "
                  f"| {r['census_rate'] * 1e6:.1f} per M |", flush=True)


if __name__ == "__main__":
    main()
