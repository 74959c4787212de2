"""The census strategy (kernels/strategies/census.py) against a brute force on the reference player,
and canonical cycle states (kernels/cyclestate.py)."""

from __future__ import annotations

from collections import Counter
from itertools import permutations

import pytest
from helpers import CASELLA, CASELLA_ID

from cluster.runs.config import build_config
from kernels.cycleid import state_encoding
from kernels.cyclestate import cycle_state
from kernels.decks import parse_deck
from kernels.engines.reference import Game, play_reference
from kernels.errors import BmnError
from kernels.notation import format_deal, parse_deal
from kernels.strategies.census import census_counts, run_census, splits_of


def brute_census(deck: str, players: int = 2):
    """Every state (every ordering, every split with non-empty hands) played on the reference:
    per cycle_id, (period_tricks, basin, balanced deals); and the states that cycle, per split."""
    cards = parse_deck(deck).cards()
    total = len(cards)
    out: dict[str, list[int]] = {}
    cycling = Counter()
    for order in set(permutations(cards)):
        for split in splits_of(total, players):
            hands, start = [], 0
            for size in split:
                hands.append(order[start:start + size])
                start += size
            r = play_reference(hands)
            if r.outcome != "cycle":
                continue
            cycling[split] += 1
            row = out.setdefault(r.cycle_id, [r.period_tricks, 0, 0])
            row[1] += 1
            row[2] += len(set(split)) == 1
    return out, cycling


def test_splits_are_every_way_to_give_each_hand_a_card():
    assert splits_of(4, 2) == [(1, 3), (2, 2), (3, 1)]
    assert splits_of(5, 3) == [(1, 1, 3), (1, 2, 2), (1, 3, 1), (2, 1, 2), (2, 2, 1), (3, 1, 1)]


def test_census_equals_brute_force_on_the_reference():
    # 10 cards, 11,340 states: one cycle (3 tricks), entered by 43 states, 7 of them balanced deals.
    expected, _ = brute_census("0:6,1:2,2:2")
    got = census_counts("0:6,1:2,2:2")
    assert {cid: [r["period_tricks"], r["basin"], r["deals"]] for cid, r in got.items()} == expected
    assert expected == {next(iter(expected)): [3, 43, 7]}


@pytest.mark.parametrize("deck,players", [("0:3,1:2,2:1", 3), ("0:4,1:2,2:2", 2)])
def test_census_counts_every_cycling_state_per_split(deck, players):
    _, cycling = brute_census(deck, players)
    states = len(set(permutations(parse_deck(deck).cards())))
    for split in splits_of(parse_deck(deck).total, players):
        part = run_census(parse_deck(deck).spec(), split, 0, states, False)
        assert part.deals == states and part.cycles == cycling[split]
        assert sum(r.basin for r in part.cycle_rows) == cycling[split]


def test_balanced_deals_of_a_census_are_the_candidates_of_the_balanced_split():
    deck = "0:8,1:2,2:2,3:2"
    states = 270_270  # 14! / (8! 2! 2! 2!)
    balanced = run_census(deck, (7, 7), 0, states, True)
    other = run_census(deck, (6, 8), 0, states, False)
    assert balanced.candidates and all(c.result.outcome == "cycle" for c in balanced.candidates)
    assert other.candidates == [] and other.longest is None and other.histogram.sum() == 0
    assert balanced.histogram.sum() + balanced.cycles == states  # finite games of deals are tallied
    counted = Counter(c.result.cycle_id for c in balanced.candidates)
    assert {r.cycle_id: r.basin for r in balanced.cycle_rows} == counted


def test_a_cycle_state_is_on_the_cycle_with_the_smallest_encoding():
    state = parse_deal(cycle_state(parse_deal(CASELLA)))
    r = play_reference(state)
    assert (r.cycle_id, r.preperiod_tricks, r.period_tricks) == (CASELLA_ID, 0, 62)
    game, encodings = Game(state), []
    for _ in range(62):
        lead, hands = game.state()
        encodings.append(state_encoding(lead, hands))
        game.play_trick()
    assert state_encoding(0, state) == min(encodings)
    # The same state from any deal entering the cycle, either hand leading.
    assert cycle_state(parse_deal(CASELLA)[::-1], leader=1) == format_deal(state)
    assert cycle_state(parse_deal("A---/----")) is None  # a finite game


@pytest.mark.parametrize("values,message", [
    (dict(strategy="census", deck="0:6,1:2,2:2", split="4,6"), "a census plays every split"),
    (dict(strategy="census", deck="0:6,1:2,2:2", census={"decks": ["0:6,1:x"]}), "census.decks"),
    (dict(strategy="census", deck="0:6,1:2,2:2", census={"decks": "0:6,1:2"}), "must be a list of text"),
    (dict(strategy="census", deck="standard"), "a census is for small decks"),
    (dict(strategy="census", deck="0:6,1:2,2:2", census={"width": 3}), "unknown key 'width'"),
])
def test_bad_census_configs_are_refused(values, message):
    with pytest.raises(BmnError, match=message):
        build_config(values)
