"""The sweep kernel and its wrappers: `run_exhaustive` (a rank range), `run_random` (a stream).

One kernel plays both, one deal after another on one core: it makes deal j (the next deal of
the range, or deal j of the random stream), plays it, and tallies it (kernels/strategies/tally.py).
A third mode plays random trick-boundary states (the `states` strategy: deal j of the stream cut
at a random place drawn after it, kernels/rng.py `random_cut`), hand 1 leading.
The tally is written out here in the loop rather than in a helper taking the tally's arrays:
measured, such a call costs tens of nanoseconds per deal in Numba, a tenth of a game. It stops
early only when the candidate buffer is full, returning how far it got.

It plays through the engines' dispatch (`play_one`, kernels/engines/__init__.py) with one
specialisation: for the fast engine it keeps both hands' bitmask words itself and updates them
from what changed between one deal and the next (the few cards a step of the range moves, or the
penalty positions a random deal was drawn from) instead of reading every card of every deal (on
random deals that scan cost 120 ns of a 760 ns game; benchmarks/README.md). Every other engine
gets the whole deal.
"""

from __future__ import annotations

import numpy as np

from .._jit import kernel
from ..dealspace import DealSpace, step_deal
from ..engines import FAST, default_brent_start, engine_named, new_workspace, pick_engine, play_one
from ..engines.bitmask import hand_words, play2_words, rescan_from, words_from_positions
from ..errors import BmnError
from ..game import CYCLE, F_CARDS, F_OUTCOME, F_TRICKS, F_WINNER, N_FIELDS, GameResult
from ..notation import format_deal
from ..rng import deal_state, random_cut, random_deal, stream_key
from .tally import (CARDS, CYCLES, DEALS, HIST_BINS, LONGEST_CARDS, LONGEST_INDEX, N_CAND, Candidate, ShardResult,
                    grow, new_tally, tally_args)

EXHAUSTIVE = 0
RANDOM = 1
STATES = 2  # RANDOM, each deal cut at its own random place (split[] is rewritten per state)


@kernel
def _keep(seq, row, index, stats, cand_deals, cand_rows, cand_index):
    """Add a candidate (the rare path). Returns False once the buffer is full."""
    k = stats[N_CAND]
    cand_deals[k, :] = seq
    cand_rows[k, :] = row
    cand_index[k] = index
    stats[N_CAND] = k + 1
    return k + 1 < cand_deals.shape[0]


@kernel
def sweep_kernel(mode, engine, seq, penalties, key, split, start, stop, min_cards, min_tricks, brent_start,
                 stats, wins, histogram, cand_deals, cand_rows, cand_index, longest_deal, longest_row):
    """Play deals start..stop-1 and tally them; returns the next index to play.

    EXHAUSTIVE: `seq` holds deal `start` of the range and is stepped in place (indexes are
    offsets in the range). RANDOM: deal j is deal j of the stream `key`. STATES: as RANDOM, hand 1
    holding the first random_cut cards (two players; `split` is rewritten for each state).
    """
    total = seq.shape[0]
    positions = np.zeros(total, dtype=np.int64)
    ws = new_workspace(split.shape[0], total)
    row = np.zeros(N_FIELDS, dtype=np.int64)
    s0 = split[0]
    s1 = total - s0
    n_penalty = penalties.shape[0]
    # The fast engine's specialisation (see above): the hands' words, kept across deals.
    m0, n0, q0 = hand_words(seq, 0, s0 if engine == FAST else 0)
    m1, n1, q1 = hand_words(seq, s0, s1 if engine == FAST else 0)
    j = start
    while j < stop:
        if mode != EXHAUSTIVE:
            drawn = random_deal(deal_state(key, j), positions, penalties, seq)
            if mode == STATES:
                s0 = random_cut(drawn, total)
                split[0] = s0
                split[1] = total - s0
            if engine == FAST:
                # The fast kernel's hands come straight from the penalty positions just drawn.
                m0, n0, q0, m1, n1, q1 = words_from_positions(seq, positions, n_penalty, s0)
        if engine == FAST:
            play2_words(m0, n0, q0, m1, n1, q1, seq, s0, 0, brent_start, row)
        else:
            play_one(engine, seq, split, 0, brent_start, ws, row)
        # The tally (see kernels/strategies/tally.py).
        played = row[F_CARDS]
        stats[DEALS] += 1
        stats[CARDS] += played
        keep = False
        if row[F_OUTCOME] == CYCLE:
            stats[CYCLES] += 1
            keep = True
        else:
            wins[row[F_WINNER]] += 1
            histogram[min(played, HIST_BINS - 1)] += 1
            if played > stats[LONGEST_CARDS] or stats[LONGEST_INDEX] < 0:
                stats[LONGEST_CARDS] = played
                stats[LONGEST_INDEX] = j
                longest_deal[:] = seq
                longest_row[:] = row
            # As GameResult.is_candidate, on the row.
            keep = played >= min_cards or (min_tricks > 0 and row[F_TRICKS] >= min_tricks)
        room = True
        if keep:
            room = _keep(seq, row, j, stats, cand_deals, cand_rows, cand_index)
        j += 1
        if mode == EXHAUSTIVE and j < stop:
            first = step_deal(seq)
            if engine == FAST:
                # Only the cards from `first` on changed: usually a few cards at the end of hand 2.
                if first >= s0:
                    m1, q1 = rescan_from(seq, s0, s1, m1, q1, first - s0)
                else:
                    m0, q0 = rescan_from(seq, 0, s0, m0, q0, first)
                    m1, n1, q1 = hand_words(seq, s0, s1)
        if not room:
            break
    return j


def engine_for(space: DealSpace, engine: str = "auto") -> int:
    """The engine id (kernels/engines/__init__.py) the sweep kernel plays this deal space's deals with."""
    deck = space.deck
    return engine_named(pick_engine(space.players, deck.total, deck.penalty_cards, deck.max_value, engine)).id


def run_exhaustive(space: DealSpace, lo: int, hi: int, *, min_cards: int, min_tricks: int = 0,
                   engine: str = "auto", device: str = "cpu") -> ShardResult:
    """Every deal of ranks [lo, hi), stepping from one deal to the next (no per-deal unranking).

    Candidate indexes are offsets from `lo` (rank = lo + index). `device="gpu"`: the same result,
    played on the GPU (kernels/strategies/gpusweep.py).
    """
    if device == "gpu":
        from .gpusweep import run_exhaustive_gpu
        return run_exhaustive_gpu(space, lo, hi, min_cards=min_cards, min_tricks=min_tricks)
    lo, hi = int(lo), int(hi)
    space.check_range(lo, hi)
    count = hi - lo
    tally = new_tally(space.deck.total, space.players)
    if count == 0:
        return _result(tally, space, lo)
    if count >= 2**62:
        raise BmnError(f"a shard of {count} deals is too large; cut the range into shards")
    seq = space.unrank_sequence(lo)
    split = np.array(space.split, dtype=np.int64)
    eng = engine_for(space, engine)
    brent = default_brent_start(space.deck.total)
    done = 0
    no_penalties = np.zeros(0, dtype=np.uint8)
    while True:
        done = sweep_kernel(EXHAUSTIVE, eng, seq, no_penalties, np.uint64(0), split, done, count, int(min_cards),
                            int(min_tricks), brent, *tally_args(tally))
        if done >= count:
            return _result(tally, space, lo)
        grow(tally)


def run_random(space: DealSpace, seed: int, shard: int, count: int, *, start: int = 0, min_cards: int,
               min_tricks: int = 0, engine: str = "auto", device: str = "cpu") -> ShardResult:
    """Deals start..start+count-1 of the uniform random stream of (seed, shard).

    Candidate indexes are deal numbers in the stream, so any candidate can be regenerated.
    `device="gpu"`: the same result, played on the GPU (kernels/strategies/gpusweep.py).
    """
    if device == "gpu":
        from .gpusweep import run_random_gpu
        return run_random_gpu(space, seed, shard, count, start=start, min_cards=min_cards, min_tricks=min_tricks)
    tally = new_tally(space.deck.total, space.players)
    penalties = np.array([v for v in space.deck.cards() if v], dtype=np.uint8)
    split = np.array(space.split, dtype=np.int64)
    eng = engine_for(space, engine)
    brent = default_brent_start(space.deck.total)
    key = stream_key(int(seed), int(shard))
    j, stop = int(start), int(start) + int(count)
    seq = np.zeros(space.deck.total, dtype=np.uint8)
    while True:
        j = sweep_kernel(RANDOM, eng, seq, penalties, key, split, j, stop, int(min_cards), int(min_tricks), brent,
                         *tally_args(tally))
        if j >= stop:
            return ShardResult.from_tally(tally, space)
        grow(tally)


NO_FINITE = 2**62  # min_cards that keeps no finished game: only cycles are candidates


def run_random_states(space: DealSpace, seed: int, shard: int, count: int, *, start: int = 0, engine: str = "auto",
                      device: str = "cpu") -> ShardResult:
    """Random trick-boundary states start..start+count-1 of the stream (seed, shard), two players:
    deal j of the stream, hand 1 holding its first `random_cut` cards and leading.

    The result counts the states played, their cards and the states that cycle; every state that
    cycles is a candidate (its hands cut where it was; its index is j). Finished games are not
    tallied (a state is not a deal). `device="gpu"`: the same result, played on the GPU.
    """
    if space.players != 2:
        raise BmnError("random states are two-player states")
    key = stream_key(int(seed), int(shard))
    penalties = np.array([v for v in space.deck.cards() if v], dtype=np.uint8)
    if device == "gpu":
        from .gpusweep import run_states_gpu
        tally = run_states_gpu(space, key, penalties, int(count), start=int(start))
    else:
        tally = new_tally(space.deck.total, space.players)
        split = np.array(space.split, dtype=np.int64)  # rewritten by the kernel for each state
        eng = engine_for(space, engine)
        brent = default_brent_start(space.deck.total)
        j, stop = int(start), int(start) + int(count)
        seq = np.zeros(space.deck.total, dtype=np.uint8)
        while True:
            j = sweep_kernel(STATES, eng, seq, penalties, key, split, j, stop, NO_FINITE, 0, brent, *tally_args(tally))
            if j >= stop:
                break
            grow(tally)
    stats = tally["stats"]
    result = ShardResult.empty(space.players)
    result.deals, result.cards, result.cycles = int(stats[DEALS]), int(stats[CARDS]), int(stats[CYCLES])
    kept = int(stats[N_CAND])
    index = tally["cand_index"][:kept].copy()
    cuts = np.zeros(kept, dtype=np.int64)
    rows = np.zeros((kept, space.deck.total), dtype=np.uint8)
    states_at(key, penalties, index, rows, cuts)
    letters = space.deck.max_value <= 4
    result.candidates = [Candidate(format_deal([rows[k, :cuts[k]], rows[k, cuts[k]:]], letters), int(index[k]),
                                   GameResult.from_row(tally["cand_rows"][k])) for k in range(kept)]
    return result


@kernel
def states_at(key, penalties, indexes, out, cuts):
    """States indexes[i] of the random stream `key`: the deal into out[i], hand 1's cards into cuts[i]."""
    positions = np.zeros(out.shape[1], dtype=np.int64)
    for i in range(indexes.shape[0]):
        cuts[i] = random_cut(random_deal(deal_state(key, indexes[i]), positions, penalties, out[i]), out.shape[1])


def _result(tally: dict, space: DealSpace, lo: int) -> ShardResult:
    result = ShardResult.from_tally(tally, space)
    result.rank_base = lo
    return result
