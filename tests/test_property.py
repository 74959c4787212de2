"""Property tests: every kernel plays exactly like the reference, on thousands of random deals.

Decks: the standard deck (balanced and unbalanced splits, either leader), generalized decks with
few penalty cards and values up to 9, small decks where cycles are common, and 3 to 8 players.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernels.dealspace import DealSpace
from kernels.decks import parse_deck
from kernels.engines.reference import play_reference
from kernels.game import GameResult
from kernels.play import play_batch

STANDARD = [0] * 36 + [1, 2, 3, 4] * 4


def shuffled(cards, n, seed):
    rng = np.random.default_rng(seed)
    base = np.array(cards, dtype=np.uint8)
    return np.stack([rng.permutation(base) for _ in range(n)])


def cut(seq, split):
    hands, start = [], 0
    for size in split:
        hands.append(tuple(int(v) for v in seq[start : start + size]))
        start += size
    return hands


def assert_kernels_match(deals, split, leader=0):
    expected = [play_reference(cut(seq, split), leader) for seq in deals]
    engines = ["general"] + (["percard"] if len(split) == 2 else [])
    if len(split) == 2 and deals.shape[1] <= 64 and int((deals != 0).sum(axis=1).max()) <= 16:
        engines.append("fast")
    for engine in engines:
        rows = play_batch(deals, split, leader=leader, engine_name=engine)
        for seq, row, want in zip(deals, rows, expected):
            got = GameResult.from_row(row)
            assert got == want, f"{engine} on {cut(seq, split)} (leader {leader + 1}): {got} != {want}"
    return expected


@pytest.mark.parametrize("split", [(26, 26), (20, 32), (40, 12), (1, 51)])
@pytest.mark.parametrize("leader", [0, 1])
def test_standard_deck(split, leader):
    assert_kernels_match(shuffled(STANDARD, 1000, hash((split, leader)) % 1000), split, leader)


@pytest.mark.parametrize("cards,split", [
    ([0] * 8 + [1, 1], (5, 5)),
    ([0] * 7 + [1] * 3, (5, 5)),
    ([0] * 7 + [1, 1, 3], (5, 5)),
    ([0] * 7 + [1] * 2 + [3], (5, 5)),
])
def test_small_decks_with_cycles(cards, split):
    results = assert_kernels_match(shuffled(cards, 1500, len(cards)), split)
    assert any(r.outcome == "cycle" for r in results)


@pytest.mark.parametrize("deck,split", [("0:6,1:2,2:2", "5,5"), ("0:7,1:3,2:2", "4,4,4"), ("0:5,1:2,2:1,3:1", "3,3,3")])
def test_every_deal_of_small_spaces(deck, split):
    space = DealSpace.of(parse_deck(deck), split)
    deals = np.stack([space.unrank_sequence(r) for r in range(space.count)])
    results = assert_kernels_match(deals, space.split)
    assert any(r.outcome == "cycle" for r in results)


@st.composite
def generalized_deal_shapes(draw):
    players = draw(st.integers(2, 8))
    penalty = draw(st.lists(st.integers(1, 9), min_size=1, max_size=10))
    plain = draw(st.integers(0, 40))
    total = plain + len(penalty)
    if total < players:
        plain += players - total
        total = players
    cuts = sorted(draw(st.lists(st.integers(0, total), min_size=players - 1, max_size=players - 1)))
    split = tuple(b - a for a, b in zip([0] + cuts, cuts + [total]))
    leader = draw(st.integers(0, players - 1))
    seed = draw(st.integers(0, 2**32 - 1))
    return [0] * plain + penalty, split, leader, seed


@settings(max_examples=300)
@given(generalized_deal_shapes())
def test_generalized_decks_and_players(shape):
    cards, split, leader, seed = shape
    assert_kernels_match(shuffled(cards, 12, seed), split, leader)


@pytest.mark.parametrize("players", range(3, 9))
def test_many_players_standard_like(players):
    cards = STANDARD[: 52 - 52 % players]
    while not any(cards):
        cards = cards[1:] + [4]
    split = (len(cards) // players,) * players
    assert_kernels_match(shuffled(cards, 150, players), split)


@pytest.mark.parametrize("cards,split", [
    ([0] * 72 + [1, 2, 3, 4] * 8, (52, 52)),           # two standard decks
    ([0] * 100 + [1, 2, 3, 4, 5, 6, 7, 8, 9] * 5, (80, 65)),
    ([0] * 108 + [1, 2, 3, 4] * 12, (52, 52, 52)),      # three decks, three players
])
def test_decks_larger_than_the_fast_kernel_holds(cards, split):
    assert_kernels_match(shuffled(cards, 60, len(cards)), split)
