"""The CPU lanes engine (kernels/sweep/lanes.py) against the bitmask engine's sweep and the C yardstick.

    taskset -c 1 .venv/bin/python benchmarks/lanes_bench.py [--deals N] [--rounds R] [--lanes 8 16]
                                                            [--seconds S] [--no-yardstick] [--no-breakdown]

Every round plays the same N random standard deals (one stream, deals 0..N-1) on the bitmask engine's
sweep (`kernels.sweep.cpu.run_random`, engine "fast") and on the lanes engine for each lane count,
one after the other, then runs the C yardstick (benchmarks/baseline.c, built as benchmarks/compare.sh
builds it) for S seconds. Every figure is games per CPU second (the yardstick's from its process's
CPU time; its own figure, per wall second as compare.sh reads it, is printed beside), with the wall
figure beside: on a loaded machine only the CPU figures compare. Run it pinned to one core (taskset):
the yardstick's process inherits the pinning. The ratios are per round, lanes over bitmask; the
summary gives the medians over the rounds.

The breakdown (after the rounds) times what both engines share and what the lanes engine adds:
dealing alone (`random_deal` + `words_from_positions`, the deal preparation of both), the same deals
played by `play_segments` (the segment step on one game at a time, scalar) and the mean number of
segments per game, so that the lanes engine's cost per lane-segment can be set beside the bitmask
engine's cost per game.
"""

from __future__ import annotations

import argparse
import math
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernels._jit import kernel  # noqa: E402
from kernels.dealspace import DealSpace  # noqa: E402
from kernels.decks import parse_deck  # noqa: E402
from kernels.engines import default_brent_start  # noqa: E402
from kernels.engines.bitmask import words_from_positions  # noqa: E402
from kernels.engines.segments import play_segments  # noqa: E402
from kernels.rng import deal_state, random_deal, stream_key  # noqa: E402
from kernels.sweep import cpu, lanes  # noqa: E402

HERE = Path(__file__).resolve().parent
NEVER = 10**9  # min_cards: keep no finished game (as `bmn bench`)


@kernel
def deal_only(key, penalties, total, s0, count):
    """Deals 0..count-1 prepared as both engines prepare them, and nothing played (an XOR of the words
    is returned so that nothing is optimised away)."""
    seq = np.zeros(total, dtype=np.uint8)
    positions = np.zeros(total, dtype=np.int64)
    x = np.uint64(0)
    for j in range(count):
        random_deal(deal_state(key, j), positions, penalties, seq)
        m0, n0, q0, m1, n1, q1 = words_from_positions(seq, positions, penalties.shape[0], s0)
        x ^= m0 ^ q0 ^ m1 ^ q1
    return x


@kernel
def segments_scalar(key, penalties, total, s0, count, brent_start):
    """Deals 0..count-1 played one at a time by `play_segments`; returns (segments, cards) in all."""
    seq = np.zeros(total, dtype=np.uint8)
    positions = np.zeros(total, dtype=np.int64)
    row = np.zeros(5, dtype=np.int64)
    segments = 0
    cards = 0
    for j in range(count):
        random_deal(deal_state(key, j), positions, penalties, seq)
        m0, n0, q0, m1, n1, q1 = words_from_positions(seq, positions, penalties.shape[0], s0)
        play_segments(m0, n0, q0, m1, n1, q1, brent_start, row)
        segments += row[4]
        cards += row[3]
    return segments, cards


def build_yardstick(folder: str) -> str | None:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        return None
    exe = str(Path(folder) / "baseline")
    subprocess.run([cc, "-O3", "-march=native", "-o", exe, str(HERE / "baseline.c")], check=True)
    return exe


def yardstick(exe: str, seconds: float) -> tuple[float, float]:
    """(games per wall second as the yardstick prints them, games per CPU second). The yardstick plays
    20,000 games between looks at its clock and stops at the first look past `seconds`, so it played
    the first multiple of 20,000 at or above its rate times `seconds`; its CPU time is its process's."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([exe, str(seconds)], check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    rate = float(next(line.split()[1] for line in out.splitlines() if line.startswith("games_per_s")))
    games = 20_000 * math.ceil(rate * seconds / 20_000)
    cpu_s = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return rate, games / cpu_s


def timed(fn) -> tuple[float, float, object]:
    """(CPU seconds, wall seconds, result) of fn()."""
    c, w = time.process_time(), time.perf_counter()
    result = fn()
    return time.process_time() - c, time.perf_counter() - w, result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=300_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--lanes", type=int, nargs="+", default=list(lanes.LANES), choices=list(lanes.LANES))
    parser.add_argument("--seconds", type=float, default=3.0, help="the yardstick's run in each round")
    parser.add_argument("--no-yardstick", action="store_true")
    parser.add_argument("--no-breakdown", action="store_true")
    args = parser.parse_args(argv)
    n = args.deals
    space = DealSpace.of(parse_deck("standard"))
    total, s0 = space.deck.total, space.split[0]
    penalties = np.array([v for v in space.deck.cards() if v], dtype=np.uint8)
    key = stream_key(20240101, 30)
    engines = {"bitmask": lambda count: cpu.run_random(space, key, penalties, 0, count, min_cards=NEVER, engine="fast")}
    for n_lanes in args.lanes:
        engines[f"lanes L={n_lanes}"] = (lambda count, L=n_lanes:
                                         lanes.run_random(space, key, penalties, 0, count, min_cards=NEVER, lanes=L))
    for run in engines.values():
        run(100)  # compiled, or loaded from Numba's cache: not timed
    print(f"{n} random standard deals a round, {args.rounds} rounds; "
          f"Brent in the lane loop: {lanes.BRENT_IN_LOOP}", flush=True)
    rates = {name: [] for name in engines}
    ratios = {name: [] for name in engines if name != "bitmask"}
    stick = []
    with tempfile.TemporaryDirectory() as folder:
        exe = None if args.no_yardstick else build_yardstick(folder)
        if exe is None and not args.no_yardstick:
            print("no C compiler: the yardstick is left out")
        for r in range(args.rounds):
            reference = None
            for name, run in engines.items():
                cpu_s, wall_s, result = timed(lambda: run(n))
                # The same deals: the same games, card for card.
                figures = (result.deals, result.cards, result.cycles, result.wins.tolist())
                assert reference is None or figures == reference, (name, figures, reference)
                reference = figures
                rates[name].append(n / cpu_s)
                print(f"round {r + 1}: {name:<12} {n / cpu_s / 1e6:6.3f} M games/CPU s  "
                      f"({n / wall_s / 1e6:.3f} M/wall s)", flush=True)
            for name in ratios:
                ratios[name].append(rates[name][-1] / rates["bitmask"][-1])
            if exe:
                wall_rate, cpu_rate = yardstick(exe, args.seconds)
                stick.append(cpu_rate)
                print(f"round {r + 1}: {'C yardstick':<12} {cpu_rate / 1e6:6.3f} M games/CPU s  "
                      f"({wall_rate / 1e6:.3f} M/wall s, as it prints)", flush=True)
    print("medians:")
    for name in engines:
        line = f"  {name:<12} {statistics.median(rates[name]) / 1e6:.3f} M games/CPU s"
        if name in ratios:
            line += f", {statistics.median(ratios[name]):.3f} x the bitmask engine (per round: " \
                    f"{', '.join(f'{x:.3f}' for x in ratios[name])})"
        if stick:
            line += f"; {statistics.median(rates[name]) / statistics.median(stick):.2f} x the yardstick"
        print(line)
    if stick:
        print(f"  C yardstick  {statistics.median(stick) / 1e6:.3f} M games/CPU s")
    if args.no_breakdown:
        return
    deal_only(key, penalties, total, s0, 100)
    segments_scalar(key, penalties, total, s0, 100, default_brent_start(total))
    deal_s = statistics.median(timed(lambda: deal_only(key, penalties, total, s0, n))[0] for _ in range(3))
    scalar = [timed(lambda: segments_scalar(key, penalties, total, s0, n, default_brent_start(total)))
              for _ in range(3)]
    scalar_s = statistics.median(s[0] for s in scalar)
    segments, cards = scalar[0][2]
    per_game = segments / n
    deal_ns = deal_s / n * 1e9
    print("breakdown (CPU time, medians):")
    print(f"  dealing alone (random_deal + words_from_positions): {deal_ns:.0f} ns a deal")
    print(f"  segments a game: {per_game:.1f} ({segments / cards * 1e3:.0f} per 1000 cards, {cards / n:.1f} cards)")
    print(f"  play_segments, one game at a time: {n / scalar_s / 1e6:.3f} M games/s, "
          f"{(scalar_s / n * 1e9 - deal_ns) / per_game:.2f} ns a segment besides dealing")
    bit_ns = 1e9 / statistics.median(rates["bitmask"]) - deal_ns
    print(f"  bitmask engine: {bit_ns:.0f} ns a game besides dealing ({bit_ns / per_game:.2f} ns per segment's worth)")
    for name in ratios:
        ns = 1e9 / statistics.median(rates[name]) - deal_ns
        print(f"  {name}: {ns:.0f} ns a game besides dealing, {ns / per_game:.2f} ns a lane-segment")


if __name__ == "__main__":
    main()
