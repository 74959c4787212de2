"""The game cut into segments (kernels/engines/segments.py) is the bitmask engine's game: trick by trick
against `trick2`, game by game (cycles, their periods and Brent's start included) against `game2`."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import space
from numba import njit

from kernels.dealspace import step_deal
from kernels.engines import default_brent_start
from kernels.engines.bitmask import game2, hand_words, trick2, words_from_positions
from kernels.engines.segments import MID, OVER, TRICK, play_segments, step
from kernels.rng import deal_state, random_cut, random_deal, stream_key


@njit(cache=True)
def random_games(key, penalties, total, size0, cut, count, brent_start, out):
    """Deals 0..count-1 of the stream (each cut at its own random place if `cut`): game2's figures and
    play_segments' side by side, one row a deal."""
    seq = np.zeros(total, dtype=np.uint8)
    positions = np.zeros(total, dtype=np.int64)
    row = np.zeros(5, dtype=np.int64)
    for j in range(count):
        state = random_deal(deal_state(key, j), positions, penalties, seq)
        s0 = random_cut(state, total) if cut else size0
        m0, n0, q0, m1, n1, q1 = words_from_positions(seq, positions, penalties.shape[0], s0)
        period, winner, tricks, cards = game2(m0, n0, q0, m1, n1, q1, 0, brent_start)
        play_segments(m0, n0, q0, m1, n1, q1, brent_start, row)
        out[j, 0], out[j, 1], out[j, 2], out[j, 3] = period, winner, tricks, cards
        out[j, 4:9] = row


@njit(cache=True)
def all_games(seq, size0, count, brent_start, out):
    """Every deal of a small deck from `seq` on, in rank order: as random_games."""
    row = np.zeros(5, dtype=np.int64)
    for j in range(count):
        m0, n0, q0 = hand_words(seq, 0, size0)
        m1, n1, q1 = hand_words(seq, size0, seq.shape[0] - size0)
        period, winner, tricks, cards = game2(m0, n0, q0, m1, n1, q1, 0, brent_start)
        play_segments(m0, n0, q0, m1, n1, q1, brent_start, row)
        out[j, 0], out[j, 1], out[j, 2], out[j, 3] = period, winner, tricks, cards
        out[j, 4:9] = row
        step_deal(seq)


@njit(cache=True)
def tricks_by_segments(key, penalties, total, count, limit, out):
    """Each deal's first `limit` tricks played by trick2 and by segments: the number of tricks at whose
    end the two states differ (0 expected), and of segments played."""
    seq = np.zeros(total, dtype=np.uint8)
    positions = np.zeros(total, dtype=np.int64)
    for j in range(count):
        random_deal(deal_state(key, j), positions, penalties, seq)
        m0, n0, q0, m1, n1, q1 = words_from_positions(seq, positions, penalties.shape[0], total // 2)
        lead, mL, nL, qL, mO, nO, qO = np.uint64(0), m0, n0, q0, m1, n1, q1
        who, mX, nX, qX, mY, nY, qY = np.uint32(0), m0, np.uint32(n0), q0, m1, np.uint32(n1), q1
        v, pm, pq, pl, pc = np.uint32(0), np.uint64(0), np.uint64(0), np.uint32(0), np.uint32(0)
        for _ in range(limit):
            lead, mL, nL, qL, mO, nO, qO, cards, over = trick2(lead, mL, nL, qL, mO, nO, qO)
            while True:
                mX, nX, qX, mY, nY, qY, who, v, pm, pq, pl, pc, event = step(mX, nX, qX, mY, nY, qY, who, v, pm, pq,
                                                                              pl, pc)
                out[1] += 1
                if event != MID:
                    break
            same = np.uint64(pl) == cards and (event == OVER) == over and np.uint64(who) == lead
            if not over:
                same = same and event == TRICK and (mX, np.uint64(nX), qX, mY, np.uint64(nY), qY) == (mL, nL, qL, mO,
                                                                                                       nO, qO)
            if not same:
                out[0] += 1
            if over:
                break


PENALTIES = np.array([1] * 4 + [2] * 4 + [3] * 4 + [4] * 4, dtype=np.uint8)


def test_every_trick_is_trick2s():
    out = np.zeros(2, dtype=np.int64)
    tricks_by_segments(stream_key(3, 1), PENALTIES, 52, 3000, 10_000, out)
    assert out[0] == 0 and out[1] > 3000 * 40


@pytest.mark.parametrize("cut", [False, True], ids=["deals", "random states"])
@pytest.mark.parametrize("brent_start", [0, 1, default_brent_start(52)])
def test_random_standard_games_are_game2s(cut, brent_start):
    out = np.zeros((10_000, 9), dtype=np.int64)
    random_games(stream_key(7, 2), PENALTIES, 52, 26, cut, len(out), brent_start, out)
    assert np.array_equal(out[:, :4], out[:, 4:8])
    # a trick is one segment of free play and, unless it ends the game there, one or more of payment
    assert (out[:, 8] >= out[:, 2]).all() and out[:, 8].sum() > 2 * out[:, 2].sum()


@pytest.mark.parametrize("deck, split", [("0:6,1:2,2:2", None), ("0:8,1:2,2:2,3:2", None), ("0:6,1:2,2:2", "3,7"),
                                         ("0:6,1:2,2:2", "0,10")])
@pytest.mark.parametrize("brent_start", [0, 2])
def test_every_small_deal_is_game2s_cycles_included(deck, split, brent_start):
    sp = space(deck, split)
    count = min(sp.count, 200_000)
    out = np.zeros((count, 9), dtype=np.int64)
    all_games(sp.unrank_sequence(0), sp.split[0], count, brent_start, out)
    assert np.array_equal(out[:, :4], out[:, 4:8])
    if split is None:
        assert (out[:, 0] > 0).sum() > 0  # these decks hold cycles: their periods agree too
    if split == "0,10":
        assert (out[:, 2] == 0).all() and (out[:, 1] == 1).all()  # hand 1 holds nothing: hand 2 wins at once
