"""The CPU lanes engine: the GPU sweep's flat loop on one CPU core, L games in lock-step (issue 30, point 5).

The GPU sweep (kernels/sweep/cuda.py) plays one game per lane as a flat sequence of segments
(kernels/engines/segments.py `step`: free play to the next penalty card, or one round of payment),
and a lane whose game ended takes the next prepared deal from a queue. This is the same loop for a
CPU core, written for LLVM's loop vectorizer (a lane is an element of a SIMD register):

- every lane's state is one word of a flat array S, field f of lane i at S[f * L + i]: one array of
  one type (the vectorizer does not make run-time alias checks between arrays for a loop of fewer
  than 16 iterations, so with two arrays L = 8 was not vectorized), constant distances between fields
  (L is a compile-time constant, so it proves that no field overlaps another within the loop);
- each iteration of the main loop runs `for i in range(L)` over the lanes (`_segments`): one segment
  (`step`), then the trick's count and the game's end, branch-free (0/1 flags and masks), every field
  loaded and stored unconditionally, no exit; it returns a bit per lane whose game ended (or, past
  Brent's start, reached a trick boundary);
- only when a bit is set does the rare pass visit those lanes: Brent's check (as `play_segments` and
  `game2` do it, from `brent_start` tricks on: 416 for the standard deck, which random games almost
  never reach; BRENT_IN_LOOP puts it in the vector loop instead, branch-free, for 15-20% less speed),
  the ended game into its lane's tally (the GPU's columns, kernels/sweep/modes.py A_*), the histogram
  and, if kept, the candidates; the lane then takes the next deal from a queue refilled L deals at a
  time (each deal: `random_deal` and `words_from_positions`, as the CPU sweep makes them). A lane with
  no deal left plays a dummy state (both hands empty: every segment ends it again, harmlessly) until
  every lane is idle.

It plays the RANDOM mode (two players, the bitmask engine's decks) and gives the CPU sweep's
ShardResult: the host side is the GPU's (`threads_tally`: the lanes' tallies summed, the kept deals
and the longest game replayed on the CPU for their exact rows). benchmarks/lanes_bench.py times it
against the bitmask engine's sweep and the C yardstick; benchmarks/lanes_asm.py counts the vector
instructions of its compiled lane loop (AVX2: 4 lanes a pass, about 60 instructions a lane-segment).
"""

from __future__ import annotations

import numpy as np

from .._jit import kernel
from ..bits import ctz
from ..engines.bitmask import words_from_positions
from ..engines.segments import MID, OVER, step
from ..game import keeps
from ..rng import deal_state, random_deal
from ..tally import HIST_BINS
from .modes import A_BEST_CARDS, A_BEST_INDEX, A_CARDS, A_CYCLES, A_DEALS, A_WIN0, A_WIN1, N_ACC

LANES = (8, 16)  # the lane counts compiled (`kernels`)

# The lane state, one uint64 per lane and field (the 32-bit numbers of `step` widened: one array of one
# type, so that the vectorizer needs no run-time alias check, which it does not make for a loop of
# fewer than 16 iterations): the hands' and the pile's words, the game's tricks and cards, Brent's
# saved state and counters, and the end flag of the last iteration: 0 playing, ENDED the game
# finished, CYCLED it entered a cycle, LATE (BRENT_IN_LOOP off) a trick boundary past Brent's start.
(F_MX, F_NX, F_QX, F_MY, F_NY, F_QY, F_WHO, F_V, F_PM, F_PQ, F_PL, F_PC, F_TRICKS, F_CARDS, F_SWHO, F_SNX, F_SMX,
 F_SQX, F_SMY, F_SQY, F_POWER, F_LAM, F_DONE) = range(23)
N_FIELDS = 23
BRENT_IN_LOOP = False  # Brent's check in the vector loop (branch-free) or, past Brent's start, in the rare pass

U0 = np.uint64(0)
U1 = np.uint64(1)
ENDED = np.uint64(1)
CYCLED = np.uint64(2)
LATE = np.uint64(4)
u32 = np.uint32
u64 = np.uint64


@kernel(inline="always")
def _segments(L, S, brent_start):
    """One segment on each of the L lanes, with its bookkeeping; returns the lanes with an end flag (bit i: lane i).
    (The loop LLVM vectorizes: straight-line code per lane, selects for every decision.)"""
    bs = u64(brent_start)
    anydone = U0
    for i in range(L):
        mX, nX, qX, mY, nY, qY, who, v, pm, pq, pl, pc, event = step(
            S[F_MX * L + i], u32(S[F_NX * L + i]), S[F_QX * L + i], S[F_MY * L + i], u32(S[F_NY * L + i]),
            S[F_QY * L + i], u32(S[F_WHO * L + i]), u32(S[F_V * L + i]), S[F_PM * L + i], S[F_PQ * L + i],
            u32(S[F_PL * L + i]), u32(S[F_PC * L + i]))
        S[F_MX * L + i] = mX
        S[F_QX * L + i] = qX
        S[F_MY * L + i] = mY
        S[F_QY * L + i] = qY
        S[F_PM * L + i] = pm
        S[F_PQ * L + i] = pq
        S[F_NX * L + i] = u64(nX)
        S[F_NY * L + i] = u64(nY)
        S[F_WHO * L + i] = u64(who)
        S[F_V * L + i] = u64(v)
        S[F_PL * L + i] = u64(pl)
        S[F_PC * L + i] = u64(pc)
        # The trick's end (TRICK or OVER), the game's end (OVER), and Brent's check at a trick boundary.
        ended = u64(event != MID)
        over = u64(event == OVER)
        boundary = ended - over
        tricks = S[F_TRICKS * L + i] + ended
        S[F_TRICKS * L + i] = tricks
        S[F_CARDS * L + i] += u64(pl) & (U0 - ended)
        if BRENT_IN_LOOP:
            s_who = S[F_SWHO * L + i]
            s_nX = S[F_SNX * L + i]
            s_mX = S[F_SMX * L + i]
            s_qX = S[F_SQX * L + i]
            s_mY = S[F_SMY * L + i]
            s_qY = S[F_SQY * L + i]
            power = S[F_POWER * L + i]
            lam = S[F_LAM * L + i]
            check = boundary & u64(tricks > bs)  # tricks past Brent's start: compare with the saved state
            first = boundary & u64(tricks == bs)  # Brent's start: save the state
            lam += check
            same = u64(((u64(who) ^ s_who) | (u64(nX) ^ s_nX) | (mX ^ s_mX) | (qX ^ s_qX) | (mY ^ s_mY)
                        | (qY ^ s_qY)) == U0)
            cycled = check & same
            due = check & (U1 - same) & u64(lam == power)  # a power of two: save, double it, count from 0
            save = U0 - (first | due)
            S[F_SWHO * L + i] = (u64(who) & save) | (s_who & ~save)
            S[F_SNX * L + i] = (u64(nX) & save) | (s_nX & ~save)
            S[F_SMX * L + i] = (mX & save) | (s_mX & ~save)
            S[F_SQX * L + i] = (qX & save) | (s_qX & ~save)
            S[F_SMY * L + i] = (mY & save) | (s_mY & ~save)
            S[F_SQY * L + i] = (qY & save) | (s_qY & ~save)
            S[F_POWER * L + i] = power << due
            S[F_LAM * L + i] = lam & (due - U1)
            done = over | (cycled << U1)
        else:
            done = over | (LATE & (U0 - (boundary & u64(tricks >= bs))))
        S[F_DONE * L + i] = done
        anydone |= u64(done != U0) << u64(i)
    return anydone


@kernel(inline="always")
def _brent(L, S, i, bs):
    """Brent's check for lane i at a trick boundary past Brent's start (BRENT_IN_LOOP off: the rare pass);
    returns whether its game entered a cycle."""
    if S[F_TRICKS * L + i] > bs:
        lam = S[F_LAM * L + i] + U1
        if (S[F_WHO * L + i] == S[F_SWHO * L + i] and S[F_NX * L + i] == S[F_SNX * L + i]
                and S[F_MX * L + i] == S[F_SMX * L + i] and S[F_QX * L + i] == S[F_SQX * L + i]
                and S[F_MY * L + i] == S[F_SMY * L + i] and S[F_QY * L + i] == S[F_SQY * L + i]):
            return True
        if lam != S[F_POWER * L + i]:
            S[F_LAM * L + i] = lam
            return False
        S[F_POWER * L + i] <<= U1
        S[F_LAM * L + i] = U0
    S[F_SWHO * L + i] = S[F_WHO * L + i]
    S[F_SNX * L + i] = S[F_NX * L + i]
    S[F_SMX * L + i] = S[F_MX * L + i]
    S[F_SQX * L + i] = S[F_QX * L + i]
    S[F_SMY * L + i] = S[F_MY * L + i]
    S[F_SQY * L + i] = S[F_QY * L + i]
    return False


@kernel(inline="always")
def _idle(L, S, i):
    """Lane i without a game: both hands empty, so that every segment ends it again (no shift past a
    word, nothing that could go wrong), and its end flag is set."""
    for f in range(N_FIELDS):
        S[f * L + i] = U0
    S[F_POWER * L + i] = U1
    S[F_DONE * L + i] = ENDED


@kernel(inline="always")
def _sweep(L, key, penalties, total, s0, start, count, brent_start, min_cards, min_tricks, acc, histogram, cand_index):
    """Deals start..start+count-1 of the stream `key` on L lanes; per-lane tallies into acc (rows: lanes,
    columns A_*), finished games' lengths into histogram, kept deals' indexes into cand_index. Returns
    how many deals were kept (the caller grows cand_index and plays again if it was too small)."""
    S = np.zeros(N_FIELDS * L, dtype=np.uint64)
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
    n0 = u64(s0)
    n1 = u64(total - s0)
    bs = u64(brent_start)
    bins = histogram.shape[0]
    kept = 0
    for i in range(L):
        _idle(L, S, i)
    anydone = (U1 << u64(L)) - U1
    active = 0  # lanes playing a game
    while True:
        if anydone != U0:
            # The rare pass: the lanes whose game ended record it and take the next deal.
            while anydone != U0:
                i = np.int64(ctz(anydone))
                anydone &= anydone - U1
                done = S[F_DONE * L + i]
                if done == LATE:
                    if not _brent(L, S, i, bs):
                        continue  # no cycle yet: the game goes on
                    done = CYCLED
                if playing[i]:
                    playing[i] = False
                    active -= 1
                    acc[i, A_DEALS] += 1
                    if done == CYCLED:
                        acc[i, A_CYCLES] += 1  # every cycle is kept (the host replays it)
                        if kept < cand_index.shape[0]:
                            cand_index[kept] = j[i]
                        kept += 1
                    else:
                        c = np.int64(S[F_CARDS * L + i])
                        acc[i, A_CARDS] += c
                        if S[F_WHO * L + i] == U0:
                            acc[i, A_WIN0] += 1
                        else:
                            acc[i, A_WIN1] += 1
                        histogram[min(c, bins - 1)] += 1
                        if c > acc[i, A_BEST_CARDS] or (c == acc[i, A_BEST_CARDS] and j[i] < acc[i, A_BEST_INDEX]):
                            acc[i, A_BEST_CARDS] = c
                            acc[i, A_BEST_INDEX] = j[i]
                        if keeps(c, np.int64(S[F_TRICKS * L + i]), min_cards, min_tricks):
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
                if ready == 0:
                    _idle(L, S, i)
                    continue
                for f in range(N_FIELDS):
                    S[f * L + i] = U0
                S[F_MX * L + i] = S[F_SMX * L + i] = queue_m0[head]
                S[F_QX * L + i] = S[F_SQX * L + i] = queue_q0[head]
                S[F_MY * L + i] = S[F_SMY * L + i] = queue_m1[head]
                S[F_QY * L + i] = S[F_SQY * L + i] = queue_q1[head]
                S[F_NX * L + i] = S[F_SNX * L + i] = n0
                S[F_NY * L + i] = n1
                S[F_POWER * L + i] = U1
                j[i] = queue_j[head]
                head += 1
                ready -= 1
                playing[i] = True
                active += 1
                if n0 == U0 or n1 == U0:
                    # A hand without cards: the other wins before any trick (as game2); seen again at once.
                    S[F_WHO * L + i] = u64(n0 == U0)
                    S[F_DONE * L + i] = ENDED
                    anydone |= U1 << u64(i)
            if active == 0:
                return kept
        anydone = _segments(L, S, brent_start)


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
    from ..tally import ShardResult, new_tally
    from .gpu import check_space, random_deals_at, threads_tally

    check_space(space)
    total, s0 = space.deck.total, space.split[0]
    if count == 0:
        return ShardResult.from_tally(new_tally(total, space.players, capacity=0), space)
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
        return out, np.repeat(np.array([space.split], dtype=np.int64), len(indexes), axis=0)

    return ShardResult.from_tally(threads_tally(space, acc, histogram, np.sort(cand[:kept]), deals_at), space)
