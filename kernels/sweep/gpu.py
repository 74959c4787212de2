"""The sweeps on a GPU: `run_random`, `run_exhaustive` and `run_random_states` with `device="gpu"` land here.

The device plays every deal of the shard and tallies it (kernels/sweep/cuda.py); this module
launches it, sums the threads' tallies, and replays on the CPU the few deals the device kept (the
candidates, every cycle among them, and the longest game), so that their rows (preperiod, period,
cycle id) are exactly the CPU engine's. The tally is then the one the CPU's sweep fills, read by
the same `ShardResult.from_tally`: a GPU shard equals a CPU shard in every field.

Which deals a shard holds does not depend on the device: the random stream and the rank order are
the CPU's, only the order in which the device plays them differs, and nothing in the tally
depends on that order (sums, a histogram, candidates sorted by index, the longest game first met).
"""

from __future__ import annotations

import os

import numpy as np

from .._jit import kernel
from ..dealspace import DealSpace
from ..engines import FAST, default_brent_start, play_rows
from ..engines.bitmask import fits
from ..errors import BmnError
from .streams import states_at
from .modes import (A_BEST_CARDS, A_BEST_INDEX, A_CARDS, A_CYCLES, A_DEALS, A_WIN0, A_WIN1, EXHAUSTIVE, N_ACC,
                    NO_FINITE, RANDOM, STATES)
from ..game import CYCLE, F_CARDS, F_OUTCOME, N_FIELDS
from ..rng import deal_state, random_deal
from ..tally import (CARDS, CYCLES, DEALS, HIST_BINS, LONGEST_CARDS, LONGEST_INDEX, N_CAND, N_STATS, ShardResult,
                    Tally)

REFUSAL = ("the GPU engine holds two-player deals of at most 64 cards and 16 penalty cards (the fast engine's); "
           "use device = \"cpu\" for these deals")
MIN_CAPACITY = 1024  # candidate slots of a launch (grown and relaunched if a shard keeps more)


def gpu():
    """The CUDA engine's module (numba-cuda imported), or a BmnError saying how to get it."""
    try:
        from . import cuda as engine
    except ImportError as error:
        raise BmnError(f"the GPU engine needs numba-cuda: pip install 'bmn[gpu]' ({error})") from None
    return engine


def describe_gpu() -> str:
    """The GPU this process plays on, in a few words (its name, architecture and multiprocessors), or
    a BmnError saying why there is none."""
    engine = gpu()
    if engine.SIMULATOR:
        return "numba-cuda's simulator (NUMBA_ENABLE_CUDASIM=1; no GPU)"
    cuda = engine.cuda
    try:
        if not cuda.is_available():
            raise BmnError("no GPU here that CUDA can use (no NVIDIA driver, or none visible: CUDA_VISIBLE_DEVICES="
                           f"{os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')})")
        device = cuda.get_current_device()
        name = device.name.decode() if isinstance(device.name, bytes) else str(device.name)
        major, minor = device.compute_capability
        return f"{name} (sm_{major}{minor}, {device.MULTIPROCESSOR_COUNT} multiprocessors)"
    except BmnError:
        raise
    except Exception as error:  # the driver's own errors: one line of them
        raise BmnError(f"the GPU cannot be used: {str(error).strip().splitlines()[-1]}") from None


def holds(space: DealSpace) -> bool:
    """Whether the GPU engine holds this deal space's deals (the fast engine's: `bitmask.fits`)."""
    deck = space.deck
    return fits(space.players, deck.total, deck.penalty_cards, deck.max_value)


def check_space(space: DealSpace) -> None:
    if not holds(space):
        raise BmnError(REFUSAL)


def launch_size(engine, work_items: int) -> tuple[int, int]:
    """(blocks, threads per block): a block is one warp (the kernel's THREADS, which it needs), and
    enough blocks to fill the device (32 one-warp blocks per multiprocessor, the most sm_90 holds),
    fewer for a small shard; every lane takes work from the counter, so any number plays the whole
    shard. Under the simulator (a Python thread per CUDA thread) one block."""
    if engine.SIMULATOR:
        return 1, engine.THREADS
    fill = int(engine.cuda.get_current_device().MULTIPROCESSOR_COUNT) * 32
    return max(1, min(-(-work_items // engine.THREADS), fill)), engine.THREADS


def _launch(engine, mode: int, args, count: int):
    """Run the sweep kernel over `count` deals; returns (acc, histogram, sorted candidate indexes) on the
    host. A shard that keeps more candidates than the launch has slots is played again with room for
    all of them (candidates are rare: a long game or a cycle)."""
    cuda = engine.cuda
    blocks, per_block = launch_size(engine, -(-count // engine.GRAB))
    arrays = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    capacity = MIN_CAPACITY
    while True:
        counter = cuda.to_device(np.zeros(1, dtype=np.int64))
        acc = cuda.to_device(np.zeros((blocks * per_block, N_ACC), dtype=np.int64))
        histogram = cuda.to_device(np.zeros(HIST_BINS, dtype=np.int64))
        n_cand = cuda.to_device(np.zeros(1, dtype=np.int64))
        cand_index = cuda.to_device(np.zeros(capacity, dtype=np.int64))
        engine.sweep_kernels[mode][blocks, per_block](*arrays, counter, acc, histogram, n_cand, cand_index)
        kept = int(n_cand.copy_to_host()[0])
        if kept <= capacity:
            return acc.copy_to_host(), histogram.copy_to_host(), np.sort(cand_index.copy_to_host()[:kept])
        capacity = kept


def threads_tally(space: DealSpace, acc, histogram, cand_index, deals_at) -> Tally:
    """The CPU sweep's tally from the lanes' tallies (rows of acc, columns A_* of kernels/sweep/modes.py)
    and the kept deals replayed on the CPU; `deals_at(indexes)` gives the deals at those indexes and
    their splits."""
    total = space.deck.total
    # The first deal that reached the most cards (the CPU's longest game), if any finished.
    best = acc[:, A_BEST_CARDS].max()
    longest = [int(acc[acc[:, A_BEST_CARDS] == best, A_BEST_INDEX].min())] if best >= 0 else []
    # The kept deals and the longest, replayed on the CPU in one call (each with its split).
    replayed = np.concatenate([cand_index, np.array(longest, dtype=np.int64)])
    deals, splits = deals_at(replayed)
    rows = np.zeros((len(replayed), N_FIELDS), dtype=np.int64)
    if len(replayed):
        play_rows(FAST, deals, splits, default_brent_start(total), rows)
    kept = len(cand_index)
    cand_deals, cand_rows = deals[:kept], rows[:kept]
    stats = np.zeros(N_STATS, dtype=np.int64)
    stats[DEALS] = acc[:, A_DEALS].sum()
    # The device counts the cards of finished games; a cycle's cards (to the end of its first period,
    # as the CPU counts them) come from its replayed row.
    stats[CARDS] = acc[:, A_CARDS].sum() + sum(int(r[F_CARDS]) for r in cand_rows if r[F_OUTCOME] == CYCLE)
    stats[CYCLES] = acc[:, A_CYCLES].sum()
    stats[N_CAND] = kept
    wins = np.zeros(space.players, dtype=np.int64)
    wins[0] = acc[:, A_WIN0].sum()
    wins[1] = acc[:, A_WIN1].sum()
    longest_deal = deals[kept] if longest else np.zeros(total, dtype=np.uint8)
    longest_row = rows[kept] if longest else np.zeros(N_FIELDS, dtype=np.int64)
    stats[LONGEST_CARDS] = best if longest else 0
    stats[LONGEST_INDEX] = longest[0] if longest else -1
    return Tally(stats=stats, wins=wins, histogram=histogram, cand_deals=cand_deals, cand_rows=cand_rows,
                 cand_index=cand_index, longest_deal=longest_deal, longest_row=longest_row)


@kernel
def random_deals_at(key, penalties, indexes, out):
    """Deals indexes[i] of the random stream `key` into out[i] (the host's copy of kept deals)."""
    positions = np.zeros(out.shape[1], dtype=np.int64)
    for i in range(indexes.shape[0]):
        random_deal(deal_state(key, indexes[i]), positions, penalties, out[i])


def run_random(space: DealSpace, key, penalties, start: int, count: int, *, min_cards: int,
               min_tricks: int = 0) -> ShardResult:
    """Deals start..start+count-1 of the random stream `key` on the GPU: the CPU's ShardResult."""
    check_space(space)
    engine = gpu()
    total = space.deck.total

    def deals_at(indexes):
        out = np.zeros((len(indexes), total), dtype=np.uint8)
        random_deals_at(key, penalties, np.asarray(indexes, dtype=np.int64), out)
        return out, _splits(space, len(indexes))

    if count == 0:
        return ShardResult.from_tally(_empty_tally(space), space)
    nothing = np.zeros(0, dtype=np.uint8)
    args = (np.uint64(key), penalties, nothing, 0, start, nothing.reshape(0, total), total,
            space.split[0], count, engine.GRAB, default_brent_start(total), min_cards, min_tricks)
    acc, histogram, cand_index = _launch(engine, RANDOM, args, count)
    return ShardResult.from_tally(threads_tally(space, acc, histogram, cand_index, deals_at), space)


def run_exhaustive(space: DealSpace, lo: int, hi: int, *, min_cards: int, min_tricks: int = 0) -> ShardResult:
    """Ranks [lo, hi) on the GPU: the CPU's ShardResult (candidates carry offsets from lo)."""
    check_space(space)
    engine = gpu()
    count = hi - lo
    total = space.deck.total

    def deals_at(indexes):
        out = np.zeros((len(indexes), total), dtype=np.uint8)
        for i, index in enumerate(indexes):
            out[i] = space.unrank_sequence(lo + int(index))
        return out, _splits(space, len(indexes))

    if count == 0:
        result = ShardResult.from_tally(_empty_tally(space), space)
        result.rank_base = lo
        return result
    deal_count = space.count
    if deal_count < 2**63:
        starts = np.zeros((0, total), dtype=np.uint8)  # the device unranks each take's first deal
    else:
        # Ranks beyond a word: the host unranks the first deal of every take.
        starts = np.stack([space.unrank_sequence(lo + a) for a in range(0, count, engine.GRAB)])
        deal_count = 0
    counts = np.array(space.deck.counts, dtype=np.uint8)
    args = (np.uint64(0), np.zeros(0, dtype=np.uint8), counts, int(deal_count),
            lo if deal_count else 0, starts, total, space.split[0], count, engine.GRAB, default_brent_start(total),
            min_cards, min_tricks)
    acc, histogram, cand_index = _launch(engine, EXHAUSTIVE, args, count)
    result = ShardResult.from_tally(threads_tally(space, acc, histogram, cand_index, deals_at), space)
    result.rank_base = lo
    return result


def states_tally(space: DealSpace, key, penalties, start: int, count: int) -> Tally:
    """The CPU's tally of random states start..start+count-1 of the stream `key` (only cycles kept),
    played on the GPU."""
    check_space(space)
    engine = gpu()
    total = space.deck.total

    def deals_at(indexes):
        out = np.zeros((len(indexes), total), dtype=np.uint8)
        cuts = np.zeros(len(indexes), dtype=np.int64)
        states_at(key, penalties, np.asarray(indexes, dtype=np.int64), out, cuts)
        return out, np.stack([cuts, total - cuts], axis=1)

    if count == 0:
        return _empty_tally(space)
    nothing = np.zeros(0, dtype=np.uint8)
    args = (np.uint64(key), penalties, nothing, 0, start, nothing.reshape(0, total), total,
            space.split[0], count, engine.GRAB, default_brent_start(total), NO_FINITE, 0)
    acc, histogram, cand_index = _launch(engine, STATES, args, count)
    return threads_tally(space, acc, histogram, cand_index, deals_at)


def _splits(space: DealSpace, n: int) -> np.ndarray:
    return np.repeat(np.array([space.split], dtype=np.int64), n, axis=0)


def _empty_tally(space: DealSpace) -> Tally:
    return Tally.new(space.deck.total, space.players, capacity=0)
