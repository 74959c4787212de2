"""A game's walk over its trick-boundary states, and a cycle written as one of its own states.

`walk` plays a game on the reference player and lists its trick-boundary states until it ends or
a state repeats: every loop over a cycle's states (backward play's roots, the cycle factory's
children, the canonical state below) is this one walk.

The cycle_id (kernels/cycleid.py) hashes the smallest encoding, seen from the leader's seat, of the
cycle's trick-boundary states. That state, written as a deal with the leader's hand first (hand 1
leads, so `bmn play` starts right on the cycle, preperiod 0), names the cycle in the tables: any
engine replays it, and backward play starts from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from .cycleid import state_encoding
from .engines.reference import Game
from .notation import format_deal


class Walk(NamedTuple):
    """A game's trick-boundary states, from its start until it ends or first repeats a state."""

    states: list[tuple]  # Game.state() at each boundary: (leader, hands), and who is still in with 3+ players
    cards: list[int]  # cards played before each state
    cycle_start: int | None  # the state the game comes back to (the first of its cycle); None: the game ends

    @property
    def cycle(self) -> list[tuple]:
        """The states of the cycle the game enters, in play order (empty for a finite game)."""
        return [] if self.cycle_start is None else self.states[self.cycle_start:]


def walk(deal: Sequence[Sequence[int]], leader: int = 0) -> Walk:
    """Play the deal (`leader` leading) to its end or its first repeated state.

    A finished game's final state is not listed (nothing is played from it), nor is the repeat.
    """
    game = Game(deal, leader)
    seen: dict[tuple, int] = {}
    states: list[tuple] = []
    cards: list[int] = []
    while not game.check_boundary():
        state = game.state()
        if state in seen:
            return Walk(states, cards, seen[state])
        seen[state] = len(states)
        states.append(state)
        cards.append(game.cards)
        if game.play_trick():
            break
    return Walk(states, cards, None)


def cycle_state(deal: Sequence[Sequence[int]], leader: int = 0, letters: bool | None = None) -> str | None:
    """The canonical state of the cycle this deal's game enters (None if the game ends)."""
    cycle = walk(deal, leader).cycle
    if not cycle:
        return None
    best = min(cycle, key=lambda s: state_encoding(s[0], s[1]))
    lead, hands = best[0], best[1]
    n = len(hands)
    return format_deal([hands[(lead + i) % n] for i in range(n)], letters)
