"""Hands, deals and decks as users write them, and the one-sentence errors for bad ones."""

from __future__ import annotations

import pytest

from kernels.decks import parse_deck, parse_split
from kernels.errors import BmnError
from kernels.notation import MAX_CARDS, format_deal, parse_deal, parse_hand


def test_cards():
    assert parse_hand("-0JQKA123456789") == (0, 0, 1, 2, 3, 4, 1, 2, 3, 4, 5, 6, 7, 8, 9)


def test_separate_and_joined_hands_are_the_same_deal():
    a = parse_deal(["---K---Q-KQAJ-----AAJ--J--", "----------Q----KQ-J-----KA"])
    assert a == parse_deal("---K---Q-KQAJ-----AAJ--J--/----------Q----KQ-J-----KA")
    assert format_deal(a) == "---K---Q-KQAJ-----AAJ--J--/----------Q----KQ-J-----KA"


def test_digit_decks_are_written_in_digits():
    assert format_deal(parse_deal("-9/1-")) == "-9/1-"
    assert format_deal(parse_deal("-3/1-")) == "-K/J-"


@pytest.mark.parametrize("text,message", [
    (["---K--X---", "--Q-"], "unknown character 'X' at position 7 of hand 1"),
    (["---K", "--Q-x"], "unknown character 'x' at position 5 of hand 2"),
    (["---K--Q--"], "at least 2 hands, got 1"),
    (["-J/-/-/-/-/-/-/-/-"], "at most 8 hands, got 9"),
    (["J" + "-" * 600, "-" * 600], f"at most {MAX_CARDS}"),
])
def test_bad_deals(text, message):
    with pytest.raises(BmnError, match=message):
        parse_deal(text)


def test_decks():
    assert parse_deck("standard").counts[:5] == (36, 4, 4, 4, 4)
    assert parse_deck("camicia").total == 40
    assert parse_deck("0:14,1:2,2:2,3:2").total == 20
    assert parse_deck("-:10,J:2,A:1").counts[:5] == (10, 2, 0, 0, 1)
    assert parse_deck("0:14,1:2,2:2,3:2").spec() == "0:14,1:2,2:2,3:2"
    assert parse_deck("0:36,1:4,2:4,3:4,4:4").spec() == "standard"


@pytest.mark.parametrize("spec,message", [
    ("0:10", "no penalty card"),
    ("0:10,1", "VALUE:COUNT"),
    ("0:10,X:2", "not a card value"),
    ("0:10,1:two", "not a whole number"),
    ("0:5000,1:1", "at most"),
    ("0:1", "no penalty card"),
    ("1:1", "a game needs at least two"),
])
def test_bad_decks(spec, message):
    with pytest.raises(BmnError, match=message):
        parse_deck(spec)


def test_splits():
    deck = parse_deck("standard")
    assert parse_split(None, deck) == (26, 26)
    assert parse_split(None, deck, 4) == (13, 13, 13, 13)
    assert parse_split("20,32", deck) == (20, 32)
    with pytest.raises(BmnError, match="cannot be split equally among 3 players.*18,17,17"):
        parse_split(None, deck, 3)
    with pytest.raises(BmnError, match="holds 50 cards but the deck has 52"):
        parse_split("25,25", deck)
    with pytest.raises(BmnError, match="between 2 and 8"):
        parse_split(None, deck, 9)


def test_a_deal_without_penalty_cards_is_a_deal():
    """docs/rules.md: nobody can win a trick by payment; the game ends when a hand runs out."""
    assert parse_deal(["------", "----"]) == ((0,) * 6, (0,) * 4)
