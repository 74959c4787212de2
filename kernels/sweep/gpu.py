"""The sweeps on a GPU: `run_random`, `run_exhaustive` and `run_random_states` with `device="gpu"` land here.

A GPU batch (many shards: a GPU actor takes `gpu_batch` of them at a call) is played in as few launches
as its size allows, usually one: each shard (a "job") is one or more *pieces* of the launch's work, the
device tallies each piece apart (kernels/sweep/cuda.py) and reduces the tallies itself, and this module
sums each job's pieces, replays on the CPU the few deals the device kept (the candidates, every cycle
among them) and each job's longest game, so that their rows (preperiod, period, cycle id) are exactly
the CPU engine's. The tally is then the one the CPU's sweep fills, read by the same
`ShardResult.from_tally`: a GPU shard equals a CPU shard in every field.

What a launch is made of:
- its grid: as many one-warp blocks as the device holds at once for the compiled kernel (CUDA's
  occupancy for its registers and shared memory, times the multiprocessors), fewer for a small launch;
- its grab (deals a lane takes at a time): enough runs for every lane to take about TAKES_PER_LANE;
- its buffers: allocated on the device and zeroed there (nothing zero-filled is copied in); what comes
  back is the pieces' tallies, their longest games, the histogram's rows up to the longest game, and
  the kept deals;
- kept deals: lanes stop taking work while the kept-deal buffer is nearly full (room for every lane's
  run in progress), the host empties it and launches again from where the work counter stopped, so a
  shard that keeps many deals (a small deck's) is never played twice;
- at most MAX_LAUNCH deals (a lane counts in 32 bits): a larger batch is cut into launches, a piece
  across two of them split in two.

Exhaustive shards: a rank of the standard deck exceeds 64 bits, but the ranks of a shard's range share
their first cards. The host cuts each range into pieces whose deals all begin with one prefix and whose
ranks are those of the cards after it, counted among the orders of those cards alone (fewer than 2^62),
so the device unranks every run itself in 64-bit words; the host's work is a few big-number unrankings
per shard (`exhaustive_pieces`), and the kept deals are unranked again in compiled code.

Which deals a shard holds does not depend on the device: the random stream and the rank order are
the CPU's, only the order in which the device plays them differs, and nothing in the tally depends on
that order (sums, a histogram, candidates sorted by index, the longest game first met).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from .._jit import kernel
from ..dealspace import DealSpace, rank_sequence, unrank_into
from ..decks import Deck
from ..engines import FAST, default_brent_start, play_rows
from ..engines.bitmask import fits
from ..errors import BmnError
from ..game import CYCLE, F_CARDS, F_OUTCOME, F_TRICKS, F_WINNER, N_FIELDS, WIN
from ..notation import MAX_VALUE
from ..rng import deal_state, random_deal
from ..tally import CARDS, CYCLES, DEALS, HIST_BINS, LONGEST_CARDS, LONGEST_INDEX, N_CAND, N_STATS, ShardResult, Tally
from .modes import (
    EXHAUSTIVE,
    N_PIECE,
    NO_FINITE,
    OFFSET_BITS,
    P_CARDS,
    P_CYCLES,
    P_DEALS,
    P_WIN0,
    P_WIN1,
    RANDOM,
    STATES,
)
from .streams import states_at

REFUSAL = ("the GPU engine holds two-player deals of at most 64 cards and 16 penalty cards (the fast engine's); "
           "use device = \"cpu\" for these deals")
MAX_LAUNCH = 2**31 - 2**24  # deals a launch plays at most: a lane's counts, a piece's offsets and bins are 32-bit
TAKES_PER_LANE = 32  # a launch's grab gives each lane about this many runs to take (the last ones balance)
FILL = 512  # deals per resident lane that fill the device: what gpu_batch = 0 (auto) sizes a GPU batch for
SUFFIX_LIMIT = 2**62  # an exhaustive piece's suffix space holds fewer orders than this (64-bit ranks on the device)
MIN_CAPACITY = 1 << 16  # kept-deal slots of a launch at least
CYCLE_KEPT = -1  # a kept deal's result word for a cycle (kernels/sweep/cuda.py `_keep`)
SIM_BLOCKS = 1  # blocks of a launch under numba-cuda's simulator (tests set more)
# What this process's launches did, for the tests and the hardware check: launches (each a kernel call,
# continued ones included), continued (launches that went on after the host emptied the kept deals),
# deals played.
STATS = {"launches": 0, "continued": 0, "deals": 0}


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


# ---------------------------------------------------------------- how a launch fills the device

def resident_blocks(engine=None, mode: int = RANDOM) -> int:
    """One-warp blocks the device holds at once for the mode's compiled kernel: CUDA's occupancy for its
    registers and shared memory (cuOccupancyMaxActiveBlocksPerMultiprocessor) times the multiprocessors.
    Under the simulator, SIM_BLOCKS."""
    engine = engine or gpu()
    if engine.SIMULATOR:
        return SIM_BLOCKS
    compiled = engine.sweep_kernels[mode].compile(engine.SWEEP_SIG)
    return int(compiled.max_cooperative_grid_blocks(engine.THREADS))


def grab_for(deals: int, lanes: int, most: int = 32) -> int:
    """Deals a lane takes at a time in a launch of `deals` on `lanes` lanes: about TAKES_PER_LANE runs a
    lane, at least 1 and at most `most` (the kernel's GRAB)."""
    return int(max(1, min(most, deals // max(1, lanes * TAKES_PER_LANE))))


def lanes_with_work(deals: int, lanes: int, most: int = 32) -> float:
    """The fraction of a launch's resident lanes that get a run of deals to play: the runs (of `grab_for`
    deals) over the lanes, at most 1."""
    grab = grab_for(deals, lanes, most)
    return min(1.0, -(-deals // grab) / lanes)


def batch_for(shard_deals: int, lanes: int) -> int:
    """Shards a GPU batch takes when gpu_batch = 0 (auto): enough of `shard_deals` deals each for FILL deals
    per resident lane (at least 1)."""
    return max(1, -(-lanes * FILL // max(1, shard_deals)))


# ---------------------------------------------------------------- pieces

class Piece(NamedTuple):
    """A run of one job's deals played as one unit of a launch (a job: one shard of the batch)."""

    job: int  # which job it is part of
    base: int  # its first deal's place in its job (0..)
    count: int
    index0: int  # the index its job's result gives its first deal (a deal number in the stream; a rank's offset)
    key: int = 0  # RANDOM, STATES: the random stream
    # RANDOM, STATES: its first deal's number in the stream; EXHAUSTIVE: its first rank in its suffix space
    first: int = 0
    s0: int = 0  # cards in hand 1 (STATES: each deal is cut at its own place)
    prefix: tuple[int, ...] = ()  # EXHAUSTIVE: the cards its deals begin with
    suffix_counts: tuple[int, ...] = ()  # EXHAUSTIVE: the cards after them, by value
    suffix_size: int = 0  # EXHAUSTIVE: their orders

    def part(self, offset: int, count: int) -> Piece:
        """Its deals offset..offset+count-1, as a piece of their own."""
        return self._replace(base=self.base + offset, count=count, index0=self.index0 + offset,
                             first=self.first + offset)


def stream_pieces(jobs: Sequence[tuple[int, int, int, int]]) -> list[Piece]:
    """RANDOM and STATES jobs (key, first deal, count, hand 1's cards), one piece each."""
    return [Piece(k, 0, count, first, key=key, first=first, s0=s0) for k, (key, first, count, s0) in enumerate(jobs)
            if count > 0]


def exhaustive_pieces(space: DealSpace, ranges: Sequence[tuple[int, int]]) -> list[Piece]:
    """EXHAUSTIVE jobs (ranks [lo, hi)), each cut where its ranks leave a prefix's suffix space: every piece's
    deals begin with its prefix, and their ranks among the orders of the cards after it fit 64 bits."""
    counts = list(space.deck.counts)
    pieces = []
    for k, (lo, hi) in enumerate(ranges):
        at = lo
        while at < hi:
            seq = space.unrank_sequence(at)
            cut, size = _suffix(seq, counts)
            suffix = Deck.from_table(_counts_of(seq[cut:]))
            first = rank_sequence(list(seq[cut:]), suffix)
            n = min(hi - at, size - first)
            pieces.append(Piece(k, at - lo, n, at - lo, first=first, s0=space.split[0],
                                prefix=tuple(int(v) for v in seq[:cut]), suffix_counts=tuple(suffix.counts),
                                suffix_size=size))
            at += n
    return pieces


def _suffix(seq: np.ndarray, counts: list[int]) -> tuple[int, int]:
    """The longest suffix of the deal whose orders number fewer than SUFFIX_LIMIT: (where it starts, how many)."""
    left = [0] * (MAX_VALUE + 1)
    size = 1
    best = (len(seq), 1)
    for i in range(len(seq) - 1, -1, -1):  # grow the suffix card by card: size *= n / (cards of its value)
        left[int(seq[i])] += 1
        n = len(seq) - i
        size = size * n // left[int(seq[i])]
        if size >= SUFFIX_LIMIT:
            break
        best = (i, size)
    return best


def _counts_of(cards) -> dict[int, int]:
    out: dict[int, int] = {}
    for v in cards:
        out[int(v)] = out.get(int(v), 0) + 1
    return out


def launches(pieces: list[Piece], limit: int = MAX_LAUNCH) -> list[list[Piece]]:
    """The pieces in launches of at most `limit` deals, a piece across two launches cut in two."""
    out: list[list[Piece]] = [[]]
    room = limit
    for piece in pieces:
        done = 0
        while done < piece.count:
            n = min(piece.count - done, room)
            out[-1].append(piece.part(done, n))
            done += n
            room -= n
            if room == 0:
                out.append([])
                room = limit
    return [launch for launch in out if launch]


# ---------------------------------------------------------------- a launch

class Played(NamedTuple):
    """What the device gave for each piece of a launch."""

    acc: np.ndarray  # int64 [pieces, N_PIECE]
    best: np.ndarray  # int64 [pieces]: cards << OFFSET_BITS | (LOW - offset) of its longest game, -1: none
    histogram: np.ndarray  # int32 [rows, pieces]: finished games by cards (rows up to the longest)
    kept: np.ndarray  # int64 [kept, 2]: (piece << OFFSET_BITS) | offset, and its result word (cuda.py `_keep`)


def play(engine, mode: int, pieces: list[Piece], space: DealSpace, penalties: np.ndarray, min_cards: int,
         min_tricks: int, blocks: int | None = None) -> Played:
    """One launch (and its continuations, while its kept deals fill their buffer) over `pieces`."""
    cuda = engine.cuda
    total = space.deck.total
    n = len(pieces)
    deals = sum(p.count for p in pieces)
    resident = blocks or resident_blocks(engine, mode)
    grab = grab_for(deals, resident * engine.THREADS, engine.GRAB)
    starts = np.zeros(n + 1, dtype=np.int64)
    for i, p in enumerate(pieces):
        starts[i + 1] = starts[i] + -(-p.count // grab) * grab
    grid = max(1, min(resident, -(-int(starts[-1] // grab) // engine.THREADS)))
    lanes = grid * engine.THREADS
    exhaustive = mode == EXHAUSTIVE
    prefixes = np.zeros((n if exhaustive else 0, total), dtype=np.uint8)
    suffix_counts = np.zeros((n if exhaustive else 0, MAX_VALUE + 1), dtype=np.uint8)
    for i, p in enumerate(pieces):
        if exhaustive:
            prefixes[i, :len(p.prefix)] = p.prefix
            suffix_counts[i] = p.suffix_counts
    arrays = [np.array([p.key for p in pieces], dtype=np.uint64), np.array([p.first for p in pieces], dtype=np.int64),
              starts, np.array([p.count for p in pieces], dtype=np.int64),
              np.array([p.s0 for p in pieces], dtype=np.int64), penalties, prefixes,
              np.array([len(p.prefix) for p in pieces], dtype=np.int64), suffix_counts,
              np.array([p.suffix_size for p in pieces], dtype=np.int64)]
    args = [cuda.to_device(a) for a in arrays]
    counter = _filled(engine, (1,), np.int64, 0)
    acc = _filled(engine, (n, N_PIECE), np.int64, 0)
    best = _filled(engine, (n,), np.int64, 0xFF)  # -1 in every word: no finished game
    histogram = _filled(engine, (HIST_BINS, n), np.int32, 0)
    n_cand = _filled(engine, (1,), np.int64, 0)
    headroom = lanes * grab  # every lane's run in progress may keep all its deals
    capacity = max(MIN_CAPACITY, 4 * headroom)
    cand = cuda.device_array((capacity, 2), dtype=np.int64)
    kept = []
    STATS["deals"] += deals
    brent_start = default_brent_start(total)
    assert brent_start >= 1, "the kernel saves Brent's state at trick brent_start, which must come after a trick"
    while True:
        STATS["launches"] += 1
        engine.sweep_kernels[mode][grid, engine.THREADS](
            *args, total, grab, brent_start, min_cards, min_tricks, capacity - headroom, counter, acc,
            best, histogram, n_cand, cand)
        found = int(n_cand.copy_to_host()[0])
        if found > capacity:
            raise RuntimeError(f"the GPU kept {found} deals in {capacity} slots (the headroom is {headroom})")
        kept.append(cand[:found].copy_to_host() if found else np.zeros((0, 2), dtype=np.int64))
        if int(counter.copy_to_host()[0]) >= starts[-1]:
            break
        # Stopped for room: the kept deals are out; go on from where the work counter stopped, with more room.
        STATS["continued"] += 1
        n_cand = _filled(engine, (1,), np.int64, 0)
        if 2 * found > capacity:
            capacity *= 2
            cand = cuda.device_array((capacity, 2), dtype=np.int64)
    best_host = best.copy_to_host()
    rows = min(HIST_BINS, int(best_host.max(initial=-1) >> OFFSET_BITS) + 1) if (best_host >= 0).any() else 0
    return Played(acc.copy_to_host(), best_host,
                  histogram[:rows].copy_to_host() if rows else np.zeros((0, n), dtype=np.int32), np.concatenate(kept))


def _filled(engine, shape, dtype, byte: int):
    """A device array of `shape`, every byte set to `byte` on the device (nothing copied in)."""
    if engine.SIMULATOR:
        return engine.cuda.to_device(np.full(shape, -1 if byte == 0xFF else 0, dtype=dtype))
    array = engine.cuda.device_array(shape, dtype=dtype)
    array.gpu_data.memset(byte, array.nbytes)
    return array


# ---------------------------------------------------------------- a batch of jobs

def sweep(space: DealSpace, mode: int, pieces: list[Piece], jobs: int, penalties: np.ndarray, min_cards: int,
          min_tricks: int, deals_at: Callable[[list[Piece], np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
          blocks: int | None = None, limit: int = MAX_LAUNCH) -> list[Tally]:
    """Every job's tally (the CPU sweep's), from the pieces played in launches of at most `limit` deals.
    `deals_at(pieces, piece_of, offsets)` gives the deals at those offsets of those pieces and their splits."""
    check_space(space)
    engine = gpu()
    total = space.deck.total
    parts: list[tuple[Piece, np.ndarray, int, np.ndarray]] = []  # piece, its tally row, its best key, its histogram
    kept: list[tuple[Piece, int, int]] = []  # each kept deal's piece, offset and result word
    for launch in launches(pieces, limit):
        played = play(engine, mode, launch, space, penalties, min_cards, min_tricks, blocks)
        for i, piece in enumerate(launch):
            parts.append((piece, played.acc[i], int(played.best[i]), played.histogram[:, i]))
        for word, result in played.kept:
            kept.append((launch[int(word) >> OFFSET_BITS], int(word) & ((1 << OFFSET_BITS) - 1), int(result)))
    tallies = []
    low = (1 << OFFSET_BITS) - 1
    for job in range(jobs):
        mine = [part for part in parts if part[0].job == job]
        stats = np.zeros(N_STATS, dtype=np.int64)
        wins = np.zeros(space.players, dtype=np.int64)
        histogram = np.zeros(HIST_BINS, dtype=np.int64)
        longest: tuple[int, int, Piece, int] | None = None  # (cards, index, piece, offset) of the first longest
        for piece, row, key, hist in mine:
            stats[DEALS] += row[P_DEALS]
            stats[CARDS] += row[P_CARDS]
            stats[CYCLES] += row[P_CYCLES]
            wins[0] += row[P_WIN0]
            wins[1] += row[P_WIN1]
            histogram[:len(hist)] += hist
            if key >= 0:
                offset = low - (key & low)
                here = (key >> OFFSET_BITS, piece.index0 + offset)
                if longest is None or here[0] > longest[0] or (here[0] == longest[0] and here[1] < longest[1]):
                    longest = (*here, piece, offset)
        order = sorted((piece.index0 + off, piece, off, result) for piece, off, result in kept if piece.job == job)
        wanted = [(p, off) for _, p, off, _ in order] + ([(longest[2], longest[3])] if longest else [])
        deals, splits = deals_at([p for p, _ in wanted], np.array([off for _, off in wanted], dtype=np.int64))
        rows = np.zeros((len(wanted), N_FIELDS), dtype=np.int64)
        # A kept finished game's row is the device's (cards, tricks, winner); the cycles and the longest game
        # are replayed on the CPU for their rows (a cycle's preperiod, period and id).
        replay = [k for k, (_, _, _, result) in enumerate(order) if result == CYCLE_KEPT] + \
                 ([len(order)] if longest else [])
        for k, (_, _, _, result) in enumerate(order):
            if result != CYCLE_KEPT:
                rows[k, F_OUTCOME], rows[k, F_WINNER] = WIN, result & 1
                rows[k, F_TRICKS], rows[k, F_CARDS] = (result & ((1 << OFFSET_BITS) - 1)) >> 1, result >> OFFSET_BITS
        if replay:
            again = np.zeros((len(replay), N_FIELDS), dtype=np.int64)
            play_rows(FAST, deals[replay], splits[replay], default_brent_start(total), again)
            rows[replay] = again
        kept_here = len(order)
        cand_rows = rows[:kept_here]
        # The device counts the cards of finished games; a cycle's cards (to the end of its first period,
        # as the CPU counts them) come from its replayed row.
        stats[CARDS] += sum(int(r[F_CARDS]) for r in cand_rows if r[F_OUTCOME] == CYCLE)
        stats[N_CAND] = kept_here
        stats[LONGEST_CARDS] = longest[0] if longest else 0
        stats[LONGEST_INDEX] = longest[1] if longest else -1
        tallies.append(Tally(stats=stats, wins=wins, histogram=histogram, cand_deals=deals[:kept_here],
                             cand_rows=cand_rows, cand_index=np.array([i for i, _, _, _ in order], dtype=np.int64),
                             longest_deal=deals[kept_here] if longest else np.zeros(total, dtype=np.uint8),
                             longest_row=rows[kept_here] if longest else np.zeros(N_FIELDS, dtype=np.int64)))
    return tallies


# ---------------------------------------------------------------- the deals the host replays

@kernel
def stream_deals_at(keys, firsts, offsets, penalties, out):
    """Deal firsts[i] + offsets[i] of the random stream keys[i], into out[i]."""
    positions = np.zeros(out.shape[1], dtype=np.int64)
    for i in range(offsets.shape[0]):
        random_deal(deal_state(keys[i], firsts[i] + offsets[i]), positions, penalties, out[i])


@kernel
def ranked_deals_at(prefixes, prefix_lens, suffix_counts, suffix_sizes, firsts, offsets, out):
    """Deal i: the prefix, then the order of rank firsts[i] + offsets[i] among its suffix's (unrank_into)."""
    left = np.zeros(suffix_counts.shape[1], dtype=np.uint8)
    for i in range(offsets.shape[0]):
        fixed = prefix_lens[i]
        out[i, :fixed] = prefixes[i, :fixed]
        unrank_into(firsts[i] + offsets[i], suffix_counts[i], suffix_sizes[i], left, out[i, fixed:])


def _splits(pieces: list[Piece]) -> np.ndarray:
    return np.array([[p.s0, 0] for p in pieces], dtype=np.int64).reshape(len(pieces), 2)


def random_deals(space: DealSpace, penalties: np.ndarray):
    total = space.deck.total

    def deals_at(pieces, offsets):
        out = np.zeros((len(pieces), total), dtype=np.uint8)
        stream_deals_at(np.array([p.key for p in pieces], dtype=np.uint64),
                        np.array([p.first for p in pieces], dtype=np.int64), offsets, penalties, out)
        splits = _splits(pieces)
        splits[:, 1] = total - splits[:, 0]
        return out, splits
    return deals_at


def state_deals(space: DealSpace, penalties: np.ndarray):
    total = space.deck.total

    def deals_at(pieces, offsets):
        out = np.zeros((len(pieces), total), dtype=np.uint8)
        cuts = np.zeros(len(pieces), dtype=np.int64)
        for k, (piece, offset) in enumerate(zip(pieces, offsets)):  # (kept states are rare: cycles only)
            states_at(np.uint64(piece.key), penalties, np.array([piece.first + offset], dtype=np.int64),
                      out[k:k + 1], cuts[k:k + 1])
        return out, np.stack([cuts, total - cuts], axis=1)
    return deals_at


def ranked_deals(space: DealSpace):
    total = space.deck.total

    def deals_at(pieces, offsets):
        out = np.zeros((len(pieces), total), dtype=np.uint8)
        prefixes = np.zeros((len(pieces), total), dtype=np.uint8)
        for k, p in enumerate(pieces):
            prefixes[k, :len(p.prefix)] = p.prefix
        ranked_deals_at(prefixes, np.array([len(p.prefix) for p in pieces], dtype=np.int64),
                        np.array([p.suffix_counts for p in pieces], dtype=np.uint8).reshape(len(pieces), MAX_VALUE + 1),
                        np.array([p.suffix_size for p in pieces], dtype=np.int64),
                        np.array([p.first for p in pieces], dtype=np.int64), offsets, out)
        splits = _splits(pieces)
        splits[:, 1] = total - splits[:, 0]
        return out, splits
    return deals_at


# ---------------------------------------------------------------- what kernels/sweep/__init__.py calls

def random_tallies(space: DealSpace, jobs: Sequence[tuple[int, int, int, int]], penalties: np.ndarray, *,
                   min_cards: int, min_tricks: int = 0, blocks: int | None = None) -> list[Tally]:
    """Random deals on the GPU, one job per (key, first deal, count, hand 1's cards): each its CPU tally."""
    return sweep(space, RANDOM, stream_pieces(jobs), len(jobs), penalties, min_cards, min_tricks,
                 random_deals(space, penalties), blocks)


def run_random_batch(space: DealSpace, jobs: Sequence[tuple[int, int, int]], penalties: np.ndarray, *,
                     min_cards: int, min_tricks: int = 0, blocks: int | None = None) -> list[ShardResult]:
    """Random deals on the GPU, one job per (key, first deal, count), each its CPU ShardResult."""
    tallies = random_tallies(space, [(key, first, count, space.split[0]) for key, first, count in jobs], penalties,
                             min_cards=min_cards, min_tricks=min_tricks, blocks=blocks)
    return [ShardResult.from_tally(t, space) for t in tallies]


def run_random(space: DealSpace, key, penalties, start: int, count: int, *, min_cards: int,
               min_tricks: int = 0) -> ShardResult:
    """Deals start..start+count-1 of the random stream `key` on the GPU: the CPU's ShardResult."""
    return run_random_batch(space, [(int(key), int(start), int(count))], penalties, min_cards=min_cards,
                            min_tricks=min_tricks)[0]


def run_exhaustive_batch(space: DealSpace, ranges: Sequence[tuple[int, int]], *, min_cards: int, min_tricks: int = 0,
                         blocks: int | None = None) -> list[ShardResult]:
    """Ranks [lo, hi) of each job on the GPU, each its CPU ShardResult (candidates carry offsets from lo)."""
    check_space(space)
    pieces = exhaustive_pieces(space, ranges)
    tallies = sweep(space, EXHAUSTIVE, pieces, len(ranges), np.zeros(0, dtype=np.uint8), min_cards, min_tricks,
                    ranked_deals(space), blocks)
    results = []
    for (lo, _), t in zip(ranges, tallies):
        result = ShardResult.from_tally(t, space)
        result.rank_base = lo
        results.append(result)
    return results


def run_exhaustive(space: DealSpace, lo: int, hi: int, *, min_cards: int, min_tricks: int = 0) -> ShardResult:
    """Ranks [lo, hi) on the GPU: the CPU's ShardResult (candidates carry offsets from lo)."""
    return run_exhaustive_batch(space, [(lo, hi)], min_cards=min_cards, min_tricks=min_tricks)[0]


def states_tallies(space: DealSpace, jobs: Sequence[tuple[int, int, int]], penalties: np.ndarray,
                   blocks: int | None = None) -> list[Tally]:
    """The CPU's tallies of random states (key, first, count) of each job (only cycles kept), played on the GPU."""
    pieces = stream_pieces([(key, first, count, 0) for key, first, count in jobs])
    return sweep(space, STATES, pieces, len(jobs), penalties, NO_FINITE, 0, state_deals(space, penalties), blocks)


def states_tally(space: DealSpace, key, penalties, start: int, count: int) -> Tally:
    """The CPU's tally of random states start..start+count-1 of the stream `key` (only cycles kept),
    played on the GPU."""
    return states_tallies(space, [(int(key), int(start), int(count))], penalties)[0]
