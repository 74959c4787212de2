"""The atlas (kernels/strategies/atlas.py, cluster/runs/atlas.py, `bmn atlas`): a family of decks as one run.

Its decks and shards, its refusals, each deck's row against the kernels called directly (the
exhaustive sweep, the census) and every infinite deal replayed on the reference player, the
published 20-card Camicia figure (16 of 3,488,400), and configs/atlas.toml run by `bmn search` on
a real Ray cluster, then read with `bmn atlas` and `bmn query`."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from cluster_helpers import assert_same_tables, direct_tables, in_process, make_config, tables_of

from cluster.commands.query import own_report, query
from cluster.loop.coordinator import run_search
from cluster.runs.atlas import TABLE as ATLAS_TABLE
from cluster.runs.atlas import runs
from cluster.runs.config import build_config
from cluster.runs.plan import Plan
from kernels.dealspace import DealSpace
from kernels.decks import parse_deck
from kernels.engines.reference import play_reference
from kernels.errors import BmnError
from kernels.notation import parse_deal
from kernels.strategies import codec, get, run_exhaustive
from kernels.strategies.atlas import AtlasShard, family, run_atlas
from kernels.strategies.census import census_counts, run_census

BMN = Path(sys.executable).parent / "bmn"
ROOT = Path(__file__).resolve().parent.parent
CAMICIA_STYLE = "1:2,2:2,3:2"  # two each of J Q K


def atlas(plain, deck=CAMICIA_STYLE, **values):
    table = {"plain": plain, **values.pop("atlas", {})}
    return build_config({"strategy": "atlas", "deck": deck, "shard_size": 100_000, "atlas": table, **values})


def expand(text: str, kind=str) -> list:
    """The values a `runs` text stands for ("30 x2, 15" -> [30, 30, 15])."""
    out = []
    for part in filter(None, text.split(", ")):
        value, _, times = part.partition(" x")
        out += [kind(value)] * int(times or 1)
    return out


def test_runs_of_equal_values_are_counted():
    assert runs(["10/70"] * 4 + ["16/72", "10/70"]) == "10/70 x4, 16/72, 10/70" and runs([]) == ""
    assert expand("30 x2, 15 x2, 1", int) == [30, 30, 15, 15, 1]


def test_a_family_is_its_decks_by_plain_count():
    config = atlas("0:14")
    decks = family(config.search(), config.table())
    assert [d.plain for d in decks] == [0, 2, 4, 6, 8, 10, 12, 14]  # equal hands: the even decks only
    assert decks[-1].spec == "0:14,1:2,2:2,3:2" and decks[-1].split == (10, 10) and decks[-1].deals == 3_488_400
    near = atlas("3:5", atlas={"split": "near"})
    assert [(d.plain, d.split) for d in family(near.search(), near.table())] == [(3, (5, 4)), (4, (5, 5)),
                                                                                   (5, (6, 5))]
    three = atlas("0:6", deck="1:3,2:3,3:3", players=3)
    assert [(d.plain, d.split) for d in family(three.search(), three.table())] == [(0, (3, 3, 3)), (3, (4, 4, 4)),
                                                                                     (6, (5, 5, 5))]
    # The actors' deck and split: the family's first deck.
    assert Plan(config).space == DealSpace(parse_deck("1:2,2:2,3:2"), (3, 3))


def test_the_sizing_keys_are_not_part_of_what_a_run_computes():
    """cpu_hours and rate only size the work: a run may be searched again with others; plain may not."""
    base = atlas("0:8")
    assert atlas("0:8", atlas={"cpu_hours": 3, "rate": 5_000_000}).fingerprint() == base.fingerprint()
    assert atlas("0:10").fingerprint() != base.fingerprint()
    assert atlas("0:8", atlas={"census": True}).fingerprint() != base.fingerprint()


def test_the_work_is_sized_by_engine_unless_a_rate_is_given():
    # Three players: the general engine, sized at 100,000 deals/s: 2.2 G deals are 6 CPU-hours.
    with pytest.raises(BmnError, match=r"100,000 deals/s for other decks"):
        atlas("15", deck="1:3,2:3,3:3", players=3, atlas={"cpu_hours": 5})
    assert atlas("15", deck="1:3,2:3,3:3", players=3, atlas={"cpu_hours": 5, "rate": 1_000_000})


def test_census_where_asked_and_small_enough():
    config = atlas("0:8", atlas={"census": True, "census_max_states": 500_000})
    decks = family(config.search(), config.table())
    assert [d.census for d in decks] == [True, True, True, False, False]  # 83160 * 11 states > 500_000
    plan = Plan(config)
    typed = [plan.shard(k).params for k in range(plan.count)]
    shards = [t.to_json() for t in typed]  # (as the run keeps them)
    assert plan.count == 5 + 7 + 9 + 1 + 3  # every split of the censused decks, the deck's own split otherwise
    assert [s["split"] for s in shards if s["deck"] == "0:4,1:2,2:2,3:2"] == [[i, 10 - i] for i in range(1, 10)]
    assert [s["balanced"] for s in shards if s["deck"] == "0:4,1:2,2:2,3:2"] == [i == 5 for i in range(1, 10)]
    assert {s["deck_shards"] for s in shards if s["deck"] == "0:8,1:2,2:2,3:2"} == {3}
    assert [(s["lo"], s["hi"]) for s in shards if s["deck"] == "0:8,1:2,2:2,3:2"] == [
        (0, 100_000), (100_000, 200_000), (200_000, 270_270)]
    # A shard's parameters are an AtlasShard, read back from what the run keeps; an exact shard's JSON is as
    # it was before sampled rows (no sample, seed, stream); the plan's place (deck_shards) is the table's.
    assert all(isinstance(t, AtlasShard) for t in typed) and typed[-1].split == (7, 7) and typed[-1].deck_shards == 3
    assert [codec.decode(get("atlas"), s) for s in shards] == typed and \
           not {"sample", "seed", "stream"} & set(shards[0])
    with pytest.raises(ValueError, match="have no key 'depth'"):
        codec.decode(get("atlas"), {**shards[0], "depth": 3})


@pytest.mark.parametrize("values, message", [
    (dict(deck="0:18,1:2,2:2,3:2,4:2"), "names its penalty cards only"),
    (dict(split="13,13"), "leave split out"),
    (dict(plain=""), "needs its plain-card counts"),
    (dict(plain="4-8"), "atlas.plain must be A:B"),
    (dict(plain="8:4"), "0 <= A <= B"),
    (dict(atlas={"split": "odd"}), "atlas.split must be one of equal, near"),
    (dict(plain="1:1"), "no deck of this family can be dealt in equal hands"),
    (dict(plain="0:10_000_000_000"), "more than the 1024 cards a deck may hold"),
    (dict(plain="0:60"), "largest deck, 0:60,1:2,2:2,3:2 \\(66 cards\\)"),
    (dict(plain="0:10", atlas={"census": True, "census_max_states": 10**12, "cpu_hours": 0.001}), "CPU-hours"),
    (dict(atlas={"cpu_hours": 0}), "atlas.cpu_hours must be at least 0.001"),
    (dict(atlas={"rate": "fast"}), "atlas.rate must be a whole number"),
])
def test_what_is_refused_is_said_in_one_sentence(values, message):
    values = {"plain": "0:6", **values}
    with pytest.raises(BmnError, match=message):
        atlas(values.pop("plain"), **values)


def test_a_shard_is_the_census_shard_or_the_sweep_of_its_deck():
    deck = "0:6,1:2,2:2,3:2"
    censused = run_atlas(deck, (6, 6), 0, 83_160, True, True, min_cards=2**62)
    census = run_census(deck, (6, 6), 0, 83_160, True)
    assert (censused.deals, censused.cycles, censused.cycle_rows) == (census.deals, census.cycles, census.cycle_rows)
    deck = "0:8,1:2,2:2,3:2"
    plain = run_atlas(deck, (7, 7), 0, 270_270, True, False, min_cards=150)
    swept = run_exhaustive(DealSpace.of(parse_deck(deck)), 0, 270_270, min_cards=150)
    assert (plain.deals, plain.cycles, list(plain.wins), plain.max_cards) == \
           (swept.deals, swept.cycles, list(swept.wins), swept.max_cards)
    assert (plain.histogram == swept.histogram).all()
    assert [(c.hands, c.index) for c in plain.candidates] == [(c.hands, c.index) for c in swept.candidates]
    assert plain.cycle_rows and all(r.basin is None for r in plain.cycle_rows)  # no basin without a census
    other = run_atlas(deck, (3, 11), 0, 270_270, False, True, min_cards=150)
    assert other.candidates == [] and other.longest is None and other.deals == 270_270  # states, not deals


def test_each_row_against_the_kernels_and_every_infinite_deal_on_the_reference(tmp_path):
    config = make_config(tmp_path, strategy="atlas", deck=CAMICIA_STYLE, shard_size=100_000, min_cards=200,
                         atlas={"plain": "4:10", "census": True, "census_max_states": 4_000_000})
    tables = direct_tables(config)
    every = tables["atlas"].to_pylist()
    rows = {r["deck"]: r for r in every if (r["method"], r["unit"]) == ("exact", "deal")}
    state_rows = {r["deck"]: r for r in every if (r["method"], r["unit"]) == ("exact", "state")}
    assert list(rows) == ["0:4,1:2,2:2,3:2", "0:6,1:2,2:2,3:2", "0:8,1:2,2:2,3:2", "0:10,1:2,2:2,3:2"]
    assert list(state_rows) == list(rows)[:3] and len(every) == 7  # the censused decks have a state row
    games = tables["games"].to_pylist()
    for spec, row in rows.items():
        space = DealSpace.of(parse_deck(spec))
        swept = run_exhaustive(space, 0, space.count, min_cards=200)
        assert (row["deals"], row["infinite"], row["finite"]) == (space.count, swept.cycles, space.count - swept.cycles)
        assert (row["played"], row["cycling"], row["rate"]) == (space.count, swept.cycles, swept.cycles / space.count)
        assert row["rate_lo"] == row["rate_hi"] == row["rate"]  # exact: no interval
        assert (row["longest_cards"], row["longest_deal"]) == (swept.longest.result.cards, swept.longest.hands)
        assert row["split"] == "/".join(map(str, space.split)) and row["complete"] is True
        cycles = {}
        for g in games:
            if g["deck"] == spec and g["outcome"] == "cycle":
                r = play_reference(parse_deal(g["hands"]))  # every infinite deal, on the reference player
                assert (r.outcome, r.cycle_id, r.period_cards) == ("cycle", g["cycle_id"], g["period_cards"])
                cycles[g["cycle_id"]] = cycles.get(g["cycle_id"], 0) + 1
        assert row["cycles"] == len(cycles) and sum(expand(row["cycle_deals"], int)) == row["infinite"]
        assert expand(row["cycle_deals"], int) == sorted(cycles.values(), reverse=True)
        if spec == "0:10,1:2,2:2,3:2":  # 720,720 deals * 15 splits: more states than the census may take
            assert row["states"] is None and row["census_cycles"] is None
        else:
            census = census_counts(spec)
            assert row["census_cycles"] == len(census) and row["states"] == space.count * (space.deck.total - 1)
            assert {cid: c["deals"] for cid, c in census.items() if c["deals"]} == cycles
            # The state row: every state of every split; those that cycle are the cycles' basins.
            states = state_rows[spec]
            assert (states["played"], states["cycling"], states["cycles"]) == (
                row["states"], sum(c["basin"] for c in census.values()), len(census))
            assert expand(states["cycle_deals"], int) == sorted((c["basin"] for c in census.values()), reverse=True)
            assert states["deals"] is None and states["longest_cards"] is None and states["cpu_s"] is None
    assert rows["0:8,1:2,2:2,3:2"]["infinite"] == 90 and rows["0:8,1:2,2:2,3:2"]["periods"] == "10/70 x4"
    assert rows["0:8,1:2,2:2,3:2"]["cycle_deals"] == "30 x2, 15 x2"
    basins = {r["cycle_id"]: r["basin"] for r in tables["cycles"].to_pylist()}
    for cid, c in census_counts("0:8,1:2,2:2,3:2").items():
        assert basins[cid] == c["basin"]


def test_the_20_card_camicia_deck_has_16_infinite_deals_of_3488400():
    """The published exhaustive figure for 14 plain cards and two each of 1 2 3, every deal replayed."""
    result = run_atlas("0:14,1:2,2:2,3:2", (10, 10), 0, 3_488_400, True, False, min_cards=2**62)
    assert (result.deals, result.cycles) == (3_488_400, 16)
    cycles = {c.result.cycle_id for c in result.candidates}
    for c in result.candidates:
        r = play_reference(parse_deal(c.hands))
        assert (r.outcome, r.cycle_id) == ("cycle", c.result.cycle_id)
    assert len(cycles) == len(result.cycle_rows) == 1


def test_configs_atlas_runs_on_ray_and_reads_back(ray_address, tmp_path):
    """The shipped config, as users run it, on the session's Ray cluster; `bmn atlas` and the view."""
    out = tmp_path / "atlas"
    done = subprocess.run([str(BMN), "search", str(ROOT / "configs/atlas.toml"), "--out", str(out), "--address",
                           ray_address, "--no-progress"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"atlas.parquet\natlas:  bmn atlas {out}" in done.stdout
    with open(ROOT / "configs/atlas.toml", "rb") as handle:
        values = tomllib.load(handle)
    values.pop("out")
    expected = direct_tables(make_config(out, **values))
    tables = tables_of(out)
    assert_same_tables(tables, expected)
    every = tables["atlas"].to_pylist()
    rows = [r for r in every if r["unit"] == "deal"]
    assert [r["plain"] for r in rows] == [0, 2, 4, 6, 8, 10, 12, 14]
    assert [r["plain"] for r in every if r["unit"] == "state"] == [0, 2, 4, 6, 8]  # the censused decks
    camicia = rows[-1]
    assert (camicia["deck"], camicia["deals"], camicia["infinite"], camicia["cycles"]) == \
           ("0:14,1:2,2:2,3:2", 3_488_400, 16, 1)
    status = in_process("status", out).stdout  # main() in this process: these commands start no Ray
    assert "(atlas, 1:2,2:2,3:2 with 0:14 plain cards: 8 decks of 6-20 cards, 2 players, equal hands)" in status
    shown = in_process("atlas", out)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].split()[:7] == ["deck", "cards", "split", "method", "unit", "played", "cycling"]
    assert lines[-1] == "(13 rows)"
    assert "0:14,1:2,2:2,3:2" in lines[-2] and "3488400" in lines[-2] and "10/74" in lines[-2]
    wide = json.loads(in_process("atlas", out, "--wide", "--format", "json").stdout)
    assert [r["deck"] for r in wide if r["unit"] == "deal"] == [r["deck"] for r in rows] and "longest_deal" in wide[0]
    assert query([str(out)], "SELECT sum(infinite) AS n FROM atlas").to_pylist() == \
           [{"n": sum(r["infinite"] for r in rows)}]
    # Two runs as one: each deck once, from the first run that has it; the same deck dealt to three
    # players is a row of its own.
    assert own_report(ATLAS_TABLE, [str(out), str(out)]).num_rows == 13
    # An atlas run stopped and resumed gives the tables of one that was not (three players here).
    three = tmp_path / "three"
    config = make_config(three, strategy="atlas", deck=CAMICIA_STYLE, players=3, workers=2, shard_size=20_000,
                         atlas={"plain": "0:6"})
    stops = []

    def interrupt(coordinator):
        stops.append(1)
        if len(stops) == 3:
            raise KeyboardInterrupt

    assert run_search(config, on_shard_done=interrupt).state == "interrupted"
    report = run_search(config, resume=True)
    assert (report.state, report.shards_done) == ("finished", 1 + 1 + 5)
    assert_same_tables(tables_of(three), direct_tables(config))
    both = own_report(ATLAS_TABLE, [str(out), str(three)]).to_pylist()
    assert [(r["deck"], r["split"], r["unit"]) for r in both if r["deck"] == "0:6,1:2,2:2,3:2"] == [
        ("0:6,1:2,2:2,3:2", "6/6", "deal"), ("0:6,1:2,2:2,3:2", "6/6", "state"), ("0:6,1:2,2:2,3:2", "4/4/4", "deal")]
    assert len(both) == 13 + 3


def test_bmn_atlas_on_a_run_of_another_strategy(ray_address, tmp_path):
    out = tmp_path / "ex"
    run_search(make_config(out, strategy="exhaustive", deck="0:4,1:2,2:2", shard_size=1000, workers=1))
    done = subprocess.run([str(BMN), "atlas", str(out)], capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "a run of the exhaustive strategy; bmn atlas reads runs of the atlas strategy" in done.stderr
    # A run of a strategy that keeps no table of its own writes none; a query over it has the view, empty.
    assert "atlas" not in tables_of(out) and not (out / "atlas.parquet").exists()
    assert query([str(out)], "SELECT count(*) AS n FROM atlas").to_pylist() == [{"n": 0}]


@pytest.mark.parametrize("path", sorted((ROOT / "benchmarks" / "atlas").glob("*.toml")), ids=lambda p: p.stem)
def test_the_measured_families_configs_are_accepted(path):
    """The configs of the families measured in docs/atlas.md ("The families") stay valid and sized."""
    with open(path, "rb") as handle:
        values = tomllib.load(handle)
    config = build_config(values, where=str(path))
    assert config.strategy == "atlas" and Plan(config).count > 0
