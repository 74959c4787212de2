"""The cycle factory (kernels/strategies/cycles/) against exhaustive search of a small deck."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

import pytest
from helpers import space

from cluster.runs.config import build_config
from kernels.decks import parse_deck
from kernels.engines.reference import play_reference
from kernels.errors import BmnError
from kernels.notation import parse_deal
from kernels.strategies import run_exhaustive
from kernels.strategies.cycles import BARREN_DRAWS, Factory, run_cycles

# 16 cards of the standard kind (2 of each penalty value): 168 cycles in all (census), grown from
# seed cycles of 14 cards (6 plain; 18 cycles).
DECK = "0:8,1:2,2:2,3:2,4:2"
PARAMS = Factory(seed_deck="0:6,1:2,2:2,3:2,4:2", tries=100_000)


@pytest.fixture(scope="module")
def exhaustive_cycles():
    """cycle_id -> the balanced deals entering it, by exhaustive search of all 8/8 deals."""
    deals = space(DECK)
    result = run_exhaustive(deals, 0, deals.count, min_cards=10**9)
    out = defaultdict(set)
    for c in result.candidates:
        out[c.result.cycle_id].add(c.hands)
    return dict(out)


@pytest.fixture(scope="module")
def factory():
    return [run_cycles(parse_deck(DECK), 1, shard, PARAMS) for shard in range(2)]


def test_the_factory_finds_the_cycles_exhaustive_search_finds_with_their_deals(factory, exhaustive_cycles):
    found = defaultdict(set)
    for shard in factory:
        listed = {row.cycle_id: row for row in shard.cycle_rows}
        assert all(row.complete and row.deck == DECK for row in listed.values())
        for c in shard.candidates:
            assert c.result.outcome == "cycle" and c.result.cycle_id in listed
            found[c.result.cycle_id].add(c.hands)
        for cid in listed:
            # Each shard lists all the balanced deals of each cycle it found.
            assert {c.hands for c in shard.candidates if c.result.cycle_id == cid} == exhaustive_cycles.get(cid, set())
    assert dict(found) == exhaustive_cycles  # two beams find every cycle a balanced deal enters


def test_reported_states_and_deals_replay_on_the_reference(factory):
    shard = factory[0]
    for row in shard.cycle_rows[:20]:
        r = play_reference(parse_deal(row.state))
        assert (r.outcome, r.cycle_id, r.preperiod_tricks, r.period_tricks) == ("cycle", row.cycle_id, 0,
                                                                                 row.period_tricks)
    for c in shard.candidates[::200]:
        assert play_reference(parse_deal(c.hands)) == c.result


def test_a_beam_is_a_function_of_seed_and_shard(factory):
    again = run_cycles(parse_deck(DECK), 1, 0, PARAMS)
    assert again.cycle_rows == factory[0].cycle_rows
    assert [(c.hands, c.index, c.result) for c in again.candidates] == \
           [(c.hands, c.index, c.result) for c in factory[0].candidates]
    assert (again.deals, again.cycles) == (factory[0].deals, factory[0].cycles)
    other = run_cycles(parse_deck(DECK), 2, 0, replace(PARAMS, tries=50_000))
    assert other.deals and other.cycle_rows != factory[0].cycle_rows


def test_a_deck_with_one_penalty_card_ends_with_no_cycle():
    result = run_cycles(parse_deck("0:15,1:1"), 1, 0, Factory(tries=10**9))
    assert result.cycle_rows == [] and result.candidates == [] and result.deals == BARREN_DRAWS * 20_000


@pytest.mark.parametrize("values,message", [
    (dict(strategy="cycles", deck="0:10,1:2,2:2,3:2,4:2", players=3), "needs two players with equal hands"),
    (dict(strategy="cycles", deck="0:7,1:2,2:2,3:2,4:2", split="8,7"), "needs two players with equal hands"),
    (dict(strategy="cycles", deck=DECK, cycles={"width": 0}), r"cycles.width must be at least 1"),
    (dict(strategy="cycles", deck=DECK, cycles={"beam": 3}), "unknown key 'beam'"),
])
def test_bad_factory_configs_are_refused(values, message):
    with pytest.raises(BmnError, match=message):
        build_config(values)


def test_a_seed_deck_must_be_part_of_the_deck():
    with pytest.raises(BmnError, match="cycles.seed_deck 0:8,1:3 must be a smaller part of the deck"):
        build_config(dict(strategy="cycles", deck=DECK, cycles={"seed_deck": "0:8,1:3"}))
    with pytest.raises(BmnError, match="cycles.seed_deck must be text"):
        build_config(dict(strategy="cycles", deck=DECK, cycles={"seed_deck": 3}))
    # Without seed_deck, each start draws a seed deck near seed_plain / seed_penalty: beams still find cycles.
    drawn = run_cycles(parse_deck(DECK), 1, 0, Factory(tries=10_000, seed_states=5_000))
    assert drawn.cycle_rows and all(row.deck == DECK for row in drawn.cycle_rows)


def test_slack_lets_beams_hold_cycles_over_the_decks_counts_and_finds_keep_the_deck():
    stats0, stats2 = {}, {}
    exact = run_cycles(parse_deck(DECK), 1, 0, replace(PARAMS, tries=45_000, seed_states=5_000), stats0)
    loose = run_cycles(parse_deck(DECK), 1, 0, replace(PARAMS, tries=45_000, seed_states=5_000, slack=2), stats2)
    assert stats0["most_excess"] == 0 and stats2["most_excess"] > 0
    assert stats0["moves"]["substitution"] and stats2["moves"]["substitution"]
    assert exact.cycle_rows and loose.cycle_rows
    for result in (exact, loose):
        for row in result.cycle_rows:
            state = parse_deal(row.state)
            counts = parse_deck(DECK).counts
            assert counts == tuple(sum(1 for h in state for v in h if v == k) for k in range(len(counts)))
            assert play_reference(state).cycle_id == row.cycle_id
    none = {}
    run_cycles(parse_deck(DECK), 1, 0, replace(PARAMS, tries=10_000, substitutions=0), none)
    assert not none["moves"]["substitution"]


def test_the_factory_plays_the_extra_penalty_cards_on_an_engine_that_holds_them():
    from kernels.engines import FAST, PERCARD
    from kernels.strategies.cycles import Player
    standard = parse_deck("standard")  # 16 penalty cards: all the fast kernel holds
    assert Player(52, standard).engine == FAST
    assert Player(52, standard, 2).engine == PERCARD


def test_slack_never_brings_in_a_value_the_deck_lacks():
    from kernels.strategies.cycles import FACTORY, Beam
    deck = parse_deck("0:10,1:2,2:2,3:2")  # no card of value 4 or more
    beam = Beam(deck, 1, 0, replace(FACTORY, slack=2, seed_deck="0:8,1:2,2:2,3:2"), True)
    seeds = beam.seeds()
    assert seeds
    children = beam.insertions(seeds) + beam.substitutions(seeds)
    assert children and beam.moves["single"] and beam.moves["substitution"]
    held = {v for cycle in children for hand in cycle.hands for v in hand}
    assert held <= {0, 1, 2, 3} and max(beam.excess(cycle) for cycle in children) <= 2
