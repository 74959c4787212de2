"""The gene searches side by side on one long composition, one core: the naive search over every piece
(tests/naive.py), and kernels/genes.py plain (one gadget, no bounds), with its lookahead, its least-phase cut
and its bounds on what the small hand gives back.

    python benchmarks/gene_search.py                          # Casella's 32-card composition (23 plain, J, 4 Q, 3 K, A)
    python benchmarks/gene_search.py 0:20,1:1,2:3,3:3 --budget 3e7 --whole

For each search: choices per CPU-second over its first `--budget` choices (after a warm-up that compiles it),
Knuth's estimate of its whole tree (the choices it would make, 20,000 walks) and the CPU time that puts on it;
with --whole, the pruned searches (lookahead 2 and more, with the bounds) run to their end: their choices,
CPU-seconds and genes.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from naive import _pieces  # noqa: E402

from kernels import genes as kg  # noqa: E402
from kernels.decks import parse_deck  # noqa: E402
from kernels.notation import format_hand  # noqa: E402

J_, T_ = (1, 0), (0,)
CASELLA = "0:23,1:1,2:4,3:3,4:1"
PROBES = 20_000  # Knuth's walks per estimate
# (name, lookahead, least-phase cut, bounds)
SEARCHES = [("plain: one gadget, no cut", 1, False, False), ("lookahead 3", 3, False, False),
            ("lookahead 3, least phases", 3, True, False), ("bounds, one gadget", 1, True, True),
            ("bounds, lookahead 2", 2, True, True), ("bounds, lookahead 3 (the default)", 3, True, True),
            ("bounds, lookahead 4", 4, True, True)]


def naive_rate(comp, budget: int) -> float:
    """The naive search's choices per CPU-second over its first `budget` choices."""
    pool = np.array(comp, np.int64)
    n = int(pool.sum())
    genes, lengths = np.zeros((100_000, n + 1), np.uint8), np.zeros(100_000, np.int64)
    small, tail = np.array(J_, np.uint8), np.array(T_, np.uint8)
    _pieces(np.array([2, 1], np.int64), 3, small, tail, 64, True, genes, lengths, 0)  # compiled
    start = time.process_time()
    _, choices = _pieces(pool, n, small, tail, 64, True, genes, lengths, budget)
    return choices / (time.process_time() - start)


def rate(comp, budget: int, k: int, least: bool, bounds: bool) -> float:
    n = sum(comp)
    kg.walk(kg.FIND, J_, T_, (2, 1), 3, True, k=k, least=least, bounds=bounds)  # compiled
    start = time.process_time()
    _, counters, _ = kg.walk(kg.FIND, J_, T_, comp, n, True, k=k, least=least, bounds=bounds, max_nodes=budget)
    return counters[kg.CHOICES] / (time.process_time() - start)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("composition", nargs="?", default=CASELLA)
    parser.add_argument("--budget", type=float, default=3e7, help="choices each search's rate is measured over")
    parser.add_argument("--whole", action="store_true", help="run the pruned searches to their end")
    args = parser.parse_args(argv)
    comp = tuple(parse_deck(args.composition).counts)
    budget = int(args.budget)
    print(f"| search | choices per CPU-s | estimated choices of the whole search | CPU at that rate |"
          f"{' whole search: choices, CPU-s, genes |' if args.whole else ''}")
    print(f"| --- | ---: | ---: | ---: |{' ---: |' if args.whole else ''}")
    speed = naive_rate(comp, budget)
    plain = kg.estimate(J_, T_, comp, k=1, bounds=False, probes=PROBES)[0]
    print(f"| naive (tests/naive.py) | {speed / 1e6:.1f} M | {plain:.2g} (the plain search's) | "
          f"{plain / speed:,.0f} s |{' - |' if args.whole else ''}", flush=True)
    for name, k, least, bounds in SEARCHES:
        speed = rate(comp, budget, k, least, bounds)
        estimate = kg.estimate(J_, T_, comp, k=k, bounds=bounds, probes=PROBES)[0]
        row = f"| {name} | {speed / 1e6:.1f} M | {estimate:.2g} | {estimate / speed:,.0f} s |"
        if args.whole:
            if bounds and k > 1:
                start = time.process_time()
                found, counters, _ = kg.walk(kg.FIND, J_, T_, comp, sum(comp), True, k=k, least=least,
                                             bounds=bounds)
                spent = time.process_time() - start
                genes = ", ".join(format_hand(g, True) for g in found) or "none"
                row += f" {counters[kg.CHOICES]:.3g}, {spent:.0f} s, {genes} |"
            else:
                row += " - |"
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
