"""The catalogue of known cycles (kernels/catalogue.py) and every cycle labelled by it (cluster/runs/known.py).

The shipped entries replay on the reference player with their ids, periods and closures; the
published deal lists (tests/data/published/) are held to them: the exhaustive search of the Camicia
deck and backward play from the catalogued cycles find exactly the same 162 balanced deals, and the
20-card deck's 16. Then the labels: a run that met Casella's cycle, a Camicia cycle of the
exhaustive search and a cycle of no source, in the tables, `bmn cycles` (also `--new`, over several
runs), `bmn status` and a search's summary; the user's own catalogue; a contradiction.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path

import pytest
from cluster_helpers import in_process, offline_run
from helpers import CASELLA, CASELLA_ID, DATA

from cluster.commands.query import run_tables
from cluster.runs import known
from kernels.backward import closure
from kernels.catalogue import (
    EXHAUSTIVE,
    SHIPPED,
    Catalogue,
    ExhaustiveSearch,
    KnownCycle,
    confirm,
    deck_spec,
    entry_of,
    read_cycles,
    read_exhaustive,
    write_cycles,
)
from kernels.engines.reference import play_reference
from kernels.errors import BmnError
from kernels.notation import parse_deal

PUBLISHED = DATA / "published"
ENTRIES = read_cycles(SHIPPED)
SEARCHES = read_exhaustive(EXHAUSTIVE)
# A cycle of a deck no source has studied (two each of values 1 and 5, six plain cards): labelled new.
NEW_DEAL, NEW_ID = "--J-5/5---J", "d923088e896263fd"
N1K06_GROUP_4 = "------------J--K-K--/---Q-Q-JQ-K-Q-KJ--J-"


@pytest.fixture(autouse=True)
def shipped_catalogue():
    yield
    known.use(())  # (a test that read a file of its own leaves the shipped catalogue in use)


def published(name: str) -> list[dict]:
    lines = [line for line in (PUBLISHED / name).read_text().splitlines() if line and not line.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


def by_id(deck: str) -> dict[str, KnownCycle]:
    return {e.cycle_id: e for e in ENTRIES if e.deck == deck}


def test_every_entry_replays_on_the_reference_player_with_its_closure():
    assert len(ENTRIES) > 300
    assert len({(e.cycle_id, e.deck) for e in ENTRIES}) == len(ENTRIES)
    for entry in ENTRIES:
        confirm(entry, max_states=5_000_000)  # id, period, canonical state, balanced deal; the closure's counts
        assert entry.source and entry.reference and entry.confirmed.startswith("replayed on the reference player")


def test_confirm_refuses_an_entry_that_does_not_replay():
    casella = by_id("standard")[CASELLA_ID]
    for wrong in (dict(cycle_id="0" * 16), dict(period_tricks=61), dict(closure=2669), dict(balanced_deals=31),
                  dict(balanced_deal="-" * 26 + "/" + "-" * 10 + "JJJJQQQQKKKKAAAA")):
        with pytest.raises(BmnError, match="Casella"):
            confirm(KnownCycle(**{**casella.__dict__, **wrong}), max_states=100_000)


def digits(sequence: str) -> str:
    """A published 0-3 sequence (the leader's half first, each hand top first) in bmn's notation."""
    half = len(sequence) // 2
    letters = sequence.translate(str.maketrans("0123", "-JQK"))
    return f"{letters[:half]}/{letters[half:]}"


def test_the_exhaustive_camicia_search_and_backward_play_find_the_same_162_deals():
    rows = published("n1k06_camicia_162.tsv")
    assert len(rows) == len({r["deal"] for r in rows}) == 162
    camicia = by_id("camicia")
    groups: dict[str, set[str]] = defaultdict(set)  # cycle id -> N1k06's groups
    deals: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        assert digits(row["sequence"]) == row["deal"]
        r = play_reference(parse_deal(row["deal"]))
        assert r.outcome == "cycle" and r.cycle_id in camicia
        assert (r.period_cards, r.period_tricks, r.preperiod_cards) == \
            (int(row["cycle_cards"]), int(row["cycle_tricks"]), int(row["transient_cards"]))
        groups[r.cycle_id].add(row["group"])
        deals[r.cycle_id].add(row["deal"])
    # 15 cycles with the players told apart, 9 by bmn's id: six pairs are each other's mirror.
    assert len(set().union(*groups.values())) == 15 and len(groups) == 9
    assert sorted(len(g) for g in groups.values()) == [1, 1, 1, 2, 2, 2, 2, 2, 2]
    # The catalogue's Camicia cycles that balanced deals enter are the search's; its others (the states
    # hunt's, docs/atlas.md) no balanced deal enters, by their closures: what the search rightly missed.
    assert {cid for cid, entry in camicia.items() if entry.balanced_deals} == set(groups)
    assert len(camicia) > len(groups)
    for cid, entry in camicia.items():
        found = closure(parse_deal(entry.state), max_states=2_000_000)
        assert not found.truncated
        assert {d.hands for d in found.deals} == deals.get(cid, set())  # backward play: exactly the search's
        assert entry.balanced_deals == len(deals.get(cid, ())) and entry.closure == found.states
    [search] = [s for s in SEARCHES if s.deck == "camicia"]
    assert (search.split, search.deals, search.cycles) == ((20, 20), 193_584_473_082_000, 9)
    assert sum(e.balanced_deals for e in camicia.values()) == 162


def test_the_earlier_camicia_finds_are_labelled_by_who_published_them_first():
    camicia = by_id("camicia")
    n1k06 = {r["deal"] for r in published("n1k06_camicia_162.tsv")}
    labels = defaultdict(set)
    for row in published("mazzaro_2023_33.tsv"):
        assert row["deal"] in n1k06 and digits(row["line"].replace(" | ", "")) == row["deal"]
        labels[row["cycle"]].add(camicia[play_reference(parse_deal(row["deal"])).cycle_id].source)
    assert labels == {"1": {"Mazzaro 2023"}, "2": {"Mazzaro 2023"}, "3": {"Zanotto 2017"}}
    zanotto = play_reference(parse_deal("--K-Q-Q-K-KJ-----KJ-/--J--Q----Q-------J-"))
    assert camicia[zanotto.cycle_id].source == "Zanotto 2017" and camicia[zanotto.cycle_id].balanced_deals == 90
    assert sorted(e.source for e in camicia.values()).count("N1k06 2026") == 6


def test_the_20_card_deck_and_casella():
    rows = published("gentilini_20_cards_16.tsv")
    [entry] = by_id("0:14,1:2,2:2,3:2").values()
    assert entry.source == "Gentilini 2012" and (entry.period_tricks, entry.period_cards) == (10, 74)
    assert {d.hands for d in closure(parse_deal(entry.state)).deals} == {r["deal"] for r in rows}
    assert all(digits(r["sequence"]) == r["deal"] for r in rows)
    casella = by_id("standard")[CASELLA_ID]
    assert (casella.source, casella.balanced_deals, casella.closure) == ("Casella et al. 2024", 30, 2670)
    assert (casella.period_tricks, casella.period_cards) == (62, 440)  # the paper's 62 tricks
    assert play_reference(parse_deal(CASELLA)).cycle_id == CASELLA_ID


def test_every_exhaustive_search_has_its_cycles_in_the_catalogue():
    assert len(SEARCHES) >= 5
    for search in SEARCHES:
        cycles = [e for e in ENTRIES if e.deck == search.deck and e.balanced_deals and
                  tuple(len(h) for h in parse_deal(e.balanced_deal)) == search.split]
        assert len(cycles) == search.cycles, (search.deck, search.split)


# -- labels ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Three finished runs (no Ray): Casella's deal, a deal of N1k06's group 4, the new cycle's deal."""
    base = tmp_path_factory.mktemp("labels")
    out = {}
    for name, deck, deal in (("casella", "standard", CASELLA), ("n1k06", "camicia", N1K06_GROUP_4),
                             ("new", "0:6,1:2,5:2", NEW_DEAL)):
        path = base / f"{name}.txt"
        path.write_text(deal + "\n")
        out[name] = str(offline_run(base / name, strategy="deals", deck=deck, deals_file=str(path), min_cards=0))
    return out


def cycles_json(*args) -> list[dict]:
    done = in_process("cycles", *args, "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_run_meeting_casellas_cycle_labels_it(runs):
    [row] = cycles_json(runs["casella"])
    assert (row["cycle_id"], row["known"]) == (CASELLA_ID, "Casella et al. 2024")
    table = in_process("cycles", runs["casella"]).stdout
    assert "Casella et al. 2024" in table
    assert run_tables(runs["casella"])["cycles"].column("known").to_pylist() == ["Casella et al. 2024"]
    assert Path(runs["casella"], "cycles.parquet").exists()


def test_a_run_meeting_a_cycle_of_the_exhaustive_camicia_search_labels_it(runs):
    [row] = cycles_json(runs["n1k06"])
    assert row["known"] == "N1k06 2026" and row["period_cards"] == 233


def test_a_cycle_of_no_source_is_new_and_listed_by_new_over_several_runs(runs):
    [row] = cycles_json(runs["new"])
    assert (row["cycle_id"], row["known"]) == (NEW_ID, known.NEW)
    every = cycles_json(runs["casella"], runs["n1k06"], runs["new"])
    assert {r["known"] for r in every} == {"Casella et al. 2024", "N1k06 2026", "new"}
    assert [r["cycle_id"] for r in cycles_json("--new", runs["casella"], runs["n1k06"], runs["new"])] == [NEW_ID]
    assert cycles_json("--new", runs["casella"], runs["n1k06"]) == []


def test_status_names_the_sources(runs):
    text = in_process("status", runs["new"]).stdout
    assert "cycles    1 distinct: 1 new" in text
    st = json.loads(in_process("status", runs["casella"], "--json").stdout)
    assert (st["cycles_known"], st["cycles_new"], st["unit"]) == ({"Casella et al. 2024": 1}, 0, "deals")


def test_your_own_catalogue(runs, tmp_path, monkeypatch):
    mine = tmp_path / "mine.tsv"
    done = in_process("catalogue", "add", runs["new"], runs["casella"], "--to", str(mine), "--source", "A. User 2026")
    assert done.returncode == 0, done.stderr
    assert "1 cycle added" in done.stdout
    [entry] = read_cycles(mine)
    assert (entry.cycle_id, entry.deck, entry.source, entry.period_tricks) == (NEW_ID, "0:6,1:2,5:2", "A. User 2026", 3)
    assert runs["new"] in entry.reference and "bmn" in entry.reference  # where bmn found it
    assert entry.confirmed.startswith("replayed on the reference player; closure by backward play")
    confirm(entry, max_states=1_000_000)
    assert cycles_json(runs["new"], "--catalogue", str(mine))[0]["known"] == "A. User 2026"
    assert cycles_json("--new", runs["new"], "--catalogue", str(mine)) == []
    again = in_process("catalogue", "add", runs["new"], "--to", str(mine))  # (the file not read as a catalogue)
    assert again.returncode == 0 and "known already" in again.stdout and len(read_cycles(mine)) == 1
    monkeypatch.setenv("BMN_CATALOGUE", str(mine))
    assert cycles_json(runs["new"])[0]["known"] == "A. User 2026"
    assert "1 known (A. User 2026)" in in_process("status", runs["new"]).stdout
    assert "0 cycles added" in in_process("catalogue", "add", runs["new"], "--to", str(mine)).stdout
    checked = in_process("catalogue", "check")
    assert checked.returncode == 0 and f"{len(ENTRIES) + 1} cycles replayed" in checked.stdout
    listed = in_process("catalogue", "list", "--deck", "0:6,1:2,5:2").stdout
    assert NEW_ID in listed and "A. User 2026" in listed
    monkeypatch.delenv("BMN_CATALOGUE")
    # One deal, with its source and reference given.
    other = tmp_path / "other.tsv"
    done = in_process("catalogue", "add", "--deal", "3-1--3/-1--6-", "--to", str(other), "--source", "B 2027",
                      "--reference", "a notebook")
    assert done.returncode == 0, done.stderr
    [entry] = read_cycles(other)
    assert (entry.source, entry.reference, entry.deck) == ("B 2027", "a notebook", "0:7,1:2,3:2,6:1")


@pytest.mark.parametrize("text, says", [
    ("deck\tcycle_id\n", "the header must name the columns"),
    ("{header}camicia\t" + "0" * 16 + "\t1\t2\t--X/--\t\t\t\tsomeone\t\t\n", "line 3: unknown character 'X'"),
    ("{header}camicia\t" + "0" * 16 + "\t1\t2\t--/--\t\t\t\tsomeone\t\t\n", "a deal of the 0:4 deck, not of camicia"),
    ("{header}0:6,1:1,2:1\tnothex\t1\t2\t--J-/Q---\t\t\t\tsomeone\t\t\n", "cycle_id must be 16 hexadecimal digits"),
    ("{header}camicia\t" + "0" * 16 + "\t1\n", "3 tab-separated fields, 11 expected"),
    ("{header}0:6,1:1,2:1\t" + "0" * 16 + "\t1\t2\t--J-/Q---\t\t\t\t \t\t\n", "source is required"),
    ("{header}0:6,1:1,2:1\t" + "0" * 16 + "\tx\t2\t--J-/Q---\t\t\t\tsomeone\t\t\n",
     "period_tricks must be a whole number"),
])
def test_a_bad_catalogue_file_is_one_sentence(tmp_path, text, says):
    path = tmp_path / "bad.tsv"
    header = "# mine\n" + "\t".join(f.name for f in KnownCycle.__dataclass_fields__.values()) + "\n"
    path.write_text(text.replace("{header}", header))
    with pytest.raises(BmnError, match=says):
        read_cycles(path)
    done = in_process("catalogue", "list", "--catalogue", str(path))
    assert done.returncode == 2 and done.stderr.startswith("bmn: error: catalogue file") and \
           "Traceback" not in done.stderr
    assert in_process("cycles", "nowhere", "--catalogue", str(tmp_path / "missing.tsv")).returncode == 2


def test_a_cycle_that_an_exhaustive_search_did_not_report_is_a_contradiction(runs, tmp_path, monkeypatch):
    # The 20-card deck's cycle, were it not catalogued: its 16 deals are the whole of Gentilini's search.
    [entry] = by_id("0:14,1:2,2:2,3:2").values()
    without = Catalogue([e for e in ENTRIES if e is not entry], SEARCHES)
    deal = "------K-J-/-J--K-Q-Q-"
    sentence = without.contradiction(entry.cycle_id, "0:14,1:2,2:2,3:2", deal)
    assert sentence.startswith("CONTRADICTION: cycle 807f4f34b5409f0d") and "Gentilini 2012" in sentence
    assert known.current().contradiction(entry.cycle_id, "0:14,1:2,2:2,3:2", deal) is None  # it is catalogued
    assert without.contradiction(entry.cycle_id, "0:14,1:2,2:2,3:2", "-----------K-J-/-J--K-Q-Q") is None  # 15/5
    # A run that met it, shown with that catalogue: the sentence on stderr.
    path = tmp_path / "twenty.txt"
    path.write_text(deal + "\n")
    run = offline_run(tmp_path / "twenty", strategy="deals", deck="0:14,1:2,2:2,3:2", deals_file=str(path), min_cards=0)
    monkeypatch.setattr(known, "current", lambda: without)
    done = in_process("cycles", str(run))
    assert done.returncode == 0 and "bmn: CONTRADICTION: cycle 807f4f34b5409f0d" in done.stderr


def test_writing_and_reading_a_catalogue_file_round_trips(tmp_path):
    path = tmp_path / "c.tsv"
    entry = entry_of(NEW_DEAL, source="me", reference="here")
    write_cycles(path, [entry])
    write_cycles(path, [entry])
    assert read_cycles(path) == [entry, entry] and path.read_text().count("cycle_id") == 1
    with pytest.raises(BmnError, match="tab"):
        write_cycles(path, [KnownCycle(**{**entry.__dict__, "source": "a\tb"})])
    assert deck_spec("0:28,1:4,2:4,3:4") == "camicia"
    assert ExhaustiveSearch("camicia", (20, 20), 1, 1, "s", "r") == \
           ExhaustiveSearch("camicia", (20, 20), 1, 1, "s", "r")


def test_a_cycles_table_of_an_earlier_bmn_is_labelled_as_the_catalogue_says_now():
    import pyarrow.parquet as pq

    old = pq.read_table(DATA / "run_v1" / "tables" / "cycles.parquet")  # written before cycles were labelled
    assert "known" not in old.column_names
    assert known.labelled(old).column("known").to_pylist() == [None, None]  # two cycles of no source
    mine = Catalogue([entry_of("--J-/Q-Q-J-", source="me", reference="here")])
    table = known.labelled(known.labelled(old), mine)  # (a label set before is replaced)
    assert table.column("known").to_pylist() == ["me", None] and table.column_names == old.column_names + ["known"]


def test_the_catalogues_page_counts_what_the_file_holds():
    import re

    text = (Path(__file__).resolve().parents[1] / "docs" / "catalogue.md").read_text()
    cycles, decks = map(int, re.search(r"known_cycles.tsv`: (\d+) cycles of (\d+) decks", text).groups())
    assert (cycles, decks) == (len(ENTRIES), len({e.deck for e in ENTRIES}))
    table = text.split("| deck | cycles | label", 1)[1].split("\n\n", 1)[0]
    counts: dict[str, int] = defaultdict(int)
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        counts[cells[2]] += int(cells[1])
    assert counts == {label: sum(e.source == label for e in ENTRIES) for label in {e.source for e in ENTRIES}}


def test_the_builder_makes_the_shipped_entries_of_the_published_cycles():
    """benchmarks/known_cycles.py, from the published deal lists alone: every published cycle's entry as the
    shipped file has it (measured again here: canonical state, id, period, closure, balanced deals)."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "known_cycles.py"
    spec = importlib.util.spec_from_file_location("benchmark_known_cycles", path)
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    shipped = {(e.cycle_id, e.deck): e for e in ENTRIES}
    published = [e for e in builder.build([], "today") if e.source != builder.ATLAS]
    assert len(published) == 14 and {e.source for e in published} == {
        "Casella et al. 2024", "Zanotto 2017", "Mazzaro 2023", "N1k06 2026", "Gentilini 2012", "Bianco 2018",
        "Paulhus 1999"}
    for entry in published:
        assert shipped[(entry.cycle_id, entry.deck)] == entry
