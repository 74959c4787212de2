"""kernels/rng.py: counter-based random deals, a pure function of (seed, shard, deal number).

Runs and resumes depend on these values never changing, so they are pinned (from the code as it
was when pinned; tests/test_sweep.py pins the same stream through the random strategy).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from numba import njit

from kernels.decks import parse_deck
from kernels.notation import format_deal
from kernels.rng import GAMMA, MASK32, bounded, deal_state, mix64, next_word, random_deal, stream_key

MASK = (1 << 64) - 1


@njit(cache=True)
def deals_of(key, start, count, penalties, total):
    """Deals start..start+count-1 of stream `key`, as the random strategy's kernel draws them."""
    out = np.zeros((count, total), np.uint8)
    positions = np.zeros(total, np.int64)
    for j in range(count):
        random_deal(deal_state(key, start + j), positions, penalties, out[j])
    return out


def stream(deck: str, seed: int, shard: int, start: int, count: int) -> list[tuple[int, ...]]:
    d = parse_deck(deck)
    penalties = np.array([v for v in d.cards() if v], dtype=np.uint8)
    return [tuple(row) for row in deals_of(stream_key(seed, shard), start, count, penalties, d.total).tolist()]


def splitmix_finaliser(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def test_mix64_is_splitmix64s_finaliser():
    assert int(mix64(np.uint64(1))) == 0x5692161D100B05E5
    for z in (0, 1, 2, 0x9E3779B97F4A7C15, MASK, 123456789):
        assert int(mix64(np.uint64(z))) == splitmix_finaliser(z)


def test_stream_keys_are_pinned_and_match_the_compiled_mix():
    assert {(s, k): int(stream_key(s, k)) for s, k in ((0, 0), (1, 0), (1, 1), (7, 3))} == {
        (0, 0): 0, (1, 0): 0x7AB40E090F363A7D, (1, 1): 0xBFEF8030DDC2D772, (7, 3): 0xF0E521070CC03750}
    for seed, shard in ((5, 0), (5, 9), (2**40, 2**33)):
        inner = (int(mix64(np.uint64(seed))) + shard * int(GAMMA)) & MASK
        assert int(stream_key(seed, shard)) == int(mix64(np.uint64(inner)))
    assert stream_key(1 + 2**64, 2) == stream_key(1, 2)  # seeds are taken modulo 2^64


def test_stream_keys_differ_for_every_seed_and_shard():
    keys = {int(stream_key(seed, shard)) for seed in range(30) for shard in range(30)}
    assert len(keys) == 900


def test_deal_state_and_next_word_are_pinned():
    assert int(deal_state(stream_key(1, 0), 0)) == 0x71CAC37448049CE4
    state, word = next_word(np.uint64(5))
    assert (int(state), int(word)) == (0x9E3779B97F4A7C1A, 0x63033B0CA389C35A)
    assert int(word) == splitmix_finaliser(int(state))


@pytest.mark.parametrize("r", [1, 2, 3, 7, 52, 2**31 + 1])
def test_bounded_is_lemires_multiply_shift_with_rejection(r):
    threshold = (2**32 - r) % r
    us = [0, 1, 2**32 - 1] + np.random.default_rng(r).integers(0, 2**32, 300).tolist()
    for u in us:
        value, ok = bounded(np.uint64(u), np.uint64(r))
        low = (u * r) & 0xFFFFFFFF
        assert ok == (not low < threshold), (u, r)
        if ok:
            assert int(value) == (u * r) >> 32 < r


def test_bounded_edge_values():
    assert bounded(np.uint64(0), np.uint64(3)) == (0, False)  # the one rejected value for r = 3
    assert bounded(np.uint64(1), np.uint64(3)) == (0, True)
    assert bounded(np.uint64(2**32 - 1), np.uint64(3)) == (2, True)


def test_the_first_standard_deals_are_pinned():
    deals = [format_deal([list(d[:26]), list(d[26:])]) for d in stream("standard", 1, 0, 0, 3)]
    assert deals == ["A---Q-A-J-A----AQ---K-J---/--KQ----------QKK------JJ-",
                     "-Q---------K-Q---A---JK---/----Q----QJAJA-K-----JKA--",
                     "-A----A-A----J--J---------/KK-K-Q----QJ-Q---Q---JAK--"]


def test_a_deal_depends_only_on_its_number_and_keeps_the_deck():
    whole = stream("standard", 3, 4, 0, 50)
    assert stream("standard", 3, 4, 17, 5) == whole[17:22]  # no state carried from deal to deal
    assert stream("standard", 3, 4, 0, 50) == whole
    counts = sorted(parse_deck("standard").cards())
    assert all(sorted(d) == counts for d in whole)
    assert len(set(whole)) == 50


def test_streams_of_other_shards_and_seeds_are_other_deals():
    a, b, c = (set(stream("standard", seed, shard, 0, 300)) for seed, shard in ((1, 0), (1, 1), (2, 0)))
    assert len(a | b | c) == 900


def chi2(counts: Counter, cells: int, total: int) -> float:
    expected = total / cells
    return sum((n - expected) ** 2 / expected for n in counts.values()) + (cells - len(counts)) * expected


def test_deals_are_uniform():
    deals = stream("0:3,1:1,2:1,3:1", 11, 0, 0, 24_000)  # 120 distinct deals
    assert chi2(Counter(deals), 120, 24_000) < 180  # 119 degrees of freedom, p < 0.001 beyond


def test_deal_j_of_two_shards_are_independent():
    """The pairs (deal j of shard 0, deal j of shard 1) are uniform over all pairs: no correlation."""
    a, b = stream("0:2,1:1,2:1", 5, 0, 0, 28_800), stream("0:2,1:1,2:1", 5, 1, 0, 28_800)  # 12 deals each
    assert len(set(a)) == 12
    assert chi2(Counter(zip(a, b)), 144, 28_800) < 205  # 143 degrees of freedom, p < 0.001 beyond


def test_states_are_uniform_over_orders_and_cuts():
    """State j (the `states` strategy) is deal j cut at random_cut, drawn after the deal's draws: the
    pairs (deal, cut) are uniform over every order of the deck and every cut 1..N-1."""
    from kernels.sweep import states_at
    deck = parse_deck("0:3,1:1,2:1")  # 20 orders, 4 cuts: 80 states
    index = np.arange(16_000, dtype=np.int64)
    rows = np.zeros((len(index), deck.total), dtype=np.uint8)
    cuts = np.zeros(len(index), dtype=np.int64)
    states_at(stream_key(3, 1), np.array([1, 2], dtype=np.uint8), index, rows, cuts)
    assert cuts.min() == 1 and cuts.max() == deck.total - 1
    states = Counter((bytes(r), int(c)) for r, c in zip(rows, cuts))
    assert len(states) == 80 and chi2(states, 80, 16_000) < 125  # 79 degrees of freedom, p < 0.001 beyond


def test_random_deal_is_the_dense_fisher_yates_shuffle():
    """random_deal draws its positions without filling an array first (rng.random_positions: untouched
    entries read as their index); a plain shuffle over a filled array, drawing the same words, gives
    the same deals."""
    penalties = np.array([1, 2, 3, 4] * 4, dtype=np.uint8)
    key = stream_key(11, 5)
    for j in range(300):
        state, positions, t, word, have = deal_state(key, j), list(range(52)), 0, 0, 0
        while t < len(penalties):
            if have == 0:
                state, word = next_word(np.uint64(state))
                have, word = 2, int(word)
            u, word, have = word & int(MASK32), word >> 32, have - 1
            k, ok = bounded(np.uint64(u), np.uint64(52 - t))
            if ok:
                k = t + int(k)
                positions[t], positions[k] = positions[k], positions[t]
                t += 1
        expected = np.zeros(52, dtype=np.uint8)
        expected[positions[:16]] = penalties
        seq = np.zeros(52, dtype=np.uint8)
        random_deal(np.uint64(deal_state(key, j)), np.zeros(52, dtype=np.int64), penalties, seq)
        assert np.array_equal(seq, expected), j
