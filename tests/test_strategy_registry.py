"""The strategy registry (kernels/strategies/__init__.py): every strategy declared completely, the
deals strategy, and bad input to the strategies' wrappers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kernels.backward import ancestors
from kernels.errors import BmnError
from kernels.engines.reference import play_reference
from kernels.notation import parse_deal
from kernels.strategies import REGISTRY, run_climb, run_deals, run_exhaustive, run_shard
from kernels.strategies.base import OPTIONAL_KEYS

from helpers import CASELLA, STANDARD, space

ROOT = Path(__file__).resolve().parents[1]


def test_deals_strategy_plays_the_list():
    deals = [CASELLA, "J-/--", "-J/-Q/--K"]
    result = run_deals(deals, index_base=5)
    assert [c.index for c in result.candidates] == [5, 6, 7]
    assert [c.result for c in result.candidates] == [play_reference(parse_deal(d)) for d in deals]


@pytest.mark.parametrize("call,message", [
    (lambda: run_shard("sideways", STANDARD, {}), "unknown strategy 'sideways'"),
    (lambda: run_exhaustive(STANDARD, 0, STANDARD.count + 1, min_cards=0), "outside this deal space"),
    (lambda: ancestors(parse_deal("J--/--")), "cannot be split into two equal hands"),
    (lambda: ancestors(parse_deal("J-/--/--")), "two players"),
    (lambda: run_climb(space("0:8,1:2", "4,6"), 1, 0, 10, min_cards=0), "equal hands"),
])
def test_bad_input(call, message):
    with pytest.raises(BmnError, match=message):
        call()


@pytest.mark.parametrize("params,message", [
    ({"seed": 1, "shard": 0, "min_cards": 0}, "missing a required argument: 'count'"),
    ({"seed": 1, "shard": 0, "count": 5, "min_cards": 0, "pool": 3}, "got an unexpected keyword argument 'pool'"),
])
def test_shard_parameters_that_do_not_fit_the_wrapper_are_named(params, message):
    with pytest.raises(BmnError, match=r"the random strategy's shard parameters do not fit run_random: " + message):
        run_shard("random", STANDARD, params)


def test_an_error_inside_a_shard_is_not_taken_for_a_users_mistake():
    """A TypeError raised by the strategy's own code is a bug to see, not a sentence for the user."""
    params = {"deck": "0:6,1:2,2:2", "split": None, "lo": 0, "hi": 10, "balanced": True}
    assert REGISTRY["census"].bind(params) == params
    with pytest.raises(TypeError) as raised:
        run_shard("census", STANDARD, params)
    assert not isinstance(raised.value, BmnError)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_strategy_is_declared_completely(name):
    """Defaults pass their own checks, an example config exists, and the README lists it."""
    strategy = REGISTRY[name]
    assert strategy.name == name and strategy.summary
    assert strategy.table({}) == strategy.defaults()
    assert set(strategy.keys) <= set(OPTIONAL_KEYS)
    assert (ROOT / "configs" / f"{name}.toml").exists()
    assert f"`{name}`" in (ROOT / "README.md").read_text()


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_strategy_warms_up_on_its_deck(name):
    REGISTRY[name].warm_up(STANDARD)


def test_the_cluster_never_branches_on_a_strategy_name():
    pattern = re.compile(r"strategy *(==|!=|in *\()")
    hits = [f"{path}:{n}" for folder in ("kernels", "cluster") for path in sorted((ROOT / folder).rglob("*.py"))
            for n, line in enumerate(path.read_text().splitlines(), 1) if pattern.search(line)]
    assert len(hits) <= 3, hits
