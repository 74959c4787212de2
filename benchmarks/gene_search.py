"""The gene searches side by side (kernels/construct.py), one core: on one composition searched exactly, and
on the library of every composition of at most L cards.

    python benchmarks/gene_search.py                       # 20 plain, J, 3 Q, 3 K (27 cards); Camicia, L 18
    python benchmarks/gene_search.py 20,1,3,3 26,3,4,4 18

`pieces` is the plain DFS over every piece; `lookahead k` plays the piece's next k-1 successors beside it
(the default is 3). Each search runs once after a warm-up that compiles it; prints seconds and choices.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernels.construct import lookahead_genes, pieces  # noqa: E402

J_ = np.array([1, 0], np.uint8)
TAIL = np.array([0], np.uint8)


def timed(search, pool, max_len, exact):
    genes = np.zeros((200_000, max_len + 1), np.uint8)
    lengths = np.zeros(200_000, np.int64)
    counters = np.zeros(4, np.int64)
    start = time.process_time()
    if search == "pieces":
        found = pieces(pool, max_len, J_, TAIL, 64, genes, lengths, np.zeros(200_000, np.int64), counters, exact)
        choices = counters[2]
    else:
        found = lookahead_genes(search, pool, max_len, J_, TAIL, genes, lengths, counters, exact, 64, 0)
        choices = counters[1]
    return time.process_time() - start, int(choices), int(found)


def main(argv: list[str]) -> int:
    comp, pool, lib_len = (argv + ["20,1,3,3", "26,3,4,4", "18"][len(argv):])[:3]
    comp = np.array([int(x) for x in comp.split(",")], np.int64)
    pool = np.array([int(x) for x in pool.split(",")], np.int64)
    tiny = np.array([2, 1], np.int64)
    for search in ("pieces", 1, 2, 3, 4, 6):  # compiled before the clock starts
        timed(search, tiny, 3, True)
        timed(search, tiny, 3, False)
    print(f"| search | {','.join(map(str, comp))} exactly ({int(comp.sum())} cards) | library of {lib_len} cards |")
    print("| --- | ---: | ---: |")
    for search in ("pieces", 2, 3, 4, 6):
        s1, c1, g1 = timed(search, comp, int(comp.sum()), True)
        row = f"| {'every piece' if search == 'pieces' else f'lookahead {search}'} | {s1:.1f} s, {c1 / 1e6:.0f} M choices, " \
              f"{g1} genes |"
        if search in ("pieces", 3):
            s2, c2, g2 = timed(search, pool, int(lib_len), False)
            row += f" {s2:.1f} s, {g2} genes |"
        else:
            row += " - |"
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
