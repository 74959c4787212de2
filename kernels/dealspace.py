"""The deal space of a deck and split: its size, and the bijection rank <-> deal (docs/rules.md).

A deal is read as one sequence of cards (hand 1, then hand 2, ...); the split only says where
the sequence is cut into hands. Deals are numbered from 0 in the lexicographic order of these
sequences with cards ordered from the highest penalty value down and plain cards last
(A < K < Q < J < plain). So the deal space of a split is the set of distinct permutations of the
deck, whatever the split.

Ranks exceed 64 bits (the standard deck has 653,534,134,886,878,245,000 deals), so ranks are
Python integers here, at the edge. Kernels never unrank: they receive the first deal of a range
as an array and step through the range with `next_deal`, which costs O(1) amortised per deal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ._jit import kernel
from .decks import Deck, check_deck, parse_split
from .errors import BmnError
from .notation import MAX_VALUE


@dataclass(frozen=True)
class DealSpace:
    deck: Deck
    split: tuple[int, ...]

    @classmethod
    def of(cls, deck: Deck, split: str | Sequence[int] | None = None, players: int | None = None) -> DealSpace:
        check_deck(deck)
        return cls(deck, parse_split(split, deck, players))

    @property
    def players(self) -> int:
        return len(self.split)

    @property
    def count(self) -> int:
        """Number of distinct deals: total! / prod(count_v!)."""
        return _multinomial(self.deck.counts)

    def first(self) -> np.ndarray:
        """The deal of rank 0 as a card-value sequence (highest values first)."""
        return np.array(self.deck.cards(), dtype=np.uint8)

    def cut(self, sequence: Sequence[int]) -> tuple[tuple[int, ...], ...]:
        """Cut a card sequence into the hands of this split."""
        hands, start = [], 0
        for size in self.split:
            hands.append(tuple(int(v) for v in sequence[start : start + size]))
            start += size
        return tuple(hands)

    def rank(self, deal: Sequence[Sequence[int]]) -> int:
        """The rank of a deal of this deck and split."""
        sizes = tuple(len(h) for h in deal)
        if sizes != self.split:
            raise BmnError(f"the deal's hand sizes {_sizes(sizes)} differ from the split {_sizes(self.split)}")
        if Deck.of_deal(deal) != self.deck:
            raise BmnError(f"the deal's cards ({Deck.of_deal(deal).spec()}) are not the deck {self.deck.spec()}")
        return rank_sequence([v for hand in deal for v in hand], self.deck)

    def unrank(self, rank: int) -> tuple[tuple[int, ...], ...]:
        return self.cut(self.unrank_sequence(rank))

    def unrank_sequence(self, rank: int) -> np.ndarray:
        """The deal of a rank, as one card-value sequence (uint8)."""
        rank = int(rank)
        total_deals = self.count
        if not 0 <= rank < total_deals:
            raise BmnError(f"rank {rank} is outside this deal space, which holds ranks 0 to {total_deals - 1}")
        counts = list(self.deck.counts)
        remaining = sum(counts)
        block = total_deals  # deals that extend the prefix chosen so far
        out = np.empty(remaining, dtype=np.uint8)
        for position in range(len(out)):
            for value in range(MAX_VALUE, -1, -1):
                c = counts[value]
                if c == 0:
                    continue
                sub = block * c // remaining  # deals whose next card is `value`
                if rank < sub:
                    out[position] = value
                    counts[value] -= 1
                    block = sub
                    break
                rank -= sub
            remaining -= 1
        return out

    def check_range(self, lo: int, hi: int) -> None:
        total_deals = self.count
        if not 0 <= lo <= hi <= total_deals:
            raise BmnError(
                f"rank range {lo}:{hi} is outside this deal space, which holds ranks 0 to {total_deals - 1}"
            )


def rank_sequence(sequence: Sequence[int], deck: Deck) -> int:
    counts = list(deck.counts)
    remaining = sum(counts)
    block = _multinomial(counts)
    rank = 0
    for card in sequence:
        card = int(card)
        # Every deal whose card here sorts before `card` (a higher value) comes first.
        for value in range(MAX_VALUE, card, -1):
            if counts[value]:
                rank += block * counts[value] // remaining
        block = block * counts[card] // remaining
        counts[card] -= 1
        remaining -= 1
    return rank


def _multinomial(counts: Sequence[int]) -> int:
    result, total = 1, 0
    for c in counts:
        for i in range(1, c + 1):
            total += 1
            result = result * total // i
    return result


def _sizes(sizes: Sequence[int]) -> str:
    return ",".join(str(s) for s in sizes)


@kernel(inline="always")
def next_deal(seq) -> bool:
    """Step a card sequence to the next deal in rank order, in place; False after the last deal."""
    return step_deal(seq) >= 0


@kernel(inline="always")
def step_deal(seq) -> int:
    """Step to the next deal in rank order, in place; returns the first position that changed
    (every card before it is unchanged), or -1 after the last deal.

    This is the classic next-permutation step with the order reversed (higher values sort
    first): find the last position i whose card sorts before its successor, swap it with the last
    card after it that sorts after it, and reverse the tail. Amortised, it touches O(1) cards.
    """
    n = seq.shape[0]
    i = n - 2
    while i >= 0 and seq[i] <= seq[i + 1]:
        i -= 1
    if i < 0:
        return -1
    j = n - 1
    while seq[j] >= seq[i]:
        j -= 1
    t = seq[i]
    seq[i] = seq[j]
    seq[j] = t
    lo = i + 1
    hi = n - 1
    while lo < hi:
        t = seq[lo]
        seq[lo] = seq[hi]
        seq[hi] = t
        lo += 1
        hi -= 1
    return i


@kernel(inline="always")
def unrank_into(rank, counts, deal_count, left, seq):
    """The deal of `rank` (as `DealSpace.unrank_sequence`) into `seq`, in 64-bit words: for deal
    spaces of `deal_count` < 2^63 deals (the GPU's exhaustive sweep unranks with it on the device).
    `counts[v]` is the deck's number of cards of value v; `left` is scratch of the same length.

    block * c / remaining (the deals whose next card has value v) is a whole number, computed as
    (block // remaining) * c + (block % remaining) * c // remaining so that nothing overflows."""
    rank = np.uint64(rank)
    block = np.uint64(deal_count)
    remaining = np.uint64(0)
    for v in range(counts.shape[0]):
        left[v] = counts[v]
        remaining += np.uint64(counts[v])
    for position in range(seq.shape[0]):
        for value in range(counts.shape[0] - 1, -1, -1):
            c = np.uint64(left[value])
            if c == np.uint64(0):
                continue
            sub = (block // remaining) * c + ((block % remaining) * c) // remaining
            if rank < sub:
                seq[position] = value
                left[value] -= 1
                block = sub
                break
            rank -= sub
        remaining -= np.uint64(1)
