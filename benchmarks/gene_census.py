"""The census of long genes by length: every composition of a length searched to its end, one core, with its cost.

    python benchmarks/gene_census.py 14 24                      # lengths 14..24 of the standard deck's J- gadget
    python benchmarks/gene_census.py 26 26 --out benchmarks/gene_census.csv
    python benchmarks/gene_census.py --estimate 31 43 --probes 20000  # Knuth's estimate of each length's cost
    python benchmarks/gene_census.py 24 26 --library runs/genes # and each composition into a run's genes library
    python benchmarks/gene_census.py --worth 27 32              # the census's worth-searching compositions, into
                                                                # the library shipped with bmn (kernels/data/genes)

For each length L, every composition of L cards holding exactly one J (the gadget's `per_gene`) that the deck
leaves beside the small hand and the tail (34 plain, 3 J, 4 Q, 4 K, 4 A for `J-` and `-` on the standard deck),
searched exactly by kernels/genes.py (lookahead 3, the bounds on what S gives back, least phases only). Appends
one CSV row per composition to --out (a length already there is skipped: the census resumes) and prints a row per
length: compositions, genes and gene orbits by orbit length, the largest small hand any gene's turn reaches, the
CPU-seconds, and the choices made beside Knuth's estimate of the choices of the plain search (lookahead 1, no
bounds) over the same compositions. With --estimate, only the estimates, pruned and plain, for each length, and
those of the compositions the census says are worth searching (kernels/genelib.py) and of those of them the
shipped library lacks. With --worth, every composition
of those lengths worth searching that the shipped library lacks, searched to its end, cheapest first by Knuth's
estimate, each added to the shipped library (kernels/data/genes/J-_-.jsonl) as it ends: stop it when you like and
run it again; commit the file.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cluster.runs.genes import write_entry  # noqa: E402
from cluster.runs.storage import RunStore  # noqa: E402
from kernels import genelib as gl  # noqa: E402
from kernels import genes as kg  # noqa: E402
from kernels.notation import format_hand, parse_hand  # noqa: E402
from kernels.strategies.construct import ConstructTable, Gadget, compositions_of  # noqa: E402

FIELDS = ("length", "composition", "genes", "orbits", "most_small", "choices", "cpu_s", "plain_estimate",
          "pruned_estimate", "gene_list")
PROBES = 3000


def compositions(deck: str, small: str, tail: str, length: int) -> list[tuple[int, ...]]:
    """Every composition of `length` cards with exactly one J, within what the deck leaves beside the gadget."""
    target = Gadget(deck, ConstructTable(small=small, tail=tail)).target
    return [tuple(c[:5]) for c in compositions_of(target, length, 1)]


def estimate(comp, small, tail, k, bounds) -> float:
    """Knuth's estimate of the choices of the exact search of one composition."""
    return kg.estimate(small, tail, comp, k=k, bounds=bounds, probes=PROBES, seed=7)[0]


def most_small(gene, small) -> int:
    """The most cards the small hand holds during the turn of any phase of the gene."""
    return max(kg.turn_sizes(phase, small) for phase in gene)


def price(deck: str, small: str, tail: str, first: int, last: int, probes: int) -> int:
    """Knuth's estimate of each length's searches (the pruned search's, and the plain one's: lookahead 1, no
    bounds), of every composition, of those the census says are worth searching, and of those of them the shipped
    library lacks: what the census has left."""
    gadget = Gadget(deck, ConstructTable(small=small, tail=tail, census=True))
    census = gadget.census()
    print("| length | compositions | pruned: choices | plain: choices | worth searching | their choices | "
          "left to search | their choices |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |", flush=True)
    for length in range(first, last + 1):
        comps = census.compositions(length)
        pruned = {c: kg.estimate(gadget.small, gadget.tail, c, probes=probes, seed=11)[0] for c in comps}
        plain = sum(kg.estimate(gadget.small, gadget.tail, c, k=1, bounds=False, probes=probes, seed=11)[0]
                    for c in comps)
        worth = census.needed(length)
        left = [c for c in worth if census.library.get(c) is None]
        print(f"| {length} | {len(comps)} | {sum(pruned.values()):.2g} | {plain:.2g} | {len(worth)} | "
              f"{sum(pruned[c] for c in worth):.2g} | {len(left)} | {sum(pruned[c] for c in left):.2g} |",
              flush=True)
    return 0


def search_worth(deck: str, small: str, tail: str, first: int, last: int) -> int:
    """Every worth-searching composition of first..last cards the shipped library lacks, searched to its end,
    cheapest first, each added to the shipped library as it ends."""
    gadget = Gadget(deck, ConstructTable(small=small, tail=tail, census=True))
    census = gadget.census()
    path = gl.library_path(small, tail)
    todo = []
    for length in range(first, last + 1):
        for comp in census.compositions(length):
            if census.library.get(comp) is None and census.verdict(comp).worth:
                todo.append((kg.estimate(gadget.small, gadget.tail, comp, probes=PROBES, seed=7)[0], comp))
    print(f"{len(todo)} worth-searching compositions of {first}-{last} cards to search", flush=True)
    for guess, comp in sorted(todo):
        start = time.process_time()
        found, counters = kg.genes_of(gadget.small, gadget.tail, comp)
        spent = time.process_time() - start
        library = gl.Library.load(path, small, tail)  # (read again: another process may have added to it)
        library.merge([gl.entry_of(comp, found, gadget.small, gadget.tail, choices=int(counters[kg.CHOICES]),
                                   cpu_s=spent, source=f"python benchmarks/gene_census.py --worth {first} {last}")])
        library.save(path)
        print(f"{gl.comp_text(comp)} ({sum(comp)} cards): {len(found)} genes, {counters[kg.CHOICES]:.3g} choices "
              f"(estimate {guess:.3g}), {spent:.1f} CPU-s", flush=True)
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("first", type=int)
    parser.add_argument("last", type=int)
    parser.add_argument("--deck", default="standard")
    parser.add_argument("--small", default="J-")
    parser.add_argument("--tail", default="-")
    parser.add_argument("--out", default=None, help="a CSV file to append each composition's row to")
    parser.add_argument("--estimate", action="store_true", help="Knuth's estimates only, pruned and plain, of "
                        "every composition, the worth-searching ones and those the shipped library lacks")
    parser.add_argument("--probes", type=int, default=PROBES, help="Knuth's walks a composition (--estimate)")
    parser.add_argument("--worth", action="store_true", help="search the worth-searching compositions the shipped "
                        "library lacks into it")
    parser.add_argument("--library", default=None, help="a genes library (cluster/runs/genes.py) to add each "
                        "composition "
                        "searched to: construct runs then build its cycles without searching it again")
    args = parser.parse_args(argv)
    if args.worth:
        return search_worth(args.deck, args.small, args.tail, args.first, args.last)
    if args.estimate:
        return price(args.deck, args.small, args.tail, args.first, args.last, args.probes)
    small = np.array(parse_hand(args.small), np.uint8)
    tail = np.array(parse_hand(args.tail), np.uint8)
    gadget = Gadget(args.deck, ConstructTable(small=args.small, tail=args.tail))
    library = RunStore(args.library) if args.library else None
    done = set()
    if args.out and os.path.exists(args.out):
        with open(args.out) as handle:
            done = {int(row["length"]) for row in csv.DictReader(handle)}
    print("| length | compositions | genes (orbits: count) | small hand at most | CPU-s | choices | "
          "plain search's choices (estimate) |")
    print("| ---: | ---: | --- | ---: | ---: | ---: | ---: |", flush=True)
    for length in range(args.first, args.last + 1):
        comps = compositions(args.deck, args.small, args.tail, length)
        plain = sum(estimate(c, small, tail, 1, False) for c in comps)
        if length in done:
            continue
        rows, orbits, biggest, cpu, choices = [], Counter(), 0, 0.0, 0
        for comp in comps:
            start = time.process_time()
            found, counters = kg.genes_of(small, tail, comp)
            spent = time.process_time() - start
            genes = [kg.orbit_phases(g, small, tail) for g in found]
            sizes = [most_small(g, small) for g in genes]
            orbits.update(len(g) for g in genes)
            biggest = max([biggest] + sizes)
            cpu += spent
            if library is not None:
                write_entry(library, gadget, comp + (0,) * (10 - len(comp)), [format_hand(g, True) for g in found],
                            shards=1, run="benchmarks/gene_census.py", seconds=spent)
            choices += int(counters[kg.CHOICES])
            rows.append(dict(length=length, composition=",".join(f"{v}:{n}" for v, n in enumerate(comp) if n),
                             genes=len(genes), orbits=" ".join(str(len(g)) for g in genes),
                             most_small=max(sizes, default=0), choices=int(counters[kg.CHOICES]),
                             cpu_s=round(spent, 2), plain_estimate=f"{estimate(comp, small, tail, 1, False):.3g}",
                             pruned_estimate=f"{estimate(comp, small, tail, 3, True):.3g}",
                             gene_list=" ".join(format_hand(g[0], True) for g in genes)))
        if args.out:
            new = not os.path.exists(args.out)
            with open(args.out, "a", newline="") as handle:
                writer = csv.DictWriter(handle, FIELDS)
                if new:
                    writer.writeheader()
                writer.writerows(rows)
        spread = ", ".join(f"{m}: {n}" for m, n in sorted(orbits.items())) or "none"
        print(f"| {length} | {len(comps)} | {sum(orbits.values())} ({spread}) | {biggest} | {cpu:.0f} | "
              f"{choices:.3g} | {plain:.3g} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
