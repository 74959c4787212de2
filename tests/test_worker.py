"""The worker (cluster/cloud/worker.py), without Ray: a ShardRunner runs a plan's shards and returns each one
PlayedShard (its candidate deals, which make its games rows, and its figures), the same as the kernels give
directly."""

from __future__ import annotations

import os

import pytest

from cluster.cloud.worker import ShardRunner, play_shard
from cluster.runs.config import build_config
from cluster.runs.figures import PlayedShard, ShardFigures
from cluster.runs.plan import Plan
from cluster.runs.tables import GAMES_SCHEMA, games_table
from kernels.errors import BmnError
from kernels.strategies import run_random


def test_a_runner_returns_the_shards_rows_and_figures():
    config = build_config({"strategy": "random", "deals": 300, "shard_size": 200, "min_cards": 500, "seed": 5})
    plan = Plan(config)
    runner = ShardRunner(config.deck, plan.space.split, config.strategy)
    assert runner.warm_up() == {"where": f"local:{os.getpid()}", "pid": os.getpid(), "node_id": "local", "gpu": None,
                                "lanes": None}
    played = runner.run(plan.shard(1))
    figures, table = played.figures, games_table(played)
    assert isinstance(played, PlayedShard) and (played.shard, played.deck) == (plan.shard(1), "standard")
    direct = run_random(plan.space, 5, 1, 100, min_cards=500)
    assert isinstance(figures, ShardFigures) and (figures.counts.deals, figures.worker) == (100, runner.where)
    assert (figures.device, played.on_gpu, played.attempts, played.error) == ("cpu", False, 1, None)
    assert (figures.counts.cards, figures.max_cards, figures.candidates) == (direct.cards, direct.max_cards,
                                                                     len(direct.candidates))
    assert table.schema == GAMES_SCHEMA and table.num_rows == len(direct.candidates)
    assert table["hands"].to_pylist() == [c.hands for c in direct.candidates]
    assert set(table["shard"].to_pylist()) <= {1} and set(table["strategy"].to_pylist()) <= {"random"}


def test_a_census_shard_keeps_its_deck_and_reports_its_cycles():
    config = build_config({"strategy": "census", "deck": "0:6,1:2,2:2", "shard_size": 2000})
    plan = Plan(config)
    runner = ShardRunner(config.deck, plan.space.split, config.strategy)
    balanced = next(plan.shard(k) for k in range(plan.count) if plan.shard(k).params.balanced)
    played = runner.run(balanced)
    figures, table = played.figures, games_table(played)
    assert figures.cycle_rows and set(figures.cycle_ids) == {r.cycle_id for r in figures.cycle_rows}
    assert set(table["deck"].to_pylist()) == {"0:6,1:2,2:2"} and table.num_rows == figures.candidates


def test_a_shard_with_parameters_of_another_strategy_is_refused():
    config = build_config({"strategy": "random", "deals": 10})
    shard = Plan(config).shard(0)
    wrong = type(shard)(shard.id, "exhaustive", shard.params)
    with pytest.raises(BmnError, match="the exhaustive strategy's shards take ExhaustiveShard, not StreamShard"):
        play_shard(config.deck, (26, 26), wrong)


def test_a_gpu_runner_without_a_gpu_says_so_in_one_sentence():
    """A GPU actor on a node whose GPU CUDA cannot use (here: no driver at all) fails its warm-up with a
    sentence, which the pool reports before giving its shards to CPU actors (tests/test_cluster_gpu.py)."""
    pytest.importorskip("numba.cuda")
    runner = ShardRunner("standard", (26, 26), "random", device="gpu")
    assert runner.where == f"local:{os.getpid()}" and runner.device == "gpu"  # (the device a field, not a suffix)
    with pytest.raises(BmnError, match=r"^no GPU here that CUDA can use \(no NVIDIA driver, or none visible"):
        runner.warm_up()


def test_a_strategy_without_gpu_kernels_refuses_the_gpu():
    config = build_config({"strategy": "climb", "deals": 10, "shard_size": 10})
    plan = Plan(config)
    with pytest.raises(BmnError, match="the climb strategy has no GPU kernels; its shards run on CPUs"):
        play_shard(config.deck, plan.space.split, plan.shard(0), device="gpu")
