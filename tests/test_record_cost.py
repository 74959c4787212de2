"""benchmarks/record_cost.py: the exponential tail's fit recovers a known tail within its intervals, its
intervals cover as often as they say, its longest-game law matches simulation, its prices are the README's
arithmetic, and the campaign config (configs/record.toml) states its cost by the same arithmetic."""

from __future__ import annotations

import importlib.util
import math
import re
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def load():
    spec = importlib.util.spec_from_file_location("benchmark_record_cost", ROOT / "benchmarks" / "record_cost.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as an import would (dataclasses look their module up there)
    spec.loader.exec_module(module)
    return module


rc = load()

SCALE, LO, PI = 200.0, 1000, 0.01  # the synthetic tail: P(X > L) = PI * q^(L - LO) beyond LO, q = e^(-1/SCALE)
Q = math.exp(-1 / SCALE)


def synthetic(games: int, seed: int) -> np.ndarray:
    """A histogram of `games` finite games: a fraction PI beyond LO cards with geometric excess (scale SCALE),
    the rest spread over 1..LO cards."""
    rng = np.random.default_rng(seed)
    tail = rng.binomial(games, PI)
    lengths = np.concatenate([rng.integers(1, LO + 1, games - tail), LO + rng.geometric(1 - Q, tail)])
    return np.bincount(lengths, minlength=rc.RECORD + 1)


def truth(cards: int) -> float:
    return PI * Q ** (cards - LO)


def test_the_fit_recovers_a_known_tail_within_its_intervals():
    fit = rc.fit_tail(synthetic(2_000_000, seed=1), LO)
    low, high = fit.scale_interval()
    assert low < SCALE < high and high - low < 0.1 * SCALE
    assert fit.over / fit.games == pytest.approx(PI, rel=0.05)
    p, p_low, p_high = fit.survival_interval(rc.RECORD)
    assert p_low < truth(rc.RECORD) < p_high and p_low < p < p_high
    assert p == pytest.approx(math.exp(fit.log_survival(rc.RECORD)))
    # At lo itself only pi is uncertain: the interval is the binomial one, about +- 1.96 sqrt(n0) / N.
    at_lo, lo_low, lo_high = fit.survival_interval(LO)
    assert at_lo == pytest.approx(fit.over / fit.games)
    assert (lo_high - lo_low) / 2 == pytest.approx(1.96 * math.sqrt(fit.over) / fit.games, rel=0.02)


def test_a_window_fit_counts_the_longer_games_as_censored():
    histogram = synthetic(2_000_000, seed=2)
    window = rc.fit_tail(histogram, LO, LO + 400)
    whole = rc.fit_tail(histogram, LO)
    assert window.over == whole.over and window.inside < whole.inside
    low, high = window.scale_interval()
    assert low < SCALE < high and high - low > whole.scale_interval()[1] - whole.scale_interval()[0]


def test_the_intervals_cover_the_truth_as_often_as_they_say():
    """95% intervals over 200 seeded samples of 50,000 games (about 500 beyond LO): between 181 and 199 cover
    (the binomial's 99.9%)."""
    scale_hits = record_hits = 0
    for seed in range(200):
        fit = rc.fit_tail(synthetic(50_000, seed=100 + seed), LO)
        low, high = fit.scale_interval()
        scale_hits += low < SCALE < high
        _, p_low, p_high = fit.survival_interval(rc.RECORD)
        record_hits += p_low < truth(rc.RECORD) < p_high
    assert 181 <= scale_hits <= 199 and 181 <= record_hits <= 199, (scale_hits, record_hits)


def test_the_expected_longest_game_is_the_simulated_one():
    """The Gumbel law of the longest of n games, against 400 simulated maxima of 10^5 games each."""
    fit = rc.fit_tail(synthetic(5_000_000, seed=3), LO)
    rng = np.random.default_rng(4)
    deals = 100_000
    tails = rng.binomial(deals, PI, size=400)
    maxima = np.array([LO + rng.geometric(1 - Q, n).max() for n in tails])
    assert fit.expected_longest(deals) == pytest.approx(maxima.mean(), abs=3 * maxima.std() / 20 + 0.01 * SCALE)
    assert fit.longest_sd == pytest.approx(maxima.std(), rel=0.15)


def test_too_few_games_or_an_empty_range_are_refused():
    histogram = synthetic(1000, seed=5)
    with pytest.raises(ValueError, match="too few games"):
        rc.fit_tail(histogram, 5000)
    with pytest.raises(ValueError, match="lo < hi"):
        rc.fit_tail(histogram, LO, LO)


def test_the_price_is_the_readmes_arithmetic():
    """README.md prices 10^12 games at 139 core-hours, $5.56, or 0.24 H200-hours, $0.85: so does Price."""
    price = rc.Price(1e-12)
    assert price.deals == pytest.approx(1e12)
    assert round(price.core_hours) == 139 and round(price.cpu_dollars, 2) == 5.56
    assert round(price.gpu_hours, 2) == 0.24 and round(price.gpu_dollars, 2) == 0.85
    readme = (ROOT / "README.md").read_text()
    assert "| 139 core-hours, $5.56 |" in readme and "| 0.24 GPU-hours, $0.85 |" in readme
    # A campaign of exactly the expected core-hours draws at least one with chance 1 - 1/e.
    assert price.chance(price.core_hours) == pytest.approx(1 - math.exp(-1))
    assert rc.Price(1e-12, cpu_rate=1e6).core_hours == pytest.approx(2 * price.core_hours)


def test_the_report_prints_the_fit_and_the_price(capsys):
    fit = rc.report(synthetic(2_000_000, seed=6), LO, None, None)
    out = capsys.readouterr().out
    p, p_low, p_high = fit.survival_interval(rc.RECORD)
    assert f"P(X > {rc.RECORD}) = {rc._sci(p)} (95%: {rc._sci(p_low)} to {rc._sci(p_high)})" in out
    deals = f"| random deals expected (1 / P) | {rc._sci(1 / p)} | {rc._sci(1 / p_high)} to {rc._sci(1 / p_low)} |"
    assert deals in out
    assert "| longest | 3 |" in out and "the fit's check" in out  # the measured strategies, beside the fit


def test_the_campaign_config_states_its_cost_by_the_same_arithmetic():
    """configs/record.toml: a longest campaign on a cloud cluster, writing to S3, whose comment prices its
    deals as Price does (core-hours at the README's 2 M deals a second a core, dollars at $0.04 a core-hour)."""
    path = ROOT / "configs" / "record.toml"
    config = tomllib.loads(path.read_text())
    assert config["strategy"] == "longest" and config["out"].startswith("s3://") and config["workers"] == 0
    hours = config["deals"] / rc.CPU_RATE / 3600
    stated = re.search(r"([\d,]+) core-hours, \$([\d,]+)", path.read_text())
    assert stated, "record.toml states its core-hours and dollars"
    assert int(stated.group(1).replace(",", "")) == round(hours)
    assert int(stated.group(2).replace(",", "")) == round(hours * rc.CORE_HOUR)
