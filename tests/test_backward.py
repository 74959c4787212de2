"""Backward play (kernels/backward.py) and the strategies built on it, ancestors and extend."""

from __future__ import annotations

import numpy as np
from helpers import CASELLA, CASELLA_ID, STANDARD, seat_views, space

from kernels.backward import FoundBuffers, ancestors, climb_from_states, extend, game_path
from kernels.engines.reference import play_reference
from kernels.notation import format_deal, parse_deal
from kernels.strategies import run_ancestors, run_exhaustive, run_extend, run_random


def test_ancestors_equal_forward_search_on_small_decks():
    for deck in ("0:8,1:2", "0:7,1:3", "0:7,1:2,3:1", "0:10,1:2,2:2,3:2"):
        sp = space(deck)
        result = run_exhaustive(sp, 0, sp.count, min_cards=10**6)
        by_cycle: dict[str, set] = {}
        for c in result.candidates:
            by_cycle.setdefault(c.result.cycle_id, set()).add(c.hands)
        assert by_cycle
        for forward in by_cycle.values():
            back = ancestors(parse_deal(sorted(forward)[0]))
            assert not back.truncated
            assert {d.hands for d in back.deals} == forward, deck


def test_every_ancestor_of_the_casella_cycle_replays_into_it():
    back = ancestors(parse_deal(CASELLA))
    assert back.count == len(back.deals) > 0 and CASELLA in {d.hands for d in back.deals}
    for d in back.deals:
        r = play_reference(parse_deal(d.hands))
        assert (r.outcome, r.cycle_id) == ("cycle", CASELLA_ID)


def test_ancestor_parts_are_disjoint_and_cover_the_whole():
    whole = {c.hands for c in run_ancestors(CASELLA).candidates}
    parts = [{c.hands for c in run_ancestors(CASELLA, part=k, parts=3).candidates} for k in range(3)]
    assert set().union(*parts) == whole
    assert sum(len(p) for p in parts) == len(whole)


def test_ancestors_of_a_finite_start_pass_through_it():
    sp = space("0:10,1:2,2:2,3:2")
    found = 0
    for r in range(0, sp.count, 997):
        deal = sp.unrank(r)
        back = ancestors(deal)
        start = (tuple(deal[0]), tuple(deal[1]))
        for d in back.deals:
            assert start in seat_views(d.hands)
            assert d.result.cards > play_reference(deal).cards
            found += 1
    assert found


def test_extend_finds_longer_games_through_the_same_states():
    result = run_random(STANDARD, 7, 0, 200000, min_cards=1500)
    seeds = sorted(result.candidates, key=lambda c: -c.result.cards)[:5]
    improved = 0
    for seed in seeds:
        original = seat_views(seed.hands)
        ext = extend(parse_deal(seed.hands), max_states=50000)
        for d in ext.deals[:3]:
            assert d.result.cards > seed.result.cards
            assert play_reference(parse_deal(d.hands)) == d.result
            assert seat_views(d.hands) & original, "an extended game must pass through a state of the original"
        improved += bool(ext.deals)
    assert improved >= 3


def test_extend_strategy_reports_longer_deals_with_their_origin():
    result = run_random(STANDARD, 7, 0, 100000, min_cards=1800)
    inputs = [c.hands for c in result.candidates[:4]]
    ext = run_extend(inputs, index_base=10, min_cards=0, max_states=20000)
    lengths = {c.hands: c.result.cards for c in result.candidates}
    for c in ext.candidates:
        assert 10 <= c.index < 14 and c.result.cards > lengths[inputs[c.index - 10]]


def _views(path):
    """The states of a game path (as climb_from_states takes it) seen from the leader's seat."""
    views = set()
    for row, n0, lead in zip(*path.states):
        hands = (tuple(int(v) for v in row[:n0]), tuple(int(v) for v in row[n0:]))
        views.add((hands[lead], hands[1 - lead]))
    return views


def test_climb_from_states_finds_exactly_the_longer_balanced_games_through_the_states():
    """On a 10-card deck, by the reference player: the deals a climb returns are the balanced deals
    whose games pass through one of the given states and are longer, each with its true length."""
    sp = space("0:6,1:2,2:2")
    games = {}
    for rank in range(sp.count):
        deal = sp.unrank(rank)
        games[format_deal(deal)] = (play_reference(deal), seat_views(deal))
    climbed = 0
    for rank in range(0, sp.count, 25):
        deal = sp.unrank(rank)
        original = play_reference(deal)
        if original.outcome != "win":
            continue
        seq = np.array(deal[0] + deal[1], dtype=np.uint8)
        path = game_path(seq, 5, original.tricks + 1)
        assert len(path) == original.tricks and path.before[0] == 0
        for part in (path, path.within(4)):
            climb = climb_from_states(part, original.cards, max_states=10**6, per_root=10**6)
            assert not climb.truncated
            views = _views(part)
            want = {hands for hands, (r, seen) in games.items()
                    if r.outcome == "win" and r.cards > original.cards and seen & views}
            found = {}
            for row, length in zip(climb.rows, climb.lengths):
                hands = format_deal([row[:5], row[5:]])
                result, seen = games[hands]
                assert result.cards == length > original.cards and seen & views
                found[hands] = length
            assert set(found) == want
            climbed += len(found)
    assert climbed


def test_climb_from_states_within_a_budget_says_it_was_truncated():
    result = run_random(STANDARD, 7, 0, 20000, min_cards=1000)
    seed = max(result.candidates, key=lambda c: c.result.cards)
    deal = parse_deal(seed.hands)
    seq = np.array(deal[0] + deal[1], dtype=np.uint8)
    path = game_path(seq, 26, seed.result.tricks + 1)
    small = climb_from_states(path, seed.result.cards, max_states=500, per_root=50)
    assert small.truncated and small.visited <= 500
    big = climb_from_states(path, seed.result.cards, max_states=50_000, per_root=2_000,
                            buffers=FoundBuffers(52, capacity=1))  # the buffers grow as needed
    assert big.visited > small.visited and len(big.rows) > 0
    for row, length in zip(big.rows[:20], big.lengths[:20]):
        r = play_reference([row[:26], row[26:]])
        assert r.outcome == "win" and r.cards == length > seed.result.cards
        assert seat_views([row[:26], row[26:]]) & _views(path)


def test_every_state_of_every_split_entering_a_cycle_is_listed():
    """`entering` against every state of a small deck played on the reference player: the states (as deals led
    by their leader) whose games enter each cycle are exactly those it lists; a self-mirrored cycle's too."""
    from itertools import permutations

    from kernels.backward import entering
    from kernels.decks import parse_deck
    from kernels.strategies.census import census_counts, splits_of

    for deck in ("0:6,1:2,2:2", "0:6,1:2,2:2,3:1"):
        cards = parse_deck(deck).cards()
        by_cycle: dict[str, set] = {}
        for order in set(permutations(cards)):
            for a, _ in splits_of(len(cards), 2):
                hands = [list(order[:a]), list(order[a:])]
                r = play_reference(hands)
                if r.outcome == "cycle":
                    by_cycle.setdefault(r.cycle_id, set()).add(format_deal(hands))
        census = census_counts(deck)
        assert set(by_cycle) == set(census)
        for cid, want in census.items():
            found = entering(parse_deal(want["state"]))
            assert found.cycle.cycle_id == cid and not found.truncated
            assert set(found.deals) == by_cycle[cid] and len(found.deals) == want["basin"]
            assert sum(found.splits().values()) == want["basin"]
    truncated = entering(parse_deal(CASELLA), max_states=50)
    assert truncated.truncated and len(truncated.deals) < 2670
