"""How far the cycle factory's beams get: beams of `cycles` (kernels/strategies/cycles/) run one
after another on this core for SECONDS, with the given parameters; prints per beam the largest
cycle it held, where it died and what it found, and at the end the survival of each move by size.

    .venv/bin/python benchmarks/factory_reach.py DECK SECONDS [KEY=VALUE ...] [seed=S]

e.g. `factory_reach.py camicia 600 slack=2` (benchmarks/README.md, "Cycles by construction").
"""

from __future__ import annotations

import sys
import time

from kernels.decks import parse_deck
from kernels.strategies.cycles import FACTORY, Factory, run_cycles


def main(argv: list[str]) -> None:
    if len(argv) < 2:
        sys.exit(__doc__)
    deck, seconds = parse_deck(argv[0]), float(argv[1])
    params = FACTORY.values()
    seed = 1
    for item in argv[2:]:
        key, _, value = item.partition("=")
        if key == "seed":
            seed = int(value)
        elif key in params:
            params[key] = int(value)
        else:
            sys.exit(f"unknown parameter {key!r}")
    moves: dict[str, dict[int, list[int]]] = {}
    finds: set[str] = set()
    t0 = time.process_time()
    shard = games = 0
    largest = 0
    while time.process_time() - t0 < seconds:
        stats: dict = {}
        result = run_cycles(deck, seed, shard, Factory(**params), stats)
        games += stats["games"]
        finds |= {row.cycle_id for row in result.cycle_rows}
        reach = max([stats["largest"]] + stats["deaths"])
        largest = max(largest, reach)
        for move, by_size in stats["moves"].items():
            for size, (tried, kept) in by_size.items():
                tally = moves.setdefault(move, {}).setdefault(size, [0, 0])
                tally[0] += tried
                tally[1] += kept
        print(f"{time.process_time() - t0:6.0f} CPU-s  beam {shard}: {stats['games']:,} games, largest cycle "
              f"{reach} cards (excess {stats['largest_excess']}), died at {stats['deaths'][-4:]}, "
              f"{len(result.cycle_rows)} target cycles, {len(result.candidates)} balanced deals", flush=True)
        shard += 1
    print(f"{deck.spec()} {params}: {shard} beams, {games:,} games, {time.process_time() - t0:.0f} CPU-s, "
          f"largest cycle {largest} cards, {len(finds)} target cycles {sorted(finds)[:5]}")
    for move, by_size in sorted(moves.items()):
        cells = ", ".join(f"{size}: {kept / tried:.1%} of {tried:,}" for size, (tried, kept) in sorted(by_size.items())
                          if tried)
        print(f"  {move}: {cells}")


if __name__ == "__main__":
    main(sys.argv[1:])
