"""Deals per second on one core for the decks of the atlas's families, beside the standard deck.

    python benchmarks/atlas_speed.py [SECONDS] [DECK[@PLAYERS] ...]

The cost of an atlas is its exhaustive sweeps. Each deck here: deals of its equal split, from the
middle of its numbering, played by the atlas's shard (`run_atlas`, the exhaustive sweep kernel),
doubling the count until one run takes SECONDS (default 5); then the standard deck the same way
(from the block of the Casella deal) and its uniformly random deals (`run_random`), for scale.
Prints deals/s on one core and the mean game length in cards. Run it on a quiet machine.
"""

from __future__ import annotations

import sys
import time

from kernels.dealspace import DealSpace
from kernels.decks import parse_deck
from kernels.strategies import run_exhaustive, run_random
from kernels.strategies.atlas import run_atlas

# The largest deck measured of each family in benchmarks/README.md ("The atlas").
DECKS = ["0:20,1:2,2:2,3:2,4:2", "0:14,1:2,2:2,3:2,4:2", "0:30,1:2,2:2,3:2", "0:27,1:2,2:2,3:2@3"]
CASELLA_BLOCK = 472_460_898_658_000_000_000


def timed(play, seconds: float) -> tuple[int, float, int]:
    """(deals, elapsed, cards) of the first run of play(n), n doubling, that takes `seconds` (or that
    plays fewer than n deals: a small deck's whole half)."""
    n = 10_000
    while True:
        t0 = time.perf_counter()
        result = play(n)
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds or result.deals < n or n >= 2**40:  # long enough, or the deck ran out
            return result.deals, elapsed, result.cards
        n *= 2


def row(name: str, deals: int, elapsed: float, cards: int) -> None:
    print(f"{name:<28} {deals:>14,} {elapsed:>8.2f} {deals / elapsed:>14,.0f} {cards / deals:>10.1f}")


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    seconds = float(args.pop(0)) if args else 5.0
    decks = args or DECKS
    print(f"{'deck':<28} {'deals':>14} {'seconds':>8} {'deals/s/core':>14} {'cards/game':>10}")
    for text in decks:
        spec, _, players = text.partition("@")
        space = DealSpace.of(parse_deck(spec), None, int(players or 2))
        middle = space.count // 2
        run_atlas(space.deck.spec(), space.split, 0, min(space.count, 100), True, False, min_cards=2**62)  # compile
        deals, elapsed, cards = timed(lambda n, space=space, middle=middle: run_atlas(
            space.deck.spec(), space.split, middle, min(space.count, middle + n), True, False, min_cards=2**62),
            seconds)
        row(text, deals, elapsed, cards)
    standard = DealSpace.of(parse_deck("standard"))
    run_exhaustive(standard, CASELLA_BLOCK, CASELLA_BLOCK + 100, min_cards=2**62)
    row("standard, exhaustive", *timed(lambda n: run_exhaustive(standard, CASELLA_BLOCK, CASELLA_BLOCK + n,
                                                                min_cards=2**62), seconds))
    run_random(standard, 1, 0, 100, min_cards=2**62)
    row("standard, random", *timed(lambda n: run_random(standard, 1, 0, n, min_cards=2**62), seconds))


if __name__ == "__main__":
    main()
