"""Search strategies (kernels/search): exact tables, reproducibility, shards, backward play."""

from __future__ import annotations

from collections import Counter

import pytest

from kernels.dealspace import DealSpace
from kernels.decks import parse_deck
from kernels.errors import BmnError
from kernels.notation import format_deal, parse_deal
from kernels.reference import play_reference, trace_reference
from kernels.search import (
    run_ancestors, run_climb, run_deals, run_exhaustive, run_extend, run_random,
    run_strategy,
)
from kernels.search.backplay import ancestors, extend

CASELLA = "---K---Q-KQAJ-----AAJ--J--/----------Q----KQ-J-----KA"
STANDARD = DealSpace.of(parse_deck("standard"))


def space(deck, split=None, players=None):
    return DealSpace.of(parse_deck(deck), split, players)


def seat_views(deal):
    """Every trick-boundary state of a game (the start included), seen from the leader's seat.

    A deal found led by hand 2 is reported with its hands swapped, so its game is the mirror
    image of the one backward play found: comparing from the leader's seat removes the mirror.
    """
    deal = parse_deal(deal) if isinstance(deal, str) else deal
    views = {(tuple(deal[0]), tuple(deal[1]))}
    for rec in trace_reference(deal):
        views.add((rec.hands[rec.leader], rec.hands[1 - rec.leader]))
    return views


@pytest.mark.parametrize("deck,split", [("0:6,1:2,2:2", "5,5"), ("0:7,1:3,2:2", "4,4,4"), ("0:8,1:2", "4,6")])
def test_exhaustive_equals_the_reference_over_a_whole_space(deck, split):
    sp = space(deck, split)
    result = run_exhaustive(sp, 0, sp.count, min_cards=12)
    games = [play_reference(sp.unrank(r)) for r in range(sp.count)]
    finite = [g for g in games if g.outcome == "win"]
    assert result.deals == sp.count
    assert result.cards == sum(g.cards for g in games)
    assert result.cycles == sum(g.outcome == "cycle" for g in games)
    assert list(result.wins) == [sum(g.winner == p + 1 for g in finite) for p in range(sp.players)]
    hist = Counter(g.cards for g in finite)
    assert {c: int(n) for c, n in enumerate(result.histogram) if n} == dict(hist)
    want = {(r, g) for r, g in enumerate(games) if g.outcome == "cycle" or g.cards >= 12}
    assert {(c.index, c.result) for c in result.candidates} == want
    for c in result.candidates:
        assert c.hands == format_deal(sp.unrank(c.index))
    longest = max(finite, key=lambda g: g.cards)
    assert result.longest.result.cards == longest.cards


def test_exhaustive_counts_cycles_and_distinct_cycles():
    sp = space("0:7,1:3,2:2", "4,4,4")
    result = run_exhaustive(sp, 0, sp.count, min_cards=10**6)
    assert result.cycles == 15 and len({c.result.cycle_id for c in result.candidates}) == 4


def test_exhaustive_shards_in_any_order_cover_the_range_once():
    sp = space("0:8,1:2,2:2", "6,6")
    whole = run_exhaustive(sp, 100, 2900, min_cards=40)
    cuts = [100, 517, 518, 1800, 2900]
    parts = [run_exhaustive(sp, lo, hi, min_cards=40) for lo, hi in reversed(list(zip(cuts, cuts[1:])))]
    parts.reverse()
    assert sum(p.deals for p in parts) == whole.deals == 2800
    assert sum(p.cards for p in parts) == whole.cards
    assert sum(p.histogram for p in parts).tolist() == whole.histogram.tolist()
    ranks = [lo + c.index for (lo, p) in zip(cuts, parts) for c in p.candidates]
    assert ranks == [100 + c.index for c in whole.candidates]


def test_exhaustive_on_the_standard_deck_beyond_64_bits():
    lo = 472460898658889399111 - 500
    result = run_exhaustive(STANDARD, lo, lo + 1000, min_cards=450)
    cyc = [c for c in result.candidates if c.result.outcome == "cycle"]
    assert [c.index for c in cyc] == [500] and cyc[0].hands == CASELLA


def test_random_is_reproducible_and_streams_differ():
    a = run_random(STANDARD, 42, 3, 5000, min_cards=600)
    b = run_random(STANDARD, 42, 3, 5000, min_cards=600)
    c = run_random(STANDARD, 42, 4, 5000, min_cards=600)
    d = run_random(STANDARD, 43, 3, 5000, min_cards=600)
    assert [x.hands for x in a.candidates] == [x.hands for x in b.candidates]
    assert a.cards == b.cards and a.histogram.tolist() == b.histogram.tolist()
    assert a.cards != c.cards and a.cards != d.cards


def test_random_stream_cut_anywhere_gives_the_same_deals():
    whole = run_random(STANDARD, 9, 0, 3000, min_cards=500)
    head = run_random(STANDARD, 9, 0, 1234, min_cards=500)
    tail = run_random(STANDARD, 9, 0, 3000 - 1234, start=1234, min_cards=500)
    assert [(c.index, c.hands) for c in head.candidates + tail.candidates] == [(c.index, c.hands) for c in whole.candidates]
    assert head.cards + tail.cards == whole.cards


def test_random_deals_are_uniform_and_keep_the_deck():
    sp = space("0:2,1:1,2:1", "2,2")  # 12 distinct deals
    result = run_random(sp, 5, 0, 24000, min_cards=0)
    counts = Counter(c.hands for c in result.candidates)
    assert len(counts) == 12
    expected = 24000 / 12
    chi2 = sum((n - expected) ** 2 / expected for n in counts.values())
    assert chi2 < 31.3  # 11 degrees of freedom, p = 0.001
    for hands in counts:
        assert sorted(v for h in parse_deal(hands) for v in h) == [0, 0, 1, 2]


def test_random_candidates_replay_to_their_results():
    result = run_random(STANDARD, 1, 0, 20000, min_cards=800)
    assert result.candidates
    for c in result.candidates:
        assert play_reference(parse_deal(c.hands)) == c.result


def test_ancestors_equal_forward_search_on_small_decks():
    for deck in ("0:8,1:2", "0:7,1:3", "0:7,1:2,3:1", "0:10,1:2,2:2,3:2"):
        sp = space(deck)
        result = run_exhaustive(sp, 0, sp.count, min_cards=10**6)
        by_cycle: dict[str, set] = {}
        for c in result.candidates:
            by_cycle.setdefault(c.result.cycle_id, set()).add(c.hands)
        assert by_cycle
        for cycle_id, forward in by_cycle.items():
            back = ancestors(parse_deal(sorted(forward)[0]))
            assert not back.truncated
            assert {d.hands for d in back.deals} == forward, deck


def test_every_ancestor_of_the_casella_cycle_replays_into_it():
    back = ancestors(parse_deal(CASELLA))
    assert back.count == len(back.deals) > 0 and CASELLA in {d.hands for d in back.deals}
    for d in back.deals:
        r = play_reference(parse_deal(d.hands))
        assert (r.outcome, r.cycle_id) == ("cycle", "e1fabb73dac32ded")


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


def test_climb_is_deterministic_and_beats_its_own_pool():
    a = run_climb(STANDARD, 3, 0, 60000, pool=20000, top=2, max_states=20000, min_cards=1000)
    b = run_climb(STANDARD, 3, 0, 60000, pool=20000, top=2, max_states=20000, min_cards=1000)
    pool = run_random(STANDARD, 3, 0, 60000, min_cards=1000)
    assert [(c.hands, c.index) for c in a.candidates] == [(c.hands, c.index) for c in b.candidates]
    assert a.max_cards >= pool.max_cards
    assert {c.hands for c in pool.candidates} <= {c.hands for c in a.candidates}
    for c in a.candidates:
        assert c.result.cards >= 1000 or c.result.outcome == "cycle"
        assert play_reference(parse_deal(c.hands)) == c.result


def test_deals_strategy_plays_the_list():
    deals = [CASELLA, "J-/--", "-J/-Q/--K"]
    result = run_deals(deals, index_base=5)
    assert [c.index for c in result.candidates] == [5, 6, 7]
    assert [c.result for c in result.candidates] == [play_reference(parse_deal(d)) for d in deals]


@pytest.mark.parametrize("call,message", [
    (lambda: run_strategy("sideways", STANDARD), "unknown strategy 'sideways'"),
    (lambda: run_exhaustive(STANDARD, 0, STANDARD.count + 1, min_cards=0), "outside this deal space"),
    (lambda: ancestors(parse_deal("J--/--")), "cannot be split into two equal hands"),
    (lambda: ancestors(parse_deal("J-/--/--")), "two players"),
    (lambda: run_climb(space("0:8,1:2", "4,6"), 1, 0, 10, min_cards=0), "equal hands"),
])
def test_bad_input(call, message):
    with pytest.raises(BmnError, match=message):
        call()
