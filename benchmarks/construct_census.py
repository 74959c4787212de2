"""The construction's census of a deck, in this process (no Ray): every shard of `construct` run in turn,
with what the cluster's tables do not keep (genes, compositions searched, budgets hit).

    python benchmarks/construct_census.py camicia                       # the J- census of the Camicia deck
    python benchmarks/construct_census.py standard --max-piece 17       # the standard deck's, library first
    python benchmarks/construct_census.py camicia --max-nodes 0          # no budget: every composition whole
    python benchmarks/construct_census.py --censused                     # the decks whose every cycle is known

Prints one line per shard that found cycles and a summary: distinct cycles, how many the catalogue knows,
their imbalance (cards from equal hands of the most nearly balanced state entering each), the genes of the
library, the compositions searched exactly and those whose budget ran out (where more genes may hide).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernels.catalogue import SHIPPED, read_cycles  # noqa: E402
from kernels.construct import covers  # noqa: E402
from kernels.cyclestate import walk  # noqa: E402
from kernels.notation import parse_deal  # noqa: E402
from kernels.strategies.construct import ConstructTable, Gadget, run_construct  # noqa: E402

CENSUSED = ("0:8,1:2,2:2,3:2", "0:10,1:2,2:2,3:2", "0:6,1:2,2:2,3:2,4:2", "0:8,1:2,2:2,3:2,4:2")


def census(deck: str, table: ConstructTable, quiet: bool = False) -> dict:
    gadget = Gadget(deck, table)
    firsts = gadget.firsts()
    start = time.process_time()
    rows, hands, truncated, exact = {}, 0, set(), set()
    for phase in (False, True):
        for k, first in enumerate(firsts):
            stats: dict = {}
            result = run_construct(deck, first, table, stats, exact=phase)
            hands += result.deals
            truncated |= set(stats["truncated"])
            exact |= {c for c in stats.get("searched", ()) if sum(c) > table.max_piece}
            new = [r for r in result.cycle_rows if r.cycle_id not in rows]
            for r in result.cycle_rows:
                rows.setdefault(r.cycle_id, r)
            if new and not quiet:
                print(f"{'exact' if phase else 'library'} shard {k} {first[:5]}: {result.deals} hands, "
                      f"{len(result.cycle_rows)} cycles, {len(rows)} in all, {time.process_time() - start:.0f} CPU-s",
                      flush=True)
    known = {c.cycle_id: c for c in read_cycles(SHIPPED)}
    return dict(deck=deck, cycles=len(rows), known=sum(1 for c in rows if c in known), hands=hands,
                imbalance=dict(sorted(Counter(r.imbalance for r in rows.values()).items())),
                library=sum(len(o) for o in gadget.library().values()), truncated=sorted(truncated),
                cpu_s=round(time.process_time() - start, 1), rows=rows)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("deck", nargs="?", default="camicia")
    parser.add_argument("--max-piece", type=int, default=ConstructTable().max_piece)
    parser.add_argument("--max-nodes", type=int, default=ConstructTable().max_nodes)
    parser.add_argument("--max-states", type=int, default=ConstructTable().max_states)
    parser.add_argument("--small", default=ConstructTable().small)
    parser.add_argument("--tail", default=ConstructTable().tail)
    parser.add_argument("--per-gene", default=ConstructTable().per_gene)
    parser.add_argument("--censused", action="store_true", help="the censused decks: claimed against found")
    args = parser.parse_args(argv)
    table = ConstructTable(small=args.small, tail=args.tail, per_gene=args.per_gene, max_piece=args.max_piece,
                           max_nodes=args.max_nodes, max_states=args.max_states)
    if args.censused:
        for deck in CENSUSED:
            cycles = [c for c in read_cycles(SHIPPED) if c.deck == deck]
            claimed = {c.cycle_id for c in cycles if covers(walk(parse_deal(c.state)).cycle, (1, 0), (0,), 1)}
            got = census(deck, table, quiet=True)
            print(f"{deck}: {len(cycles)} cycles, {len(claimed)} of the gadget's form, construct finds {got['cycles']} "
                  f"({'the same' if set(got['rows']) == claimed else 'OTHERS'}) in {got['cpu_s']} CPU-s")
        return 0
    got = census(args.deck, table)
    got.pop("rows")
    got["new"] = got["cycles"] - got["known"]
    print(got)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
