"""A shard's summary (cluster/runs/summary.py): made from the figures a worker reports of a shard's result (or
from the shard alone, given up), written as the JSON shard files have always held, read back from them
(old ones too), and as the rows of the shards table."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from helpers import STANDARD

from cluster.runs.figures import PlayedShard
from cluster.runs.summary import SHARDS_SCHEMA, ShardSummary, manifest_summaries, manifest_table
from cluster.runs.tables import META_KEY
from kernels import RESULTS_VERSION
from kernels.strategies import CycleRow, Shard, run_random
from kernels.strategies.base import StreamShard
from kernels.strategies.census import run_census
from kernels.tally import Counts

# A run written by bmn before summaries had a type (commit fd434ac): one compacted shard file of
# five shards (random, census, failed, a cycle report with no basin, one written before results
# versions and cycle reports), and the four tables that bmn built from it.
OLD_RUN = Path(__file__).parent / "data" / "run_v1"
OLD_FILE = OLD_RUN / "shards" / "c000000000000-000000000004.parquet"

KEYS = {"shard", "strategy", "params", "status", "deals", "cards", "max_cards", "cycles", "candidates", "elapsed_s",
        "attempts", "worker", "finished_at", "error", "histogram", "wins", "longest", "cycle_ids", "results_version"}


PARAMS = StreamShard(seed=3, shard=0, count=50, min_cards=300, min_tricks=0)
PARAMS_JSON = '{"count": 50, "min_cards": 300, "min_tricks": 0, "seed": 3, "shard": 0}'


def done(result=None, run=None) -> ShardSummary:
    result = result if result is not None else run_random(STANDARD, 3, 0, 50, min_cards=300)
    played = PlayedShard.of(Shard(0, "random", PARAMS), result, deck="standard", elapsed_s=0.123456, worker="local:1")
    return ShardSummary.of(played, run=run)


def failed() -> ShardSummary:
    return ShardSummary.of(PlayedShard.given_up(Shard(5, "random", PARAMS), 3, "worker lost: ActorDiedError"), run=None)


def test_a_summary_holds_what_the_shard_computed():
    result = run_random(STANDARD, 3, 0, 50, min_cards=300)
    s = done(result)
    f = s.figures
    assert (f.counts, f.candidates) == (Counts(50, result.cards, 0), len(result.candidates))
    assert f.max_cards == result.longest.result.cards and f.longest == result.longest
    assert sum(f.histogram.values()) == 50 and all(result.histogram[k] == v for k, v in f.histogram.items())
    assert f.wins == tuple(result.wins) and sum(f.wins) == 50
    assert s.params == PARAMS and s.to_json()["params"] == PARAMS_JSON and f.elapsed_s == 0.1235
    assert s.done and s.results_version == RESULTS_VERSION and f.cycle_rows == ()
    assert (f.worker, f.device, s.attempts, s.error, s.run) == ("local:1", "cpu", 1, None, None)


def test_one_summary_for_a_shard_done_or_given_up():
    shard = Shard(7, "random", PARAMS)
    played = PlayedShard.of(shard, run_random(STANDARD, 3, 0, 50, min_cards=300), deck="standard", elapsed_s=1.0,
                            worker="w", device="gpu")
    signed = ShardSummary.of(played._replace(attempts=2), run="0123456789abcdef")
    assert (signed.shard, signed.strategy, signed.status, signed.attempts, signed.run) == \
        (7, "random", "done", 2, "0123456789abcdef")
    assert signed.figures == played.figures  # every figure kept
    assert signed.to_json()["worker"] == "w/gpu" and ShardSummary.from_json(signed.to_json()) == signed
    given_up = ShardSummary.of(PlayedShard.given_up(shard, 3, "worker lost"), run="0123456789abcdef")
    f = given_up.figures
    assert (given_up.status, given_up.error, f.counts, f.worker, f.cycle_rows) == \
        ("failed", "worker lost", Counts(), "", None)
    assert given_up.params == signed.params == PARAMS and f.finished_at > 0


def test_a_census_summary_carries_its_cycle_rows():
    result = run_census("0:6,1:2,2:2", (5, 5), 0, 1260, True)
    s = done(result).figures
    assert s.cycle_rows == tuple(result.cycle_rows) and all(isinstance(r, CycleRow) for r in s.cycle_rows)
    assert set(s.cycle_ids) == {r.cycle_id for r in result.cycle_rows} == {c.result.cycle_id for c in result.candidates}


def test_the_json_keeps_the_keys_bmn_has_always_written():
    assert set(done().to_json()) == KEYS | {"cycle_rows"}
    assert set(failed().to_json()) == KEYS  # a failed shard reports no cycles
    assert set(done(run="0123456789abcdef").to_json()) == KEYS | {"cycle_rows", "run"}  # signed by its run
    assert json.loads(json.dumps(done().to_json()))["histogram"] == \
           {str(k): v for k, v in done().figures.histogram.items()}


@pytest.mark.parametrize("summary", [done(), failed(), done(run_census("0:6,1:2,2:2", (5, 5), 0, 1260, True)),
                                     done(run="0123456789abcdef")],
                         ids=["done", "failed", "census", "signed"])
def test_summaries_round_trip_through_json(summary):
    text = json.dumps(summary.to_json(), sort_keys=True)
    assert ShardSummary.from_json(json.loads(text)) == summary
    assert json.dumps(ShardSummary.from_json(json.loads(text)).to_json(), sort_keys=True) == text


def test_summaries_written_before_read_back_and_write_out_byte_for_byte():
    written = pq.read_schema(OLD_FILE).metadata[META_KEY]
    summaries = [ShardSummary.from_json(s) for s in json.loads(written)]
    assert [s.shard for s in summaries] == [0, 1, 2, 3, 4]
    assert [s.status for s in summaries] == ["done", "done", "failed", "done", "done"]
    figures = [s.figures for s in summaries]
    assert figures[1].cycle_rows and figures[1].cycle_rows[0].basin == 7
    assert figures[3].cycle_rows == (CycleRow("00000000000000aa", 4, 10, "0:2,1:1,2:1", "J-/Q-", complete=True),)
    assert figures[2].cycle_rows is None and summaries[2].error == "worker lost: ActorDiedError"
    assert summaries[4].results_version is None and figures[4].cycle_rows is None  # not recorded then
    # Parameters are typed where they read back as written; those that do not (shard 2's, a random shard's
    # without its bounds; shard 3's, a factory's written short) are kept as written.
    assert summaries[0].params == StreamShard(seed=7, shard=0, count=30, min_cards=0, min_tricks=0)
    assert summaries[1].params.split == (5, 5) and summaries[4].params.count == 0
    assert [type(s.params).__name__ for s in summaries] == ["StreamShard", "CensusShard", "Unread", "Unread",
                                                            "StreamShard"]
    assert summaries[2].params.text == '{"count": 30, "seed": 7, "shard": 2}' and "missing" in summaries[2].params.why
    assert json.dumps([s.to_json() for s in summaries], sort_keys=True).encode() == written


@pytest.mark.parametrize("values", [[], {"shard": "0", "status": "done"}, {"shard": 0, "status": "lost"},
                                    {"shard": 0, "status": "done"}, {"shard": 0, "status": "done", "strategy": "x",
                                                                     "params": "{}", "histogram": {"a": 1}}])
def test_what_is_not_a_summary_is_refused(values):
    with pytest.raises((ValueError, TypeError, AttributeError)):
        ShardSummary.from_json(values)


def test_the_shards_table_holds_the_manifest_columns_and_reads_back():
    summaries = {0: done(), 5: failed()}
    table = manifest_table(summaries)
    assert table.schema == SHARDS_SCHEMA and table["shard"].to_pylist() == [0, 5]
    assert table["status"].to_pylist() == ["done", "failed"] and \
           table["error"].to_pylist() == [None, summaries[5].error]
    back = manifest_summaries(table)
    assert [s.manifest_row() for s in back] == [s.manifest_row() for s in summaries.values()]
    assert manifest_table({s.shard: s for s in back}).equals(table)


def test_the_counters_are_the_shards_tables_columns():
    """The counters are declared once (kernels/tally.py's Counts); the shards table, a file format, writes
    each of them as a column of its own name, among the other figures."""
    from dataclasses import fields

    row = done().manifest_row()
    assert all(f.name in SHARDS_SCHEMA.names and row[f.name] == getattr(done().figures.counts, f.name)
               for f in fields(Counts))


def test_the_shards_table_of_an_old_run_is_unchanged():
    summaries = {s["shard"]: ShardSummary.from_json(s) for s in json.loads(pq.read_schema(OLD_FILE).metadata[META_KEY])}
    assert manifest_table(summaries).equals(pq.read_table(OLD_RUN / "tables" / "shards.parquet"))
