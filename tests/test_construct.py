"""The construction (kernels/construct.py, kernels/strategies/construct.py): the gadget against the reference
player, the gene search against the plain search over every piece, every hand of genes on a cycle, and on the
censused decks exactly the census's cycles that the construction claims."""

from __future__ import annotations

import random
from itertools import product

import numpy as np
import pytest
from naive import DEAD as NAIVE_DEAD  # noqa: E402
from naive import DONE as NAIVE_DONE
from naive import every_gene
from naive import gadget_of as naive_gadget

from kernels import construct as kc
from kernels import genes as kg
from kernels.catalogue import SHIPPED, read_cycles
from kernels.cyclestate import walk
from kernels.engines.reference import Game, play_reference
from kernels.errors import BmnError
from kernels.notation import parse_deal, parse_hand
from kernels.strategies.construct import ConstructTable, Gadget, run_construct

J_ = np.array([1, 0], np.uint8)
TAIL = np.array([0], np.uint8)


def reference_gadget(big, small, limit=10_000):
    """The reference player's game from (big leading, small): the first trick boundary at which the small hand
    is `small` again and the big hand leads, as (cards of `big` read, the big hand then); None when the game
    ends or the big hand reads past its own cards first."""
    game = Game([list(big), list(small)])
    read = 0
    for _ in range(limit):
        before = list(game.hands[0])
        over = game.play_trick()
        # the big hand read its own cards while they lasted: what it played of `before`
        pile = list(game.last_pile)
        if over:
            return None
        played_big = len(before) - (len(game.hands[0]) - (len(pile) if game.leader == 0 else 0))
        read += played_big
        if read > len(big):
            return None
        if game.leader == 0 and list(game.hands[1]) == list(small):
            return read, tuple(game.hands[0])
    return None


@pytest.mark.parametrize("seed", range(4))
def test_the_gadget_turns_a_piece_over_as_the_reference_player_does(seed):
    rng = random.Random(seed)
    checked = 0
    for _ in range(1500):
        n = rng.randint(3, 30)
        big = tuple(rng.choice([0, 0, 0, 0, 0, 1, 2, 3, 4]) for _ in range(n))
        small = rng.choice([(1, 0), (0, 1, 0), (1, 0, 0), (2, 0, 0)])
        q = np.zeros(kg.buffer_cards(len(small), n), np.uint8)
        sizes = np.zeros(1, np.int64)
        out, used, q_len = kg.play_piece(np.array(big, np.uint8), n, np.array(small, np.uint8), q, sizes)
        ref = reference_gadget(big, small)
        naive = naive_gadget(big, small)
        assert (out == kg.DONE) == (naive[0] == NAIVE_DONE) and (out == kg.DEAD) == (naive[0] == NAIVE_DEAD)
        if out == kg.DONE:
            assert ref is not None and ref[0] == used, (big, small)
            # B = P X became X Q: the rest of its cards, then the block
            assert ref[1] == big[used:] + tuple(int(v) for v in q[:q_len]), (big, small)
            assert q_len == used  # the block holds as many cards as the piece
            assert (used, tuple(int(v) for v in q[:q_len])) == naive[1:]
            assert sizes[0] >= len(small)
            checked += 1
        elif out == kg.DEAD:
            assert ref is None, (big, small)
    assert checked > 30


@pytest.mark.parametrize("pool, max_len", [((26, 3, 4, 4), 13), ((34, 3, 4, 4, 4), 11), ((8, 2, 2, 2, 2), 14)])
def test_the_gene_search_by_composition_finds_what_the_search_over_every_piece_finds(pool, max_len):
    want = every_gene(pool, max_len)
    library = kc.library((1, 0), (0,), tuple(pool) + (0,) * (10 - len(pool)), max_len)
    assert {o[0] for orbits in library.values() for o in orbits} == want  # every composition in one search
    got = set()
    for comp in product(*[range(k + 1) for k in pool]):
        if 0 < sum(comp) <= max_len:
            found = kc.genes_of((1, 0), (0,), tuple(comp) + (0,) * (10 - len(comp)))
            assert not found.truncated
            for orbit in found.orbits:
                assert kc.comp_of(orbit[0])[:len(pool)] == comp
                assert orbit[0] == min(orbit)  # the least phase first
                got.add(orbit[0])
    assert got == want and len(want) > 5


def test_a_gene_comes_back_to_itself_through_its_phases():
    found = kc.genes_of((1, 0), (0,), kc.comp_of(parse_hand("-----KJ")))
    orbits = [["".join("-JQKA"[v] for v in p) for p in o] for o in found.orbits]
    assert ["-----KJ", "--K---J"] in orbits  # the least phase first, then its successor
    q = np.zeros(kg.buffer_cards(2, 7), np.uint8)
    assert kg.play_piece(np.array(parse_hand("-----KJ"), np.uint8), 7, J_, q, np.zeros(1, np.int64)) == (kg.DONE, 7, 7)
    assert "".join("-JQKA"[v] for v in q[:7]) == "-K---J-"


def test_every_hand_of_genes_lies_on_a_cycle_of_the_reference_player():
    rng = random.Random(5)
    found = [o for c in [(2, 1), (6, 1, 3, 3), (9, 1, 2, 2)] for o in
             kc.genes_of((1, 0), (0,), tuple(c) + (0,) * (10 - len(c))).orbits]
    assert len(found) > 10
    for _ in range(30):
        genes = rng.sample(found, rng.randint(1, 3))
        for hand in list(kc.hands(genes, (0,)))[:4]:
            r = play_reference([hand, (1, 0)])
            assert r.outcome == "cycle" and r.preperiod_tricks == 0


# The decks whose every cycle is known (the census of every state, or every deal of the
# atlas's exhaustive runs with the census beside it: benchmarks/README.md), all in the catalogue.
CENSUSED = {"0:8,1:2,2:2,3:2": 4, "0:10,1:2,2:2,3:2": 1, "0:6,1:2,2:2,3:2,4:2": 18, "0:8,1:2,2:2,3:2,4:2": 168}


EVERY_GENE = ConstructTable(max_nodes=0, max_states=100_000)  # no budget: each composition searched whole


def construct_all(deck, table=EVERY_GENE):
    rows = {}
    for first in Gadget(deck, table).firsts():
        result = run_construct(deck, first, table)
        for row in result.cycle_rows:
            rows.setdefault(row.cycle_id, row)
    return rows


@pytest.mark.parametrize("deck", sorted(CENSUSED))
def test_on_the_censused_decks_it_finds_exactly_the_census_cycles_it_claims(deck):
    known = [c for c in read_cycles(SHIPPED) if c.deck == deck]
    assert len(known) == CENSUSED[deck]
    claimed = {c.cycle_id for c in known if kc.covers(walk(parse_deal(c.state)).cycle, (1, 0), (0,), 1)}
    found = construct_all(deck)
    assert set(found) == claimed
    assert set(found) <= {c.cycle_id for c in known}  # nothing the census does not hold
    for cid, row in found.items():
        r = play_reference(parse_deal(row.state))
        assert (r.cycle_id, r.preperiod_tricks, r.period_cards) == (cid, 0, row.period_cards)


def test_the_census_decks_hold_gadget_cycles_to_find():
    assert len(construct_all("0:8,1:2,2:2,3:2,4:2")) >= 10


def test_parse_genes_reads_a_hand_of_genes_and_refuses_others():
    genes = [o for c in [(2, 1), (6, 1, 3, 3)]
             for o in kc.genes_of((1, 0), (0,), tuple(c) + (0,) * (10 - len(c))).orbits]
    hand = next(iter(kc.hands(genes[:2], (0,))))
    assert kc.parse_genes(hand, J_, TAIL, 1) == [genes[0][0], hand[len(genes[0][0]):-1]]
    assert kc.parse_genes(hand[:-1], J_, TAIL, 1) is None  # no tail
    assert kc.parse_genes(hand + (0,), J_, TAIL, 1) is None


def test_firsts_and_multisets_cover_each_multiset_once():
    target = (6, 3, 2, 0, 0, 0, 0, 0, 0, 0)
    every = set()
    parts = [c for c in sorted(product(*[range(k + 1) for k in target]), key=kc.order) if c[1] == 1]
    for first in kc.firsts(target, 1):
        for rest in kc.multisets(kc.minus(target, first), first, 1, parts, lambda c: True):
            ms = tuple([first] + rest)
            assert list(ms) == sorted(ms, key=kc.order) and ms not in every
            assert tuple(map(sum, zip(*ms))) == target and all(c[1] == 1 for c in ms)
            every.add(ms)
    # every way to cut the target into three parts of one J each, counted apart
    brute = set()
    for a in product(range(7), range(3)):
        for b in product(range(7), range(3)):
            c = (6 - a[0] - b[0], 2 - a[1] - b[1])
            if min(c) >= 0:
                parts = sorted([(a[0], 1, a[1]), (b[0], 1, b[1]), (c[0], 1, c[1])], key=lambda x: (sum(x), x))
                if all(sum(p) for p in parts):
                    brute.add(tuple(p + (0,) * 7 for p in parts))
    assert every == brute


@pytest.mark.parametrize("table, sentence", [
    (dict(small=""), "construct.small must hold at least one card"),
    (dict(per_gene="JQ"), "construct.per_gene is one card"),
    (dict(small="AAAAA"), "does not hold the small hand"),
    (dict(small="JX"), "construct.small: unknown character 'X' at position 2"),
])
def test_a_gadget_the_deck_cannot_hold_is_one_sentence(table, sentence):
    with pytest.raises(BmnError, match=sentence):
        Gadget("camicia", ConstructTable(**table), "config").check("config")


def test_the_two_phases_of_a_first_composition_split_its_multisets():
    deck, table = "0:8,1:2,2:2,3:2,4:2", ConstructTable(max_piece=8, max_nodes=0, max_states=100_000)
    for first in Gadget(deck, table).firsts():
        both = {r.cycle_id for r in run_construct(deck, first, table).cycle_rows}
        quick = {r.cycle_id for r in run_construct(deck, first, table, exact=False).cycle_rows}
        slow = {r.cycle_id for r in run_construct(deck, first, table, exact=True).cycle_rows}
        assert quick | slow == both and not quick & slow


def test_the_camicia_decks_gadget_census_is_92_cycles_85_of_them_new():
    """docs/atlas.md, "Cycles built from genes": the whole census at the default budget (which cuts short
    only compositions that hold no gene), each cycle known or in the catalogue as this strategy's find."""
    table = ConstructTable(max_states=100_000)
    rows = {}
    for exact in (False, True):
        for first in Gadget("camicia", table).firsts():
            for row in run_construct("camicia", first, table, exact=exact).cycle_rows:
                rows.setdefault(row.cycle_id, row)
    by_source = {c.cycle_id: c.source for c in read_cycles(SHIPPED) if c.deck == "camicia"}
    sources = [by_source.get(cid) for cid in rows]
    assert len(rows) == 92 and sources.count("bmn construct 2026") == 85
    assert sorted(s for s in sources if s != "bmn construct 2026") == ["N1k06 2026"] * 6 + ["bmn states 2026"]
    assert sorted(r.imbalance for r in rows.values())[:7] == [0] * 6 + [1]
