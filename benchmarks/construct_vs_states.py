"""`construct` beside `states` at equal CPU time, on decks where sampling has met only some cycles.

    python benchmarks/construct_vs_states.py 0:12,1:4,2:4,3:4 0:16,1:4,2:4,3:4

For each deck: the construction's whole census (every shard in this process, CPU time T), then random
states of the same deck (the `states` strategy's stream, seed 1) for the same CPU time T, in chunks;
prints the distinct cycles each met, those the other did not, and how many the catalogue holds.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from construct_census import census  # noqa: E402

from kernels.catalogue import SHIPPED, read_cycles  # noqa: E402
from kernels.dealspace import DealSpace  # noqa: E402
from kernels.decks import parse_deck  # noqa: E402
from kernels.strategies.construct import ConstructTable  # noqa: E402
from kernels.sweep import run_random_states  # noqa: E402

CHUNK = 1_000_000


def states_for(deck: str, seconds: float) -> tuple[set, int, float]:
    d = parse_deck(deck)
    space = DealSpace.of(d, [d.total - d.total // 2, d.total // 2])
    run_random_states(space, 1, 10**6, 1000)  # compiled before the clock starts
    start, played, met, shard = time.process_time(), 0, set(), 0
    while time.process_time() - start < seconds:
        part = run_random_states(space, 1, shard, CHUNK)
        met |= {c.result.cycle_id for c in part.candidates}
        played += part.deals
        shard += 1
    return met, played, time.process_time() - start


def main(decks: list[str]) -> int:
    known = {c.cycle_id for c in read_cycles(SHIPPED)}
    print("| deck | CPU-s | construct: cycles (catalogued) | states: played, cycles (catalogued) | only construct | "
          "only states |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for deck in decks:
        built = census(deck, ConstructTable(), quiet=True)
        ids = set(built["rows"])
        met, played, cpu = states_for(deck, built["cpu_s"])
        print(f"| `{deck}` ({parse_deck(deck).total}) | {built['cpu_s']:.1f} | {len(ids)} ({len(ids & known)}) | "
              f"{played / 1e6:.0f} M, {len(met)} ({len(met & known)}) | {len(ids - met)} | {len(met - ids)} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["0:12,1:4,2:4,3:4", "0:14,1:4,2:4,3:4", "0:16,1:4,2:4,3:4", "0:18,1:4,2:4,3:4"]))
