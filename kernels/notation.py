"""Hands and deals as docs/rules.md writes them.

A card is a small integer: 0 is a plain card, v > 0 a penalty card demanding v cards.
A hand is a string read top card first: `-` or `0` plain, `J Q K A` = 1 2 3 4, `1`..`9` penalty
values. A deal is a tuple of hands (hand 1 leads), written as separate strings or joined by `/`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .errors import BmnError

MIN_PLAYERS = 2
MAX_PLAYERS = 8
# The per-card engine keeps hands in ring buffers indexed with 16-bit arithmetic in places;
# 1024 cards is far beyond any deck anyone plays and keeps every buffer small.
MAX_CARDS = 1024
MAX_VALUE = 9

_CHAR_VALUE = {"-": 0, "0": 0, "J": 1, "Q": 2, "K": 3, "A": 4}
_CHAR_VALUE.update({str(d): d for d in range(1, 10)})
_LETTER = {0: "-", 1: "J", 2: "Q", 3: "K", 4: "A"}

Hand = tuple[int, ...]
Deal = tuple[Hand, ...]


def parse_hand(text: str, hand_number: int = 1) -> Hand:
    """Parse one hand; `hand_number` (1-based) only serves the error message."""
    values = []
    for position, char in enumerate(text, start=1):
        value = _CHAR_VALUE.get(char)
        if value is None:
            raise BmnError(
                f"unknown character {char!r} at position {position} of hand {hand_number} "
                f"(cards are '-' or '0' for plain, J Q K A, or digits 1-9)"
            )
        values.append(value)
    return tuple(values)


def split_hand_args(args: Iterable[str]) -> list[str]:
    """Hands may be given as separate arguments, joined by '/', or both."""
    texts: list[str] = []
    for arg in args:
        texts.extend(arg.strip().split("/"))
    return texts


def parse_deal(args: Sequence[str] | str) -> Deal:
    """Parse a deal from hand strings (`["---K..", "--Q.."]`, `"---K../--Q.."` or a mix)."""
    if isinstance(args, str):
        args = [args]
    texts = split_hand_args(args)
    deal = tuple(parse_hand(text, i) for i, text in enumerate(texts, start=1))
    check_deal(deal)
    return deal


def check_deal(deal: Sequence[Sequence[int]]) -> None:
    """Reject deals the rules or the engine's data structures cannot hold, with one sentence."""
    n = len(deal)
    if n < MIN_PLAYERS:
        raise BmnError(f"a deal needs at least {MIN_PLAYERS} hands, got {n}")
    if n > MAX_PLAYERS:
        raise BmnError(f"a deal has at most {MAX_PLAYERS} hands, got {n}")
    total = 0
    for number, hand in enumerate(deal, start=1):
        for position, value in enumerate(hand, start=1):
            if not 0 <= int(value) <= MAX_VALUE:
                raise BmnError(
                    f"card value {value} at position {position} of hand {number} is outside 0-{MAX_VALUE}"
                )
        total += len(hand)
    if total > MAX_CARDS:
        raise BmnError(f"the deal has {total} cards; the engine supports at most {MAX_CARDS}")


def uses_letters(deal: Iterable[Iterable[int]]) -> bool:
    """Standard-deck values (at most 4) are written J Q K A; anything larger is written in digits."""
    return all(v <= 4 for hand in deal for v in hand)


def format_hand(hand: Iterable[int], letters: bool = True) -> str:
    if letters:
        return "".join(_LETTER[int(v)] for v in hand)
    return "".join("-" if v == 0 else str(int(v)) for v in hand)


def format_deal(deal: Sequence[Iterable[int]], letters: bool | None = None) -> str:
    deal = [tuple(int(v) for v in hand) for hand in deal]
    if letters is None:
        letters = uses_letters(deal)
    return "/".join(format_hand(hand, letters) for hand in deal)
