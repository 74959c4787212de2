"""The sweep kernel's strategies, exhaustive and random (kernels/sweep/): exact tables
against the reference, shards in any order, the random stream pinned and reproducible."""

from __future__ import annotations

from collections import Counter

import pytest
from helpers import CASELLA, STANDARD, space

from kernels.engines.reference import play_reference
from kernels.notation import format_deal, parse_deal
from kernels.strategies import run_exhaustive, run_random


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
    assert [(c.index, c.hands) for c in head.candidates + tail.candidates] == \
           [(c.index, c.hands) for c in whole.candidates]
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


def test_the_random_stream_is_pinned():
    """Deal j of stream (seed, shard) is fixed forever: runs and resumes depend on it."""
    result = run_random(STANDARD, 1, 0, 3, min_cards=0)
    assert [c.hands for c in result.candidates] == [
        "A---Q-A-J-A----AQ---K-J---/--KQ----------QKK------JJ-",
        "-Q---------K-Q---A---JK---/----Q----QJAJA-K-----JKA--",
        "-A----A-A----J--J---------/KK-K-Q----QJ-Q---Q---JAK--",
    ]
    assert [c.index for c in result.candidates] == [0, 1, 2]
