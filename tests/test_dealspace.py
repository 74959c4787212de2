"""Deal numbering (docs/rules.md "Deal numbering"): counts, rank <-> deal, stepping through a range."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from kernels.dealspace import DealSpace, next_deal, unrank_into
from kernels.decks import parse_deck
from kernels.errors import BmnError
from kernels.notation import format_deal, parse_deal

STANDARD = DealSpace.of(parse_deck("standard"))


def test_standard_count():
    assert STANDARD.count == 653_534_134_886_878_245_000
    assert STANDARD.count == math.factorial(52) // (math.factorial(36) * math.factorial(4) ** 4)


def test_camicia_count():
    space = DealSpace.of(parse_deck("camicia"))
    assert space.split == (20, 20)
    assert space.count == math.factorial(40) // (math.factorial(28) * math.factorial(4) ** 3)


@pytest.mark.parametrize("deal,rank", [
    ("---K---Q-KQAJ-----AAJ--J--/----------Q----KQ-J-----KA", 472460898658889399111),
    ("---AJ--Q---------QAKQJJ-QK/-----A----KJ-K--------A---", 447247122283566119055),
    ("AAAAKKKKQQQQJJJJ----------/--------------------------", 0),
])
def test_rules_vectors(deal, rank):
    assert STANDARD.rank(parse_deal(deal)) == rank
    assert format_deal(STANDARD.unrank(rank)) == deal


def test_last_rank_is_the_reversed_first_deal():
    last = STANDARD.unrank(STANDARD.count - 1)
    assert format_deal(last) == "--------------------------/----------JJJJQQQQKKKKAAAA"


def test_round_trip_random_ranks_of_the_standard_deck():
    rng = random.Random(7)
    ranks = [0, 1, STANDARD.count - 1, STANDARD.count // 2, 2**64, 2**64 - 1]
    ranks += [rng.randrange(STANDARD.count) for _ in range(500)]
    for r in ranks:
        assert STANDARD.rank(STANDARD.unrank(r)) == r


def _order_key(seq):
    # Higher penalty values sort first; plain cards last.
    return tuple(-v for v in seq)


@pytest.mark.parametrize("deck,split", [("0:3,1:2,2:1", "3,3"), ("0:4,1:1,2:1,3:1,4:1", "4,4"),
                                        ("0:3,1:1,9:2", "2,2,2"), ("0:2,1:2,2:2,3:2", "1,7")])
def test_unrank_lists_every_deal_once_in_order(deck, split):
    space = DealSpace.of(parse_deck(deck), split)
    cards = space.deck.cards()
    everything = sorted(set(itertools.permutations(cards)), key=_order_key)
    assert space.count == len(everything)
    listed = [tuple(int(v) for v in space.unrank_sequence(r)) for r in range(space.count)]
    assert listed == everything
    for r, seq in enumerate(listed):
        assert space.rank(space.cut(seq)) == r


@pytest.mark.parametrize("deck,split", [("0:3,1:2,2:1", "3,3"), ("0:4,1:1,2:1,3:1,4:1", "4,4")])
def test_next_deal_steps_through_the_whole_space(deck, split):
    space = DealSpace.of(parse_deck(deck), split)
    seq = space.first()
    for r in range(1, space.count):
        assert next_deal(seq)
        assert np.array_equal(seq, space.unrank_sequence(r))
    assert not next_deal(seq)


def test_next_deal_on_standard_ranks_beyond_64_bits():
    r = 472460898658889399111
    seq = STANDARD.unrank_sequence(r)
    for k in range(1, 2000):
        next_deal(seq)
        if k % 97 == 0:
            assert STANDARD.rank(STANDARD.cut(seq)) == r + k


def test_rank_errors():
    with pytest.raises(BmnError, match="outside this deal space"):
        STANDARD.unrank(STANDARD.count)
    with pytest.raises(BmnError, match="hand sizes"):
        STANDARD.rank(parse_deal("AAAAKKKKQQQQJJJJ-----------/-------------------------"))
    with pytest.raises(BmnError, match="not the deck"):
        STANDARD.rank(parse_deal("AAAAKKKKQQQQJJJJ---------A/--------------------------"))
    with pytest.raises(BmnError, match="outside this deal space"):
        STANDARD.check_range(5, STANDARD.count + 1)


@pytest.mark.parametrize("deck", ["camicia", "0:6,1:2,2:2", "0:8,1:3,2:3,3:2", "0:24,1:4,2:4,3:4,4:4"])
def test_unrank_in_words_matches_unrank(deck):
    """The GPU's unranking (64-bit words, deal spaces under 2^63 deals) gives the deal of every rank."""
    space = DealSpace.of(parse_deck(deck))
    assert space.count < 2**63
    counts = np.array(space.deck.counts, dtype=np.uint8)
    left = np.zeros_like(counts)
    rng = random.Random(deck)
    ranks = [0, 1, space.count - 2, space.count - 1] + [rng.randrange(space.count) for _ in range(300)]
    for rank in ranks:
        seq = np.zeros(space.deck.total, dtype=np.uint8)
        unrank_into(rank, counts, space.count, left, seq)
        assert np.array_equal(seq, space.unrank_sequence(rank)), rank
