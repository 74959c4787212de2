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
    python benchmarks/states_bias.py --shapes runs/atlas-camicia-style runs/atlas-camicia
                                                           # the states along the cycles runs met

`--shapes`: every cycle a run's cycles table holds with its state (census, states, sampled state rows)
is played round once from that state on the reference player, and its trick-boundary states are
measured against random states of the same deck: how far from equal the hands are, where the
penalty cards lie in their hands (0 the top card, 1 the bottom one) and how the leader's share of
the penalty cards compares with its share of the cards.
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


def near_rate(exact: dict[int, float], total: int, max_imbalance: int | None) -> float:
    """The census's rate over the cuts a sample with `max_imbalance` draws from (None: every cut), each
    cut holding as many states."""
    cuts = near_cuts(total, total if max_imbalance is None else max_imbalance)
    return sum(exact[c] for c in cuts) / len(cuts)


def compare(deck: str, seconds: float, seed: int = 1) -> list[dict]:
    space = DealSpace.of(parse_deck(deck))
    total = space.deck.total
    exact = census_rates(deck)
    arms = {k: {"arm": "every state" if k is None else f"max_imbalance {k}", "cpu_s": 0.0, "states": 0,
                "cycling": 0, "cycles": set(),
                "census_rate": near_rate(exact, total, k)} for k in ARMS}
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


def shapes(state_hands) -> tuple[int, list[float], float]:
    """A two-hand state's imbalance, its penalty cards' depths in their hands, and the leader's share of
    the penalty cards over its share of the cards (1: as many as its cards would hold)."""
    first, second = state_hands
    depths = [i / max(1, len(h) - 1) for h in (first, second) for i, v in enumerate(h) if v]
    penalties = sum(1 for v in first if v) + sum(1 for v in second if v)
    share = (sum(1 for v in first if v) / penalties) / (len(first) / (len(first) + len(second)))
    return abs(len(first) - len(second)) // 2, depths, share


def shapes_table(runs: list[str], seed: int = 1) -> None:
    """The states along each deck's cycles against random states of the deck (uniform over orders and cuts)."""
    import numpy as np

    from cluster.commands.query import query
    from kernels.engines.reference import trace_reference
    from kernels.notation import parse_deal

    rows = query(runs,
                 "SELECT deck, state, period_tricks FROM cycles WHERE state IS NOT NULL ORDER BY deck").to_pylist()
    by_deck: dict[str, list] = {}
    for r in rows:
        by_deck.setdefault(r["deck"], []).append(r)
    rng = np.random.default_rng(seed)
    print("| deck | cards | cycles | states on them | imbalance: cycles / random | penalty depth: cycles / random "
          "| penalties in the top quarter: cycles / random | leader's penalty share: cycles / random |")
    print("| --- | ---: | ---: | ---: | --- | --- | --- | --- |")
    for deck, cycles in sorted(by_deck.items(), key=lambda kv: (parse_deck(kv[0]).total, kv[0])):
        on_cycles = []
        for c in cycles:
            records = list(trace_reference(parse_deal(c["state"]), max_tricks=c["period_tricks"]))
            on_cycles += [shapes((r.hands[r.leader], r.hands[1 - r.leader])) for r in records
                          if all(r.hands)]
        cards = np.array(parse_deck(deck).cards())
        randoms = []
        for _ in range(20_000):
            order = rng.permutation(cards)
            cut = int(rng.integers(1, len(cards)))
            randoms.append(shapes((list(order[:cut]), list(order[cut:]))))

        def summary(sample):
            depths = [d for _, ds, _ in sample for d in ds]
            return (np.mean([i for i, _, _ in sample]), np.mean(depths), np.mean([d < 0.25 for d in depths]),
                    np.mean([sh for *_, sh in sample]))

        a, b = summary(on_cycles), summary(randoms)
        print(f"| `{deck}` | {len(cards)} | {len(cycles)} | {len(on_cycles):,} | {a[0]:.2f} / {b[0]:.2f} "
              f"| {a[1]:.2f} / {b[1]:.2f} | {a[2]:.2f} / {b[2]:.2f} | {a[3]:.2f} / {b[3]:.2f} |", flush=True)


def census_table(decks: list[str]) -> None:
    """Each deck's exact rate of cycling over all its states and over those near equal hands."""
    print("| deck | cards | states | cycling | rate, every state | imbalance <= 2 | imbalance <= 1 | equal hands |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for deck in decks:
        total = parse_deck(deck).total
        exact = census_rates(deck)
        orders = _multinomial(parse_deck(deck).counts)
        every = near_rate(exact, total, None)
        near = {k: near_rate(exact, total, k) for k in (2, 1, 0)}
        print(f"| `{deck}` | {total} | {orders * (total - 1):,} | {round(every * orders * (total - 1)):,} "
              f"| {every * 1e6:.1f} per M | " + " | ".join(f"{near[k] * 1e6:.1f} per M ({near[k] / every:.2f}x)"
                                                        for k in (2, 1, 0)) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="CPU-seconds each arm plays (default 20)")
    parser.add_argument("--decks", default=";".join(DECKS), help="decks separated by ';'")
    parser.add_argument("--census", action="store_true", help="only the census's exact rates by imbalance")
    parser.add_argument("--shapes", nargs="+", metavar="RUN", help="the states along the cycles these runs met")
    args = parser.parse_args()
    if args.shapes:
        shapes_table(args.shapes)
        return
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
