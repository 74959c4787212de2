"""Cycle detection and cycle identity (docs/rules.md, "Games that never end")."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from helpers import KERNELS, play_engine

from kernels.cycleid import cycle_id_of_states
from kernels.dealspace import DealSpace
from kernels.decks import parse_deck
from kernels.engines.reference import Game, play_reference, trace_reference
from kernels.game import GameResult, cycle_id_hex
from kernels.notation import parse_deal
from kernels.play import play_batch

CASELLA = parse_deal("---K---Q-KQAJ-----AAJ--J--/----------Q----KQ-J-----KA")
CASELLA_ID = "e1fabb73dac32ded"  # FNV-1a of the canonical state, kernels/cycleid.py


def boundary_states(deal, leader=0):
    """Every trick-boundary state (leader, hands) of a game until its first repeat."""
    states = [(leader, tuple(tuple(h) for h in deal))]
    for rec in trace_reference(deal, leader):
        states.append((rec.leader, rec.hands))
    return states


def cycle_states(deal, leader=0):
    states = boundary_states(deal, leader)
    first = states.index(states[-1])
    return set(states[first:-1])


def test_casella_id_is_pinned(engine):
    assert play_engine(CASELLA, engine).cycle_id == CASELLA_ID


def test_id_is_the_same_from_every_state_of_the_cycle_and_its_mirror():
    states = boundary_states(CASELLA)
    cycle = states[4:66]
    assert len(set(cycle)) == 62 and states[66] == states[4]
    for leader, hands in cycle:
        mirror_hands, mirror_leader = (hands[1], hands[0]), 1 - leader
        for engine in ("reference",) + KERNELS:
            for h, lead in ((hands, leader), (mirror_hands, mirror_leader)):
                r = play_engine(h, engine, leader=lead)
                assert (r.cycle_id, r.preperiod_tricks, r.period_tricks, r.period_cards) == (CASELLA_ID, 0, 62, 440)


def test_mirrored_deal_with_hand_two_leading_enters_the_same_cycle():
    mirrored = (CASELLA[1], CASELLA[0])
    for engine in ("reference",) + KERNELS:
        r = play_engine(mirrored, engine, leader=1)
        assert (r.outcome, r.cycle_id, r.tricks, r.cards) == ("cycle", CASELLA_ID, 66, 474)


def test_entering_the_cycle_later_shortens_only_the_preperiod():
    states = boundary_states(CASELLA)
    for k in range(4):
        leader, hands = states[k]
        r = play_reference(hands, leader)
        assert (r.cycle_id, r.preperiod_tricks, r.period_tricks) == (CASELLA_ID, 4 - k, 62)


def test_python_and_kernel_ids_agree():
    cycle = [(lead, hands) for lead, hands in boundary_states(CASELLA)[4:66]]
    assert cycle_id_hex(cycle_id_of_states(cycle)) == CASELLA_ID


def test_id_is_identical_in_a_fresh_process():
    code = (
        "from kernels.play import play; from kernels.notation import parse_deal;"
        f"print(play(parse_deal({'/'.join(''.join('-JQKA'[v] for v in h) for h in CASELLA)!r})).cycle_id)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == CASELLA_ID


@pytest.mark.parametrize("deck,split", [("0:8,1:2", "5,5"), ("0:7,1:2,3:1", "5,5"), ("0:7,1:3,2:2", "4,4,4")])
def test_same_id_exactly_when_games_share_a_cycle(deck, split):
    """Over a whole small deal space: deals get the same id iff their cycles have the same states."""
    space = DealSpace.of(parse_deck(deck), split)
    deals = np.stack([space.unrank_sequence(r) for r in range(space.count)])
    rows = play_batch(deals, space.split)
    by_id: dict[str, frozenset] = {}
    for seq, row in zip(deals, rows):
        result = GameResult.from_row(row)
        if result.outcome != "cycle":
            continue
        states = frozenset(canonical(s) for s in cycle_states(space.cut(seq)))
        assert by_id.setdefault(result.cycle_id, states) == states
    assert by_id, "the deck was chosen to have cycles"
    sets = list(by_id.values())
    for i in range(len(sets)):
        for j in range(i + 1, len(sets)):
            assert not sets[i] & sets[j]


def canonical(state):
    """A state seen from the leader's seat (a rotation of the players is the same game)."""
    leader, hands = state
    n = len(hands)
    return tuple(hands[(leader + k) % n] for k in range(n))


def test_three_player_cycle_id_does_not_depend_on_seat_names():
    space = DealSpace.of(parse_deck("0:7,1:3,2:2"), "4,4,4")
    deals = np.stack([space.unrank_sequence(r) for r in range(space.count)])
    rows = play_batch(deals, space.split)
    cyc = [k for k, row in enumerate(rows) if GameResult.from_row(row).outcome == "cycle"]
    assert cyc
    hands = space.cut(deals[cyc[0]])
    want = GameResult.from_row(rows[cyc[0]])
    for shift in range(3):
        rotated = tuple(hands[(k + shift) % 3] for k in range(3))
        leader = (-shift) % 3  # hand 1 still plays first
        for engine in ("reference", "general"):
            got = play_engine(rotated, engine, leader=leader)
            assert (got.cycle_id, got.tricks, got.cards) == (want.cycle_id, want.tricks, want.cards)


def test_long_finite_game_is_not_called_a_cycle():
    # The longest known game (8344 cards) is far past the point where cycle checks begin.
    for engine in KERNELS:
        r = play_engine(parse_deal("---AJ--Q---------QAKQJJ-QK/-----A----KJ-K--------A---"), engine)
        assert r.outcome == "win"


def test_game_state_counts_players_still_in():
    # Three players: a hand with no cards is still in until it must play (docs/rules.md).
    g = Game(parse_deal("J//--"))
    assert g.state()[2] == (True, True, True)
    g.play_trick()
    assert g.state()[2] == (True, False, True)
