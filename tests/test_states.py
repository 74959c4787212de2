"""The `states` strategy (kernels/strategies/states.py): random trick-boundary states, every cycle met
with its backward closure (kernels/backward.py `closure`), held to the census of small decks."""

from __future__ import annotations

import numpy as np
import pytest
from cluster_helpers import make_config
from helpers import CASELLA, space

from kernels.backward import closure
from kernels.engines.reference import play_reference
from kernels.errors import BmnError
from kernels.notation import parse_deal
from kernels.rng import stream_key
from kernels.strategies import Shard, run_shard
from kernels.strategies.census import census_counts
from kernels.strategies.states import StatesShard, run_states
from kernels.sweep import run_random_states, states_at

SMALL = "0:6,1:2,2:2"  # 11,340 states, one cycle (basin 43, 7 balanced deals)
ODD = "0:6,1:2,2:2,3:1"  # 11 cards: three cycles, one of them its own mirror (hands swapped, other leader)


@pytest.mark.parametrize("deck", [SMALL, "0:8,1:2,2:2,3:2", ODD])
def test_a_cycles_closure_is_its_census_basin(deck):
    """From the cycle's canonical state: the states entering it (seen from the leader's seat, as the
    census counts them, a self-mirrored cycle included), its balanced deals, a closest state."""
    census = census_counts(deck)
    assert census
    for cid, want in census.items():
        found = closure(parse_deal(want["state"]))
        assert (found.cycle.cycle_id, found.state, found.states, len(found.deals), found.truncated) == \
            (cid, want["state"], want["basin"], want["deals"], False)
        closest = parse_deal(found.closest)
        assert abs(len(closest[0]) - len(closest[1])) // 2 == found.imbalance == 0
        assert play_reference(closest).cycle_id == cid
        for deal in found.deals:
            hands = parse_deal(deal.hands)
            assert len(hands[0]) == len(hands[1]) and play_reference(hands).cycle_id == cid


def test_a_closure_is_the_same_from_any_state_that_enters_the_cycle():
    census = census_counts(SMALL)
    [(cid, want)] = census.items()
    from_deal = closure(parse_deal(closure(parse_deal(want["state"])).deals[-1].hands))
    assert (from_deal.state, from_deal.states, from_deal.closest) == \
        (want["state"], want["basin"], closure(parse_deal(want["state"])).closest)


def test_a_truncated_closure_says_so_and_counts_a_lower_bound():
    want = next(iter(census_counts("0:8,1:2,2:2,3:2").values()))
    found = closure(parse_deal(want["state"]), max_states=20)
    assert found.truncated and found.states < want["basin"] and len(found.deals) <= want["deals"]


def test_the_closure_of_a_finished_game_or_of_three_hands_is_refused():
    with pytest.raises(BmnError, match="enters no cycle"):
        closure(parse_deal("A-/--"))
    with pytest.raises(BmnError, match="two players"):
        closure(parse_deal("A-/--/--"))


def test_states_find_the_census_cycles_of_a_small_deck():
    sp = space(SMALL)
    result = run_states(sp, 1, 0, 30_000)
    [(cid, want)] = census_counts(SMALL).items()
    [row] = result.cycle_rows
    assert (row.cycle_id, row.state, row.closure, row.complete, row.imbalance) == (cid, want["state"], want["basin"],
                                                                                   True, 0)
    # how often the hunt met it: about its closure's share of the deck's 11,340 states
    assert row.basin == result.cycles and abs(row.basin / result.deals - want["basin"] / 11_340) < 0.002
    assert sorted(c.hands for c in result.candidates) == \
           sorted(d.hands for d in closure(parse_deal(want["state"])).deals)
    assert len(result.candidates) == want["deals"]
    assert result.longest is None and result.wins.sum() == 0 and result.histogram.sum() == 0  # states are not deals


def test_states_of_an_odd_deck_find_every_census_cycle_and_no_deal():
    sp = space(ODD, [6, 5])
    result = run_states(sp, 2, 0, 60_000)
    census = census_counts(ODD)
    assert {r.cycle_id: r.closure for r in result.cycle_rows} == {cid: c["basin"] for cid, c in census.items()}
    assert result.candidates == []


def test_the_states_a_shard_plays_are_those_of_the_stream():
    """State j is deal j of the stream cut at its random_cut: the candidates regenerate, any part of a
    shard plays the same states, and the cuts cover every place with both hands holding cards."""
    sp = space(SMALL)
    whole = run_random_states(sp, 4, 7, 4000)
    parts = [run_random_states(sp, 4, 7, 1500), run_random_states(sp, 4, 7, 2500, start=1500)]
    assert whole.deals == sum(p.deals for p in parts) == 4000
    assert (whole.cards, whole.cycles) == (sum(p.cards for p in parts), sum(p.cycles for p in parts))
    assert [(c.index, c.hands) for c in whole.candidates] == [(c.index, c.hands) for p in parts for c in p.candidates]
    assert whole.cycles == len(whole.candidates) > 0
    for c in whole.candidates:
        assert play_reference(parse_deal(c.hands)).cycle_id == c.result.cycle_id
    total = sp.deck.total
    index = np.arange(20_000, dtype=np.int64)
    rows = np.zeros((len(index), total), dtype=np.uint8)
    cuts = np.zeros(len(index), dtype=np.int64)
    states_at(stream_key(4, 7), np.array([v for v in sp.deck.cards() if v], dtype=np.uint8), index, rows, cuts)
    counts = np.bincount(cuts, minlength=total)
    assert counts[0] == 0 and counts[total:].sum() == 0 and counts[1:total].min() > 0.8 * len(index) / (total - 1)
    assert (np.sort(rows, axis=1) == np.sort(np.array(sp.deck.cards(), dtype=np.uint8))).all()


def test_states_near_equal_hands_are_uniform_among_them_and_cycle_as_the_census_says():
    """max_imbalance K: state j is cut at the (j mod W)-th near-equal cut (W of them), its cards deal j // W
    of that cut's stream; a shard in parts plays the same states; the rate of cycling is the census's
    over those cuts (exact, split by split), within the sample's interval; every cycling state replays."""
    from cluster.runs.atlas import rate_interval
    from kernels.dealspace import DealSpace, _multinomial
    from kernels.decks import parse_deck
    from kernels.strategies.census import run_census
    from kernels.sweep import near_cuts

    assert near_cuts(14, 1) == [6, 7, 8] and near_cuts(15, 1) == [6, 7, 8, 9] and near_cuts(14, 0) == [7]
    assert near_cuts(14, 13) == list(range(1, 14))
    deck = "0:8,1:2,2:2,3:2"
    sp = space(deck)
    whole = run_random_states(sp, 5, 2, 300_000, max_imbalance=1)
    parts = [run_random_states(sp, 5, 2, 100_001, max_imbalance=1),
             run_random_states(sp, 5, 2, 199_999, start=100_001, max_imbalance=1)]
    assert whole.deals == 300_000 and (whole.cards, whole.cycles) == (sum(p.cards for p in parts),
                                                                      sum(p.cycles for p in parts))
    assert [(c.index, c.hands) for c in whole.candidates] == [(c.index, c.hands) for p in parts for c in p.candidates]
    assert whole.cycles == len(whole.candidates) > 0
    for c in whole.candidates:
        assert len(c.hands.split("/")[0]) == [6, 7, 8][c.index % 3]
        assert play_reference(parse_deal(c.hands)).cycle_id == c.result.cycle_id
    orders = _multinomial(parse_deck(deck).counts)
    census = sum(run_census(deck, (cut, 14 - cut), 0, orders, False).cycles for cut in (6, 7, 8)) / (3 * orders)
    lo, hi = rate_interval(whole.cycles, whole.deals)
    assert lo < census < hi
    uniform = run_random_states(sp, 5, 2, 300_000)
    assert whole.cycles > 1.3 * uniform.cycles  # near-equal hands cycle more often than states at large
    # The states strategy's option, through its shard; the closures as for any state.
    result = run_states(DealSpace.of(parse_deck(deck), [7, 7]), 5, 2, 3000, max_imbalance=1)
    assert {len(c.hands.split("/")[0]) for c in result.candidates} == {7}  # balanced deals of the closures
    assert result.cycle_rows and all(r.closure and r.complete for r in result.cycle_rows)


def test_max_imbalance_is_part_of_a_states_run_only_where_set(tmp_path):
    plain = make_config(tmp_path, strategy="states", deck=SMALL, deals=1000, seed=3)
    assert "max_imbalance" not in plain.identity()["strategy_params"]
    near = make_config(tmp_path, strategy="states", deck=SMALL, deals=1000, seed=3, states={"max_imbalance": 1})
    assert near.fingerprint() != plain.fingerprint() and near.table().max_imbalance == 1


@pytest.mark.parametrize("engine", ["percard", "general"])
def test_every_engine_plays_the_same_states(engine):
    sp = space(SMALL)
    fast = run_random_states(sp, 9, 1, 600)
    other = run_random_states(sp, 9, 1, 600, engine=engine)
    assert (fast.deals, fast.cards, fast.cycles) == (other.deals, other.cards, other.cycles)
    assert [(c.index, c.hands, c.result) for c in fast.candidates] == \
        [(c.index, c.hands, c.result) for c in other.candidates]


def test_standard_states_meet_no_cycle_in_a_small_shard_and_casella_closes():
    result = run_shard(space("standard"), Shard(0, "states", StatesShard(seed=1, shard=0, count=2000, max_states=1000)))
    assert result.deals == 2000 and result.cycle_rows == [] and result.cards > 0
    found = closure(parse_deal(CASELLA), max_states=5000)
    assert found.cycle.cycle_id == "e1fabb73dac32ded" and found.states > 0


@pytest.mark.parametrize("values,message", [
    (dict(strategy="states", deck=SMALL, split="4,6"), "leave split out"),
    (dict(strategy="states", deck=SMALL, players=3), "two-player states"),
    (dict(strategy="states", deck=SMALL, states={"max_states": 0}), "states.max_states must be at least 1"),
    (dict(strategy="states", deck=SMALL, states={"width": 3}), "unknown key 'width'"),
    (dict(strategy="states", deck=SMALL, states={"max_imbalance": -1}), "states.max_imbalance must not be negative"),
])
def test_bad_states_configs_are_refused(values, message, tmp_path):
    with pytest.raises(BmnError, match=message):
        make_config(tmp_path, **values)


def test_an_odd_deck_is_a_states_deck(tmp_path):
    config = make_config(tmp_path, strategy="states", deck=ODD, deals=10)
    assert config.space().split == (6, 5)


def test_a_states_run_speaks_of_states_and_shows_no_longest_game(tmp_path, capsys):
    """Its status and its summary count states, at states/s, say its states are of every split (not its
    deal space's hands), and show no longest game (it keeps none): its query hint is of its cycles."""
    from cluster_helpers import in_process, offline_run

    from cluster.commands.search import print_report
    from cluster.loop.coordinator import run_search

    values = dict(strategy="states", deck=SMALL, deals=60_000, shard_size=30_000, seed=1)
    out = offline_run(tmp_path / "states", **values)
    status = in_process("status", str(out)).stdout
    assert "states    60,000 played" in status and "deals" not in status and "longest" not in status
    assert "cycles    1 distinct: 1 new" in status  # the deck's one cycle: no source has it
    assert f"(states, {SMALL}, states of every split)" in status and "/" not in status.split("\n")[0].split("(")[1]
    report = run_search(make_config(out, **values), resume=True)
    print_report(report, as_json=False)
    text = capsys.readouterr().out
    assert "60,000 states played" in text and "longest" not in text
    assert f"cycles: 1 distinct: 1 new (bmn cycles {out}; the new ones: bmn cycles --new {out})" in text
    hint = next(line for line in text.splitlines() if line.startswith("query:"))
    assert "FROM cycles" in hint and "FROM games" not in hint
    from cluster.commands.query import query
    assert query([str(out)], hint.split('"')[1]).num_rows == 1  # the hint runs


def test_the_full_camicia_decks_hunt_found_a_cycle_that_replays_and_no_balanced_deal_enters():
    """The cycle the states hunt of the 40-card Camicia deck met (docs/atlas.md), tests/data/camicia_hunt_cycles.tsv:
    its state replays on the reference player into it; the states entering it, by split, are those listed,
    none of equal hands (so the exhaustive search of the balanced deals rightly did not meet it)."""
    import csv
    from pathlib import Path

    from kernels.backward import entering

    path = Path(__file__).parent / "data" / "camicia_hunt_cycles.tsv"
    rows = list(csv.DictReader((line for line in path.open() if not line.startswith("#")), delimiter="\t"))
    for cycle_id in {r["cycle_id"] for r in rows}:
        mine = [r for r in rows if r["cycle_id"] == cycle_id]
        state = parse_deal(mine[0]["state"])
        played = play_reference(state)
        assert (played.outcome, played.cycle_id, played.period_tricks, played.period_cards) == \
            ("cycle", cycle_id, int(mine[0]["period_tricks"]), int(mine[0]["period_cards"]))
        found = entering(state)
        assert not found.truncated and found.splits() == {
            (int(r["leader_cards"]), int(r["other_cards"])): int(r["states"]) for r in mine}
        assert (20, 20) not in found.splits() and len(found.deals) == closure(state).states
        for deal in found.deals[::97]:  # a sample, on the reference player too
            assert play_reference(parse_deal(deal)).cycle_id == cycle_id
