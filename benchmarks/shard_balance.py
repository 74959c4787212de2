"""How evenly a long composition's gene search is cut into shards: equal runs of the frontier's nodes (the plan
before) against runs of equal estimated work (kernels/strategies/construct.py `cut`), each shard's real choices
measured by searching below every frontier node once.

    python benchmarks/shard_balance.py                             # 0:24,1:1,2:2,3:3,4:2, 12 shards
    python benchmarks/shard_balance.py 0:21,1:1,2:4,3:3,4:3 --shards 40

Prints, for each cut, the slowest shard's choices against the median shard's and against the mean (1.0: perfectly
even), and the whole search's choices (the same for both: every node searched once).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernels import genes as kg  # noqa: E402
from kernels.notation import format_hand, parse_hand  # noqa: E402
from kernels.strategies.construct import (  # noqa: E402
    NODES_A_SHARD,
    ConstructTable,
    Gadget,
    cut,
    parse_composition,
)

J_, T_ = (1, 0), (0,)


def balance(per_shard: list[int]) -> tuple[float, float]:
    """(slowest / median, slowest / mean) of the shards' choices."""
    return max(per_shard) / max(1, statistics.median(per_shard)), max(per_shard) / max(1, statistics.mean(per_shard))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("composition", nargs="?", default="0:24,1:1,2:2,3:3,4:2")
    parser.add_argument("--shards", type=int, default=12)
    args = parser.parse_args(argv)
    comp = parse_composition(args.composition, "composition")
    choices, _ = kg.estimate(J_, T_, comp)
    gadget = Gadget("standard", ConstructTable(shard_choices=max(1, int(choices / args.shards))))
    layout = cut(gadget, comp)
    nodes = kg.frontier(J_, T_, comp, layout.depth)
    cost: dict[str, int] = {}

    def searched(prefix: str) -> int:
        if prefix not in cost:
            cost[prefix] = int(kg.genes_of(J_, T_, comp, prefix=parse_hand(prefix))[1][kg.CHOICES])
        return cost[prefix]

    parts = len(layout.shards)
    equal = [sum(searched(format_hand(n, True)) for n in nodes[k * len(nodes) // parts:(k + 1) * len(nodes) // parts])
             for k in range(parts)]
    whole = sum(equal)
    by_work = [sum(searched(p) for p in shard) for shard in layout.shards]
    genes = sorted(g for shard in layout.shards for p in shard
                   for g in kg.genes_of(J_, T_, comp, prefix=parse_hand(p))[0])
    assert genes == sorted(kg.genes_of(J_, T_, comp)[0])  # (each cut covers the tree once: the same genes)
    print(f"{args.composition}: {whole:.3g} choices below {len(nodes)} frontier nodes {layout.depth} "
          f"cards deep (about {NODES_A_SHARD} a shard), {parts} shards")
    print("| cut | slowest / median shard | slowest / mean shard |")
    print("| --- | ---: | ---: |")
    for name, shards in (("equal runs of nodes", equal), ("equal estimated work", by_work)):
        median, mean = balance(shards)
        print(f"| {name} | {median:.2f} | {mean:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
