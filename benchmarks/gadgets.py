"""Other gadgets than J- on the standard deck: which small hands and tails have genes, whether their genes
combine into cycles of the deck, and how near equal hands those cycles come. One core, in this process.

    python benchmarks/gadgets.py                            # the gadgets below, 14-card genes, 60 CPU-s each
    python benchmarks/gadgets.py --max-len 16 --seconds 300 --small A- --small -A --tail -

For each gadget (small hand, tail, the penalty card each gene holds one of: the small hand's own): its genes of
at most --max-len cards drawn from what the deck leaves (kernels/genes.py, every composition in one search), by
length; the largest small hand any gene's turn reaches; then construct's shards run in plan order for
--seconds of CPU (the multisets of library genes first): hands built, distinct cycles, and the nearest any of
their closures comes to equal hands (`imbalance`: cards from 26/26; 0 is balanced, with the balanced deals
entering them).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernels import genes as kg  # noqa: E402
from kernels.notation import format_hand, parse_hand  # noqa: E402
from kernels.strategies.construct import ConstructTable, Gadget, run_construct  # noqa: E402

GADGETS = [("J-", "-"), ("J-", ""), ("-J", "-"), ("J--", "-"), ("--J-", "-"), ("Q-", "-"), ("Q--", "-"),
           ("K---", "-"), ("A-", "-"), ("A----", "-"), ("-A", "-"), ("K-", "-")]


def gadget_row(small: str, tail: str, max_len: int, seconds: float, max_states: int) -> str:
    penalty = next((c for c in parse_hand(small) if c > 0), 0)
    per_gene = format_hand((penalty,), True) if penalty else ""
    table = ConstructTable(small=small, tail=tail, per_gene=per_gene, max_piece=max_len, max_states=max_states)
    g = Gadget("standard", table)
    g.check("gadgets")
    start = time.process_time()
    genes = kg.genes_upto(g.small, g.tail, g.target, max_len)
    lengths = Counter(len(x) for x in genes)
    own = [x for x in genes if per_gene == "" or sum(1 for c in x if c == penalty) == 1]
    biggest = max((kg.turn_sizes(x, g.small) for x in genes), default=0)
    search_s = time.process_time() - start
    hands, cycles, imbalance, balanced, shards = 0, {}, Counter(), 0, 0
    for first in g.firsts():
        if time.process_time() - start > seconds:
            break
        result = run_construct("standard", first, table, exact=False)
        shards += 1
        hands += result.deals
        for row in result.cycle_rows:
            if row.cycle_id not in cycles:
                cycles[row.cycle_id] = row
                imbalance[row.imbalance] += 1
                balanced += row.balanced or 0
    nearest = min(imbalance, default=None)
    spread = ", ".join(f"{n}: {lengths[n]}" for n in sorted(lengths)) or "none"
    return (f"| `{small}` | {f'`{tail}`' if tail else 'none'} | {per_gene or 'any'} | {len(genes)} ({spread}) | "
            f"{len(own)} | {biggest} | {search_s:.0f} | {shards} of {len(g.firsts())} | {hands:,} | {len(cycles):,} | "
            f"{'-' if nearest is None else f'{nearest} ({imbalance[nearest]:,} cycles)'} | {balanced} |")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", action="append", help="a small hand (repeat); default: the list above")
    parser.add_argument("--tail", default=None, help="one tail for every small hand given")
    parser.add_argument("--max-len", type=int, default=14, help="the library's longest genes")
    parser.add_argument("--seconds", type=float, default=60, help="CPU-seconds of shards per gadget")
    parser.add_argument("--max-states", type=int, default=200_000, help="each cycle's closure budget")
    args = parser.parse_args(argv)
    gadgets = [(s, args.tail if args.tail is not None else "-") for s in args.small] if args.small else GADGETS
    print("| small hand | tail | one per gene | genes (by length) | holding one | small hand at most | search CPU-s | "
          "shards run | hands | cycles | nearest to equal hands | balanced deals |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |", flush=True)
    for small, tail in gadgets:
        print(gadget_row(small, tail, args.max_len, args.seconds, args.max_states), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
