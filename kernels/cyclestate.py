"""A cycle written as one of its own states: the state whose encoding gives its cycle_id.

The cycle_id (kernels/cycleid.py) hashes the smallest encoding, seen from the leader's seat, of the
cycle's trick-boundary states. That state, written as a deal with the leader's hand first (hand 1
leads, so `bmn play` starts right on the cycle, preperiod 0), names the cycle in the tables: any
engine replays it, and backward play starts from it.
"""

from __future__ import annotations

from typing import Sequence

from .cycleid import state_encoding
from .engines.reference import Game
from .notation import format_deal


def cycle_state(deal: Sequence[Sequence[int]], leader: int = 0, letters: bool | None = None) -> str | None:
    """The canonical state of the cycle this deal's game enters (None if the game ends)."""
    game = Game(deal, leader)
    seen: dict[tuple, int] = {}
    states: list[tuple] = []
    while True:
        if game._check_boundary():
            return None
        state = game.state()
        if state in seen:
            cycle = states[seen[state]:]
            break
        seen[state] = len(states)
        states.append(state)
        if game.play_trick():
            return None
    best = min(cycle, key=lambda s: state_encoding(s[0], s[1]))
    lead, hands = best[0], best[1]
    n = len(hands)
    return format_deal([hands[(lead + i) % n] for i in range(n)], letters)
