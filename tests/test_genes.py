"""The gene search (kernels/genes.py) against the naive one (tests/naive.py) in every mode and setting; long
compositions searched in shards (kernels/strategies/construct.py) and on a real local Ray, stopped and resumed;
the genes table and the genes library (cluster/runs/genes.py)."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from itertools import product

import numpy as np
import pytest
from naive import every_gene

from kernels import construct as kc
from kernels import genes as kg
from kernels.errors import BmnError
from kernels.notation import format_hand, parse_hand
from kernels.strategies.construct import (
    GENE_SEARCH,
    ConstructShard,
    ConstructTable,
    Gadget,
    composition_text,
    compositions_of,
    layout,
    long_plan,
    parse_composition,
    run_long,
    shard_keys,
)

J_, T_ = (1, 0), (0,)
CASELLA = "--------K---------Q-Q-K---Q-KAQJ"  # the long gene of Casella's cycle, its least phase
# A 20-card deck whose one long composition (14 cards: 9 plain, J, K, three A) holds one gene, the 14-card gene of
# Casella's cycle, and whose rest (--J) builds one cycle with it, balanced: 13 balanced deals enter it.
SMALL_DECK, SMALL_LONG = "0:13,1:3,3:1,4:3", "0:9,1:1,3:1,4:3"


def search(pool, max_len, exact, **how):
    return set(kg.walk(kg.FIND, J_, T_, pool, max_len, exact, **how)[0])


@pytest.mark.parametrize("k, least, bounds", [(1, False, False), (1, True, True), (2, False, True), (3, True, False),
                                              (3, True, True), (5, True, True)])
@pytest.mark.parametrize("pool, max_len", [((20, 3, 4, 4), 13), ((12, 2, 2, 2, 2), 13), ((8, 1, 2, 1, 2), 14)])
def test_every_setting_of_the_search_finds_the_naive_searchs_genes(k, least, bounds, pool, max_len):
    want = every_gene(pool, max_len)
    assert search(pool, max_len, False, k=k, least=least, bounds=bounds) == want and len(want) > 3


def test_each_composition_searched_exactly_holds_the_genes_of_its_cards():
    """Every composition of the genes of a pool (and random ones with none), searched exactly in every setting:
    the naive search's genes of those cards."""
    rng = random.Random(3)
    library = every_gene((20, 3, 4, 4, 4), 13)
    comps = {kc.comp_of(g)[:5] for g in library}
    comps = set(rng.sample(sorted(comps), 12)) | {(9, 1, 0, 1, 3)}
    comps |= {c for c in (tuple(rng.randint(0, n) for n in (12, 1, 3, 3, 2)) for _ in range(8)) if 2 < sum(c) <= 15}
    for comp in sorted(comps):
        want = every_gene(comp, sum(comp), exact=True)
        assert want == {g for g in library if kc.comp_of(g)[:5] == comp} or sum(comp) > 13
        for k, bounds in ((1, False), (2, True), (3, True), (4, False)):
            assert search(comp, sum(comp), True, k=k, bounds=bounds) == want, (comp, k, bounds)


@pytest.mark.parametrize("depth", [1, 3, 6, 9])
def test_the_searches_below_a_frontier_are_the_whole_search(depth):
    comp = parse_composition(SMALL_LONG, "test")
    whole = kg.genes_of(J_, T_, comp)[0]
    nodes = kg.frontier(J_, T_, comp, depth)
    assert len(nodes) == len(set(nodes)) and (depth == 1 or len(nodes) > 3)
    below = [g for node in nodes for g in kg.genes_of(J_, T_, comp, prefix=node)[0]]
    assert sorted(below) == sorted(whole) and len(whole) == 1  # each gene below exactly one node
    assert format_hand(whole[0], True) == "--------A-KAAJ"


def test_casellas_long_gene_is_found_below_its_prefix_and_nowhere_else_nearby():
    gene = parse_hand(CASELLA)
    comp = kc.comp_of(gene)
    found, counters = kg.genes_of(J_, T_, comp, prefix=gene[1:10])
    assert [format_hand(g, True) for g in found] == [CASELLA] and counters[kg.TRUNCATED] == 0
    phases = kg.orbit_phases(gene, J_, T_)
    assert len(phases) == 4 and min(phases) == gene and kg.turn_sizes(gene, J_) == 22
    other = gene[1:9] + (2,)  # the same first cards, then a Q where Casella's gene holds a K
    assert kg.genes_of(J_, T_, comp, prefix=other)[0] == []


def test_a_search_stops_at_its_budget_and_says_so():
    comp = kc.comp_of(parse_hand(CASELLA))
    found, counters = kg.genes_of(J_, T_, comp, max_nodes=10_000)
    assert counters[kg.TRUNCATED] == 1 and counters[kg.CHOICES] == 10_001 and found == []


def test_knuths_estimate_is_deterministic_and_near_the_searchs_choices():
    comp = (17, 1, 3, 2, 0)
    estimate, live = kg.estimate(J_, T_, comp, probes=4000)
    assert (estimate, live) == kg.estimate(J_, T_, comp, probes=4000)
    choices = kg.genes_of(J_, T_, comp)[1][kg.CHOICES]
    assert 0.5 < estimate / choices < 2
    assert live[0] == 1 and sum(live) < estimate  # (the root, then live nodes by depth)


def test_the_bounds_and_the_lookahead_cut_the_plain_search_down():
    comp = (17, 1, 3, 2, 0)
    plain = kg.walk(kg.FIND, J_, T_, comp, sum(comp), True, k=1, least=False, bounds=False)[1][kg.CHOICES]
    pruned = kg.genes_of(J_, T_, comp)[1][kg.CHOICES]
    assert pruned * 5 < plain


def test_compositions_of_a_length_and_their_text():
    target = (11, 2, 0, 1, 3, 0, 0, 0, 0, 0)
    comps = compositions_of(target, 14, 1)
    assert comps == [c + (0,) * 5 for c in [(9, 1, 0, 1, 3), (10, 1, 0, 0, 3), (10, 1, 0, 1, 2), (11, 1, 0, 0, 2),
                                            (11, 1, 0, 1, 1)]]
    assert parse_composition(SMALL_LONG, "x")[:5] == (9, 1, 0, 1, 3)
    for bad in ("0:9;1:1", "14x", "0:9,9:x", ""):
        with pytest.raises(BmnError, match="^x: "):
            parse_composition(bad, "x")


@pytest.mark.parametrize("table, sentence", [
    (dict(long_gene=("0:9,1:2,3:1,4:3",)), "must hold exactly one J"),
    (dict(long_gene=("0:30,1:1",)), "holds cards the deck 0:13,1:3,3:1,4:3 does not leave"),
    (dict(long_gene=("45",)), "names no composition"),
    (dict(long_gene=("Q:1",)), "construct.long_gene"),
    (dict(long_gene=(SMALL_LONG,), known=("0:9,1:1,3:1,4:3 = --J",)), "not a gene of 0:9,1:1,3:1,4:3"),
    (dict(long_gene=(SMALL_LONG,), known=("0:9,1:1,3:1,4:3 --------A-KAAJ",)), "COMPOSITION = GENE"),
])
def test_a_long_gene_the_deck_cannot_hold_is_one_sentence(table, sentence):
    from kernels.strategies import REGISTRY
    from kernels.strategies.base import Search

    strategy = REGISTRY["construct"]
    search_ = Search(deck=SMALL_DECK)
    with pytest.raises(BmnError, match=sentence):
        strategy.check(search_, strategy.deal_space(search_, ConstructTable()), ConstructTable(**table), "config")


def long_shards(table: ConstructTable, deck: str = SMALL_DECK) -> list[ConstructShard]:
    return [ConstructShard.of(deck=deck, search=GENE_SEARCH, **shard_keys(table), **fields)
            for fields in long_plan(Gadget(deck, table))]


def played(shards):
    genes, cycles, deals = {}, {}, set()
    for shard in shards:
        result = run_long(shard.deck, shard)
        for row in result.gene_rows:
            assert row.gene not in genes  # (each gene found by one shard)
            genes[row.gene] = row
        for row in result.cycle_rows:
            cycles.setdefault(row.cycle_id, row)
        deals |= {c.hands for c in result.candidates}
    return genes, cycles, deals


def test_a_long_composition_in_shards_finds_what_one_search_finds_and_builds_its_balanced_cycle():
    whole = long_shards(ConstructTable(long_gene=(SMALL_LONG,), max_states=100_000))
    cut = long_shards(ConstructTable(long_gene=(SMALL_LONG,), max_states=100_000, shard_choices=100))
    assert len(whole) == 1 and whole[0].depth == 0 and len(cut) > 5 and len({s.depth for s in cut}) == 1
    assert {(s.part, s.parts) for s in cut} == {(k, len(cut)) for k in range(len(cut))}
    genes, cycles, deals = played(whole)
    assert played(cut) == (genes, cycles, deals)
    (row,) = genes.values()
    assert (row.gene, row.orbit, row.phases, row.small_max) == \
        ("--------A-KAAJ", 2, "--------A-KAAJ --K---A----AAJ", 12)
    assert (row.cycles, row.balanced_cycles, row.balanced, row.source) == (1, 1, 13, "search")
    (cycle,) = cycles.values()
    assert cycle.balanced == 13 == len(deals) and cycle.complete and cycle.imbalance == 0
    for hands in deals:  # each a balanced deal that enters it, on the reference player
        from kernels.engines.reference import play_reference
        from kernels.notation import parse_deal

        r = play_reference(parse_deal(hands))
        assert r.outcome == "cycle" and r.cycle_id == cycle.cycle_id and len(hands) == 21


def test_a_known_composition_is_built_from_its_genes_not_searched():
    searched = played(long_shards(ConstructTable(long_gene=(SMALL_LONG,), max_states=100_000)))
    known = long_shards(ConstructTable(long_gene=(SMALL_LONG,), max_states=100_000,
                                       known=(f"{SMALL_LONG} = --------A-KAAJ",)))
    assert [(s.kind, s.genes) for s in known] == [("library", ("--------A-KAAJ",))]
    genes, cycles, deals = played(known)
    assert (cycles, deals) == searched[1:] and genes["--------A-KAAJ"].source == "library"
    assert long_shards(ConstructTable(long_gene=(SMALL_LONG,), known=(f"{SMALL_LONG} =",))) == []  # no gene: no shard


def test_every_composition_of_a_length_and_the_budget_on_its_estimate():
    all14 = long_shards(ConstructTable(long_gene=("14",), max_states=100_000))
    assert {s.first[:5] for s in all14} == {(9, 1, 0, 1, 3), (10, 1, 0, 0, 3), (10, 1, 0, 1, 2), (11, 1, 0, 0, 2),
                                            (11, 1, 0, 1, 1)}
    genes, cycles, _ = played(all14)
    assert "--------A-KAAJ" in genes and all(len(g) == 14 for g in genes)
    estimates = {s.first: layout(J_, T_, s.first, 3, 50_000_000)[0] for s in all14}
    cap = sorted(estimates.values())[2]
    kept = long_shards(ConstructTable(long_gene=("14",), max_choices=int(cap)))
    assert {s.first for s in kept} == {c for c, e in estimates.items() if e <= int(cap)}


# -- on a real local Ray: the genes table, stopped and resumed, and the genes library --------------------------

def test_a_long_gene_run_on_two_workers_stopped_and_resumed_and_the_genes_library(ray_address, tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    from cluster_helpers import assert_same_tables, direct_tables, make_config, tables_of

    from cluster.loop.coordinator import run_search
    from cluster.runs.genes import library_uri

    bmn = Path(sys.executable).parent / "bmn"
    values = dict(strategy="construct", deck=SMALL_DECK, workers=2,
                  construct={"long_gene": ["14"], "max_states": 100_000, "shard_choices": 200})
    config = make_config(tmp_path / "first", time_limit=0.01, **values)
    stopped = run_search(config)
    assert stopped.state == "time limit" and 0 < stopped.shards_done < 40
    lifted = subprocess.run([str(bmn), "resume", str(tmp_path / "first"), "--time-limit", "0", "--address", ray_address,
                             "--no-progress"], capture_output=True, text=True, timeout=600)
    assert lifted.returncode == 0, lifted.stderr
    assert "balanced: 1 of them entered by balanced deals, 13 deals in all" in lifted.stdout
    tables = tables_of(tmp_path / "first")
    assert_same_tables(tables, direct_tables(config))
    genes = tables["genes"].to_pylist()
    assert [g["gene"] for g in genes if g["balanced"]] == ["--------A-KAAJ"]
    assert {g["source"] for g in genes} == {"search"}
    balanced = {r["cycle_id"]: r["balanced"] for r in tables["cycles"].to_pylist() if r["balanced"]}
    assert sorted(balanced.values()) == [13]
    # the library: every composition searched to its end, with its genes (none, for most)
    library = tmp_path / "genes" / "J-_-"
    assert library_uri(str(tmp_path / "first"), "") == str(tmp_path / "genes")
    entries = {p.stem: json.loads(p.read_text()) for p in library.glob("*.json")}
    assert len(entries) == 5 and entries[SMALL_LONG]["genes"] == ["--------A-KAAJ"]
    # a second run reads it: nothing searched again, the same genes and cycles
    again = make_config(tmp_path / "second", **values)
    report = run_search(again)
    assert report.state == "finished" and report.shards_done == 1 + sum(
        1 for g in genes if g["composition"] != SMALL_LONG)
    second = tables_of(tmp_path / "second")
    assert {g["gene"] for g in second["genes"].to_pylist()} == {g["gene"] for g in genes}
    assert {g["source"] for g in second["genes"].to_pylist()} == {"library"}
    assert second["cycles"].select(["cycle_id", "balanced"]).sort_by("cycle_id").equals(
        tables["cycles"].select(["cycle_id", "balanced"]).sort_by("cycle_id"))
    listed = subprocess.run([str(bmn), "cycles", "--balanced", str(tmp_path / "second"), "--format", "csv"],
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0 and listed.stdout.count("\n") == 2 and ",13," in listed.stdout


def test_the_library_is_beside_the_run_unless_given():
    from cluster.runs.genes import library_uri

    assert library_uri("s3://bucket/runs/a/", "") == "s3://bucket/runs/genes"
    assert library_uri("runs/a", "/data/genes") == "/data/genes"
    assert library_uri("/x/runs/a", "").endswith("/x/runs/genes")


def test_a_damaged_library_entry_is_one_sentence(tmp_path):
    from cluster.runs.genes import read_library
    from cluster.runs.storage import RunStore

    gadget = Gadget(SMALL_DECK, ConstructTable(long_gene=(SMALL_LONG,)))
    (tmp_path / "J-_-").mkdir()
    (tmp_path / "J-_-" / f"{SMALL_LONG}.json").write_text('{"genes": 3}')
    with pytest.raises(BmnError, match="is damaged .* delete it"):
        read_library(RunStore(str(tmp_path)), gadget, parse_composition(SMALL_LONG, "x"))
    (tmp_path / "J-_-" / f"{SMALL_LONG}.json").write_text('{"genes": ["--------A-KAAJ"], "max_orbit": 12}')
    assert read_library(RunStore(str(tmp_path)), gadget, parse_composition(SMALL_LONG, "x")) is None  # other orbits


def test_the_plain_and_the_fast_gadget_agree_on_every_small_piece():
    for n in range(1, 8):
        for cards in product((0, 1, 2), repeat=n):
            piece = np.array(cards, np.uint8)
            q = np.zeros(kg.buffer_cards(2, n), np.uint8)
            out, used, length = kg.play_piece(piece, n, np.array(J_, np.uint8), q, np.zeros(1, np.int64))
            nxt = np.zeros(n, np.uint8)
            is_piece = out == kg.DONE and used == n
            assert kg.successor(piece, n, np.array(J_, np.uint8), np.array(T_, np.uint8), nxt) == (
                is_piece and cards[0] == 0 and q[n - 1] == 0)


def test_casellas_cycle_is_rebuilt_from_its_long_gene_with_three_new_balanced_cycles_beside_it():
    """docs/atlas.md, "Long genes": Casella's 32-card gene (the search's find: test above) with the standard deck's
    short genes builds eight cycles, four of which balanced deals enter: Casella's (30 deals) and three new ones
    (34, 28, 28), every count the one backward play gives from the cycle alone."""
    from kernels.backward import ancestors
    from kernels.catalogue import SHIPPED, read_cycles
    from kernels.notation import parse_deal

    comp = "0:23,1:1,2:4,3:3,4:1"
    table = ConstructTable(long_gene=(comp,), known=(f"{comp} = {CASELLA}",), max_piece=14, max_states=100_000)
    (shard,) = long_shards(table, "standard")
    genes, cycles, deals = played([shard])
    balanced = {cid: row.balanced for cid, row in cycles.items() if row.balanced}
    assert len(cycles) == 8 and balanced == {"e1fabb73dac32ded": 30, "1a460c175ffe2cad": 34, "2de40ff14cd1e8e1": 28,
                                             "831ecdb1ee8a0ce1": 28}
    assert genes[CASELLA].balanced == 120 == len(deals) and genes[CASELLA].balanced_cycles == 4
    catalogue = {c.cycle_id: c for c in read_cycles(SHIPPED)}
    assert catalogue["e1fabb73dac32ded"].source == "Casella et al. 2024"
    for cid, count in balanced.items():
        back = ancestors(parse_deal(cycles[cid].state), limit=1)
        assert (back.count, back.original.cycle_id, back.truncated) == (count, cid, False)
        assert catalogue[cid].balanced_deals == count


@pytest.mark.parametrize("gene, deals, period", [
    ("--------K---------Q-KK---AKAAJ", 110, 62), ("--------K---------A-KK---AKAAJ", 59, 31),
    ("--------K---------Q-KK---AKAA-J", 110, 62)])
def test_the_long_genes_of_the_twelve_new_balanced_cycles_build_them(gene, deals, period):
    """docs/atlas.md, "Long genes": the three genes of 30-31 cards that the background run of lengths 27-40 found
    build four cycles each, all four entered by balanced deals, none of them catalogued before the run (the
    catalogue's "bmn construct 2026", each count the one backward play gives)."""
    from kernels.catalogue import SHIPPED, read_cycles

    comp = composition_text(kc.comp_of(parse_hand(gene)))
    table = ConstructTable(long_gene=(comp,), known=(f"{comp} = {gene}",), max_piece=14, max_states=100_000)
    (shard,) = long_shards(table, "standard")
    genes, cycles, found = played([shard])
    catalogue = {c.cycle_id: c for c in read_cycles(SHIPPED)}
    assert len(cycles) == 4 and all(row.balanced for row in cycles.values())
    assert {cid: row.balanced for cid, row in cycles.items()} == {cid: catalogue[cid].balanced_deals for cid in cycles}
    assert {catalogue[cid].source for cid in cycles} == {"bmn construct 2026"}
    assert {catalogue[cid].period_tricks for cid in cycles} == {period}
    assert genes[gene].balanced == deals == len(found) and genes[gene].balanced_cycles == 4


def test_the_atlas_census_by_length_is_the_census_files():
    """docs/atlas.md's census of genes by length is benchmarks/gene_census.csv summed by length: compositions, genes,
    the largest small hand; and every gene listed in the file holds its composition's cards (a gene with its
    composition's cards, checked here; its being a gene, by the searches' tests above)."""
    import csv
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    with open(root / "benchmarks" / "gene_census.csv") as f:
        rows = list(csv.DictReader(f))
    by_length: dict[int, list[dict]] = {}
    for row in rows:
        by_length.setdefault(int(row["length"]), []).append(row)
        genes = row["gene_list"].split()
        assert len(genes) == int(row["genes"])
        for gene in genes:
            assert composition_text(kc.comp_of(parse_hand(gene))) == row["composition"], gene
    atlas = (root / "docs" / "atlas.md").read_text()
    table = atlas.split("| length | compositions | genes |", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    shown = {int(c[0]): (int(c[1]), int(c[2].replace(",", "")), c[4]) for c in
             ([x.strip() for x in line.strip("|").split("|")] for line in table)}
    made = {n: (len(rs), sum(int(r["genes"]) for r in rs),
                str(max(int(r["most_small"]) for r in rs)) if any(int(r["genes"]) for r in rs) else "-")
            for n, rs in by_length.items()}
    assert shown == made


# -- a long-gene run's plan, fixed when it starts --------------------------------------------------------------

def test_a_resume_plans_as_the_run_began_whatever_the_estimator_says_now(ray_address, tmp_path, monkeypatch):
    """A long-gene run's plan (each composition's estimate, frontier depth and cut) is written into the run when it
    starts: a resume under another estimator (other probes) finishes the same shards, sets no file aside, and
    the tables are an uninterrupted run's."""
    from cluster_helpers import assert_same_tables, direct_tables, make_config, tables_of

    from cluster.loop.coordinator import run_search
    from cluster.runs.plan import Plan
    from cluster.runs.runmeta import read_run_config
    from kernels.strategies import construct

    values = dict(strategy="construct", deck=SMALL_DECK, workers=2, address=ray_address,
                  construct={"long_gene": ["14"], "max_states": 100_000, "shard_choices": 200})
    first = run_search(make_config(tmp_path / "run", time_limit=0.01, **values))
    assert first.state == "time limit" and 0 < first.shards_done
    stored = read_run_config(str(tmp_path / "run"))
    assert len(stored.table().layout) == 5  # (the five compositions of 14 cards, each cut)
    monkeypatch.setattr(construct, "PLAN_PROBES", 37)
    monkeypatch.setattr(construct, "NODE_PROBES", 3)
    construct.layout.cache_clear()
    fresh = Plan(make_config(tmp_path / "other", **values))
    planned = Plan(stored)
    assert [fresh.shard(k).params for k in range(fresh.count)] != \
        [planned.shard(k).params for k in range(planned.count)]  # (the estimator now cuts otherwise)
    resumed = run_search(replace(stored, time_limit=0.0), resume=True)
    assert resumed.state == "finished" and resumed.shards_done == planned.count
    assert not any(p.name in ("foreign", "damaged") for p in (tmp_path / "run").iterdir())
    monkeypatch.undo()
    construct.layout.cache_clear()
    assert_same_tables(tables_of(tmp_path / "run"), direct_tables(stored))


# -- bounds: every buffer sized by one rule, at the longest gene a cycle holds -----------------------------------

def test_the_buffers_hold_the_longest_gene_a_cycle_can_hold():
    """43 cards (the standard deck's 49 for genes, less the two shortest genes): pieces of its penalty-richest
    composition played whole and searched in every mode. Under NUMBA_BOUNDSCHECK=1 (.ci/run runs these tests so)
    an index past a buffer's end raises, where without it memory would be overwritten unseen."""
    import os

    from numba import njit

    if os.environ.get("NUMBA_BOUNDSCHECK") == "1":  # the check is really on: an overrun raises
        @njit(boundscheck=False)
        def past(a, i):
            return a[i]
        with pytest.raises(IndexError):
            past(np.zeros(3, np.int64), 3)
    comp = (30, 1, 4, 4, 4)
    rng = random.Random(43)
    cards = [0] * 29 + [2] * 4 + [3] * 4 + [4] * 4  # (with the tail's plain card and the J that ends it)
    for shape in range(60):
        rest = cards[:]
        rng.shuffle(rest)
        if shape % 3 == 0:  # the aces first: the most cards the small hand plays
            rest.sort(key=lambda c: -c)
        piece = tuple([0] + rest + [1])
        assert kc.comp_of(piece)[:5] == comp
        size = kg.turn_sizes(piece, J_)
        assert 0 < size <= 2 + 10 * 43
        kg.orbit_length(np.asarray(piece, np.uint8), 43, np.asarray(J_, np.uint8), np.asarray(T_, np.uint8), 64)
    estimate, live = kg.estimate(J_, T_, comp, probes=200)
    assert estimate > 0 and len(live) == 44
    assert kg.frontier(J_, T_, comp, 6)
    found, counters = kg.genes_of(J_, T_, comp, max_nodes=300_000)
    assert counters[kg.TRUNCATED] == 1 and found == []


def test_a_long_gene_plans_progress_speaks_of_compositions_choices_and_an_eta_by_their_work():
    from kernels.strategies.construct import GeneMeter

    shards = [dict(kind="multisets", first=(3, 1)), dict(kind="search", first=(2, 1), parts=2),
              dict(kind="search", first=(2, 1), parts=2), dict(kind="search", first=(5, 1), parts=1)]
    meter = GeneMeter(shards, {"0:2,1:1": 2e9, "0:5,1:1": 1e9}, finished={3})
    assert meter.status(2) == "compositions 1/2 searched  0.0M choices/s a worker  built 0/1  ETA ?"
    meter.done(0, 0, 0.0, 30.0)
    meter.done(1, 10**8, 10.0, 11.0)  # 10 M choices a CPU-second: the other half, 10^9 choices, is 100 s
    assert meter.status(2) == "compositions 1/2 searched  10.0M choices/s a worker  built 1/1  ETA 0:00:50"
    meter.done(2, 10**8, 10.0, 11.0)
    assert meter.status(2) == "compositions 2/2 searched  10.0M choices/s a worker  built 1/1  ETA 0:00:00"


def test_each_kind_of_construct_shard_is_a_type_of_its_own_and_reads_back_as_it():
    from kernels.strategies import REGISTRY, codec
    from kernels.strategies.construct import LibraryShard, MultisetsShard, SearchShard

    table = ConstructTable(long_gene=(SMALL_LONG,), max_states=100_000, shard_choices=100)
    shards = long_shards(table) + long_shards(ConstructTable(long_gene=(SMALL_LONG,), known=(f"{SMALL_LONG} = "
                                                                                              "--------A-KAAJ",)))
    multisets = MultisetsShard(deck=SMALL_DECK, first=(2, 1) + (0,) * 8, exact=False, **shard_keys(ConstructTable()))
    for shard in shards + [multisets]:
        back = codec.decode(REGISTRY["construct"], codec.encode(shard))
        assert back == shard and type(back) is {"search": SearchShard, "library": LibraryShard,
                                                 "multisets": MultisetsShard}[shard.kind]
    assert "prefixes" in codec.encode(shards[0]) and "genes" not in codec.encode(shards[0])
    assert not hasattr(multisets, "prefixes") and not hasattr(shards[-1], "depth")
    with pytest.raises(ValueError, match="kind 'twice' is not one of multisets, search, library"):
        codec.decode(REGISTRY["construct"], codec.encode(multisets).replace('"exact"', '"kind": "twice", "exact"'))
