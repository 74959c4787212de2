"""The genes library shipped with bmn (kernels/data/genes) and the census it supports (kernels/genelib.py): its
entries searched again, the rule that skips a long composition held to searches of its rest's splits, the census by
length and its sentence, the Camicia deck's census run and `bmn genes` (merge, --census, --compositions,
--library) on a real local Ray."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest
from cluster_helpers import in_process

from kernels import genelib as gl
from kernels import genes as kg
from kernels.errors import BmnError
from kernels.notation import parse_hand
from kernels.strategies.construct import ConstructTable, Gadget, census_plan

J_, T_ = (1, 0), (0,)
STANDARD = (34, 3, 4, 4, 4)  # what the standard deck leaves beside J- and the tail -
CAMICIA = (26, 3, 4, 4)


@pytest.fixture(scope="module")
def library():
    return gl.shipped()


@pytest.fixture(scope="module")
def census(library):
    return gl.Census(STANDARD, library)


def test_the_shipped_library_is_complete_to_26_cards_and_each_entry_is_sound(library, census):
    assert (library.small, library.tail, library.max_orbit) == ("J-", "-", 64)
    assert census.complete_to() >= 26
    total = sum(len(e.genes) for e in library.entries.values() if e.length <= 26)
    assert total == 5214  # the census by length of docs/atlas.md (benchmarks/gene_census.csv)
    rng = random.Random(5)
    entries = [e for e in library.entries.values() if e.genes]
    for entry in rng.sample(entries, 40):
        for gene in entry.genes:
            cards = parse_hand(gene.gene)
            assert gl.comp_of(cards) == entry.comp and cards[-1] == 1  # (every phase ends on a J: kernels/genes.py)
            phases = kg.orbit_phases(cards, J_, T_)
            assert (len(phases), " ".join(gene.phases.split())) == (gene.orbit, gene.phases) and min(phases) == cards
            assert gene.small_max == max(kg.turn_sizes(p, J_) for p in phases)


def test_a_sample_of_the_library_searched_again_gives_its_genes(library):
    """A sample of its compositions (those with genes weighed in; the searches each under a second) searched again
    by this bmn: the same genes, every one."""
    rng = random.Random(11)
    cheap = [e for e in library.entries.values() if e.choices < 3_000_000]
    sample = rng.sample([e for e in cheap if e.genes], 15) + rng.sample([e for e in cheap if not e.genes], 10)
    for entry in sample:
        found, counters = kg.genes_of(J_, T_, entry.comp)
        assert sorted(g for g in found) == sorted(parse_hand(g.gene) for g in entry.genes), entry.composition
        assert counters[kg.TRUNCATED] == 0


def test_a_long_composition_is_skipped_only_when_no_split_of_its_rest_holds_genes(census):
    """The rule, held to searches that do not use the library: for skipped compositions (those whose rest is short
    enough to split every way here), every split of the rest into two one-J compositions has a part with no gene;
    for worth-searching ones, the split the census names holds genes in both parts."""
    verdicts = census.long_verdicts()
    assert {sum(v.comp) for v in verdicts} == set(range(27, 48))
    assert (sum(v.worth for v in verdicts), sum(not v.worth for v in verdicts)) == (571, 1304)
    searched: dict[tuple, bool] = {}

    def holds(comp):
        if comp not in searched:
            searched[comp] = bool(kg.genes_of(J_, T_, comp)[0])
        return searched[comp]

    rng = random.Random(2)
    skipped = [v for v in verdicts if not v.worth and sum(v.comp) >= 38]
    for v in rng.sample(skipped, 25) + [v for v in verdicts if not v.worth and sum(v.comp) == 38][:3]:
        rest = tuple(t - c for t, c in zip(census.target, v.comp))
        assert "splits into no 2 compositions" in v.reason
        assert list(gl.splits(rest, 2, 1, holds)) == []
    worth = [v for v in verdicts if v.worth and sum(v.comp) >= 36]
    for v in rng.sample(worth, 8):
        assert len(v.split) == 2 and all(holds(part) for part in v.split)
        assert sum(map(sum, v.split)) + sum(v.comp) == sum(STANDARD)


def test_the_census_cannot_decide_past_its_library_and_says_so(library):
    partial = gl.Library("J-", "-", 64, {c: e for c, e in library.entries.items() if e.length <= 12})
    census = gl.Census(STANDARD, partial)
    assert census.complete_to() == 12
    with pytest.raises(BmnError, match="cannot decide 0:28,1:1"):
        census.verdict(gl._comp10((28, 1)))


def test_one_j_a_gene_every_composition_at_once():
    """The census counts one-J genes; the searches that allow more find none (to 14 cards here; to 18 in
    docs/atlas.md's figures)."""
    assert set(gl.one_per_gene_evidence(J_, T_, STANDARD, 14)) == {1}


def test_a_damaged_or_foreign_library_is_one_sentence(tmp_path):
    bad = tmp_path / "x.jsonl"
    bad.write_text('{"format": 1, "small": "J-", "tail": "-"}\n{"composition": 3}\n')
    with pytest.raises(BmnError, match="is not a genes library: line 2 is not an entry"):
        gl.Library.load(bad, "J-", "-")
    bad.write_text('{"format": 9}\n')
    with pytest.raises(BmnError, match="names format 9, not 1"):
        gl.Library.load(bad)
    good = tmp_path / "y.jsonl"
    gl.Library("Q-", "-").save(good)
    with pytest.raises(BmnError, match="library of small hand Q- and tail '-', not of J- and '-'"):
        gl.Library.load(good, "J-", "-")


def test_merging_adds_what_is_new_and_refuses_a_contradiction(library, tmp_path):
    lib = gl.Library("J-", "-", 64, {c: e for c, e in library.entries.items() if e.length <= 14})
    casella = parse_hand("--------K---------Q-Q-K---Q-KAQJ")
    entry = gl.entry_of(gl.comp_of(casella), [casella], J_, T_, choices=1, cpu_s=1.0, source="test")
    assert lib.merge([entry]) == ["0:23,1:1,2:4,3:3,4:1 (32 cards): 1 gene"] and lib.merge([entry]) == []
    assert lib.get(gl.comp_of(casella)).genes[0].orbit == 4
    wrong = gl.entry_of(gl.comp_of(casella), [], J_, T_, choices=1, cpu_s=1.0, source="a wrong search")
    with pytest.raises(BmnError, match="holds 1 gene.* of 0:23,1:1,2:4,3:3,4:1 and a wrong search 0"):
        lib.merge([wrong])
    lib.save(tmp_path / "J-_-.jsonl")
    back = gl.Library.load(tmp_path / "J-_-.jsonl", "J-", "-")
    assert back.entries == lib.entries


def test_the_census_plan_builds_what_the_library_holds_and_searches_the_rest():
    plan = census_plan(Gadget("0:30,1:3,2:1", ConstructTable(census=True)))
    kinds = [(p["kind"], p["first"][:3]) for p in plan]
    assert kinds.count(("search", (26, 1, 1))) == 1 and all(p["max_piece"] == 26 for p in plan)
    assert {k for k, _ in kinds} == {"multisets", "search"}
    with pytest.raises(BmnError, match="ships no genes library of small hand Q-"):
        Gadget("standard", ConstructTable(census=True, small="Q-", per_gene="Q")).census()


def test_the_census_by_length_and_its_sentence(library):
    census = gl.Census(CAMICIA, library)
    counts = gl.CycleCounts("J-", "-")
    rows = gl.census_rows(census, counts, "camicia")
    assert rows[0].length == 1 and rows[-1].length == 35 and all(r.cycles is None for r in rows if r.genes)
    assert gl.census_statement(rows, "J-", "Camicia").startswith(
        "Every `J-` cycle of the Camicia deck whose genes have at most 2 cards: 0 cycles")
    counts.merge([gl.CycleCount("camicia", gl.comp_text(c), {}) for length in range(1, 36)
                  for c in census.compositions(length)])
    rows = gl.census_rows(census, counts, "camicia")
    assert gl.census_statement(rows, "J-", "Camicia") == ("Every `J-` cycle of the Camicia deck whose genes have at "
                                                           "most 35 cards (the gadget's whole census): 0 cycles, 0 "
                                                           "entered by balanced deals, 0 balanced deals")


# -- on a real local Ray ---------------------------------------------------------------------------------------

def test_the_camicia_census_run_is_its_92_cycles_and_merges_into_the_library(ray_address, tmp_path):
    """The Camicia deck's whole J- census from the shipped library (no search: every composition it needs is
    there): the 92 cycles of the complete census (docs/atlas.md), each counted once by its longest gene; merged
    into a copy of the files, the census says so."""
    out = tmp_path / "census"
    result = in_process("search", "configs/gene-census.toml", "--deck", "camicia", "--out", out, "--workers", "2",
                        "--address", ray_address, "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "cycles: 92 distinct: 92 known" in result.stdout
    assert "balanced: 6 of them entered by balanced deals, 18 deals in all" in result.stdout
    genes = in_process("genes", out, "--format", "json")
    rows = json.loads(genes.stdout)
    assert sum(r["cycles"] for r in rows) == 92 and {r["source"] for r in rows} == {"multisets"}
    into = tmp_path / "files"
    merged = in_process("genes", "merge", out, "--into", into)
    assert merged.returncode == 0, merged.stderr
    assert "0 composition(s) searched to their end" in merged.stdout and "550 whose census cycles" in merged.stdout
    counts = gl.CycleCounts.load(into / "J-_-.cycles.jsonl", "J-", "-")
    rows = gl.census_rows(gl.Census(CAMICIA, gl.shipped()), counts, "camicia")
    assert gl.census_statement(rows, "J-", "Camicia") == ("Every `J-` cycle of the Camicia deck whose genes have at "
                                                           "most 35 cards (the gadget's whole census): 92 cycles, 6 "
                                                           "entered by balanced deals, 18 balanced deals")
    again = in_process("genes", "merge", out, "--into", into)
    assert "(0 new to the census cycles)" in again.stdout


def test_bmn_genes_shows_the_shipped_census(tmp_path):
    census = in_process("genes", "--census", "--format", "csv")
    assert census.returncode == 0, census.stderr
    lines = census.stdout.splitlines()
    assert lines[0] == "length,compositions,worth,complete,genes,cycles,balanced_cycles,balanced,cpu_s"
    assert lines[26].startswith("26,125,125,125,233,") and len(lines) == 48
    assert lines[47].startswith("47,1,0,0,0,0,0,0,")  # (nothing worth searching: nothing to build)
    table = in_process("genes", "--census")
    assert "Every `J-` cycle of the standard deck whose genes have at most" in table.stdout
    comps = in_process("genes", "--compositions", "--format", "csv").stdout.splitlines()
    assert comps[0] == "composition,length,worth,complete,genes,choices,cpu_s,reason"
    assert any(line.startswith('"0:23,1:1,2:4,3:3,4:1",32,True,True,1,') for line in comps)
    assert any(line.startswith('"0:20,1:1,2:4,3:4,4:4",33,False,False') and "splits into no 2" in line
               for line in comps)
    lib = in_process("genes", "--library", "--format", "csv").stdout.splitlines()
    assert lib[0] == "gene,composition,length,orbit,small_max,cycles,balanced_cycles,balanced"
    assert any(line.startswith("--J,") for line in lib)
    for args, sentence in [(("--census", "runs/x"), "give no run"), (("merge",), "takes one run"),
                           ((), "give construct runs"), (("--census", "--deck", "0:6,2:2"), "does not hold")]:
        code = in_process("genes", *args)
        assert code.returncode == 2 and sentence in code.stderr, (args, code.stderr)


def test_a_census_resumes_from_its_own_record_not_from_the_files_shipped_since(ray_address, tmp_path, monkeypatch):
    """A census's plan (the library's complete lengths, the long compositions it holds, the searches' layouts) is
    written into the run when it starts: a resume plans from that record and never reads the shipped files again
    (here they would raise), and ends with the tables of an uninterrupted run."""
    from cluster_helpers import assert_same_tables, direct_tables, make_config, tables_of

    from cluster.loop.coordinator import run_search
    from cluster.runs.runmeta import read_run_config
    from kernels.strategies import construct

    values = dict(strategy="construct", deck="0:30,1:3,2:1", workers=2, address=ray_address,
                  construct={"census": True, "max_states": 100_000})
    first = run_search(make_config(tmp_path / "run", time_limit=0.01, **values))
    assert first.state == "time limit"
    stored = read_run_config(str(tmp_path / "run"))
    assert stored.table().census_at == ("complete=26", "multisets=yes") and len(stored.table().layout) == 1

    def no_reading(*args):
        raise AssertionError("the census read the shipped files again")

    monkeypatch.setattr(construct, "census_record", no_reading)
    resumed = run_search(replace(stored, time_limit=0.0), resume=True)
    assert resumed.state == "finished" and not (tmp_path / "run" / "foreign").exists()
    assert_same_tables(tables_of(tmp_path / "run"), direct_tables(stored))


def test_the_readme_and_the_atlas_state_what_the_shipped_census_supports(library):
    """The sentence the README opens with (and docs/atlas.md's census) is the one `bmn genes --census` makes of the
    data shipped with bmn: merging a run into the census changes both."""
    from pathlib import Path

    rows = gl.census_rows(gl.Census(STANDARD, library), gl.shipped_cycles(), "standard")
    statement = gl.census_statement(rows, "J-", "standard")
    root = Path(__file__).resolve().parents[1]
    for doc in ("README.md", "docs/atlas.md"):
        text = " ".join((root / doc).read_text().split())
        assert f"**{statement}" in text, (doc, statement)


def test_the_atlas_census_table_is_the_shipped_census(library):
    """Every row of docs/atlas.md's census by the longest gene's length is `bmn genes --census`'s row of that
    length (CPU-seconds rounded half up), and it shows every length from 17 cards to the longest the census
    completes with every shorter one (the README's L)."""
    import re
    from pathlib import Path

    rows = {r.length: r for r in gl.census_rows(gl.Census(STANDARD, library), gl.shipped_cycles(), "standard")}
    text = (Path(__file__).resolve().parents[1] / "docs" / "atlas.md").read_text()
    table = text[text.index("| longest gene | compositions |"):]
    table = table[:table.index("\n\n")]
    shown = {}
    for line in table.splitlines()[2:]:
        cells = [int(re.sub(r"[*,]", "", c)) for c in line.strip("|").split("|")]
        shown[cells[0]] = cells[1:]
    for length, cells in shown.items():
        r = rows[length]
        assert cells == [r.compositions, r.worth, r.searched, r.genes, r.cycles, r.balanced_cycles, r.balanced,
                         int(r.cpu_s + 0.5)], length
    done = max(n for n in rows if all(rows[m].complete for m in rows if m <= n))
    assert set(shown) == set(range(17, done + 1))


def test_every_balanced_cycle_of_the_census_is_in_the_catalogue_with_its_count(library):
    """The balanced cycles the shipped census counts (every length it completes) are the standard deck's balanced
    cycles of the catalogue (kernels/data/known_cycles.tsv, each replayed by its own tests): as many, entered by as
    many balanced deals. (Every balanced standard-deck cycle known is a `J-` cycle of genes within the census; a
    balanced cycle catalogued from elsewhere, or one the census adds without its entry, breaks the equality.)"""
    from kernels.catalogue import SHIPPED, read_cycles

    rows = gl.census_rows(gl.Census(STANDARD, library), gl.shipped_cycles(), "standard")
    done = max(r.length for r in rows if all(q.complete for q in rows if q.length <= r.length))
    complete = [r for r in rows if r.length <= done]
    balanced = [e for e in read_cycles(SHIPPED) if e.deck == "standard" and e.balanced_deals]
    assert (len(balanced), sum(e.balanced_deals for e in balanced)) == (
        sum(r.balanced_cycles for r in complete), sum(r.balanced for r in complete))


def test_merge_reads_only_construct_runs_with_long_genes_or_a_census(tmp_path):
    from cluster_helpers import offline_run

    run = offline_run(tmp_path / "random", strategy="random", deck="0:6,1:2,2:2", deals=2000, shard_size=1000)
    merged = in_process("genes", "merge", run, "--into", tmp_path / "files")
    assert merged.returncode == 2 and "is a run of random, with no long genes nor a census" in merged.stderr
    assert not (tmp_path / "files").exists()
    missing = in_process("genes", "merge", tmp_path / "nowhere")
    assert missing.returncode == 2 and missing.stderr.startswith("bmn: error:")
