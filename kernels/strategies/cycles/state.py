"""A cycle the factory holds (`CycleState`), and the target deck it grows cycles towards (`Target`)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...cyclestate import cycle_state, walk
from ...decks import Deck
from ...game import CYCLE, F_CYCLE_ID, F_OUTCOME, cycle_id_hex
from ...notation import parse_deal

Hands = tuple[tuple[int, ...], tuple[int, ...]]


class CycleState(NamedTuple):
    """A cycle: its cycle_id and its canonical state, hand 1 (the leader) first (kernels/cyclestate.py)."""

    cycle_id: str
    hands: Hands

    @property
    def sizes(self) -> tuple[int, int]:
        return len(self.hands[0]), len(self.hands[1])

    @property
    def cards(self) -> int:
        return len(self.hands[0]) + len(self.hands[1])

    def composition(self, values: int) -> np.ndarray:
        """How many cards of each value 0..values-1 the cycle holds."""
        return np.bincount(np.array(self.hands[0] + self.hands[1], dtype=np.int64), minlength=values)

    def states(self) -> list[tuple[np.ndarray, int]]:
        """The states of the cycle, in play order from this one (see `cycle_states`)."""
        return cycle_states(self.hands)


def cycle_states(hands: Hands) -> list[tuple[np.ndarray, int]]:
    """The states of the cycle through `hands` (hand 1 leading), each as (row, cut) from its leader's
    seat: the leader's hand is the row's first `cut` cards."""
    out = []
    for lead, state in walk(hands).states:
        first, second = (state[0], state[1]) if lead == 0 else (state[1], state[0])
        out.append((np.array(first + second, dtype=np.uint8), len(first)))
    return out


def cycles_among(rows: np.ndarray, cuts: np.ndarray, out: np.ndarray) -> list[CycleState]:
    """The distinct cycles among played rows (row i cut at cuts[i], its result out[i]), by cycle_id."""
    seen: dict[int, int] = {}
    for i in np.nonzero(out[:, F_OUTCOME] == CYCLE)[0]:
        seen.setdefault(int(out[i, F_CYCLE_ID]), int(i))
    cycles = []
    for cid, i in sorted(seen.items()):
        row, cut = rows[i], int(cuts[i])
        text = cycle_state((tuple(int(v) for v in row[:cut]), tuple(int(v) for v in row[cut:])))
        cycles.append(CycleState(cycle_id_hex(cid), tuple(tuple(h) for h in parse_deal(text))))
    return cycles


class Target:
    """The deck the factory grows cycles into, and how far a composition is from it."""

    def __init__(self, deck: Deck, slack: int):
        self.counts = np.array(deck.counts, dtype=np.int64)
        self.total = int(self.counts.sum())
        self.values = [int(v) for v in np.nonzero(self.counts)[0]]  # the values the deck has
        self.slack = slack  # cards over the deck's count of their value a growing cycle may hold

    def excess(self, counts: np.ndarray) -> int:
        """Cards over the target deck's count of their value."""
        return int(np.maximum(0, counts - self.counts).sum())

    def composition(self, cycle: CycleState) -> np.ndarray:
        return cycle.composition(len(self.counts))

    def allowed(self, counts: np.ndarray) -> np.ndarray:
        """The values one more card may take: the deck's values, keeping the excess within `slack`."""
        values = [v for v in self.values
                  if self.excess(counts + np.eye(len(self.counts), dtype=np.int64)[v]) <= self.slack]
        return np.array(values, dtype=np.uint8)

    def holds(self, cycle: CycleState) -> bool:
        """The cycle has exactly the deck's cards."""
        return bool((self.composition(cycle) == self.counts).all())
