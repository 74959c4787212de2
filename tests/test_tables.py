"""The run's tables (cluster/runs/tables.py): shard files written and read back, each shard once; the
cycles a shard reports (CycleRow) through JSON and the cycles table; how reports of one cycle merge."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import STANDARD

from cluster.runs.figures import PlayedShard
from cluster.runs.storage import RunStore
from cluster.runs.summary import ShardFigures, ShardSummary
from cluster.runs.tables import (
    CYCLES_SCHEMA,
    GAMES_SCHEMA,
    META_KEY,
    TABLES,
    build_tables,
    cycles_table,
    games_table,
    read_contents,
    read_summaries,
    reported_cycles,
    reported_rows,
    shard_file_name,
    shard_file_table,
)
from kernels.strategies import CycleRow, Shard, run_random
from kernels.strategies.census import CensusShard, run_census

OLD_RUN = Path(__file__).parent / "data" / "run_v1"  # see tests/test_summary.py

ROW = CycleRow("207ec02eb4dcd075", 3, 15, "0:6,1:2,2:2", "--J-/Q-Q-J-", basin=7)
FACTORY_ROW = CycleRow("00000000000000aa", 4, 10, "0:2,1:1,2:1", "J-/Q-", complete=True)


def summary(shard: int, result=None) -> ShardSummary:
    """Shard `shard`'s summary: done with this result, or failed (None)."""
    params = CensusShard(deck="0:6,1:2,2:2", split=(5, 5), lo=shard, hi=shard + 1, balanced=True)
    planned = Shard(shard, "census", params)
    played = PlayedShard.given_up(planned, 1, None) if result is None else \
        PlayedShard.of(planned, result, deck="0:6,1:2,2:2", elapsed_s=0, worker="")
    return ShardSummary.of(played, run=None)


def games(candidates, shard: int, deck: str = "0:6,1:2,2:2"):
    """A census shard's games rows for these candidates."""
    return games_table(PlayedShard(Shard(shard, "census", None), candidates, deck, None, ShardFigures()))


def write_shard(store: RunStore, shard: int, result, rel=None) -> None:
    games_rows = games(result.candidates if result else [], shard)
    store.write_parquet(rel or shard_file_name(shard), shard_file_table(games_rows, [summary(shard, result)]))


STATES_ROW = CycleRow("207ec02eb4dcd075", 3, 15, "0:6,1:2,2:2", "--J-/Q-Q-J-", basin=3, complete=True, closure=43,
                      closest="--J-Q/Q---J", imbalance=0)


@pytest.mark.parametrize("row", [ROW, FACTORY_ROW, STATES_ROW, CycleRow("ab", 1, 2, "standard", "J-/--")])
def test_cycle_rows_round_trip_through_json(row):
    assert CycleRow.from_json(json.loads(json.dumps(row.to_json()))) == row
    closure = {"closure", "closest", "imbalance"} if row.closure is not None else set()
    assert set(row.to_json()) == {"cycle_id", "period_tricks", "period_cards", "deck", "state", "basin", "complete",
                                  *closure}


def test_a_cycle_row_written_before_closures_reads_with_none():
    old = {k: v for k, v in ROW.to_json().items() if k not in ("closure", "closest", "imbalance")}
    assert CycleRow.from_json(old) == ROW and ROW.closure is None


def test_a_cycle_row_missing_a_key_is_refused():
    with pytest.raises(TypeError):
        CycleRow.from_json({"cycle_id": "ab", "period_tricks": 1, "deck": "standard", "state": "J-/--"})


def test_cycle_rows_round_trip_through_the_cycles_table():
    reported = [(1, ROW), (3, FACTORY_ROW), (4, dataclasses.replace(STATES_ROW, cycle_id="00000000000000bb"))]
    table = cycles_table(GAMES_SCHEMA.empty_table(), reported)
    assert table.schema == CYCLES_SCHEMA and table["deals"].to_pylist() == [0, 0, 0]
    assert reported_rows(table) == reported


def test_reports_of_one_cycle_merge():
    """Basins add up (a census's shards hold disjoint states), the first shard's state stays,
    complete if any shard listed the balanced deals completely; deals entering it are counted."""
    other_state = CycleRow(ROW.cycle_id, 3, 15, ROW.deck, "Q-Q-J-/--J-", basin=5, complete=False)
    listed = CycleRow(ROW.cycle_id, 3, 15, ROW.deck, "-Q-J-/--J-Q", complete=True)
    games_rows = games(run_census("0:6,1:2,2:2", (5, 5), 0, 1260, True).candidates, 4, ROW.deck)
    table = cycles_table(games_rows, [(2, ROW), (1, other_state), (6, listed)])
    [row] = table.to_pylist()
    assert (row["basin"], row["complete"], row["first_shard"]) == (12, True, 1)
    assert row["state"] == ROW.state  # the first report read, not the lowest shard's
    assert row["deals"] == games_rows.num_rows == 7 and row["hands"] == games_rows["hands"][0].as_py()
    assert (row["min_preperiod_tricks"], row["max_preperiod_tricks"]) == (1, 2)
    assert cycles_table(games_rows, [(2, ROW)]).to_pylist()[0]["complete"] is None


def test_closures_of_one_cycle_merge_to_the_largest():
    """Shards of a states run that meet one cycle report one closure; a truncated search's lower
    bound gives way to a larger count, the first among equals stays."""
    truncated = dataclasses.replace(STATES_ROW, complete=False, closure=20, closest="--J-/Q-Q-J-", imbalance=2)
    again = dataclasses.replace(STATES_ROW, basin=4, closest="other")
    [row] = cycles_table(GAMES_SCHEMA.empty_table(), [(0, truncated), (1, STATES_ROW), (2, again)]).to_pylist()
    assert (row["closure"], row["closest"], row["imbalance"], row["complete"], row["basin"]) == \
        (43, "--J-Q/Q---J", 0, True, 3 + 3 + 4)
    [row] = cycles_table(GAMES_SCHEMA.empty_table(), [(0, ROW)]).to_pylist()
    assert (row["closure"], row["closest"], row["imbalance"]) == (None, None, None)


def test_the_cycles_of_done_shards_are_reported_in_shard_order():
    census = run_census("0:6,1:2,2:2", (5, 5), 0, 1260, True)
    summaries = {3: summary(3, census), 1: summary(1, census), 2: summary(2, None)}
    assert reported_cycles(summaries) == [(1, census.cycle_rows[0]), (3, census.cycle_rows[0])]


def test_a_run_written_before_reads_back_into_the_same_tables(tmp_path):
    shutil.copytree(OLD_RUN / "shards", tmp_path / "shards")
    contents = read_contents(RunStore(str(tmp_path)))
    assert sorted(contents.summaries) == [0, 1, 2, 3, 4] and contents.done == {0, 1, 3, 4} and not contents.damaged
    tables = build_tables(contents)
    for name in TABLES:
        if name == "atlas":  # a table added since (an atlas run's): empty for this run
            assert tables[name].num_rows == 0 and not (OLD_RUN / "tables" / "atlas.parquet").exists()
            continue
        old = pq.read_table(OLD_RUN / "tables" / f"{name}.parquet")
        if name == "cycles":  # columns added since (a states run's closures; the catalogue's label, here
            # new for both its cycles): null for this run
            added = ["closure", "closest", "imbalance", "balanced", "known"]
            assert set(tables[name].column_names) - set(old.column_names) == set(added)
            assert all(tables[name][c].null_count == tables[name].num_rows > 0 for c in added)
            assert tables[name].drop_columns(added).equals(old), name
            continue
        assert tables[name].equals(old), name
    assert read_summaries(RunStore(str(tmp_path))) == contents.summaries


def test_a_shard_is_read_once_and_a_done_copy_wins(tmp_path):
    store = RunStore(str(tmp_path))
    census = run_census("0:6,1:2,2:2", (5, 5), 0, 1260, True)
    write_shard(store, 1, None)
    write_shard(store, 1, census, rel="shards/c000000000001-000000000001.parquet")  # a later file: done
    write_shard(store, 2, census)
    write_shard(store, 2, census, rel="shards/c000000000002-000000000002.parquet")  # the same shard twice
    contents = read_contents(store)
    assert contents.done == {1, 2}
    assert sum(t.num_rows for t in contents.games) == 2 * len(census.candidates)
    tables = build_tables(contents)
    assert tables["games"]["shard"].to_pylist() == [1] * len(census.candidates)  # a deal once, by its first shard
    assert tables["cycles"].to_pylist()[0]["basin"] == 2 * ROW.basin


def test_a_file_without_summaries_is_damaged_and_skipped(tmp_path):
    store = RunStore(str(tmp_path))
    write_shard(store, 0, run_random(STANDARD, 1, 0, 10, min_cards=0))
    bad = GAMES_SCHEMA.empty_table().replace_schema_metadata({META_KEY: b'[{"shard": 1, "status": "done"}]'})
    store.write_parquet(shard_file_name(1), bad)
    store.write_parquet(shard_file_name(2), pa.table({"x": [1]}))
    damaged: dict[str, str] = {}
    assert list(read_summaries(store, damaged)) == [0]
    assert damaged == {shard_file_name(k): "it holds no shard summaries" for k in (1, 2)}
    assert read_contents(store).damaged == damaged
