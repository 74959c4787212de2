"""What every sweep shares, written once: its modes, and what a shard keeps.

A sweep plays a run of deals one after another and tallies them (kernels/tally.py). Its mode says
where deal j comes from; the CPU's kernel (kernels/sweep/cpu.py) and the GPU's (kernels/sweep/cuda.py)
take the same modes and keep the same deals, so a shard's result does not depend on its device.
"""

from __future__ import annotations

EXHAUSTIVE = 0  # ranks lo..hi-1 of the deal space, stepped through in rank order (j: offset from lo)
RANDOM = 1  # deal j of the random stream of (seed, shard) (kernels/rng.py)
STATES = 2  # RANDOM, each deal cut at its own random place (kernels/rng.py `random_cut`), hand 1 leading
NAMES = {EXHAUSTIVE: "exhaustive", RANDOM: "random", STATES: "states"}

NO_FINITE = 2**62  # min_cards that keeps no finished game: only cycles are kept

# What a shard keeps: every cycle, and every finished game at least `min_cards` cards long (or, with
# min_tricks > 0, at least that many tricks): kernels/game.py `keeps`, called by both kernels and by
# GameResult.is_candidate.
