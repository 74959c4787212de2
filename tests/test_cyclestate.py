"""A game's walk over its trick-boundary states (kernels/cyclestate.py), against the reference's trace.

The canonical cycle state itself is tested with the census (tests/test_census.py).
"""

from __future__ import annotations

import pytest
from helpers import CASELLA, space

from kernels.cyclestate import cycle_state, walk
from kernels.engines.reference import Game, play_reference, trace_reference
from kernels.notation import parse_deal


def traced(deal, leader=0):
    """(leader, hands) at every boundary and the cards played before it, to the end or first repeat."""
    game = Game(deal, leader)
    states, cards = [game.state()], [0]
    for rec in trace_reference(deal, leader):
        states.append((rec.leader, rec.hands))
        cards.append(rec.cards)
    return states, cards


@pytest.mark.parametrize("deck", ["0:8,1:2", "0:7,1:3", "0:6,1:2,2:2"])
def test_walk_lists_the_states_the_reference_plays_through(deck):
    sp = space(deck)
    seen_cycle = seen_win = False
    for rank in range(sp.count):
        deal = sp.unrank(rank)
        w, r = walk(deal), play_reference(deal)
        states, cards = traced(deal)
        if r.outcome == "cycle":
            seen_cycle = True
            # The repeat (the reference's last state) is not listed; the walk stops where it comes back.
            assert w.states == states[:-1] and w.cards == cards[:-1]
            assert w.cycle_start == r.preperiod_tricks == states.index(states[-1])
            assert len(w.cycle) == r.period_tricks and w.cards[w.cycle_start] == r.preperiod_cards
            assert cycle_state(deal) is not None
        else:
            seen_win = True
            # The final state (nothing is played from it) is not listed.
            assert w.cycle_start is None and w.cycle == []
            assert w.states == states[:-1] and w.cards == cards[:-1] and len(w.states) == r.tricks
            assert cycle_state(deal) is None
    assert seen_cycle and seen_win


def test_walk_from_a_state_led_by_hand_2():
    deal = parse_deal(CASELLA)
    mirrored = walk(deal[::-1], leader=1)
    assert mirrored.states[0] == (1, tuple(tuple(h) for h in deal[::-1]))
    assert [(1 - lead, hands[::-1]) for lead, hands in mirrored.states] == walk(deal).states


def test_walk_with_three_players_repeats_only_whole_states():
    """With 3+ players a state also says who is still in (an empty hand may still have to pay)."""
    sp = space("0:10,1:1,2:1", players=3)
    cycles = 0
    for rank in range(sp.count):
        deal = sp.unrank(rank)
        w, r = walk(deal), play_reference(deal)
        assert all(len(state) == 3 for state in w.states)  # (leader, hands, still in)
        if r.outcome == "cycle":
            cycles += 1
            assert (w.cycle_start, len(w.cycle)) == (r.preperiod_tricks, r.period_tricks)
            assert w.cards[w.cycle_start] == r.preperiod_cards
        else:
            assert w.cycle_start is None and len(w.states) == r.tricks
    assert cycles


def test_a_game_over_at_its_start_has_no_state():
    assert walk([(0, 1), ()]).states == []
