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

# What a lock-step sweep (the GPU's) tallies for each piece of its launch (a shard, or part of one:
# kernels/sweep/gpu.py), reduced on the device: the deals, the cards of their finished games, the cycles,
# the wins of each hand; and apart, its longest finished game packed as one word (`best_key`).
P_DEALS, P_CARDS, P_CYCLES, P_WIN0, P_WIN1 = range(5)
N_PIECE = 5
OFFSET_BITS = 32  # a kept deal is (piece << OFFSET_BITS) | its offset in the piece; so is the longest's key
