"""The longest strategy (kernels/strategies/longest.py)."""

from __future__ import annotations

import numpy as np
import pytest
from cluster_helpers import assert_same_tables, direct_tables, make_config
from helpers import STANDARD, space

from kernels.cyclestate import walk
from kernels.engines.reference import play_reference
from kernels.errors import BmnError
from kernels.notation import parse_deal
from kernels.strategies import REGISTRY, run_exhaustive, run_longest, run_random

# A quick standard-deck shard: 4 rounds of 50,000 deals, the first round's longest 30 climbed.
QUICK = dict(count=200_000, round_deals=50_000, floor=1500, max_climbs=30, min_cards=2600)

SMALL_DECK = "0:6,1:2,2:2"  # 10 cards, 5/5: 1,260 balanced deals
SMALL = space(SMALL_DECK, "5,5")


@pytest.fixture(scope="module")
def quick():
    stats: dict = {}
    result = run_longest(STANDARD, 3, 1, stats=stats, **QUICK)
    return result, stats


def _key(result):
    return ([(c.hands, c.index, c.result) for c in result.candidates], result.deals, result.cards, result.cycles,
            result.wins.tolist(), result.histogram.tolist(), result.longest)


def test_deterministic_per_seed_and_shard(quick):
    result, _ = quick
    assert _key(run_longest(STANDARD, 3, 1, **QUICK)) == _key(result)
    assert _key(run_longest(STANDARD, 3, 2, **QUICK)) != _key(result)
    assert _key(run_longest(STANDARD, 4, 1, **QUICK)) != _key(result)


def test_climbing_finds_longer_games_than_the_random_deals(quick):
    result, stats = quick
    forward = run_random(STANDARD, 3, 1, QUICK["count"], min_cards=QUICK["min_cards"])
    assert stats["climbs"] > 0 and stats["found"] > 0
    assert stats["longest_forward"] == forward.max_cards
    assert result.max_cards > forward.max_cards
    # Every random game kept by `random` is kept here, at the same index.
    assert {(c.hands, c.index) for c in forward.candidates} <= {(c.hands, c.index) for c in result.candidates}


def test_tallies_count_every_game_played(quick):
    result, stats = quick
    forward = run_random(STANDARD, 3, 1, QUICK["count"], min_cards=10**9)
    assert stats["deals"] == QUICK["count"]
    assert result.deals == QUICK["count"] + stats["found"]
    assert result.histogram.sum() + result.cycles == result.deals
    assert result.wins.sum() == result.histogram.sum()
    # The random deals' tally is random's, the found deals' games come on top.
    extra = result.histogram - forward.histogram
    assert extra.min() >= 0 and extra.sum() == stats["found"]
    assert result.cycles == forward.cycles
    assert result.cards > forward.cards
    assert result.longest.result.cards == result.max_cards == max(c.result.cards for c in result.candidates)


def test_every_candidate_replays_on_the_reference_player(quick):
    result, _ = quick
    assert 0 < len(result.candidates) < 400
    for c in result.candidates:
        deal = parse_deal(c.hands)
        assert [len(h) for h in deal] == [26, 26]
        assert c.result.is_candidate(QUICK["min_cards"]) and 0 <= c.index < QUICK["count"]
        assert play_reference(deal) == c.result


def test_candidates_by_tricks_too():
    result = run_longest(STANDARD, 5, 0, 20_000, round_deals=10_000, floor=1000, max_climbs=3, min_cards=10**6,
                         min_tricks=150)
    assert result.candidates
    assert all(c.result.tricks >= 150 for c in result.candidates)


def test_no_climbs_is_random_search():
    plain = run_longest(STANDARD, 2, 0, 30_000, round_deals=7_000, max_climbs=0, min_cards=1500)
    forward = run_random(STANDARD, 2, 0, 30_000, min_cards=1500)
    assert _key(plain) == _key(forward)


def _views_within(deal, root_cards):
    """The game's trick-boundary states reached within root_cards cards, seen from the leader's seat."""
    states, before, _ = walk(deal)
    return {(hands[leader], hands[1 - leader]) for (leader, hands), c in zip(states, before) if c <= root_cards}


@pytest.mark.parametrize("root_cards", [6, 10_000])
def test_small_deck_against_every_balanced_deal(root_cards):
    """On a 10-card deck, with every sampled game climbed: the longest game found is exactly the
    longest balanced game passing through a state reached within root_cards cards of one of the
    sampled games (found by playing all 1,260 deals with the reference player), never more than
    the exhaustive search's longest, and every deal found is a balanced deal of the deck."""
    every = run_exhaustive(SMALL, 0, SMALL.count, min_cards=0)
    games = {c.hands: c.result for c in every.candidates}
    assert len(games) == SMALL.count == 1260
    through: dict = {}  # a state seen from the leader's seat -> the longest balanced game through it
    for hands, result in games.items():
        if result.outcome == "win":
            for view in _views_within(parse_deal(hands), 10_000):
                through[view] = max(through.get(view, 0), result.cards)

    count = 40
    stats: dict = {}
    found = run_longest(SMALL, 5, 0, count, round_deals=10, delta=10**6, floor=0, max_climbs=10**6,
                        root_cards=root_cards, per_root=100_000, min_cards=0, stats=stats)
    sample = run_random(SMALL, 5, 0, count, min_cards=0).candidates
    want = max(max([c.result.cards] + [through[v] for v in _views_within(parse_deal(c.hands), root_cards)])
               for c in sample if c.result.outcome == "win")
    assert stats["climbs"] == sum(c.result.outcome == "win" for c in sample)
    assert found.max_cards == want <= every.max_cards
    assert found.max_cards > max(c.result.cards for c in sample if c.result.outcome == "win")
    assert len(found.candidates) > count
    for c in found.candidates:
        assert games[c.hands] == c.result  # a balanced deal of the deck, with the game it plays
        assert play_reference(parse_deal(c.hands)) == c.result


def test_small_deck_often_reaches_the_true_longest():
    every = run_exhaustive(SMALL, 0, SMALL.count, min_cards=0)
    found = run_longest(SMALL, 1, 0, 500, round_deals=100, floor=0, min_cards=0)
    assert found.max_cards == every.max_cards


def test_bad_input():
    with pytest.raises(BmnError, match="equal hands"):
        run_longest(space("0:8,1:2", "4,6"), 1, 0, 10, min_cards=0)
    with pytest.raises(BmnError, match="round_deals"):
        run_longest(STANDARD, 1, 0, 10, round_deals=0, min_cards=0)


def test_shards_cover_the_deals():
    strategy = REGISTRY["longest"]
    config = make_config("unused", strategy="longest", deals=25_000, shard_size=10_000)
    plan = strategy.plan(config.search(), STANDARD, strategy.table({}))
    assert plan.count == 3
    assert [plan.shard(k).params.count for k in range(3)] == [10_000, 10_000, 5_000]
    assert plan.shard(2).params.shard == 2 and plan.shard(2).params.round_deals == 2_000_000


def test_cluster_path_is_deterministic(tmp_path):
    config = make_config(tmp_path / "run", strategy="longest", deals=50_000, shard_size=20_000, seed=9,
                         min_cards=2200, longest={"round_deals": 10_000, "max_climbs": 5, "floor": 1200})
    first = direct_tables(config)
    assert first["games"].num_rows > 0
    assert sum(first["shards"].column("deals").to_pylist()) > 50_000  # the found deals' games on top
    assert_same_tables(first, direct_tables(config))
    assert np.all(np.array(first["games"].column("cards").to_pylist()) >= 2200)
