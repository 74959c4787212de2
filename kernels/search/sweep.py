"""The two sweeping strategies: `exhaustive` (a rank range) and `random` (a counter-based stream).

Both play one deal after another on one core and tally them (kernels/search/common.py). The
kernels stop early only when the candidate buffer is full, returning how far they got; the
caller grows the buffer and calls again from there.
"""

from __future__ import annotations

import numpy as np

from .._jit import kernel
from ..dealspace import step_deal
from ..engine import new_workspace
from ..fast2 import hand_words, play2_words, rescan_from, words_from_positions
from ..rng import deal_state, random_deal
from .common import play_one, record
from ..result import N_FIELDS


@kernel
def exhaustive_kernel(engine, seq, split, count, done, min_cards, min_tricks, brent_start,
                      stats, wins, histogram, cand_deals, cand_rows, cand_index, longest_deal, longest_row):
    """Play `count` consecutive deals starting from `seq` (stepped in place), from offset `done`.

    Returns the number of deals done so far (== count when finished).
    """
    hands, head, size, still_in, pile, enc = new_workspace(split.shape[0], seq.shape[0])
    row = np.zeros(N_FIELDS, dtype=np.int64)
    s0 = split[0]
    s1 = seq.shape[0] - s0
    m0, n0, q0 = hand_words(seq, 0, s0)
    m1, n1, q1 = hand_words(seq, s0, s1)
    i = done
    while i < count:
        if engine == 0:
            play2_words(m0, n0, q0, m1, n1, q1, seq, s0, 0, brent_start, row)
        else:
            play_one(engine, seq, split, 0, brent_start, hands, head, size, still_in, pile, enc, row)
        room = record(row, seq, i, min_cards, min_tricks, stats, wins, histogram,
                      cand_deals, cand_rows, cand_index, longest_deal, longest_row)
        i += 1
        if i < count:
            first = step_deal(seq)
            if engine == 0:
                # Only the cards from `first` on changed: usually a few cards at the end of hand 2.
                if first >= s0:
                    m1, q1 = rescan_from(seq, s0, s1, m1, q1, first - s0)
                else:
                    m0, q0 = rescan_from(seq, 0, s0, m0, q0, first)
                    m1, n1, q1 = hand_words(seq, s0, s1)
        if not room:
            break
    return i


@kernel
def random_kernel(engine, penalties, split, key, start, stop, min_cards, min_tricks, brent_start,
                  stats, wins, histogram, cand_deals, cand_rows, cand_index, longest_deal, longest_row):
    """Play deals start..stop-1 of the random stream `key`. Returns the next deal index to play."""
    total = 0
    for p in range(split.shape[0]):
        total += split[p]
    seq = np.zeros(total, dtype=np.uint8)
    positions = np.zeros(total, dtype=np.int64)
    hands, head, size, still_in, pile, enc = new_workspace(split.shape[0], total)
    row = np.zeros(N_FIELDS, dtype=np.int64)
    j = start
    n_penalty = penalties.shape[0]
    while j < stop:
        random_deal(deal_state(key, j), positions, penalties, seq)
        if engine == 0:
            # The fast kernel's hands come straight from the penalty positions just drawn.
            m0, n0, q0, m1, n1, q1 = words_from_positions(seq, positions, n_penalty, split[0])
            play2_words(m0, n0, q0, m1, n1, q1, seq, split[0], 0, brent_start, row)
        else:
            play_one(engine, seq, split, 0, brent_start, hands, head, size, still_in, pile, enc, row)
        room = record(row, seq, j, min_cards, min_tricks, stats, wins, histogram,
                      cand_deals, cand_rows, cand_index, longest_deal, longest_row)
        j += 1
        if not room:
            break
    return j
