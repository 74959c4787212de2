"""A shard's parameters written down and read back (kernels/strategies/codec.py): every strategy's plan
makes typed parameters that the codec writes as the JSON bmn has always written and reads back equal; a
key added later is left out at its default (the shards of earlier runs keep their text); what is not a
strategy's parameters (a key unknown or missing, a value of the wrong type) is refused by `decode` in one
sentence and kept as written by `read`, never read as a value of the wrong type."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from cluster.runs.config import build_config, load_toml, resolve
from cluster.runs.plan import Plan
from kernels.strategies import REGISTRY, ShardParams, codec
from kernels.strategies.atlas import AtlasShard
from kernels.strategies.base import StreamShard, params_of
from kernels.strategies.cycles import CyclesShard, CyclesTable, Factory
from kernels.strategies.states import StatesShard

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted(p for folder in ("configs", "benchmarks/atlas") for p in (ROOT / folder).glob("*.toml"))


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_every_plans_parameters_round_trip(path):
    values = load_toml(str(path))
    if "deals_file" in values:
        values["deals_file"] = str(path.parent / values["deals_file"])
    plan = Plan(resolve(build_config({**values, "progress": False})))
    for k in sorted({0, plan.count // 2, plan.count - 1}):
        params = plan.shard(k).params
        text = codec.encode(params)
        assert json.dumps(json.loads(text), sort_keys=True) == text  # a JSON object, keys sorted
        assert codec.decode(plan.strategy, text) == params == codec.read(plan.strategy, text)


def test_the_text_is_what_bmn_has_always_written():
    stream = StreamShard(seed=7, shard=2, count=30, min_cards=0, min_tricks=0)
    assert codec.encode(stream) == '{"count": 30, "min_cards": 0, "min_tricks": 0, "seed": 7, "shard": 2}'
    # A key added after runs were made is left out at its default (max_imbalance; an atlas's samples).
    assert codec.encode(StatesShard(seed=1, shard=0, count=5, max_states=9)) == \
        '{"count": 5, "max_states": 9, "seed": 1, "shard": 0}'
    assert '"max_imbalance": 2' in codec.encode(StatesShard(seed=1, shard=0, count=5, max_states=9, max_imbalance=2))
    exact = AtlasShard(deck="0:2,1:1", split=(2, 1), lo=0, hi=3, balanced=False, basins=True, deck_shards=2,
                       min_cards=0, min_tricks=0)
    assert json.loads(codec.encode(exact)) == {"balanced": False, "basins": True, "deck": "0:2,1:1", "deck_shards": 2,
                                               "hi": 3, "lo": 0, "min_cards": 0, "min_tricks": 0, "split": [2, 1]}
    # A strategy's table keys copied among the shard's own (the factory's growth settings), every key written;
    # the form of earlier runs, those keys nested under "params", read back flat, as the same parameters.
    # (the [cycles] keys but `beams`, copied from CyclesTable as every strategy's Params copy their table's: keys_of;
    # and as the Factory a beam takes)
    copied = {k: p for k, p in params_of(CyclesTable).items() if k != "beams"}
    assert {k: p for k, p in params_of(CyclesShard).items() if k in params_of(CyclesTable)} == copied == \
        params_of(Factory)
    beam = CyclesShard(deck="camicia", seed=1, shard=3, **{**Factory().values(), "tries": 5})
    flat = json.loads(codec.encode(beam))
    assert flat["tries"] == 5 and len(flat) == 3 + 12 and Factory.taken_from(beam) == Factory(tries=5)
    assert codec.decode(REGISTRY["cycles"], codec.encode(beam)) == beam
    nested = json.dumps({"deck": "camicia", "params": {**Factory().keys(), "tries": 5}, "seed": 1, "shard": 3},
                        sort_keys=True)
    assert codec.read(REGISTRY["cycles"], nested) == beam


RANDOM = '{"count": 30, "min_cards": 0, "min_tricks": 0, "seed": 7, "shard": 2}'


@pytest.mark.parametrize("text, why", [
    ('{"count": 30, "seed": 7, "shard": 2}', "shard parameters are missing 'min_cards'"),  # a form no plan makes
    (RANDOM[:-1] + ', "pool": 1}', "shard parameters have no key 'pool'"),
    ('{"count": 30, "min_cards": 0, "min_tricks": 0, "shard": 2, "seed": 7}', "not as"),  # keys not sorted
    ('[1, 2]', "shard parameters are a JSON object, not list"),
    ('{"count": 3', "not JSON"),
    (RANDOM.replace("30", '"30"'), 'count must be a whole number, got "30"'),
    (RANDOM.replace("30", "30.0"), "count must be a whole number, got 30.0"),
    (RANDOM.replace("30", "true"), "count must be a whole number, got true"),
    (RANDOM.replace("30", "null"), "count must be a whole number, got null"),
])
def test_what_is_not_the_strategys_parameters_is_kept_as_written(text, why):
    random = REGISTRY["random"]
    kept = codec.read(random, text)
    assert isinstance(kept, codec.Unread) and kept.text == text and why in kept.why and codec.encode(kept) == text
    if why != "not as":
        with pytest.raises(ValueError, match=why) as raised:
            codec.decode(random, text)
        assert "\n" not in str(raised.value) and "the random strategy's" in str(raised.value)
    assert codec.read(None, text).why == "a strategy this bmn does not know"


EXAMPLES = {"states": dict(deck="0:6,1:2,2:2", deals=100, shard_size=100),
            "climb": dict(deals=100, shard_size=100),
            "census": dict(deck="0:6,1:2,2:2", census={"decks": ["0:4,1:2,2:2"]}),
            "atlas": dict(deck="1:1,2:1", atlas={"plain": "0:4"}),
            "cycles": dict(deck="0:8,1:2,2:2")}


@pytest.mark.parametrize("name, key, value, kind", [
    ("states", "max_imbalance", '"2"', "a whole number or null"),  # an optional key of a copied table
    ("climb", "ratio", '"0.5"', "a number"),
    ("census", "deck", '5', "deck must be text, got 5"),
    ("atlas", "split", "[2, true]", "a list of whole numbers"),
    ("cycles", "params", '{"tries": "5"}', "tries must be a whole number"),  # inside a nested table
    ("cycles", "params", '{"nope": 1}', "have no key 'nope'"),
])
def test_a_value_of_the_wrong_type_is_refused_in_one_sentence_at_any_depth(name, key, value, kind):
    strategy = REGISTRY[name]
    params = Plan(resolve(build_config({**EXAMPLES[name], "strategy": name, "progress": False}))).shard(0).params
    values = json.loads(codec.encode(params))
    values[key] = json.loads(value)
    text = json.dumps(values, sort_keys=True)
    with pytest.raises(ValueError, match=kind) as raised:
        codec.decode(strategy, text)
    assert "\n" not in str(raised.value)
    assert isinstance(codec.read(strategy, text), codec.Unread)


def test_a_shards_params_copy_its_tables_keys_and_are_not_a_table():
    from kernels.strategies.base import Table
    from kernels.strategies.climb import ClimbShard, ClimbTable

    for strategy in REGISTRY.values():
        assert not issubclass(strategy.Params, Table), strategy.name
    shard = ClimbShard(seed=1, shard=0, count=5, min_cards=0, min_tricks=0, **ClimbTable(pool=7).values())
    assert shard.pool == 7 and not hasattr(shard, "identity") and not hasattr(ClimbShard, "of")


# Runs written by bmn before shard parameters were typed (one of each kind of parameters: a stream's with
# min_tricks, states' before max_imbalance, the factory's nested table, an atlas's exact and sampled shards,
# input deals, rank ranges), each with the summary tables that bmn built then.
OLD = Path(__file__).parent / "data" / "runs_before_typed"


def old_run(name: str, tmp_path) -> Path:
    import shutil

    run = tmp_path / name
    shutil.copytree(OLD / name, run)
    return run


@pytest.mark.parametrize("name", sorted(p.name for p in OLD.iterdir() if p.is_dir()))
def test_a_run_written_before_reads_queries_and_compacts_as_it_was(name, tmp_path):
    import pyarrow.parquet as pq
    from cluster_helpers import DETERMINISTIC_SHARD_COLUMNS, in_process, unlabelled

    from cluster.commands.query import with_columns
    from cluster.runs.runmeta import read_run_config
    from cluster.runs.storage import RunStore
    from cluster.runs.tables import CYCLES_SCHEMA, TABLES, Ownership, build_tables, read_contents
    from kernels.strategies import ShardParams

    run = old_run(name, tmp_path)
    config = read_run_config(str(run))
    plan = Plan(config)
    contents = read_contents(RunStore(str(run)), owner=Ownership(plan, config.fingerprint()))
    # Every shard is the run's own (its kept parameters equal its plan's, typed) and reads back typed.
    assert not contents.foreign and not contents.damaged and contents.done == set(range(plan.count))
    assert all(isinstance(s.params, ShardParams) and s.params == plan.shard(k).params
               for k, s in contents.summaries.items())
    tables = build_tables(contents)
    for table in TABLES:
        if not (run / f"{table}.parquet").exists():
            continue
        old, new = pq.read_table(run / f"{table}.parquet"), tables[table]
        if table == "cycles":  # (as bmn reads it now: the columns added since, null)
            old, new = unlabelled(with_columns(old, CYCLES_SCHEMA)), unlabelled(new)
        if table == "shards":
            old, new = old.select(DETERMINISTIC_SHARD_COLUMNS), new.select(DETERMINISTIC_SHARD_COLUMNS)
        assert new.equals(old), table
    assert in_process("status", str(run)).returncode == 0
    assert in_process("query", str(run), "SELECT count(*) AS n FROM games", "--format", "csv").stdout.split() == \
        ["n", str(tables["games"].num_rows)]
    done = in_process("compact", str(run), "--shards-per-file", "4")
    assert done.returncode == 0, done.stderr
    again = build_tables(read_contents(RunStore(str(run)), owner=Ownership(plan, config.fingerprint())))
    assert again["games"].equals(tables["games"]) and again["shards"].select(DETERMINISTIC_SHARD_COLUMNS).equals(
        tables["shards"].select(DETERMINISTIC_SHARD_COLUMNS))


def test_a_run_written_before_resumes_its_missing_shards(tmp_path):
    """Two shards of the old random run removed: the loop (without Ray: test_coordinator's pool of plain
    callables) plays exactly those, and the tables are the ones bmn built before."""
    import pyarrow.parquet as pq
    from cluster_helpers import unlabelled
    from test_coordinator import Health, PlainPool

    from cluster.cloud.worker import ShardRunner
    from cluster.commands.query import with_columns
    from cluster.loop.coordinator import Coordinator
    from cluster.runs.lease import Lease
    from cluster.runs.runmeta import open_run, read_run_config
    from cluster.runs.storage import RunStore
    from cluster.runs.tables import CYCLES_SCHEMA

    run = old_run("random", tmp_path)
    for k in (0, 2):
        (run / "shards" / f"{k:012d}.parquet").unlink()
    config = read_run_config(str(run))
    store = RunStore(str(run))
    lease = Lease(store).acquire()
    config = open_run(config, store, resume=True)
    runner = ShardRunner(config.deck, config.space().split, config.strategy)
    pool = PlainPool(runner.run)
    report = Coordinator(config, store, lease, pool=pool, health=Health()).run()
    lease.release()
    assert (report.state, report.new_shards, pool.handed) == ("finished", 2, 2)
    for table in ("games", "cycles", "histogram"):
        new, old = pq.read_table(run / f"{table}.parquet"), pq.read_table(OLD / "random" / f"{table}.parquet")
        if table == "cycles":  # (the columns added since, null)
            new, old = unlabelled(new), unlabelled(with_columns(old, CYCLES_SCHEMA))
        assert new.equals(old), table


@dataclass(frozen=True, kw_only=True)
class Inner(ShardParams):
    a: int


@dataclass(frozen=True, kw_only=True)
class Outer(ShardParams):
    xs: tuple[Inner, ...]


def test_a_list_of_typed_values_is_decoded_at_every_depth():
    """`tuple[X, ...]` of typed values: each item read as X (never left an unchecked dict)."""
    from kernels.strategies.base import typed

    assert typed(Outer, {"xs": [{"a": 1}, {"a": 2}]}, "p") == Outer(xs=(Inner(a=1), Inner(a=2)))
    with pytest.raises(ValueError, match=r'^p: xs must be a list of objects, got \[\{"a": "1"\}\] \(item 0: shard '
                                         r'parameters: a must be a whole number, got "1"\)$'):
        typed(Outer, {"xs": [{"a": "1"}]}, "p")
