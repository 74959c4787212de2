"""Querying runs: SQL views, formats, several runs as one, running runs, compaction."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from cluster_helpers import in_process, make_config, run_main, tables_of

from cluster.commands.cli import main
from cluster.commands.query import query, run_tables
from cluster.commands.status import run_status_dict
from cluster.loop.coordinator import run_search
from cluster.runs.compact import compact
from cluster.runs.tables import TABLES

BMN = Path(sys.executable).parent / "bmn"
CASELLA = "---K---Q-KQAJ-----AAJ--J--/----------Q----KQ-J-----KA"
SEARCH = dict(strategy="random", deals=40_000, shard_size=2_000, min_cards=700, seed=21)


@pytest.fixture(scope="module")
def runs(ray_address, tmp_path_factory):
    base = tmp_path_factory.mktemp("runs")
    run_search(make_config(base / "random", workers=2, **SEARCH))
    games = tables_of(base / "random")["games"].to_pylist()
    claims = base / "claims.txt"
    claims.write_text("\n".join([g["hands"] for g in games[:3]] + [CASELLA]) + "\n")
    run_search(make_config(base / "claims", workers=1, strategy="deals", deals_file=str(claims), min_cards=0))
    return base / "random", base / "claims", games


def bmn(*args):
    return subprocess.run([str(BMN), *map(str, args)], capture_output=True, text=True)


def digest(run: Path) -> dict:
    return {str(p.relative_to(run)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(run.rglob("*")) if p.is_file()}


def test_views_hold_the_runs_tables(runs):
    random_run, _, games = runs
    assert query([str(random_run)], "SELECT count(*) AS n FROM games").to_pylist() == [{"n": len(games)}]
    assert query([str(random_run)], "SELECT sum(games) AS n FROM histogram").to_pylist() == [{"n": 40_000}]
    assert query([str(random_run)], "SELECT count(*) AS n FROM shards WHERE status = 'done'").to_pylist() == [{"n": 20}]
    assert query([str(random_run)], "SELECT count(*) AS n FROM cycles").to_pylist() == [{"n": 0}]


def test_csv_json_and_table_formats(runs):
    random_run, _, games = runs
    sql = "SELECT cards, tricks, hands FROM games ORDER BY cards DESC, hands LIMIT 3"
    best = sorted(games, key=lambda g: (-g["cards"], g["hands"]))[:3]
    out = bmn("query", random_run, sql, "--format", "csv")
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    assert lines[0] == "cards,tricks,hands" and lines[1] == f"{best[0]['cards']},{best[0]['tricks']},{best[0]['hands']}"
    assert len(lines) == 4
    out = in_process("query", random_run, sql, "--format", "json")  # main() here; the CSV above as typed
    assert json.loads(out.stdout) == [{"cards": g["cards"], "tricks": g["tricks"], "hands": g["hands"]} for g in best]
    out = in_process("query", random_run, sql)
    assert out.stdout.splitlines()[0].split() == ["cards", "tricks", "hands"] and "(3 rows)" in out.stdout


def test_several_runs_are_queried_as_one(runs, capsys):
    random_run, claims_run, games = runs
    both = [str(random_run), str(claims_run)]
    n = query(both, "SELECT count(*) AS n FROM games").to_pylist()[0]["n"]
    assert n == len(games) + 1  # three claims repeat games of the random run: one row per deal
    cycles = query(both, "SELECT cycle_id, deals, hands FROM cycles").to_pylist()
    assert cycles == [{"cycle_id": "e1fabb73dac32ded", "deals": 1, "hands": CASELLA}]
    runs_in_manifest = query(both, "SELECT DISTINCT run FROM shards ORDER BY run").column("run").to_pylist()
    assert runs_in_manifest == sorted(both)
    assert main(["cycles", *both]) == 0
    assert "e1fabb73dac32ded" in capsys.readouterr().out


def test_sql_errors_are_one_sentence(runs):
    random_run, _, _ = runs
    out = bmn("query", random_run, "SELECT nope FROM games")
    assert out.returncode == 2 and out.stderr.startswith("bmn: error: SQL error:")
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


def test_queries_never_modify_a_run(runs, tmp_path):
    random_run, _, _ = runs
    before = digest(random_run)
    refused = (f"COPY games TO '{random_run}/games.parquet'", f"COPY games TO '{tmp_path}/x.csv'",
               "DELETE FROM games", "INSTALL httpfs", f"ATTACH '{tmp_path}/x.db'")
    for sql in refused:  # main() in this process, as the console script calls it
        code, stderr = run_main("query", random_run, sql)
        assert code == 2 and stderr.startswith("bmn: error: SQL error:"), (sql, stderr)
    # Statements that touch only the query's own in-memory database run, and change nothing either.
    for sql in ("CREATE TABLE t AS SELECT 1", "DROP VIEW games"):
        assert run_main("query", random_run, sql)[0] == 0, sql
    assert not (tmp_path / "x.csv").exists()
    assert digest(random_run) == before


def test_top_and_status(runs, capsys):
    random_run, _, games = runs
    assert main(["top", str(random_run), "-n", "2", "--format", "json"]) == 0
    top = json.loads(capsys.readouterr().out)
    best = sorted(games, key=lambda g: (-g["cards"], -g["tricks"], g["hands"]))[:2]
    assert [(t["cards"], t["hands"]) for t in top] == [(g["cards"], g["hands"]) for g in best]
    assert main(["top", str(random_run), "--by", "tricks", "-n", "1", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["tricks"] == max(g["tricks"] for g in games)
    assert main(["status", str(random_run), "--json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert (st["state"], st["shards_done"], st["shards_failed"], st["shards_pending"]) == ("finished", 20, 0, 0)
    assert st["deals"] == 40_000 and st["longest"]["cards"] == best[0]["cards"] and st["cycles"] == 0


def test_querying_a_run_while_it_is_written(runs, tmp_path):
    seen = []

    def look(coordinator):
        if coordinator.counts.run.done == 5:
            uri = str(tmp_path)
            assert not (tmp_path / "games.parquet").exists()
            # Shard files are written by the driver's writer threads: a query sees those written.
            before = len(list((tmp_path / "shards").glob("*.parquet")))
            row = query([uri], "SELECT (SELECT sum(games) FROM histogram) AS deals, "
                               "(SELECT count(*) FROM shards) AS shards").to_pylist()[0]
            after = len(list((tmp_path / "shards").glob("*.parquet")))
            seen.append((before, row, after, run_status_dict(uri)))

    run_search(make_config(tmp_path, workers=1, in_flight=1, **SEARCH), on_shard_done=look)
    before, row, after, st = seen[0]
    assert 5 <= before <= row["shards"] <= after < 20 and row["deals"] == row["shards"] * 2_000
    assert st["state"] == "running" and 5 <= st["shards_done"] < 20
    assert st["shards_pending"] == 20 - st["shards_done"]


def test_compact_changes_no_query_result(runs, tmp_path):
    random_run, _, _ = runs
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(random_run, copy)
    before = {name: query([str(copy)], f"SELECT * FROM {name}") for name in TABLES}
    (copy / "games.parquet").unlink()  # force the next reads to rebuild from the shard files
    out = bmn("compact", copy, "--shards-per-file", "8")
    assert out.returncode == 0 and "20 shards: 20 files merged into 3" in out.stdout
    assert len(list((copy / "shards").glob("*.parquet"))) == 3
    for name in TABLES:
        assert query([str(copy)], f"SELECT * FROM {name}").equals(before[name]), name
    from cluster.runs.storage import RunStore
    from cluster.runs.tables import build_tables, read_contents

    rebuilt = build_tables(read_contents(RunStore(str(copy))))
    for name in TABLES:
        assert rebuilt[name].equals(before[name]), name


def test_compacting_a_stopped_run_then_resuming_it(runs, tmp_path):
    random_run, _, _ = runs
    stop = []

    def interrupt(coordinator):
        stop.append(1)
        if len(stop) == 7:
            raise KeyboardInterrupt

    run_search(make_config(tmp_path, workers=1, in_flight=1, **SEARCH), on_shard_done=interrupt)
    compact(str(tmp_path), shards_per_file=4)
    report = run_search(make_config(tmp_path, workers=2, **SEARCH), resume=True)
    assert report.shards_done == 20
    for name in ("games", "cycles", "histogram"):
        assert run_tables(str(tmp_path))[name].equals(run_tables(str(random_run))[name])


def test_not_a_run():
    code, stderr = run_main("query", "/nonexistent/run", "SELECT 1")
    assert code == 2 and "is not a bmn run" in stderr
    code, stderr = run_main("query", "SELECT 1")
    assert code == 2 and "give one or more runs" in stderr


def test_a_compaction_stopped_half_way_loses_and_doubles_nothing(runs, tmp_path, monkeypatch):
    """The merged file is written before the small files are deleted: stopped in between, every
    shard sits in two files, and readers take each once."""
    import shutil

    from cluster.runs.storage import RunStore

    random_run, _, _ = runs
    copy = tmp_path / "copy"
    shutil.copytree(random_run, copy)
    before = {name: query([str(copy)], f"SELECT * FROM {name}") for name in TABLES}
    deleted = []

    real_delete = RunStore.delete

    def stop_after_two_deletes(self, rel):
        if not rel.startswith("shards/"):
            return real_delete(self, rel)
        if len(deleted) == 2:
            raise KeyboardInterrupt  # the compaction is stopped here
        deleted.append(rel)
        real_delete(self, rel)

    monkeypatch.setattr(RunStore, "delete", stop_after_two_deletes)
    with pytest.raises(KeyboardInterrupt):
        compact(str(copy), shards_per_file=8)
    monkeypatch.undo()
    assert len(list((copy / "shards").glob("c*.parquet"))) == 3 and len(deleted) == 2
    assert not (copy / "run.lock").exists()
    (copy / "games.parquet").unlink()
    for name in TABLES:
        assert query([str(copy)], f"SELECT * FROM {name}").equals(before[name]), name
