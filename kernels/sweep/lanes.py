"""The CPU lanes engine: the GPU sweep's flat loop on one CPU core, L games in lock-step (issue 30, point 5).

The GPU sweep (kernels/sweep/cuda.py) plays one game per lane as a flat sequence of segments
(kernels/engines/segments.py `step`: free play to the next penalty card, or one round of payment),
and a lane whose game ended takes the next prepared deal from a queue. This is the same loop for a
CPU core, written for LLVM's loop vectorizer (a lane is an element of a SIMD register):

- every lane's state is one word of a flat array S, field f of lane i at S[f * L + i]: one array
  (so the vectorizer needs no run-time alias checks between arrays), constant distances between
  fields (L is a compile-time constant, so it proves that no field overlaps another within the loop);
- each iteration of the main loop runs `for i in range(L)` over the lanes: one segment (`step`), then
  the trick's count, Brent's check and the game's end as `play_segments` does them, all branch-free
  (0/1 flags and masks instead of ifs), every field loaded and stored unconditionally, no exit;
  it also ORs the lanes' end flags into one word;
- only when that word says a game ended (or cycled) does a scalar pass visit the lanes: each ended
  game goes into its lane's tally (the GPU's columns, kernels/sweep/modes.py A_*), the histogram and,
  if kept, the candidates; the lane then takes the next deal from a queue refilled L deals at a time
  (each deal: `random_deal` and `words_from_positions`, as the CPU sweep makes them). A lane with no
  deal left plays a dummy state (both hands empty: every segment ends it again, harmlessly) until all
  lanes are idle.

It plays the RANDOM mode (two players, the bitmask engine's decks) and gives the CPU sweep's
ShardResult: the host side is the GPU's (`threads_tally`: the lanes' tallies summed, the kept deals
and the longest game replayed on the CPU for their exact rows). benchmarks/lanes_bench.py times it
against the bitmask engine's sweep and the C yardstick; benchmarks/lanes_asm.py counts the vector
instructions of its compiled lane loop.
"""

from __future__ import annotations

import numpy as np

from .._jit import kernel
from ..engines.bitmask import words_from_positions
from ..engines.segments import MID, OVER, step
from ..game import keeps
from ..rng import deal_state, random_deal
from ..tally import HIST_BINS
from .modes import A_BEST_CARDS, A_BEST_INDEX, A_CARDS, A_CYCLES, A_DEALS, A_WIN0, A_WIN1, N_ACC

LANES = (8, 16)  # the lane counts compiled (`kernels`)

# The lane state: its 64-bit words in W (the hands', the pile's and Brent's saved hands), its 32-bit numbers
# in H (as `step` types them: hand sizes, leader, payment, pile; the game's tricks and cards, Brent's
# saved leader and size, counters, and the end flag of the last iteration: 0 playing, ENDED the game
# finished, CYCLED it entered a cycle, LATE (BRENT_IN_LOOP off) a trick boundary past Brent's start).
F_MX, F_QX, F_MY, F_QY, F_PM, F_PQ, F_SMX, F_SQX, F_SMY, F_SQY = range(10)
N_WORDS = 10
(H_NX, H_NY, H_WHO, H_V, H_PL, H_PC, H_TRICKS, H_CARDS, H_SWHO, H_SNX, H_POWER, H_LAM, H_DONE) = range(13)
N_SMALL = 13
BRENT_IN_LOOP = True  # Brent's check in the vector loop (branch-free) or, past Brent's start, in the rare pass

U0 = np.uint64(0)
W0 = np.uint32(0)
W1 = np.uint32(1)
ENDED = np.uint32(1)
CYCLED = np.uint32(2)
LATE = np.uint32(4)
u32 = np.uint32
u64 = np.uint64


@kernel(inline="always")
def _segments(L, W, H, brent_start):
    """One segment on each of the L lanes, with its bookkeeping; returns the OR of the lanes' end flags.
    (The loop LLVM vectorizes: straight-line code per lane, selects for every decision.)"""
    bs = u32(brent_start)
    anydone = W0
    for i in range(L):
        mX, nX, qX, mY, nY, qY, who, v, pm, pq, pl, pc, event = step(
            W[F_MX * L + i], H[H_NX * L + i], W[F_QX * L + i], W[F_MY * L + i], H[H_NY * L + i], W[F_QY * L + i],
            H[H_WHO * L + i], H[H_V * L + i], W[F_PM * L + i], W[F_PQ * L + i], H[H_PL * L + i], H[H_PC * L + i])
        W[F_MX * L + i] = mX
        W[F_QX * L + i] = qX
        W[F_MY * L + i] = mY
        W[F_QY * L + i] = qY
        W[F_PM * L + i] = pm
        W[F_PQ * L + i] = pq
        H[H_NX * L + i] = nX
        H[H_NY * L + i] = nY
        H[H_WHO * L + i] = who
        H[H_V * L + i] = v
        H[H_PL * L + i] = pl
        H[H_PC * L + i] = pc
        # The trick's end (TRICK or OVER), the game's end (OVER), and Brent's check at a trick boundary.
        ended = u32(event != MID)
        over = u32(event == OVER)
        boundary = u32(ended - over)
        tricks = u32(H[H_TRICKS * L + i] + ended)
        H[H_TRICKS * L + i] = tricks
        H[H_CARDS * L + i] = u32(H[H_CARDS * L + i] + (pl & u32(W0 - ended)))
        if BRENT_IN_LOOP:
            s_who = H[H_SWHO * L + i]
            s_nX = H[H_SNX * L + i]
            s_mX = W[F_SMX * L + i]
            s_qX = W[F_SQX * L + i]
            s_mY = W[F_SMY * L + i]
            s_qY = W[F_SQY * L + i]
            power = H[H_POWER * L + i]
            lam = H[H_LAM * L + i]
            check = boundary & u32(tricks > bs)  # tricks past Brent's start: compare with the saved state
            first = boundary & u32(tricks == bs)  # Brent's start: save the state
            lam = u32(lam + check)
            same = u32((((who ^ s_who) | (nX ^ s_nX)) == W0)
                       & (((mX ^ s_mX) | (qX ^ s_qX) | (mY ^ s_mY) | (qY ^ s_qY)) == U0))
            cycled = check & same
            due = check & (W1 - same) & u32(lam == power)  # a power of two: save, double it, count from 0
            save = u32(W0 - (first | due))
            wide = u64(0) - u64(first | due)
            H[H_SWHO * L + i] = (who & save) | (s_who & ~save)
            H[H_SNX * L + i] = (nX & save) | (s_nX & ~save)
            W[F_SMX * L + i] = (mX & wide) | (s_mX & ~wide)
            W[F_SQX * L + i] = (qX & wide) | (s_qX & ~wide)
            W[F_SMY * L + i] = (mY & wide) | (s_mY & ~wide)
            W[F_SQY * L + i] = (qY & wide) | (s_qY & ~wide)
            H[H_POWER * L + i] = u32(power << due)
            H[H_LAM * L + i] = lam & u32(due - W1)
            done = u32(over | (cycled << W1))
        else:
            done = u32(over | (LATE & u32(W0 - (boundary & u32(tricks >= bs)))))
        H[H_DONE * L + i] = done
        anydone |= done
    return anydone


@kernel(inline="always")
def _brent(L, W, H, i, bs):
    """Brent's check for lane i at a trick boundary past Brent's start (BRENT_IN_LOOP off, the rare pass);
    returns whether its game entered a cycle."""
    tricks = H[H_TRICKS * L + i]
    if tricks > bs:
        lam = H[H_LAM * L + i] + 1
        if (H[H_WHO * L + i] == H[H_SWHO * L + i] and H[H_NX * L + i] == H[H_SNX * L + i]
                and W[F_MX * L + i] == W[F_SMX * L + i] and W[F_QX * L + i] == W[F_SQX * L + i]
                and W[F_MY * L + i] == W[F_SMY * L + i] and W[F_QY * L + i] == W[F_SQY * L + i]):
            return True
        if lam != H[H_POWER * L + i]:
            H[H_LAM * L + i] = u32(lam)
            return False
        H[H_POWER * L + i] = u32(H[H_POWER * L + i] * 2)
        H[H_LAM * L + i] = W0
    H[H_SWHO * L + i] = H[H_WHO * L + i]
    H[H_SNX * L + i] = H[H_NX * L + i]
    W[F_SMX * L + i] = W[F_MX * L + i]
    W[F_SQX * L + i] = W[F_QX * L + i]
    W[F_SMY * L + i] = W[F_MY * L + i]
    W[F_SQY * L + i] = W[F_QY * L + i]
    return False


@kernel(inline="always")
def _idle(L, W, H, i):
    """Lane i without a game: both hands empty, so that every segment ends it again (no shift past a
    word, nothing that could go wrong), and its end flag is set."""
    for f in range(N_WORDS):
        W[f * L + i] = U0
    for f in range(N_SMALL):
        H[f * L + i] = W0
    H[H_POWER * L + i] = W1
    H[H_DONE * L + i] = ENDED


@kernel(inline="always")
def _sweep(L, key, penalties, total, s0, start, count, brent_start, min_cards, min_tricks, acc, histogram, cand_index):
    """Deals start..start+count-1 of the stream `key` on L lanes; per-lane tallies into acc (rows: lanes,
    columns A_*), finished games' lengths into histogram, kept deals' indexes into cand_index. Returns
    how many deals were kept (the caller grows cand_index and plays again if it was too small)."""
    W = np.zeros(N_WORDS * L, dtype=np.uint64)
    H = np.zeros(N_SMALL * L, dtype=np.uint32)
    playing = np.zeros(L, dtype=np.bool_)
    j = np.zeros(L, dtype=np.int64)  # each lane's deal index
    # The queue: up to L prepared deals (the hands' words and the index); `ready` left from `head` on.
    queue_m0 = np.zeros(L, dtype=np.uint64)
    queue_q0 = np.zeros(L, dtype=np.uint64)
    queue_m1 = np.zeros(L, dtype=np.uint64)
    queue_q1 = np.zeros(L, dtype=np.uint64)
    queue_j = np.zeros(L, dtype=np.int64)
    ready = 0
    head = 0
    nxt = 0  # deals prepared so far
    seq = np.zeros(total, dtype=np.uint8)
    positions = np.zeros(total, dtype=np.int64)
    n_penalty = penalties.shape[0]
    n0 = u32(s0)
    n1 = u32(total - s0)
    bs = u32(brent_start)
    bins = histogram.shape[0]
    kept = 0
    for i in range(L):
        _idle(L, W, H, i)
    anydone = ENDED
    while True:
        if anydone != W0:
            # The rare pass: lanes whose game ended record it and take the next deal.
            busy = False
            for i in range(L):
                done = H[H_DONE * L + i]
                if done == LATE:
                    if not _brent(L, W, H, i, bs):
                        busy = True
                        continue
                    done = CYCLED
                if done != W0:
                    if playing[i]:
                        playing[i] = False
                        acc[i, A_DEALS] += 1
                        if done == CYCLED:
                            acc[i, A_CYCLES] += 1  # every cycle is kept (the host replays it)
                            if kept < cand_index.shape[0]:
                                cand_index[kept] = j[i]
                            kept += 1
                        else:
                            c = np.int64(H[H_CARDS * L + i])
                            acc[i, A_CARDS] += c
                            if H[H_WHO * L + i] == W0:
                                acc[i, A_WIN0] += 1
                            else:
                                acc[i, A_WIN1] += 1
                            histogram[min(c, bins - 1)] += 1
                            if c > acc[i, A_BEST_CARDS] or (c == acc[i, A_BEST_CARDS] and j[i] < acc[i, A_BEST_INDEX]):
                                acc[i, A_BEST_CARDS] = c
                                acc[i, A_BEST_INDEX] = j[i]
                            if keeps(c, np.int64(H[H_TRICKS * L + i]), min_cards, min_tricks):
                                if kept < cand_index.shape[0]:
                                    cand_index[kept] = j[i]
                                kept += 1
                    # Take the next deal; refill the queue, L deals at a time, when it is empty.
                    if ready == 0 and nxt < count:
                        made = min(L, count - nxt)
                        for k in range(made):
                            index = start + nxt + k
                            random_deal(deal_state(key, index), positions, penalties, seq)
                            m0, _n0, q0, m1, _n1, q1 = words_from_positions(seq, positions, n_penalty, s0)
                            queue_m0[k] = m0
                            queue_q0[k] = q0
                            queue_m1[k] = m1
                            queue_q1[k] = q1
                            queue_j[k] = index
                        nxt += made
                        ready = made
                        head = 0
                    if ready > 0:
                        W[F_MX * L + i] = W[F_SMX * L + i] = queue_m0[head]
                        W[F_QX * L + i] = W[F_SQX * L + i] = queue_q0[head]
                        W[F_MY * L + i] = W[F_SMY * L + i] = queue_m1[head]
                        W[F_QY * L + i] = W[F_SQY * L + i] = queue_q1[head]
                        W[F_PM * L + i] = W[F_PQ * L + i] = U0
                        H[H_NX * L + i] = H[H_SNX * L + i] = n0
                        H[H_NY * L + i] = n1
                        H[H_WHO * L + i] = H[H_SWHO * L + i] = W0
                        H[H_V * L + i] = H[H_PL * L + i] = H[H_PC * L + i] = W0
                        H[H_TRICKS * L + i] = H[H_CARDS * L + i] = H[H_LAM * L + i] = W0
                        H[H_POWER * L + i] = W1
                        H[H_DONE * L + i] = W0
                        j[i] = queue_j[head]
                        head += 1
                        ready -= 1
                        playing[i] = True
                        if n0 == W0 or n1 == W0:
                            # A hand without cards: the other wins before any trick (as game2).
                            H[H_WHO * L + i] = u32(n0 == W0)
                            H[H_DONE * L + i] = ENDED
                    else:
                        _idle(L, W, H, i)
                busy |= playing[i]
            if not busy:
                return kept
        anydone = _segments(L, W, H, brent_start)


@kernel
def lanes8(key, penalties, total, s0, start, count, brent_start, min_cards, min_tricks, acc, histogram, cand_index):
    return _sweep(8, key, penalties, total, s0, start, count, brent_start, min_cards, min_tricks, acc, histogram,
                  cand_index)


@kernel
def lanes16(key, penalties, total, s0, start, count, brent_start, min_cards, min_tricks, acc, histogram, cand_index):
    return _sweep(16, key, penalties, total, s0, start, count, brent_start, min_cards, min_tricks, acc, histogram,
                  cand_index)


KERNELS = {8: lanes8, 16: lanes16}


def run_random(space, key, penalties, start: int, count: int, *, min_cards: int, min_tricks: int = 0,
               lanes: int = 8):
    """Deals start..start+count-1 of the random stream `key` on the lanes engine (`lanes` in LANES): the
    CPU sweep's ShardResult (two players, the bitmask engine's decks)."""
    from ..engines import default_brent_start
    from ..tally import ShardResult
    from .gpu import _empty_tally, _splits, check_space, random_deals_at, threads_tally

    check_space(space)
    total, s0 = space.deck.total, space.split[0]
    if count == 0:
        return ShardResult.from_tally(_empty_tally(space), space)
    sweep = KERNELS[lanes]
    capacity = 1024
    while True:
        acc = np.zeros((lanes, N_ACC), dtype=np.int64)
        acc[:, A_BEST_CARDS] = -1
        acc[:, A_BEST_INDEX] = -1
        histogram = np.zeros(HIST_BINS, dtype=np.int64)
        cand = np.zeros(capacity, dtype=np.int64)
        kept = sweep(np.uint64(key), penalties, total, s0, int(start), int(count), default_brent_start(total),
                     int(min_cards), int(min_tricks), acc, histogram, cand)
        if kept <= capacity:
            break
        capacity = kept

    def deals_at(indexes):
        out = np.zeros((len(indexes), total), dtype=np.uint8)
        random_deals_at(key, penalties, np.asarray(indexes, dtype=np.int64), out)
        return out, _splits(space, len(indexes))

    return ShardResult.from_tally(threads_tally(space, acc, histogram, np.sort(cand[:kept]), deals_at), space)
