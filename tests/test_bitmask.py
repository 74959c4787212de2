"""The bitmask engine's own helpers (kernels/engines/bitmask.py), each against a plain-Python
computation of the same words: m (penalty positions), n (cards), q (penalty values, 4 bits each).
Its games are held to the reference in tests/test_engines.py and tests/test_property.py."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import space
from numba import njit

from kernels.engines.bitmask import (
    MAX_FAST_VALUE,
    MAX_PENALTY,
    MAX_TOTAL,
    fits,
    hand_words,
    penalty_words,
    rescan_from,
    words_from_positions,
)
from kernels.rng import deal_state, random_cut, random_deal, random_positions, stream_key

STANDARD = [0] * 36 + [1, 2, 3, 4] * 4


# (Numba hands a uint64 back to Python as an int, which it would take back as an int64: the
# words go back in as np.uint64, as the compiled loops keep them.)


def words(hand) -> tuple[int, int, int]:
    """(m, n, q) of a hand, written the slow way."""
    m = sum(1 << i for i, v in enumerate(hand) if v)
    q = sum(int(v) << (4 * k) for k, v in enumerate(v for v in hand if v))
    return m, len(hand), q


def random_decks(count: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        total = int(rng.integers(2, MAX_TOTAL + 1))
        deck = np.zeros(total, dtype=np.uint8)
        penalty = int(rng.integers(0, min(total, MAX_PENALTY) + 1))
        deck[rng.choice(total, penalty, replace=False)] = rng.integers(1, MAX_FAST_VALUE + 1, penalty)
        yield deck, int(rng.integers(0, total + 1))


def test_hand_words_are_the_positions_count_and_values_of_the_penalty_cards():
    for deal, cut in random_decks(500):
        for start, size in ((0, cut), (cut, len(deal) - cut)):
            got = tuple(int(w) for w in hand_words(deal, start, size))
            assert got == words(deal[start:start + size])


def test_hand_words_of_a_hand_with_all_sixteen_penalty_cards_fill_the_value_word():
    hand = np.array([0, 15] + [9] * 15 + [0] * 47, dtype=np.uint8)
    assert int(hand_words(hand, 0, 64)[2]) == words(hand)[2]
    assert int(hand_words(hand, 0, 64)[2]) >> 60 == 9


def test_words_from_positions_match_a_scan_of_the_hands_for_random_deals():
    key = stream_key(7, 3)
    seq = np.zeros(52, dtype=np.uint8)
    positions = np.zeros(52, dtype=np.int64)
    penalties = np.array([v for v in STANDARD if v], dtype=np.uint8)
    for j in range(300):
        random_deal(np.uint64(deal_state(key, j)), positions, penalties, seq)
        for s0 in (26, 1, 40, 51):
            got = tuple(int(w) for w in words_from_positions(seq, positions, len(penalties), s0))
            assert got == words(seq[:s0]) + words(seq[s0:])


def test_words_from_positions_do_not_depend_on_the_order_of_the_positions():
    rng = np.random.default_rng(1)
    for deal, cut in random_decks(300, seed=1):
        where = np.flatnonzero(deal)
        positions = np.zeros(len(deal), dtype=np.int64)
        positions[:len(where)] = rng.permutation(where)
        got = tuple(int(w) for w in words_from_positions(deal, positions, len(where), cut))
        assert got == words(deal[:cut]) + words(deal[cut:])


def test_rescan_from_updates_the_words_of_a_hand_whose_cards_changed_from_a_depth_on():
    rng = np.random.default_rng(2)
    for deal, _cut in random_decks(500, seed=2):
        size = len(deal)
        m, _n, q = hand_words(deal, 0, size)
        first = int(rng.integers(0, size + 1))
        changed = deal.copy()
        changed[first:] = rng.permutation(changed[first:])
        got = tuple(int(w) for w in rescan_from(changed, 0, size, np.uint64(m), np.uint64(q), first))
        want = words(changed)
        assert got == (want[0], want[2]), (deal, first)


def test_rescan_from_the_middle_of_a_deal_reads_only_that_hand():
    deal = np.array([1, 0, 2, 0, 0, 3, 0, 4, 0, 0], dtype=np.uint8)
    start, size = 4, 6  # the hand 0 3 0 4 0 0
    m, _n, q = hand_words(deal, start, size)
    deal[6:] = [4, 0, 3, 2]  # depth 2 on: 4 0 3 2
    assert tuple(int(w) for w in rescan_from(deal, start, size, np.uint64(m), np.uint64(q), 2)) == \
           words([0, 3, 4, 0, 3, 2])[::2]


@pytest.mark.parametrize("shape,held", [
    ((2, 52, 16, 4), True),
    ((2, MAX_TOTAL, MAX_PENALTY, MAX_FAST_VALUE), True),
    ((3, 52, 16, 4), False),
    ((2, MAX_TOTAL + 1, 16, 4), False),
    ((2, 52, MAX_PENALTY + 1, 4), False),
    ((2, 52, 16, MAX_FAST_VALUE + 1), False),
])
def test_fits_holds_two_players_64_cards_16_penalty_cards_values_to_15(shape, held):
    assert fits(*shape) is held


@njit(cache=True)
def _positions_both_ways(key, penalties, total, count, cut, out):
    """Deals 0..count-1 of the stream by random_deal (with words_from_positions) and by random_positions
    (with penalty_words): the rows whose positions, words or next state differ (0 expected)."""
    seq = np.zeros(total, dtype=np.uint8)
    full = np.zeros(total, dtype=np.int64)
    sparse = np.full(total, 99, dtype=np.uint8)  # never filled: random_positions must not read what it did not write
    n = penalties.shape[0]
    bad = 0
    for j in range(count):
        a = random_deal(deal_state(key, j), full, penalties, seq)
        b = random_positions(deal_state(key, j), sparse, n, total)
        s0 = random_cut(a, total) if cut else total // 2
        m0, n0, q0, m1, n1, q1 = words_from_positions(seq, full, n, s0)
        w0, r0, w1, r1 = penalty_words(sparse, penalties, s0)
        same = a == b and (m0, q0, m1, q1) == (w0, r0, w1, r1)
        for t in range(n):
            same = same and np.int64(sparse[t]) == full[t]
        if not same:
            bad += 1
    out[0] = bad


@pytest.mark.parametrize("deck", ["standard", "camicia", "0:6,1:2,2:2", "0:48,1:4,2:4,3:4,4:4", "0:50,7:5,9:9"])
@pytest.mark.parametrize("cut", [False, True], ids=["halves", "random cuts"])
def test_random_positions_draw_random_deals_deals(deck, cut):
    sp = space(deck)
    penalties = np.array([v for v in sp.deck.cards() if v], dtype=np.uint8)
    out = np.zeros(1, dtype=np.int64)
    _positions_both_ways(stream_key(5, 9), penalties, sp.deck.total, 20_000, cut, out)
    assert out[0] == 0
