"""The CUDA engine (numba-cuda, the optional extra `bmn[gpu]`): the sweeps, one game per thread.

The game is the bitmask engine's (kernels/engines/bitmask.py), compiled for the GPU from the same
source: `game2`, `trick2` and the deal-making helpers are Numba functions that numba-cuda compiles
as device functions, so the CPU and the GPU cannot disagree on a rule. A game lives in registers
(three 64-bit words per hand and per pile; tests/test_gpu.py checks that the kernels' PTX holds no
local memory). What a thread needs as an array (the deal it steps through, the penalty positions
of a random deal) sits in shared memory, one row of 64 bytes per thread.

Work is handed out by a counter: a thread takes `grab` deals at a time (one atomic add) and comes
back for more when they are played, so a thread whose games ended early does not wait for the
others, and the whole shard is played whatever the launch's size.

What a thread keeps in registers and writes once at the end (`acc`, one row per thread): deals,
cards of the finished games, cycles, wins of each hand, its longest finished game (cards, and the
first index that reached it). The histogram takes one atomic add per finished game; a deal worth
keeping (a long game, or a cycle: Brent's algorithm on the device finds the period exactly) puts
its index into `cand_index`. The host (kernels/sweep/gpu.py) then replays the few kept
deals and the longest on the CPU, which gives their exact rows (preperiod, cycle id) and makes the
GPU's ShardResult equal to the CPU's.

Importing this module imports numba.cuda; everything else in bmn imports it only when a GPU is
asked for. Under numba-cuda's simulator (NUMBA_ENABLE_CUDASIM=1) the same kernels run in Python
threads on the CPU: that is how the tests check them on machines without a GPU.
"""

from __future__ import annotations

import numpy as np
from numba import config, cuda, types

from .._jit import kernel
from ..dealspace import step_deal, unrank_into
from ..rng import deal_state, random_cut, random_deal
from .modes import EXHAUSTIVE, NAMES as MODE_NAMES, NO_FINITE, RANDOM, STATES
from ..engines.bitmask import MAX_TOTAL, game2, hand_words, rescan_from, words_from_positions

THREADS = 128  # threads per block: each has a row of the block's shared arrays
GRAB = 8  # deals a thread takes from the work counter at a time
# acc's columns (one row per thread)
A_DEALS, A_CARDS, A_CYCLES, A_WIN0, A_WIN1, A_BEST_CARDS, A_BEST_INDEX = range(7)
N_ACC = 7
U0 = np.uint64(0)
SIMULATOR = bool(config.ENABLE_CUDASIM)  # numba-cuda's simulator (NUMBA_ENABLE_CUDASIM=1): no device


if SIMULATOR:
    # The simulator runs a kernel as Python, so each call below is a call from Python into Numba,
    # where its arrays come wrapped and a 64-bit word comes back as a Python int (typed int64 when
    # it is small enough, which mixed with uint64 gives floats). These wrappers give the functions
    # what the device gives them: plain arrays, and the words (argument positions listed) as uint64.
    def _as_on_device(fn, *words):
        def call(*args):
            return fn(*(np.uint64(a) if i in words else getattr(a, "_ary", a) for i, a in enumerate(args)))
        return call

    deal_state = _as_on_device(deal_state, 0)
    random_deal = _as_on_device(random_deal, 0)
    random_cut = _as_on_device(random_cut, 0)
    words_from_positions = _as_on_device(words_from_positions)
    hand_words = _as_on_device(hand_words)
    game2 = _as_on_device(game2, 0, 1, 2, 3, 4, 5)
    rescan_from = _as_on_device(rescan_from, 3, 4)
    step_deal = _as_on_device(step_deal)
    unrank_into = _as_on_device(unrank_into, 0, 2)


NAMES = {mode: f"{name}_sweep" for mode, name in MODE_NAMES.items()}


def specialised(mode: int):
    """The sweep kernel for one mode: `mode` is a constant of the compiled code, so each kernel holds
    only its own branch (the random sweep needs far fewer registers than the exhaustive one)."""

    def sweep(key, penalties, counts, deal_count, first, starts, total, s0, count, grab, brent_start, min_cards,
              min_tricks, counter, acc, histogram, n_cand, cand_index):
        """Play `count` deals and tally them, as the CPU's sweep kernel does.

        RANDOM: deals first..first+count-1 of the random stream `key` (kernels/rng.py; `penalties` lists
        the deck's penalty cards); a deal's index is its number in the stream.
        STATES: as RANDOM, each deal cut at its own random place (kernels/rng.py `random_cut`), not at s0.
        EXHAUSTIVE: ranks first..first+count-1, `grab` consecutive ranks per take, stepped through as the
        CPU steps (a deal's index is its offset from `first`). A take's first deal is unranked on the
        device when the deal space has fewer than 2^63 deals (`deal_count`, `counts` the deck's cards of
        each value); otherwise it is row a // grab of `starts`, unranked by the host.
        """
        tid = cuda.grid(1)
        row = cuda.threadIdx.x
        seq = cuda.shared.array((THREADS, MAX_TOTAL), types.uint8)[row, :total]
        scratch = cuda.shared.array((THREADS, MAX_TOTAL), types.uint8)[row]  # penalty positions, or counts left
        n_penalty = penalties.shape[0]
        s1 = total - s0
        m0 = n0 = q0 = m1 = n1 = q1 = U0
        deals = 0
        cards = 0
        cycles = 0
        win0 = 0
        win1 = 0
        best_cards = -1
        best_index = -1
        bins = histogram.shape[0]
        while True:
            a = cuda.atomic.add(counter, 0, grab)
            if a >= count:
                break
            b = min(a + grab, count)
            if mode == EXHAUSTIVE:
                if starts.shape[0] > 0:
                    for i in range(total):
                        seq[i] = starts[a // grab, i]
                else:
                    unrank_into(first + a, counts, deal_count, scratch, seq)
                m0, n0, q0 = hand_words(seq, 0, s0)
                m1, n1, q1 = hand_words(seq, s0, s1)
            for o in range(a, b):
                j = o
                if mode != EXHAUSTIVE:
                    j = first + o
                    drawn = random_deal(deal_state(key, j), scratch[:total], penalties, seq)
                    cut = s0
                    if mode == STATES:
                        cut = random_cut(drawn, total)
                    m0, n0, q0, m1, n1, q1 = words_from_positions(seq, scratch, n_penalty, cut)
                period, winner, tricks, played = game2(m0, n0, q0, m1, n1, q1, 0, brent_start)
                deals += 1
                keep = True
                if period != 0:
                    cycles += 1
                else:
                    c = np.int64(played)
                    cards += c
                    if winner == U0:
                        win0 += 1
                    else:
                        win1 += 1
                    cuda.atomic.add(histogram, min(c, bins - 1), 1)
                    if c > best_cards:
                        best_cards = c
                        best_index = j
                    keep = c >= min_cards or (min_tricks > 0 and tricks >= min_tricks)
                if keep:
                    slot = cuda.atomic.add(n_cand, 0, 1)
                    if slot < cand_index.shape[0]:
                        cand_index[slot] = j
                if mode == EXHAUSTIVE and o + 1 < b:
                    # As the CPU's sweep: only the cards from `changed` on are new.
                    changed = step_deal(seq)
                    if changed >= s0:
                        m1, q1 = rescan_from(seq, s0, s1, m1, q1, changed - s0)
                    else:
                        m0, q0 = rescan_from(seq, 0, s0, m0, q0, changed)
                        m1, n1, q1 = hand_words(seq, s0, s1)
        if tid < acc.shape[0]:
            _write(acc, tid, deals, cards, cycles, win0, win1, best_cards, best_index)

    # Named for its mode, in the PTX and in a profiler's list of kernels.
    sweep.__name__ = sweep.__qualname__ = NAMES[mode]
    return sweep


@kernel(inline="always")
def _write(acc, tid, deals, cards, cycles, win0, win1, best_cards, best_index):
    acc[tid, A_DEALS] = deals
    acc[tid, A_CARDS] = cards
    acc[tid, A_CYCLES] = cycles
    acc[tid, A_WIN0] = win0
    acc[tid, A_WIN1] = win1
    acc[tid, A_BEST_CARDS] = best_cards
    acc[tid, A_BEST_INDEX] = best_index


if SIMULATOR:
    _write = _as_on_device(_write)

# The kernel's argument types (its PTX is compiled for them: tests/test_gpu.py); a launch compiles it
# on first use for the GPU at hand.
SWEEP_SIG = (types.uint64, types.uint8[::1], types.uint8[::1], types.int64, types.int64,
             types.uint8[:, ::1], types.int64, types.int64, types.int64, types.int64, types.int64, types.int64,
             types.int64, types.int64[::1], types.int64[:, ::1], types.int64[::1], types.int64[::1], types.int64[::1])
KERNELS = {name: (specialised(mode), SWEEP_SIG) for mode, name in NAMES.items()}
sweep_kernels = {mode: cuda.jit(KERNELS[name][0]) for mode, name in NAMES.items()}
