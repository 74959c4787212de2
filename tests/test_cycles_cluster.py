"""The census, the cycle factory and the states hunt as searches on a real local Ray: the cycles table's
rows (state, basin, balanced deals, complete, closure), 2 workers against the kernels called directly,
and `bmn cycles`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cluster_helpers import assert_same_tables, direct_tables, in_process, make_config, tables_of

from cluster.commands.query import cycles_report, query
from cluster.loop.coordinator import run_search
from kernels.engines.reference import play_reference
from kernels.notation import parse_deal
from kernels.strategies.census import census_counts

BMN = Path(sys.executable).parent / "bmn"


def test_a_census_of_two_decks_on_two_workers(ray_address, tmp_path):
    config = make_config(tmp_path, workers=2, strategy="census", deck="0:6,1:2,2:2", shard_size=100_000,
                         census={"decks": ["0:8,1:2,2:2,3:2"]})
    report = run_search(config)
    assert report.state == "finished" and report.shards_done == 9 + 13 * 3 and report.cycles == 5
    tables = tables_of(tmp_path)
    assert_same_tables(tables, direct_tables(config))
    expected = {**census_counts("0:6,1:2,2:2"), **census_counts("0:8,1:2,2:2,3:2")}
    cycles = {row["cycle_id"]: row for row in tables["cycles"].to_pylist()}
    assert set(cycles) == set(expected)
    for cid, row in cycles.items():
        want = expected[cid]
        assert (row["basin"], row["deals"], row["deck"], row["state"], row["period_tricks"]) == \
               (want["basin"], want["deals"], want["deck"], want["state"], want["period_tricks"])
        r = play_reference(parse_deal(row["state"]))
        assert (r.cycle_id, r.preperiod_tricks) == (cid, 0)
    games = tables["games"].to_pylist()
    assert len(games) == 7 + 90 and {g["outcome"] for g in games} == {"cycle"}
    assert all(len(g["hands"].split("/")[0]) == len(g["hands"].split("/")[1]) for g in games)  # balanced deals
    per_deck = query([str(tmp_path)], "SELECT deck, count(*) AS cycles, sum(basin) AS basin FROM cycles "
                                      "GROUP BY deck ORDER BY deck").to_pylist()
    assert per_deck == [{"deck": "0:6,1:2,2:2", "cycles": 1, "basin": 43},
                        {"deck": "0:8,1:2,2:2,3:2", "cycles": 4, "basin": 864}]


def test_states_on_two_workers_find_the_census_cycles_and_bmn_cycles_shows_closures(ray_address, tmp_path):
    deck = "0:8,1:2,2:2,3:2"
    args = [str(BMN), "search", "configs/states.toml", "--deck", deck, "--deals", "400000", "--shard-size",
            "100000", "--out", str(tmp_path / "states"), "--address", ray_address, "--workers", "2", "--no-progress"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=600, cwd=Path(__file__).parent.parent)
    assert done.returncode == 0, done.stderr
    assert "finished: 4 of 4 shards done" in done.stdout and "cycles: 4 distinct" in done.stdout
    tables = tables_of(tmp_path / "states")
    census = census_counts(deck)
    rows = {r["cycle_id"]: r for r in tables["cycles"].to_pylist()}
    assert {cid: (r["closure"], r["deals"], r["state"], r["complete"], r["imbalance"]) for cid, r in rows.items()} == \
        {cid: (c["basin"], c["deals"], c["state"], True, 0) for cid, c in census.items()}
    assert sum(r["basin"] for r in rows.values()) == sum(tables["shards"]["cycles"].to_pylist()) > 0
    assert tables["games"].num_rows == sum(c["deals"] for c in census.values())  # each balanced deal once
    out = subprocess.run([str(BMN), "cycles", str(tmp_path / "states")], capture_output=True, text=True,
                         check=True).stdout
    assert "closure" in out and "closest" in out and "imbalance" in out
    assert all(r["closest"] in out for r in rows.values())


def test_the_factory_on_two_workers_and_bmn_cycles(ray_address, tmp_path):
    config = make_config(tmp_path, workers=2, strategy="cycles", deck="0:8,1:2,2:2,3:2,4:2", seed=3,
                         cycles={"beams": 3, "tries": 20_000, "seed_deck": "0:6,1:2,2:2,3:2,4:2", "seed_states": 5_000,
                                 "variations": 500})
    report = run_search(config)
    assert report.state == "finished" and report.shards_done == 3 and report.cycles > 0
    tables = tables_of(tmp_path)
    assert_same_tables(tables, direct_tables(config))
    games = tables["games"].to_pylist()
    for row in tables["cycles"].to_pylist():
        assert row["complete"] is True and row["state"] and row["basin"] is None
        assert row["deals"] == sum(g["cycle_id"] == row["cycle_id"] for g in games)
    shown = cycles_report([str(tmp_path)]).to_pylist()
    assert {r["cycle_id"] for r in shown} == {r["cycle_id"] for r in tables["cycles"].to_pylist()}
    done = in_process("cycles", tmp_path)  # main() in this process (the states test types it)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "state" in out and "complete" in out and shown[0]["cycle_id"] in out


def test_a_deck_where_no_cycle_is_built_says_so(ray_address, tmp_path):
    config = tmp_path / "none.toml"
    config.write_text('strategy = "cycles"\ndeck = "0:15,1:1"\n[cycles]\nbeams = 16\n')
    args = [str(BMN), "search", str(config), "--out", str(tmp_path / "none"), "--address", ray_address,
            "--workers", "2", "--no-progress"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "finished: 16 of 16 shards done" in done.stdout and "cycles: no cycle found" in done.stdout


def test_construct_on_two_workers_stopped_and_resumed_gives_the_kernels_tables(ray_address, tmp_path):
    """`construct` on a real local Ray: a run stopped by its time limit and resumed gives the tables of the
    kernels called directly, every census cycle of the 14-card two-suit deck (all of its form), each closed
    (genes of any cards: 270 shards, most of them empty)."""
    config = make_config(tmp_path, workers=2, time_limit=0.01, strategy="construct", deck="0:6,1:2,2:2,3:2,4:2",
                         construct={"per_gene": "", "max_states": 100_000})
    first = run_search(config)
    assert first.state == "time limit" and 0 < first.shards_done < 270
    lifted = subprocess.run([str(BMN), "resume", str(tmp_path), "--time-limit", "0", "--address", ray_address,
                             "--no-progress"], capture_output=True, text=True, timeout=600)
    assert lifted.returncode == 0 and lifted.stdout.startswith("finished: 270 of 270 shards done"), lifted.stderr
    assert "cycles: 18 distinct" in lifted.stdout
    tables = tables_of(tmp_path)
    assert_same_tables(tables, direct_tables(config))
    census = census_counts("0:6,1:2,2:2,3:2,4:2")
    rows = {r["cycle_id"]: r for r in tables["cycles"].to_pylist()}
    assert {cid: (r["closure"], r["deals"], r["state"], r["complete"]) for cid, r in rows.items()} == \
        {cid: (c["basin"], c["deals"], c["state"], True) for cid, c in census.items()}
