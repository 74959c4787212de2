"""One test per rule of docs/rules.md, on tiny deals worked out by hand, for every engine."""

from __future__ import annotations

import pytest
from helpers import play_engine

from kernels.engines.reference import Game, trace_reference
from kernels.notation import parse_deal


def outcome(text: str, engine: str):
    r = play_engine(parse_deal(text.split(" ")), engine)
    return (r.outcome, r.winner, r.tricks, r.cards)


# (deal, winner, tricks, cards), each worked out by hand.
TWO_PLAYERS = [
    # A completed payment wins the trick; the winner then holds every card: over at once.
    ("J -", 1, 1, 2),
    # The payer must pay and holds no card: the creditor takes the pile, and that pickup is a trick.
    ("- J", 2, 1, 2),
    # Running out part-way through a payment loses; the failed attempt is not a card.
    ("Q -", 1, 1, 2),
    # A penalty card among the payment flips the roles: hand 2 pays K with J, hand 1 pays 1 card.
    ("K- J--", 2, 1, 3),
    # A hand that is empty at the start: the other holds every card, no card is played.
    ("J- ", 1, 0, 0),
]

THREE_PLAYERS = [
    # Hand 1 must pay for hand 3's J with no card: out while paying, the creditor takes the pile;
    # then only hand 3 holds cards.
    ("- - J-", 3, 1, 3),
    # Hand 2 holds nothing but is still in: it is called to pay for the J and is out while paying,
    # so the creditor (hand 1) takes the pile; afterwards hand 3 pays.
    ("J  --", 1, 3, 5),
    # Out in free play: the pile stays and the next player still in plays; the last one in takes it.
    ("-  -J", 3, 1, 2),
    # Payment passes on at each penalty card: J (1) paid by hand 2 with Q, Q paid by hand 3 with
    # - then K, K owed by hand 1 who is out: hand 3 takes all seven cards.
    ("-J -Q --K", 3, 1, 7),
]


@pytest.mark.parametrize("text,winner,tricks,cards", TWO_PLAYERS)
def test_two_player_rule(text, winner, tricks, cards, engine):
    assert outcome(text, engine) == ("win", winner, tricks, cards)


@pytest.mark.parametrize("engine_name", ["reference", "general"])
@pytest.mark.parametrize("text,winner,tricks,cards", THREE_PLAYERS)
def test_three_player_rule(text, winner, tricks, cards, engine_name):
    assert outcome(text, engine_name) == ("win", winner, tricks, cards)


def test_pile_goes_under_the_winner_in_the_order_played():
    # J-K- / --Q-: hand 1 plays J, hand 2 pays '-': hand 1 takes [J, -] under "-K-".
    first = next(trace_reference(parse_deal("J-K-/--Q-")))
    assert first.pile == (1, 0)
    assert first.hands == ((0, 3, 0, 1, 0), (0, 2, 0))


def test_hand_one_leads_then_players_alternate():
    # Three plain cards each, then hand 1's J: hand 2 pays '-' and hand 1 wins all 8 cards.
    result = play_engine(parse_deal("---J/----"), "reference")
    assert (result.winner, result.tricks, result.cards) == (1, 1, 8)


def test_cards_are_conserved_and_the_winner_holds_every_card():
    d = parse_deal("-J------Q------AAA-----QQ-/K----JA-----------KQ-K-JJK")
    total = sum(len(h) for h in d)
    for rec in trace_reference(d):
        assert sum(len(h) for h in rec.hands) == total
    game = Game(d)
    while not game.play_trick():
        pass
    assert len(game.hands[game.winner]) == total
    assert sorted(game.hands[game.winner]) == sorted(v for h in d for v in h)


@pytest.mark.parametrize("text,want", [
    ("- -", ("win", 2, 1, 2)),  # hand 1 plays, hand 2 plays, hand 1 cannot: hand 2 takes the pile
    ("-- -", ("win", 1, 1, 3)),
    ("------ ----", ("win", 1, 1, 9)),
    ("--- ---", ("win", 2, 1, 6)),
])
def test_a_deal_without_penalty_cards_ends_when_a_hand_runs_out(text, want, engine):
    assert outcome(text, engine) == want
