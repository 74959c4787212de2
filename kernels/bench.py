"""Engine throughput: uniformly random standard 26/26 deals, full rules and cycle detection, exactly as
the `random` strategy plays them (deal generation included, compile excluded), on one core or on
the GPU (`bench_gpu`).
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
    return {"engine": engine, **_rates(deals, cards, elapsed)}


def _rates(deals: int, cards: int, elapsed: float) -> dict:
    return {
        "games": deals,
        "seconds": round(elapsed, 3),
        "games_per_s": round(deals / elapsed, 1),
        "cards_per_s": round(cards / elapsed, 1),
        "mean_cards": round(cards / deals, 2),
        "ns_per_card": round(elapsed * 1e9 / cards, 3),
    }


def bench_gpu(seconds: float, seed: int = BENCH_SEED) -> dict:
    """The GPU sweep's throughput (kernels/sweep/gpu.py) on this process's GPU, launch after
    launch as a GPU actor plays shards (each launch's copies and its host work included). A launch's
    size doubles from 2^8 deals while launches take under a second, so that a launch fills the GPU
    (and the simulator, a thousand times slower, is measured too)."""
    from .sweep.gpu import describe_gpu

    space = DealSpace.of(parse_deck("standard"))
    name = describe_gpu()  # a BmnError with one sentence where there is no usable GPU
    run_random(space, seed, 0, 32, min_cards=10**9, device="gpu")  # compiles the kernel (one warp); not timed
    deals = cards = 0
    start = 0
    chunk = 256
    t0 = time.perf_counter()
    elapsed = 0.0
    while elapsed < seconds or deals == 0:
        t = time.perf_counter()
        shard = run_random(space, seed, 1, chunk, start=start, min_cards=10**9, device="gpu")
        start += chunk
        deals += shard.deals
        cards += shard.cards
        if time.perf_counter() - t < 1.0 and chunk < 2**32:
            chunk *= 2
        elapsed = time.perf_counter() - t0
    return {"engine": "gpu", "device": name, **_rates(deals, cards, elapsed), "largest_launch": chunk}
