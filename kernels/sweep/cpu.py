"""The sweeps on the CPU: one kernel for a rank range, a random stream and random states (kernels/sweep/modes.py).

One kernel plays both, one deal after another on one core: it makes deal j (the next deal of
the range, or deal j of the random stream), plays it, and tallies it (kernels/tally.py).
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
from ..game import CYCLE, F_CARDS, F_OUTCOME, F_TRICKS, F_WINNER, N_FIELDS, keeps
from ..rng import deal_state, random_cut, random_deal
from ..tally import CARDS, CYCLES, DEALS, HIST_BINS, LONGEST_CARDS, LONGEST_INDEX, N_CAND, ShardResult, Tally
from .modes import EXHAUSTIVE, NO_FINITE, RANDOM, STATES


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
    # Hand 1 leads. A variable, not the literal 0: Numba compiles a callee once more for each literal
    # argument it is passed, and play_parallel passes its leader as a variable (one compiled engine
    # for both; LLVM still folds the constant where the engine is inlined).
    leader = np.int64(0)
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
            play2_words(m0, n0, q0, m1, n1, q1, seq, s0, leader, brent_start, row)
        else:
            play_one(engine, seq, split, leader, brent_start, ws, row)
        # The tally (see kernels/tally.py).
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
            keep = keeps(played, row[F_TRICKS], min_cards, min_tricks)
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
                   engine: str = "auto") -> ShardResult:
    """Every deal of ranks [lo, hi), stepping from one deal to the next (no per-deal unranking)."""
    count = hi - lo
    tally = Tally.new(space.deck.total, space.players)
    if count == 0:
        return _result(tally, space, lo)
    seq = space.unrank_sequence(lo)
    split = np.array(space.split, dtype=np.int64)
    eng = engine_for(space, engine)
    brent = default_brent_start(space.deck.total)
    done = 0
    no_penalties = np.zeros(0, dtype=np.uint8)
    while True:
        done = sweep_kernel(EXHAUSTIVE, eng, seq, no_penalties, np.uint64(0), split, done, count, int(min_cards),
                            int(min_tricks), brent, *tally)
        if done >= count:
            return _result(tally, space, lo)
        tally = tally.grown()


def run_random(space: DealSpace, key, penalties, start: int, count: int, *, min_cards: int, min_tricks: int = 0,
               engine: str = "auto") -> ShardResult:
    """Deals start..start+count-1 of the random stream `key` (penalties: the deck's penalty cards)."""
    tally = Tally.new(space.deck.total, space.players)
    split = np.array(space.split, dtype=np.int64)
    eng = engine_for(space, engine)
    brent = default_brent_start(space.deck.total)
    j, stop = start, start + count
    seq = np.zeros(space.deck.total, dtype=np.uint8)
    while True:
        j = sweep_kernel(RANDOM, eng, seq, penalties, key, split, j, stop, int(min_cards), int(min_tricks), brent,
                         *tally)
        if j >= stop:
            return ShardResult.from_tally(tally, space)
        tally = tally.grown()


def states_tally(space: DealSpace, key, penalties, start: int, count: int, *, engine: str = "auto") -> Tally:
    """The tally of random states start..start+count-1 of the stream `key`, only cycles kept."""
    tally = Tally.new(space.deck.total, space.players)
    split = np.array(space.split, dtype=np.int64)  # rewritten by the kernel for each state
    eng = engine_for(space, engine)
    brent = default_brent_start(space.deck.total)
    j, stop = start, start + count
    seq = np.zeros(space.deck.total, dtype=np.uint8)
    while True:
        j = sweep_kernel(STATES, eng, seq, penalties, key, split, j, stop, NO_FINITE, 0, brent, *tally)
        if j >= stop:
            return tally
        tally = tally.grown()


def _result(tally: Tally, space: DealSpace, lo: int) -> ShardResult:
    result = ShardResult.from_tally(tally, space)
    result.rank_base = lo
    return result
