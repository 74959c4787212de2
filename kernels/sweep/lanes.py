"""The CPU lanes engine: the GPU sweep's loop on one CPU core, LANES games in lock-step.

The GPU sweep (kernels/sweep/cuda.py) plays one game per lane in a flat loop of segments
(kernels/engines/segments.py `step`) with a queue of prepared deals refilled LANES at a time. This is
the same loop for a CPU core: the lanes' states are arrays of LANES entries and each iteration runs
`step` on every lane in one inner loop with a fixed trip count, written for LLVM's loop vectorizer
(the step for all lanes, then each lane's bookkeeping where its trick or game ended). It plays the
RANDOM mode and gives the CPU sweep's ShardResult (tests/test_lanes.py); benchmarks/lanes_bench.py
times it against the bitmask engine's sweep and the C yardstick.
"""

from __future__ import annotations

import numpy as np

from .._jit import kernel
from ..engines.bitmask import penalty_words, random_positions
from ..engines.segments import MID, OVER, step
from ..game import keeps
from ..rng import deal_state
from ..tally import HIST_BINS
from .modes import A_BEST_CARDS, A_BEST_INDEX, A_CARDS, A_CYCLES, A_DEALS, A_WIN0, A_WIN1, N_ACC

LANES = 8
W0 = np.uint32(0)


@kernel
def lanes_random(key, penalties, total, s0, start, count, brent_start, min_cards, min_tricks, acc, histogram,
                 cand_index):
    """Deals start..start+count-1 of the stream `key` on LANES lanes; per-lane tallies into acc (the GPU's
    columns), finished games' lengths into histogram, kept deals' indexes into cand_index (returns how
    many: the caller grows cand_index and plays again if it was too small)."""
    L = LANES
    mX = np.zeros(L, np.uint64)
    qX = np.zeros(L, np.uint64)
    mY = np.zeros(L, np.uint64)
    qY = np.zeros(L, np.uint64)
    pm = np.zeros(L, np.uint64)
    pq = np.zeros(L, np.uint64)
    nX = np.zeros(L, np.uint32)
    nY = np.zeros(L, np.uint32)
    who = np.zeros(L, np.uint32)
    v = np.zeros(L, np.uint32)
    pl = np.zeros(L, np.uint32)
    pc = np.zeros(L, np.uint32)
    event = np.zeros(L, np.uint32)
    playing = np.zeros(L, np.bool_)
    j = np.zeros(L, np.int64)
    tricks = np.zeros(L, np.int64)
    cards = np.zeros(L, np.int64)
    s_who = np.zeros(L, np.uint32)
    s_nX = np.zeros(L, np.uint32)
    s_mX = np.zeros(L, np.uint64)
    s_qX = np.zeros(L, np.uint64)
    s_mY = np.zeros(L, np.uint64)
    s_qY = np.zeros(L, np.uint64)
    power = np.zeros(L, np.int64)
    lam = np.zeros(L, np.int64)
    # the queue: LANES prepared deals
    queue_m0 = np.zeros(L, np.uint64)
    queue_q0 = np.zeros(L, np.uint64)
    queue_m1 = np.zeros(L, np.uint64)
    queue_q1 = np.zeros(L, np.uint64)
    queue_j = np.zeros(L, np.int64)
    ready = 0
    head = 0
    positions = np.zeros(total, np.uint8)
    nxt = 0
    kept = 0
    bins = histogram.shape[0]
    while True:
        # Take: idle lanes take the next prepared deal; the queue is refilled LANES at a time.
        for i in range(L):
            if not playing[i]:
                if ready == 0 and nxt < count:
                    made = min(L, count - nxt)
                    for k in range(made):
                        index = start + nxt + k
                        random_positions(deal_state(key, index), positions, penalties.shape[0], total)
                        queue_m0[k], queue_q0[k], queue_m1[k], queue_q1[k] = penalty_words(positions, penalties, s0)
                        queue_j[k] = index
                    nxt += made
                    ready = made
                    head = 0
                if ready > 0:
                    mX[i], qX[i], mY[i], qY[i], j[i] = (queue_m0[head], queue_q0[head], queue_m1[head],
                                                        queue_q1[head], queue_j[head])
                    head += 1
                    ready -= 1
                    nX[i] = s0
                    nY[i] = total - s0
                    who[i] = v[i] = pl[i] = pc[i] = W0
                    pm[i] = pq[i] = 0
                    tricks[i] = cards[i] = lam[i] = 0
                    power[i] = 1
                    s_who[i], s_nX[i], s_mX[i], s_qX[i], s_mY[i], s_qY[i] = W0, nX[i], mX[i], qX[i], mY[i], qY[i]
                    playing[i] = True
        busy = False
        for i in range(L):
            busy |= playing[i]
        if not busy:
            break
        # One segment on every lane (the vectorizable loop: no exit, every lane's arrays read and written).
        for i in range(L):
            a = step(mX[i], nX[i], qX[i], mY[i], nY[i], qY[i], who[i], v[i], pm[i], pq[i], pl[i], pc[i])
            mX[i], nX[i], qX[i], mY[i], nY[i], qY[i], who[i], v[i], pm[i], pq[i], pl[i], pc[i], event[i] = a
        # Each lane whose trick ended: its count, Brent's check, its game's end.
        for i in range(L):
            if not playing[i] or event[i] == MID:
                continue
            tricks[i] += 1
            cards[i] += np.int64(pl[i])
            if event[i] == OVER:
                playing[i] = False
                c = cards[i]
                acc[i, A_DEALS] += 1
                acc[i, A_CARDS] += c
                if who[i] == W0:
                    acc[i, A_WIN0] += 1
                else:
                    acc[i, A_WIN1] += 1
                histogram[min(c, bins - 1)] += 1
                if c > acc[i, A_BEST_CARDS] or (c == acc[i, A_BEST_CARDS] and j[i] < acc[i, A_BEST_INDEX]):
                    acc[i, A_BEST_CARDS] = c
                    acc[i, A_BEST_INDEX] = j[i]
                if keeps(c, tricks[i], min_cards, min_tricks):
                    if kept < cand_index.shape[0]:
                        cand_index[kept] = j[i]
                    kept += 1
            elif tricks[i] >= brent_start:
                if tricks[i] == brent_start:
                    s_who[i], s_nX[i], s_mX[i], s_qX[i], s_mY[i], s_qY[i] = who[i], nX[i], mX[i], qX[i], mY[i], qY[i]
                else:
                    lam[i] += 1
                    if (who[i] == s_who[i] and nX[i] == s_nX[i] and mX[i] == s_mX[i] and qX[i] == s_qX[i]
                            and mY[i] == s_mY[i] and qY[i] == s_qY[i]):
                        playing[i] = False
                        acc[i, A_DEALS] += 1
                        acc[i, A_CYCLES] += 1
                        if kept < cand_index.shape[0]:
                            cand_index[kept] = j[i]
                        kept += 1
                    elif lam[i] == power[i]:
                        s_who[i], s_nX[i], s_mX[i], s_qX[i], s_mY[i], s_qY[i] = (who[i], nX[i], mX[i], qX[i], mY[i],
                                                                                 qY[i])
                        power[i] *= 2
                        lam[i] = 0
    return kept


def run_random(space, key, penalties, start: int, count: int, *, min_cards: int, min_tricks: int = 0):
    """Deals start..start+count-1 of the random stream `key` on the lanes engine: the CPU sweep's
    ShardResult (two players, the bitmask engine's decks, both hands dealt cards)."""
    from ..engines import default_brent_start
    from ..tally import ShardResult
    from .gpu import _empty_tally, check_space, random_deals_at, threads_tally, _splits

    check_space(space)
    total, s0 = space.deck.total, space.split[0]
    if count == 0:
        return ShardResult.from_tally(_empty_tally(space), space)
    capacity = 1024
    while True:
        acc = np.zeros((LANES, N_ACC), dtype=np.int64)
        acc[:, A_BEST_CARDS] = -1
        acc[:, A_BEST_INDEX] = -1
        histogram = np.zeros(HIST_BINS, dtype=np.int64)
        cand = np.zeros(capacity, dtype=np.int64)
        kept = lanes_random(key, penalties, total, s0, start, count, default_brent_start(total), min_cards,
                            min_tricks, acc, histogram, cand)
        if kept <= capacity:
            break
        capacity = kept

    def deals_at(indexes):
        out = np.zeros((len(indexes), total), dtype=np.uint8)
        random_deals_at(key, penalties, np.asarray(indexes, dtype=np.int64), out)
        return out, _splits(space, len(indexes))

    return ShardResult.from_tally(threads_tally(space, acc, histogram, np.sort(cand[:kept]), deals_at), space)
