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

# The columns of a lane's tally, as a lock-step sweep writes it (the GPU's threads; kernels/sweep/gpu.py
# `threads_tally` turns the rows into the CPU sweep's tally): deals, cards of finished games, cycles,
# wins of each hand, the longest finished game's cards and the first index that reached it.
A_DEALS, A_CARDS, A_CYCLES, A_WIN0, A_WIN1, A_BEST_CARDS, A_BEST_INDEX = range(7)
N_ACC = 7
