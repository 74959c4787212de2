"""cluster/runs/plan.py: the shard plan is a pure function of the config, computed shard by shard on demand."""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster.runs.config import build_config, load_toml, resolve
from cluster.runs.plan import Plan, Shard
from kernels.strategies import codec

ROOT = Path(__file__).resolve().parents[1]


def plan(**values) -> Plan:
    return Plan(resolve(build_config({"out": "unused", "progress": False, **values})))


def shards(p: Plan) -> list[Shard]:
    return [p.shard(k) for k in range(p.count)]


def test_random_shards_split_the_deals_and_key_each_stream_by_shard():
    p = plan(strategy="random", deals=25, shard_size=10, seed=7, min_cards=500)
    assert p.count == 3
    assert [s.params.count for s in shards(p)] == [10, 10, 5]
    assert [(s.id, s.params.shard, s.params.seed) for s in shards(p)] == [(0, 0, 7), (1, 1, 7), (2, 2, 7)]
    assert all(s.strategy == "random" and s.params.min_cards == 500 and s.deals == () for s in shards(p))


def test_exhaustive_shards_tile_the_deal_space_in_order():
    p = plan(strategy="exhaustive", deck="0:4,1:2,2:2", shard_size=7)
    ranges = [(s.params.lo, s.params.hi) for s in shards(p)]
    assert ranges[0][0] == 0 and ranges[-1][1] == p.space.count == 420
    assert all(hi == lo2 for (_, hi), (lo2, _) in zip(ranges, ranges[1:]))
    assert all(0 < hi - lo <= 7 for lo, hi in ranges) and p.count == 60


def test_a_plan_over_the_standard_deck_is_never_listed():
    p = plan(strategy="exhaustive", shard_size=100_000)
    assert p.count == -(-p.space.count // 100_000) > 6 * 10**15
    last = p.shard(p.count - 1)
    assert last.params.hi == p.space.count and last.params.lo == (p.count - 1) * 100_000
    assert plan(strategy="exhaustive", shard_size=10**9,
                range="472460898658000000000:472460898659000000000").shard(0).params.lo == 472460898658000000000


def test_shards_outside_the_plan_are_refused():
    p = plan(strategy="random", deals=20, shard_size=10)
    for k in (-1, 2):
        with pytest.raises(IndexError):
            p.shard(k)


def test_the_deals_strategy_carries_its_input_deals_in_order():
    p = plan(strategy="deals", deals_file=str(ROOT / "configs" / "records.txt"), shard_size=2)
    carried = tuple(d for s in shards(p) for d in s.deals)
    assert carried == p.config.input_deals and len(carried) == len(p.config.input_deals) > 2
    assert [s.params.index_base for s in shards(p)] == list(range(0, len(carried), 2))


@pytest.mark.parametrize("name", sorted(p.stem for p in (ROOT / "configs").glob("*.toml")))
def test_every_example_config_plans_the_same_json_shards_twice(name):
    values = load_toml(str(ROOT / "configs" / f"{name}.toml"))
    if "deals_file" in values:  # relative to the config file, as `bmn search` reads it
        values["deals_file"] = str(ROOT / "configs" / values["deals_file"])
    first, second = (Plan(resolve(build_config({**values, "progress": False}))) for _ in range(2))
    assert first.count == second.count >= 1
    for k in sorted({0, first.count // 2, first.count - 1}):
        a, b = first.shard(k), second.shard(k)
        assert a == b and a.id == k and a.strategy == first.config.strategy
        assert codec.decode(first.strategy, codec.encode(a.params)) == a.params  # what a run keeps reads back
