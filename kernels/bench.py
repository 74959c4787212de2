"""Engine throughput on one core: uniformly random standard 26/26 deals, full rules and cycle
detection, exactly as the `random` strategy plays them (deal generation included, compile excluded).
"""

from __future__ import annotations

import time

from .dealspace import DealSpace
from .decks import parse_deck
from .strategies import run_random

BENCH_SEED = 20240101
CHUNK = 100_000


def bench_engine(engine: str, seconds: float, seed: int = BENCH_SEED) -> dict:
    space = DealSpace.of(parse_deck("standard"))
    # Warm-up: compiles the kernel, or loads it from Numba's cache; not timed.
    run_random(space, seed, 0, 1000, min_cards=10**9, engine=engine)
    deals = cards = 0
    start = 0
    t0 = time.perf_counter()
    elapsed = 0.0
    while elapsed < seconds or deals == 0:
        shard = run_random(space, seed, 1, CHUNK, start=start, min_cards=10**9, engine=engine)
        start += CHUNK
        deals += shard.deals
        cards += shard.cards
        elapsed = time.perf_counter() - t0
    return {
        "engine": engine,
        "games": deals,
        "seconds": round(elapsed, 3),
        "games_per_s": round(deals / elapsed, 1),
        "cards_per_s": round(cards / elapsed, 1),
        "mean_cards": round(cards / deals, 2),
        "ns_per_card": round(elapsed * 1e9 / cards, 3),
    }
