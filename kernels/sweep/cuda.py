"""The sweeps' CUDA kernels (numba-cuda, the optional extra `bmn[gpu]`): a warp of games, no lane idle.

The game is the bitmask engine's, cut into segments (kernels/engines/segments.py): free play up to
the next penalty card, or one round of payment. Each thread (lane) plays one game at a time in one
flat loop, one segment per iteration, with no loop inside a game on which the warp would have to
converge: a lane whose game is in a long payment does not hold up a lane in free play, and a lane
whose game ended takes the next deal at once instead of waiting for the warp's longest game.

A block is one warp (THREADS = 32), with a queue of prepared deals in shared memory (QUEUE slots:
the hands' words and the deal's index). Every CHECK iterations the warp meets at a checkpoint (one
barrier, `syncthreads_count`, which also counts its lanes without a game); when the queue then holds
fewer deals than the warp has lanes, the whole warp refills it together, each lane preparing one
deal, so dealing, the costliest step after play, runs with every lane busy. Between checkpoints a
lane whose game ended takes the next ready deal at once (two atomic operations in shared memory, no
barrier). Deals are prepared without writing them out: a random deal is its penalty cards'
positions (`random_positions`, the same draws as kernels/rng.py's `random_deal`, without the
initialisation of a 52-entry array) turned into the hands' words (`penalty_words`); a rank range is
stepped through by each lane in its own run of `grab` consecutive ranks, in a shared-memory column.
Shared arrays indexed by a lane are laid out [entry, lane], so a warp's 32 lanes touch 32 different
banks.

A launch plays many shards at once (a GPU batch: kernels/sweep/gpu.py), each as one or more pieces
tallied apart. Work is handed out by a global counter over the pieces' deals laid end to end: a lane
takes `grab` deal numbers at a time (one atomic add; a piece starts at a multiple of `grab`, so a run
never spans two) and prepares them one per refill, so any launch size plays every piece, and a lane's
deals come in increasing order.

What a lane keeps in registers, for the piece of the games it finishes (`tp`): deals, cards of the
finished games, cycles, wins of each hand, its longest finished game (one word: cards, then the
offset's complement); when it finishes a game of another piece, and at the end, it adds them to that
piece's row of `acc` and `best` (a few global atomic operations, once per piece a lane meets). Each
finished game's length goes to its piece's column of the global histogram (one atomic add, whose
result no lane waits for); a deal worth keeping (a long game, or a cycle: Brent's algorithm finds the
exact period at trick boundaries, as `game2` does; its saved state, first set at trick brent_start >= 1
and touched only in games that long, lies in the lane's column of shared memory, not in registers) puts
(piece, offset) into `cand`, with a finished game's cards, tricks and winner. The host
(kernels/sweep/gpu.py) replays on the CPU the kept cycles (for their preperiod, period and id) and each
shard's longest game, which makes a GPU shard's ShardResult equal to the CPU's.

Comments `# @name` mark where each kind of work starts in the loop (a checkpoint, a refill, a take,
a segment, a trick's end, a game's end, Brent's check): benchmarks/sass.py finds them in the kernel's
SASS through its line table, to count what each costs (benchmarks/warp_model.py: the model of a warp).

Importing this module imports numba.cuda; everything else in bmn imports it only when a GPU is asked
for. Under numba-cuda's simulator (NUMBA_ENABLE_CUDASIM=1) the same kernels run in Python threads on
the CPU: that is how the tests check them on machines without a GPU.
"""

from __future__ import annotations

import sys
import threading

import numpy as np
from numba import config as numba_settings
from numba import cuda, types

from ..dealspace import step_deal, unrank_into
from ..engines.bitmask import MAX_TOTAL, hand_words, penalty_words, rescan_from
from ..engines.segments import MID, OVER, step
from ..game import keeps
from ..rng import deal_state, random_cut, random_positions
from .modes import EXHAUSTIVE, OFFSET_BITS, P_CARDS, P_CYCLES, P_DEALS, P_WIN0, P_WIN1, STATES
from .modes import NAMES as MODE_NAMES

THREADS = 32  # threads per block: one warp, which shares a queue of deals
QUEUE = 64  # prepared deals per block: a refill (one per lane) on top of fewer than THREADS left
GRAB = 32  # deal numbers a lane takes from the work counter at a time, at most (a launch chooses: gpu.py)
CHECK = 16  # iterations from one checkpoint (a barrier of the warp, a refill if the queue runs low) to the next
PUT, READY, HEAD, SEEN = range(4)  # the queue's counters in shared memory (SEEN, SEEN + 1: see the loop)
# The queue never overflows: a refill adds at most THREADS deals, and happens only when lane 0 saw fewer
# than THREADS ready (a take that finds none lowers the count below zero for a moment and gives it back,
# so lane 0 can see fewer than are ready only when none are). A power of two: slots wrap with a mask.
assert QUEUE >= 2 * THREADS and QUEUE & (QUEUE - 1) == 0, "the queue must hold two refills"
I0 = np.int32(0)
I1 = np.int32(1)
i32 = np.int32
SIMULATOR = bool(numba_settings.ENABLE_CUDASIM)  # numba-cuda's simulator (NUMBA_ENABLE_CUDASIM=1): no device
U0 = np.uint64(0)
W0 = np.uint32(0)
LOW = np.int64((1 << OFFSET_BITS) - 1)  # a packed word's offset (its low bits)
NONE = np.int64(-1)
CYCLE_KEPT = np.int64(-1)  # a kept deal's result word for a cycle (a finished game's: cards, tricks, winner)


if SIMULATOR:
    # The simulator runs a kernel as Python, so each call below is a call from Python into Numba,
    # where its arrays come wrapped and a 64-bit word comes back as a Python int (typed int64 when
    # it is small enough, which mixed with uint64 gives floats). These wrappers give the functions
    # what the device gives them: plain arrays, and the words (argument positions listed) as uint64
    # and the small numbers as uint32.
    def _as_on_device(fn, words=(), small=()):
        def call(*args):
            return fn(*(np.uint64(a) if i in words else np.uint32(a) if i in small else getattr(a, "_ary", a)
                        for i, a in enumerate(args)))
        return call

    deal_state = _as_on_device(deal_state, (0,))
    random_cut = _as_on_device(random_cut, (0,))
    random_positions = _as_on_device(random_positions, (0,))
    penalty_words = _as_on_device(penalty_words)
    hand_words = _as_on_device(hand_words)
    rescan_from = _as_on_device(rescan_from, (3, 4))
    step_deal = _as_on_device(step_deal)
    unrank_into = _as_on_device(unrank_into, (0, 2))
    _step = step

    def step(mX, nX, qX, mY, nY, qY, who, v, pm, pq, pl, pc):  # called at every segment: spelt out
        u64, u32 = np.uint64, np.uint32
        return _step(u64(mX), u32(nX), u64(qX), u64(mY), u32(nY), u64(qY), u32(who), u32(v), u64(pm), u64(pq),
                     u32(pl), u32(pc))
    # The simulator's threads meet at a barrier every few segments; with Python's default switch
    # interval (5 ms) each barrier waits for threads that hold the GIL without work to do.
    sys.setswitchinterval(0.0002)
    # The simulator guards each kind of atomic operation with a lock of its own (kernelapi.addlock,
    # sublock, ...), not each address, so an add and a sub of one cell can interleave and one of them
    # is lost; the work queue's count of ready deals takes both (on a device, atomic operations on
    # one address are atomic whatever their kind). Under the simulator they all take one lock.
    from numba.cuda.simulator import kernelapi as _kernelapi

    ONE_ATOMIC_LOCK = threading.Lock()
    for _name in [n for n in vars(_kernelapi) if n.endswith("lock") and n != "_locks_register_lock"]:
        if isinstance(getattr(_kernelapi, _name), type(ONE_ATOMIC_LOCK)):
            setattr(_kernelapi, _name, ONE_ATOMIC_LOCK)

NAMES = {mode: f"{name}_sweep" for mode, name in MODE_NAMES.items()}


def specialised(mode: int):
    """The sweep kernel for one mode: `mode` is a constant of the compiled code, so each kernel holds
    only its own branch."""
    seq_rows = MAX_TOTAL if mode == EXHAUSTIVE else 1  # a lane's current deal: the exhaustive sweep's only

    def sweep(keys, firsts, starts, counts, s0s, penalties, prefixes, prefix_lens, suffix_counts, suffix_sizes,
              total, grab, brent_start, min_cards, min_tricks, stop_at, counter, acc, best, histogram, n_cand, cand):
        """Play the launch's pieces and tally each apart, as the CPU's sweep kernel does (kernels/sweep/modes.py).

        Piece p holds counts[p] deals, numbered 0.. in the launch's work from starts[p] (a multiple of
        `grab`; starts[pieces] ends the work), each dealt with s0s[p] cards in hand 1:
        RANDOM: deal firsts[p] + a of the random stream keys[p] (`penalties` lists the deck's penalty cards).
        STATES: as RANDOM, each deal cut at its own random place (kernels/rng.py `random_cut`).
        EXHAUSTIVE: the deal of rank firsts[p] + a among the orders of suffix_counts[p] (suffix_sizes[p] of
        them, fewer than 2^63), after the piece's prefix_lens[p] fixed cards prefixes[p]; a run of `grab`
        consecutive ranks is stepped through as the CPU steps.
        Lanes take no new run of deals once n_cand[0] >= stop_at (the host then empties `cand` and
        launches again: `counter` goes on from where it stopped, so no deal is played twice).
        Each piece's tally goes to acc[p] (P_* columns), its longest finished game to best[p] (cards above
        OFFSET_BITS, the complement of its offset below: the first among equals wins a max), its finished
        games' lengths to histogram[cards, p]; a kept deal is cand[k, 0] = (p << OFFSET_BITS) | a, with
        cand[k, 1] its finished game's cards << OFFSET_BITS | tricks << 1 | winner (CYCLE_KEPT: a cycle).
        """
        lane = cuda.threadIdx.x
        # Shared arrays: [entry, lane] where a lane has its own column (32 lanes, 32 banks).
        scratch = cuda.shared.array((MAX_TOTAL, THREADS), types.uint8)[:, lane]  # positions, or counts left
        seq = cuda.shared.array((seq_rows, THREADS), types.uint8)[:total, lane]
        queue_m0 = cuda.shared.array(QUEUE, types.uint64)
        queue_q0 = cuda.shared.array(QUEUE, types.uint64)
        queue_m1 = cuda.shared.array(QUEUE, types.uint64)
        queue_q1 = cuda.shared.array(QUEUE, types.uint64)
        queue_n0 = cuda.shared.array(QUEUE, types.uint32)
        queue_j = cuda.shared.array(QUEUE, types.int64)
        # Brent's saved state of the lane's game (touched only past brent_start tricks: kept out of registers).
        saved = cuda.shared.array((5, THREADS), types.uint64)
        # The queue's counters: [PUT] slots written by this refill, [READY] deals that may be taken,
        # [HEAD] deals taken since the start (the next one's slot is HEAD & (QUEUE - 1)), [SEEN + c % 2] READY
        # as lane 0 saw it just before checkpoint c.
        ticket = cuda.shared.array(5, types.int32)
        if lane < 5:
            ticket[lane] = 0
        n_penalty = penalties.shape[0]
        bins = histogram.shape[0]
        pieces = counts.shape[0]
        work = starts[pieces]
        # The lane's run of deals [nxt, end) of piece gp, and (exhaustive) the words of deal nxt.
        gp = np.int64(0)
        nxt = np.int64(0)
        end = np.int64(0)
        m0 = q0 = m1 = q1 = U0
        n0 = W0
        put = I0  # the next refill's first slot (the same in every lane)
        exhausted = False
        # The lane's game: the segments' state, its tricks and cards, Brent's saved state, its deal (packed).
        playing = False
        over = False  # its game has just ended
        mX = qX = mY = qY = pm = pq = U0
        nX = nY = who = v = pl = pc = W0
        j = np.int64(0)
        tricks = I0
        cards = I0
        power = I1
        lam = I0
        # The lane's tally, of piece tp (32-bit counts: a launch plays fewer than 2^31 deals).
        tp = NONE
        deals = I0
        total_cards = np.int64(0)
        cycles = I0
        win0 = I0
        win1 = I0
        best_key = NONE
        countdown = I0  # iterations to the next checkpoint (the first iteration is one)
        parity = I0  # the checkpoints' parity
        cuda.syncthreads()
        while True:
            if countdown == I0:  # @checkpoint
                # A checkpoint every CHECK iterations, the whole warp at once: done, or refill the queue if it
                # runs low. Every lane must decide alike, so all read the count of ready deals lane 0 saw before
                # the barrier (see QUEUE). (Two cells, one per checkpoint's parity: lane 0 writes the next before
                # a slow lane has surely read this one.)
                countdown = i32(CHECK)
                seen = SEEN + parity
                parity = i32(parity ^ 1)
                if lane == 0:
                    ticket[seen] = ticket[READY]
                idle = cuda.syncthreads_count(np.int32(not playing))
                ready = ticket[seen]
                if idle == cuda.blockDim.x and exhausted and ready <= 0:
                    break
                if ready < cuda.blockDim.x and not exhausted:  # @refill
                    # Each lane prepares its next deal, if it has one.
                    if nxt == end and n_cand[0] < stop_at:
                        a = np.int64(cuda.atomic.add(counter, 0, grab))
                        if a < work:
                            # The piece holding deal number a (pieces start at multiples of grab).
                            low = np.int64(0)
                            high = np.int64(pieces - 1)
                            while low < high:
                                mid = (low + high + 1) >> 1
                                if starts[mid] <= a:
                                    low = mid
                                else:
                                    high = mid - 1
                            gp = low
                            nxt = a - starts[gp]
                            end = min(nxt + grab, counts[gp])
                            if mode == EXHAUSTIVE and nxt < end:
                                fixed = prefix_lens[gp]
                                for i in range(fixed):
                                    seq[i] = prefixes[gp, i]
                                unrank_into(firsts[gp] + nxt, suffix_counts[gp], suffix_sizes[gp], scratch,
                                            seq[fixed:])
                                m0, n0_, q0 = hand_words(seq, 0, s0s[gp])
                                m1, n1_, q1 = hand_words(seq, s0s[gp], total - s0s[gp])
                    made = nxt < end
                    if made:
                        n0 = np.uint32(s0s[gp])
                        if mode != EXHAUSTIVE:
                            drawn = random_positions(deal_state(keys[gp], firsts[gp] + nxt), scratch, n_penalty,
                                                     total)
                            if mode == STATES:
                                n0 = np.uint32(random_cut(drawn, total))
                            m0, q0, m1, q1 = penalty_words(scratch, penalties, n0)
                        slot = (put + cuda.atomic.add(ticket, PUT, 1)) & (QUEUE - 1)
                        queue_m0[slot] = m0
                        queue_q0[slot] = q0
                        queue_m1[slot] = m1
                        queue_q1[slot] = q1
                        queue_n0[slot] = n0
                        queue_j[slot] = (gp << OFFSET_BITS) | nxt
                        nxt += 1
                        if mode == EXHAUSTIVE and nxt < end:
                            # As the CPU's sweep: only the cards from `changed` on are new.
                            s0 = s0s[gp]
                            changed = step_deal(seq)
                            if changed >= s0:
                                m1, q1 = rescan_from(seq, s0, total - s0, m1, q1, changed - s0)
                            else:
                                m0, q0 = rescan_from(seq, 0, s0, m0, q0, changed)
                                m1, n1_, q1 = hand_words(seq, s0, total - s0)
                    added = cuda.syncthreads_count(np.int32(made))  # the slots are written before they are offered
                    put = i32((put + added) & (QUEUE - 1))
                    exhausted = added == 0
                    if lane == 0:
                        ticket[PUT] = 0  # used again only after the next checkpoint's barrier
                        cuda.atomic.add(ticket, READY, added)
            countdown = i32(countdown - 1)  # @loop
            if not playing:  # @take
                # Take the next deal, if one is ready (without a barrier: a lane whose game ended between
                # checkpoints starts its next game at once).
                if cuda.atomic.sub(ticket, READY, 1) > 0:
                    # (a power of two: a count past 2^31 wraps alike)
                    slot = cuda.atomic.add(ticket, HEAD, 1) & (QUEUE - 1)
                    mX = queue_m0[slot]
                    qX = queue_q0[slot]
                    mY = queue_m1[slot]
                    qY = queue_q1[slot]
                    nX = queue_n0[slot]
                    nY = np.uint32(total - nX)
                    j = queue_j[slot]
                    who = v = pl = pc = W0
                    pm = pq = U0
                    tricks = I0
                    cards = I0
                    playing = True
                    if nX == W0 or nY == W0:
                        # A hand without cards: the other wins before any trick (as game2).
                        who = np.uint32(nX == W0)
                        playing = False
                        over = True
                else:
                    cuda.atomic.add(ticket, READY, 1)  # none was ready: give the count back
            if playing:  # @loop
                # One segment: free play, or a round of payment (kernels/engines/segments.py).
                mX, nX, qX, mY, nY, qY, who, v, pm, pq, pl, pc, event = step(  # @segment
                    mX, nX, qX, mY, nY, qY, who, v, pm, pq, pl, pc)
                if event != MID:
                    tricks = i32(tricks + 1)  # @trick
                    cards = i32(cards + pl)
                    if event == OVER:
                        playing = False
                        over = True
                    elif tricks >= brent_start:  # @brent
                        # Brent's algorithm at trick boundaries, as game2 (only in games this long).
                        if tricks == brent_start:
                            _save(saved, lane, who, nX, mX, qX, mY, qY)
                            power = I1
                            lam = I0
                        else:
                            lam = i32(lam + 1)
                            if ((saved[0, lane] ^ _turn_word(who, nX))
                                    | (saved[1, lane] ^ mX) | (saved[2, lane] ^ qX) | (saved[3, lane] ^ mY)
                                    | (saved[4, lane] ^ qY)) == U0:
                                # A cycle: every cycle is kept (the host replays it for its figures).
                                playing = False
                                tp, deals, total_cards, cycles, win0, win1, best_key = _tallied(
                                    j >> OFFSET_BITS, acc, best, tp, deals, total_cards, cycles, win0, win1, best_key)
                                deals = i32(deals + 1)
                                cycles = i32(cycles + 1)
                                _keep(j, CYCLE_KEPT, n_cand, cand)
                            elif lam == power:
                                _save(saved, lane, who, nX, mX, qX, mY, qY)
                                power = i32(power * 2)
                                lam = I0
            if over:  # @finish
                # A finished game (one place for both ways a game ends: the kernel's code once).
                over = False
                tp, deals, total_cards, cycles, win0, win1, best_key = _finished(
                    who, tricks, cards, j, min_cards, min_tricks, histogram, bins, n_cand, cand, acc, best,
                    tp, deals, total_cards, cycles, win0, win1, best_key)
        # The lane's last tally, into its piece's.
        cuda.syncthreads()  # @end
        _flush(acc, best, tp, deals, total_cards, cycles, win0, win1, best_key)

    # Named for its mode, in the PTX and in a profiler's list of kernels.
    sweep.__name__ = sweep.__qualname__ = NAMES[mode]
    return sweep


@cuda.jit(device=True, inline="always")
def _turn_word(who, nX):
    """The leader and its count of cards, as the one word Brent's saved state keeps of them."""
    return (np.uint64(who) << np.uint64(32)) | np.uint64(nX)


@cuda.jit(device=True, inline="always")
def _save(saved, lane, who, nX, mX, qX, mY, qY):
    """Brent's saved state of a lane's game, in its column of `saved`."""
    saved[0, lane] = _turn_word(who, nX)
    saved[1, lane] = mX
    saved[2, lane] = qX
    saved[3, lane] = mY
    saved[4, lane] = qY


@cuda.jit(device=True, inline="always")
def _keep(j, result, n_cand, cand):
    """A kept deal: its packed place and, for a finished game, its result (CYCLE_KEPT for a cycle, whose
    figures the host replays)."""
    slot = cuda.atomic.add(n_cand, 0, 1)
    if slot < cand.shape[0]:
        cand[slot, 0] = j
        cand[slot, 1] = result


@cuda.jit(device=True, inline="always")
def _flush(acc, best, tp, deals, total_cards, cycles, win0, win1, best_key):
    """A lane's tally into its piece's (a few atomic operations, once per piece a lane played in)."""
    if tp >= 0:
        cuda.atomic.add(acc, (tp, P_DEALS), np.int64(deals))
        cuda.atomic.add(acc, (tp, P_CARDS), total_cards)
        cuda.atomic.add(acc, (tp, P_CYCLES), np.int64(cycles))
        cuda.atomic.add(acc, (tp, P_WIN0), np.int64(win0))
        cuda.atomic.add(acc, (tp, P_WIN1), np.int64(win1))
        cuda.atomic.max(best, tp, best_key)


@cuda.jit(device=True, inline="always")
def _tallied(piece, acc, best, tp, deals, total_cards, cycles, win0, win1, best_key):
    """The lane's tally, for a game of `piece`: its own, or (its piece changed) the last flushed and a new one."""
    if piece != tp:
        _flush(acc, best, tp, deals, total_cards, cycles, win0, win1, best_key)
        return piece, I0, np.int64(0), I0, I0, I0, NONE
    return tp, deals, total_cards, cycles, win0, win1, best_key


@cuda.jit(device=True, inline="always")
def _finished(winner, tricks, cards, j, min_cards, min_tricks, histogram, bins, n_cand, cand, acc, best,
              tp, deals, total_cards, cycles, win0, win1, best_key):
    """A finished game into the lane's tally and its piece's histogram; returns the tally."""
    piece = j >> OFFSET_BITS
    tp, deals, total_cards, cycles, win0, win1, best_key = _tallied(piece, acc, best, tp, deals, total_cards, cycles,
                                                                    win0, win1, best_key)
    deals = i32(deals + 1)
    total_cards += cards
    if winner == W0:
        win0 = i32(win0 + 1)
    else:
        win1 = i32(win1 + 1)
    # (unsigned indices: no wraparound of negative ones to compute)
    cuda.atomic.add(histogram, (np.uint32(min(cards, bins - 1)), np.uint32(piece)), 1)
    # The first offset met among equals wins a max: the offset's complement below the cards.
    key = (np.int64(cards) << OFFSET_BITS) | (LOW - (j & LOW))
    if key > best_key:
        best_key = key
    if keeps(cards, tricks, min_cards, min_tricks):
        _keep(j, (np.int64(cards) << OFFSET_BITS) | (np.int64(tricks) << 1) | np.int64(winner), n_cand, cand)
    return tp, deals, total_cards, cycles, win0, win1, best_key


# The kernel's argument types (its PTX is compiled for them: tests/test_gpu.py); a launch compiles it
# on first use for the GPU at hand, and numba-cuda keeps it in Numba's disk cache for every later process.
SWEEP_SIG = (types.uint64[::1], types.int64[::1], types.int64[::1], types.int64[::1], types.int64[::1],
             types.uint8[::1], types.uint8[:, ::1], types.int64[::1], types.uint8[:, ::1], types.int64[::1],
             types.int64, types.int64, types.int64, types.int64, types.int64, types.int64,
             types.int64[::1], types.int64[:, ::1], types.int64[::1], types.int32[:, ::1], types.int64[::1],
             types.int64[:, ::1])
KERNELS = {name: (specialised(mode), SWEEP_SIG) for mode, name in NAMES.items()}
sweep_kernels = {mode: cuda.jit(KERNELS[name][0], cache=not SIMULATOR) for mode, name in NAMES.items()}
