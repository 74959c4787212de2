"""The strategy registry (kernels/strategies/__init__.py): every strategy declared completely, the
deals strategy, and bad input to the strategies' wrappers."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from cluster_helpers import example_config
from helpers import CASELLA, STANDARD, reference_problems, space

from kernels.backward import ancestors
from kernels.engines.reference import play_reference
from kernels.errors import BmnError
from kernels.notation import parse_deal
from kernels.strategies import REGISTRY, Shard, ShardParams, get, run_climb, run_deals, run_exhaustive, run_shard
from kernels.strategies.base import OPTIONAL_KEYS, StreamShard, Table, params_of
from kernels.strategies.census import CensusShard
from kernels.strategies.deals import DealsShard
from kernels.strategies.exhaustive import ExhaustiveShard

ROOT = Path(__file__).resolve().parents[1]


def test_deals_strategy_plays_the_list():
    deals = [CASELLA, "J-/--", "-J/-Q/--K"]
    result = run_deals(deals, index_base=5)
    assert [c.index for c in result.candidates] == [5, 6, 7]
    assert [c.result for c in result.candidates] == [play_reference(parse_deal(d)) for d in deals]


@pytest.mark.parametrize("call,message", [
    (lambda: get("sideways"), "unknown strategy 'sideways'"),
    (lambda: run_exhaustive(STANDARD, 0, STANDARD.count + 1, min_cards=0), "outside this deal space"),
    (lambda: ancestors(parse_deal("J--/--")), "cannot be split into two equal hands"),
    (lambda: ancestors(parse_deal("J-/--/--")), "two players"),
    (lambda: run_climb(space("0:8,1:2", "4,6"), 1, 0, 10, min_cards=0), "equal hands"),
])
def test_bad_input(call, message):
    with pytest.raises(BmnError, match=message):
        call()


def test_a_shard_runs_only_with_its_strategys_parameters():
    wrong = Shard(0, "random", ExhaustiveShard(lo=0, hi=10, min_cards=0, min_tricks=0))
    with pytest.raises(BmnError, match="the random strategy's shards take StreamShard, not ExhaustiveShard"):
        run_shard(STANDARD, wrong)
    with pytest.raises(BmnError, match="the deals strategy has no GPU kernels"):
        run_shard(STANDARD, Shard(0, "deals", DealsShard(index_base=0, min_cards=0, min_tricks=0), (CASELLA,)), "gpu")
    right = Shard(0, "random", StreamShard(seed=1, shard=0, count=5, min_cards=0, min_tricks=0))
    assert run_shard(STANDARD, right).deals == 5


def test_an_error_inside_a_shard_is_not_taken_for_a_users_mistake():
    """A TypeError raised by the strategy's own code is a bug to see, not a sentence for the user."""
    params = CensusShard(deck="0:6,1:2,2:2", split=None, lo=0, hi=10, balanced=True)
    with pytest.raises(TypeError) as raised:
        run_shard(STANDARD, Shard(0, "census", params))
    assert not isinstance(raised.value, BmnError)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_strategy_is_declared_completely(name):
    """Defaults pass their own checks and an example config exists (docs/strategies.md's row and keys:
    tests/test_docs.py)."""
    strategy = REGISTRY[name]
    assert strategy.name == name and strategy.summary
    assert strategy.table({}) == strategy.Table() and issubclass(strategy.Params, ShardParams)
    assert [p.name for p in strategy.params] == [f.name for f in dataclasses.fields(strategy.Table)]
    # The table declares its keys itself (none inherited from another table); Params that take its keys copy them
    # (keys_of: a base class of theirs, TableKeys), each with the table's spec.
    assert strategy.Table.__mro__[1:] == (Table, object)
    stem = strategy.Table.__name__.removesuffix("Table")
    for copy in [c for c in strategy.Params.__mro__ if c.__name__ == f"{stem}Keys"]:
        assert params_of(copy) == {k: p for k, p in params_of(strategy.Table).items() if k in params_of(copy)}
    assert set(strategy.keys) <= set(OPTIONAL_KEYS)
    assert (ROOT / "configs" / f"{name}.toml").exists()


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_strategy_warms_up_on_its_deck(name):
    REGISTRY[name].warm_up(STANDARD)


def test_the_cluster_never_branches_on_a_strategy_name():
    pattern = re.compile(r"strategy *(==|!=|in *\()")
    hits = [f"{path}:{n}" for folder in ("kernels", "cluster") for path in sorted((ROOT / folder).rglob("*.py"))
            for n, line in enumerate(path.read_text().splitlines(), 1) if pattern.search(line)]
    assert len(hits) <= 3, hits


# A notebook's way to each strategy, from `kernels` alone: its example search's plain values and its
# table (keys as a config's [name] table gives them), planned and shard 0 played in a process that
# imports neither the cluster, Ray nor pyarrow.
PLAY = """
import json, sys
from kernels.strategies import REGISTRY, Search, codec, run_shard
out = {}
for name, strategy in REGISTRY.items():
    example = strategy.example
    search = Search(**{k: tuple(v) if isinstance(v, list) else v for k, v in example.search.items()},
                    input_deals=example.deals)
    table = strategy.table(example.table)
    space = strategy.deal_space(search, table)
    strategy.check(search, space, table, "notebook")
    plan = strategy.plan(search, space, table)
    shard = plan.shard(0)
    result = run_shard(space, shard)
    out[name] = [plan.count, codec.encode(shard.params), list(shard.deals), result.deals, len(result.candidates)]
print(json.dumps(out))
print(sorted(m for m in sys.modules if m.split(".")[0] in ("cluster", "ray", "pyarrow")))
"""


def test_every_strategy_plans_and_plays_a_shard_from_kernels_alone(tmp_path):
    import json
    import subprocess
    import sys

    from cluster.cloud.worker import play_shard
    from cluster.runs.plan import Plan
    from kernels.strategies import codec

    done = subprocess.run([sys.executable, "-c", PLAY], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    played, imported = json.loads(lines[0]), lines[1]
    assert imported == "[]"  # neither the cluster, Ray nor pyarrow
    assert set(played) == set(REGISTRY)
    for name, strategy in REGISTRY.items():
        count, params, deals, played_deals, candidates = played[name]
        # The same shard as the cluster's plan of the same search makes, and the same result as its worker's.
        config = example_config(strategy, tmp_path)
        plan = Plan(config)
        assert (plan.count, codec.encode(plan.shard(0).params), list(plan.shard(0).deals)) == \
               (count, params, deals), name
        result = play_shard(config.deck, plan.space.split, plan.shard(0))
        assert (result.deals, len(result.candidates)) == (played_deals, candidates), name
        assert played_deals > 0 or name in ("ancestors", "extend"), name  # (those two play no deals of their own)


# The worked example of docs/development.md ("Adding a strategy"): its blocks, each headed by the file it
# is, are all of a new strategy; written into a temporary folder of the registry's package, the strategy is
# found, checked, planned, played, pinned, tested and documented with nothing else changed.

def worked_example() -> dict[str, str]:
    """The worked example's files: path -> text (each block's first line names its file)."""
    section = (ROOT / "docs" / "development.md").read_text().split("## Adding a strategy\n", 1)[1].split("\n## ", 1)[0]
    files = {}
    for block in re.findall(r"^```\w+\n(.*?)^```$", section, re.M | re.S):
        head, body = block.split("\n", 1)
        path = re.match(r"(?:# |<!-- )([\w/.]+)", head).group(1).rstrip(":")
        files[path] = body if path.endswith(".md") else block
    return files


def test_the_worked_example_of_a_new_strategy_needs_only_its_own_files(tmp_path, monkeypatch):
    import importlib
    import json
    import sys

    from cluster_helpers import direct_tables
    from test_results_version import digest

    import kernels.strategies as package
    from cluster.runs.config import build_config, load_toml, resolve
    from cluster.runs.plan import Plan
    from kernels.strategies import codec, discover
    from kernels.strategies.base import WARM_GROUPS

    files = worked_example()
    assert set(files) == {"kernels/strategies/cuts.py", "configs/cuts.toml", "tests/test_cuts.py", "docs/strategies.md"}
    folder = tmp_path / "strategies"
    folder.mkdir()
    (folder / "cuts.py").write_text(files["kernels/strategies/cuts.py"])
    monkeypatch.setattr(package, "__path__", [*package.__path__, str(folder)])
    monkeypatch.delitem(sys.modules, "kernels.strategies.cuts", raising=False)
    found = discover()
    assert list(found) == sorted([*REGISTRY, "cuts"])  # found beside the others, nothing else told
    cuts = found["cuts"]
    monkeypatch.setitem(REGISTRY, "cuts", cuts)
    try:
        # Its config, checked as any: its table typed, a bad key one sentence.
        (tmp_path / "cuts.toml").write_text(files["configs/cuts.toml"])
        values = {**load_toml(str(tmp_path / "cuts.toml")), "out": str(tmp_path / "run"), "progress": False}
        config = resolve(build_config(values))
        assert config.table() == cuts.Table(step=4) and Plan(config).count == 3
        with pytest.raises(BmnError, match=r"unknown key 'stride' in \[cuts\]; known keys are step"):
            build_config({**values, "cuts": {"stride": 2}})
        # Its search: the tables the kernels give, as its pin says (its results test passes as written).
        tables = direct_tables(config)
        assert tables["games"].num_rows == 13 and tables["games"]["outcome"].to_pylist().count("cycle") == 1
        assert digest(cuts, tmp_path) == cuts.example.pin and cuts.warm_group in WARM_GROUPS
        # Its shards' parameters: written and read back by the codec, a value of the wrong type refused.
        params = Plan(config).shard(1).params
        assert codec.decode(cuts, codec.encode(params)) == params
        with pytest.raises(ValueError, match="step must be a whole number"):
            codec.decode(cuts, codec.encode(params).replace('"step": 4', '"step": "4"'))
        cuts.warm_up(Plan(config).space)
        # Its test, as the block writes it.
        (tmp_path / "test_cuts.py").write_text(files["tests/test_cuts.py"])
        spec = importlib.util.spec_from_file_location("test_cuts_example", tmp_path / "test_cuts.py")
        test = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(test)
        ran = [getattr(test, name)() for name in dir(test) if name.startswith("test_")]
        assert len(ran) == 1
        # Its docs section holds its row and keys as docs/strategies.md's checks want them; a wrong row fails.
        assert not reference_problems(files["docs/strategies.md"], cuts)
        assert reference_problems(files["docs/strategies.md"].replace("every cut", "each cut"), cuts)
        assert json.loads(codec.encode(params))["deal"] == config.deal
    finally:
        sys.modules.pop("kernels.strategies.cuts", None)


def test_the_package_writes_out_its_api_one_wrapper_for_every_strategy_of_the_registry():
    """kernels/strategies/__init__.py imports each strategy's `run_<name>` by name (no export computed from the
    registry): the list it writes out is the registry's, each the function of its strategy's module."""
    import importlib

    import kernels.strategies as package

    runners = sorted(name for name in package.__all__ if name.startswith("run_") and name not in
                     ("run_shard", "run_shard_batch"))
    assert runners == sorted(f"run_{name}" for name in REGISTRY)
    for name, strategy in REGISTRY.items():
        module = importlib.import_module(type(strategy).__module__)
        assert getattr(package, f"run_{name}") is getattr(module, f"run_{name}")
    assert all(hasattr(package, name) for name in package.__all__)
