"""What every search strategy shares: the kernel chooser, the shard tally, the candidate buffer.

A shard's tally is a few fixed-size arrays, so tallies of different shards merge by addition
(and max for the longest game):
    stats[DEALS, CARDS, CYCLES, N_CAND, LONGEST_CARDS, LONGEST_INDEX]
    wins[p]        finite games won by hand p+1
    histogram[c]   finite games that lasted exactly c cards (the last bin: HIST_BINS-1 or more)
    longest_deal, longest_row   the longest finite game (first met among equals) and its result
Candidates (long finite games and every cycle) go into preallocated buffers; when they fill up
the kernel stops and says where, and the Python wrapper grows them and carries on. The tallying
itself is written out in the sweep kernel's loop (kernels/search/sweep.py).
"""

from __future__ import annotations

import numpy as np

from .._jit import kernel
from ..engine import play_general
from ..fast2 import play2
from ..result import N_FIELDS

ENGINE_IDS = {"fast": 0, "percard": 1, "general": 2}

HIST_BINS = 16384
DEALS, CARDS, CYCLES, N_CAND, LONGEST_CARDS, LONGEST_INDEX = range(6)
N_STATS = 8


@kernel(inline="always")
def play_one(engine, seq, split, leader0, brent_start, hands, head, size, still_in, pile, enc, row):
    if engine == 0:
        play2(seq, split[0], leader0, brent_start, row)
    elif engine == 1:
        play_general(seq, split, leader0, brent_start, True, hands, head, size, still_in, pile, enc, row)
    else:
        play_general(seq, split, leader0, brent_start, False, hands, head, size, still_in, pile, enc, row)


def new_tally(total: int, players: int, capacity: int = 1024):
    stats = np.zeros(N_STATS, dtype=np.int64)
    stats[LONGEST_INDEX] = -1
    return dict(
        stats=stats,
        wins=np.zeros(players, dtype=np.int64),
        histogram=np.zeros(HIST_BINS, dtype=np.int64),
        cand_deals=np.zeros((capacity, total), dtype=np.uint8),
        cand_rows=np.zeros((capacity, N_FIELDS), dtype=np.int64),
        cand_index=np.zeros(capacity, dtype=np.int64),
        longest_deal=np.zeros(total, dtype=np.uint8),
        longest_row=np.zeros(N_FIELDS, dtype=np.int64),
    )


def grow(tally: dict) -> None:
    """Double the candidate buffers (the kernel stopped because they were full)."""
    for name in ("cand_deals", "cand_rows", "cand_index"):
        old = tally[name]
        new = np.zeros((old.shape[0] * 2,) + old.shape[1:], dtype=old.dtype)
        new[: old.shape[0]] = old
        tally[name] = new
