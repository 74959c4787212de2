"""A strategy's own table (cluster/runs/owned.py, cluster/runs/owntable.py): found through the one hook, the plain
mapping from the name its `own_table` gives; built, viewed and given a command by name, for its runs only."""

from __future__ import annotations

import pyarrow as pa
import pytest
from cluster_helpers import direct_tables, make_config

from cluster.commands.cli import build_parser
from cluster.commands.query import connect
from cluster.runs.atlas import TABLE as ATLAS
from cluster.runs.owned import OWN_TABLES, own_table, own_tables
from cluster.runs.owntable import OwnTable
from kernels.strategies import REGISTRY
from kernels.strategies.random import Random

SCHEMA = pa.schema([("shard", pa.int64()), ("deals", pa.int64()), ("elapsed_s", pa.float64())])


def build(summaries, games):
    rows = [{"shard": k, "deals": s.figures.counts.deals, "elapsed_s": s.figures.elapsed_s}
            for k, s in sorted(summaries.items()) if s.done]
    return pa.Table.from_pylist(rows, schema=SCHEMA)


LENGTHS = OwnTable(name="lengths", schema=SCHEMA, build=build, key=("shard",), timings=("elapsed_s",),
                   order="shard", columns=("shard", "deals"), help="each shard's deals",
                   description="Each shard's deals.")


def test_the_atlas_and_construct_keep_their_tables_and_no_other_strategy_does():
    from cluster.runs.genes import TABLE as GENES

    assert own_table(REGISTRY["atlas"]) is ATLAS and list(own_tables()) == ["atlas", "genes"]
    assert own_table(REGISTRY["construct"]) is GENES and GENES.prepare and GENES.publish
    assert all(own_table(s) is None for name, s in REGISTRY.items() if name not in ("atlas", "construct"))


def strategy(own: str) -> Random:
    class Lengths(Random):
        name = "lengths"
        own_table = own
    return Lengths()


def test_a_new_strategys_own_table_is_built_viewed_and_given_its_command(monkeypatch, tmp_path):
    monkeypatch.setitem(OWN_TABLES, "lengths", LENGTHS)
    lengths = strategy("lengths")
    monkeypatch.setitem(REGISTRY, "lengths", lengths)
    assert list(own_tables()) == ["atlas", "genes", "lengths"]
    tables = direct_tables(make_config(tmp_path / "run", strategy="lengths", deals=300, shard_size=100, min_cards=10))
    assert "atlas" not in tables and tables["lengths"].to_pylist() == [
        {"shard": k, "deals": 100, "elapsed_s": tables["lengths"]["elapsed_s"][k].as_py()} for k in range(3)]
    with connect({**tables, "atlas": ATLAS.schema.empty_table()}) as con:
        assert con.sql("SELECT sum(deals) AS n FROM lengths").to_arrow_table().to_pylist() == [{"n": 300}]
    parser = build_parser()
    assert parser.parse_args(["lengths", "runs/x", "--wide"]).wide
    with pytest.raises(SystemExit):
        parser.parse_args(["lengths"])  # (a run to read is needed)


def test_a_table_the_mapping_does_not_hold_is_refused():
    with pytest.raises(TypeError, match="keeps a table 'absent' that cluster/runs/owned.py's OWN_TABLES does not hold"):
        own_table(strategy("absent"))
