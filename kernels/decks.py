"""Decks (multisets of card values) and splits (hand sizes).

Named decks: `standard` (52 cards: 36 plain, four each of J Q K A = 1 2 3 4) and `camicia`
(40 cards: 28 plain, four each of 1 2 3). Any other deck is written `VALUE:COUNT,...`, for
example `0:14,1:2,2:2,3:2`; values are 0-9 (or `-`, J, Q, K, A).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .errors import BmnError
from .notation import MAX_CARDS, MAX_PLAYERS, MAX_VALUE, MIN_PLAYERS, parse_hand

NAMED_DECKS = {
    "standard": {0: 36, 1: 4, 2: 4, 3: 4, 4: 4},
    "camicia": {0: 28, 1: 4, 2: 4, 3: 4},
}


@dataclass(frozen=True)
class Deck:
    """How many cards of each value (index = value 0..9)."""

    counts: tuple[int, ...]

    @property
    def total(self) -> int:
        return sum(self.counts)

    @property
    def penalty_cards(self) -> int:
        return self.total - self.counts[0]

    @property
    def max_value(self) -> int:
        return max(v for v, c in enumerate(self.counts) if c)

    def spec(self) -> str:
        """The canonical text of this deck: a name where one fits, else VALUE:COUNT,..."""
        for name, table in NAMED_DECKS.items():
            if Deck.from_table(table) == self:
                return name
        return ",".join(f"{v}:{c}" for v, c in enumerate(self.counts) if c)

    def cards(self) -> list[int]:
        """The cards in deal-numbering order: highest penalty value first, plain cards last."""
        return [v for v in range(MAX_VALUE, -1, -1) for _ in range(self.counts[v])]

    @classmethod
    def from_table(cls, table: dict[int, int]) -> Deck:
        counts = [0] * (MAX_VALUE + 1)
        for value, count in table.items():
            counts[value] += count
        return cls(tuple(counts))

    @classmethod
    def of_deal(cls, deal: Sequence[Sequence[int]]) -> Deck:
        counts = [0] * (MAX_VALUE + 1)
        for hand in deal:
            for v in hand:
                counts[int(v)] += 1
        return cls(tuple(counts))


def parse_deck(spec: str) -> Deck:
    """`standard`, `camicia` or `VALUE:COUNT,...`; raises BmnError with one sentence otherwise."""
    text = str(spec).strip()
    if text.lower() in NAMED_DECKS:
        deck = Deck.from_table(NAMED_DECKS[text.lower()])
    else:
        table: dict[int, int] = {}
        for item in text.split(","):
            item = item.strip()
            value_text, sep, count_text = item.partition(":")
            if not sep or not value_text or not count_text:
                raise BmnError(
                    f"cannot read deck {spec!r}: use 'standard', 'camicia' or VALUE:COUNT pairs "
                    f"such as '0:14,1:2,2:2,3:2'"
                )
            try:
                (value,) = parse_hand(value_text.strip().upper())
            except (BmnError, ValueError):
                raise BmnError(f"deck {spec!r}: {value_text!r} is not a card value (0-9, -, J, Q, K, A)") from None
            try:
                count = int(count_text)
            except ValueError:
                raise BmnError(f"deck {spec!r}: count {count_text!r} is not a whole number") from None
            if count < 0:
                raise BmnError(f"deck {spec!r}: count {count} of value {value} is negative")
            table[value] = table.get(value, 0) + count
        deck = Deck.from_table(table)
    check_deck(deck, spec)
    return deck


def check_deck(deck: Deck, spec: str | None = None) -> None:
    name = repr(spec) if spec is not None else deck.spec()
    if deck.penalty_cards == 0:
        raise BmnError(f"deck {name} has no penalty card, so there is no game to play")
    if deck.total < 2:
        raise BmnError(f"deck {name} has {deck.total} card; a game needs at least two")
    if deck.total > MAX_CARDS:
        raise BmnError(f"deck {name} has {deck.total} cards; the engine supports at most {MAX_CARDS}")


def parse_split(spec: str | Sequence[int] | None, deck: Deck, players: int | None = None) -> tuple[int, ...]:
    """Hand sizes: given as '26,26' (or a sequence), or an equal split among `players` (default 2)."""
    if spec is None or spec == "":
        n = 2 if players is None else int(players)
        if not MIN_PLAYERS <= n <= MAX_PLAYERS:
            raise BmnError(f"players must be between {MIN_PLAYERS} and {MAX_PLAYERS}, got {n}")
        if deck.total % n:
            raise BmnError(
                f"{deck.total} cards cannot be split equally among {n} players; "
                f"give hand sizes with --split (for example {_near_equal(deck.total, n)})"
            )
        return (deck.total // n,) * n
    if isinstance(spec, str):
        try:
            sizes = tuple(int(x) for x in spec.replace("/", ",").split(","))
        except ValueError:
            raise BmnError(f"cannot read split {spec!r}: write hand sizes such as 26,26") from None
    else:
        sizes = tuple(int(x) for x in spec)
    if not MIN_PLAYERS <= len(sizes) <= MAX_PLAYERS:
        raise BmnError(f"a split needs {MIN_PLAYERS} to {MAX_PLAYERS} hand sizes, got {len(sizes)}")
    if players is not None and len(sizes) != int(players):
        raise BmnError(f"split {spec!r} has {len(sizes)} hands but players is {players}")
    if any(s < 0 for s in sizes):
        raise BmnError(f"split {spec!r} has a negative hand size")
    if sum(sizes) != deck.total:
        raise BmnError(f"split {spec!r} holds {sum(sizes)} cards but the deck has {deck.total}")
    return sizes


def _near_equal(total: int, n: int) -> str:
    base, extra = divmod(total, n)
    return ",".join(str(base + (1 if i < extra else 0)) for i in range(n))
