"""The exact binomial interval (cluster/runs/binomial.py), held to its defining equations, computed exactly."""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import pytest

from cluster.runs.binomial import beta_cdf, beta_quantile, clopper_pearson, log_beta


def at_least(k: int, n: int, p: float) -> Decimal:
    """P(X >= k) for X ~ Binomial(n, p), to 60 digits (p taken exactly as the float it is)."""
    with localcontext() as context:
        context.prec = 60
        q = Decimal(Fraction(p).numerator) / Decimal(Fraction(p).denominator)
        return Decimal(1) - sum(Decimal(math.comb(n, i)) * q ** i * (1 - q) ** (n - i) for i in range(k))


@pytest.mark.parametrize("k,n", [(1, 1), (3, 7), (13, 100), (40, 100), (50, 100), (7, 2000), (150, 3000)])
def test_the_bounds_solve_the_binomial_tail_equations(k, n):
    """Clopper-Pearson: P(X >= k) = 2.5% at the lower bound, P(X <= k) = 2.5% at the upper bound."""
    lo, hi = clopper_pearson(k, n)
    assert abs(float(at_least(k, n, lo)) - 0.025) < 1e-13
    if k < n:
        assert abs(float(1 - at_least(k + 1, n, hi)) - 0.025) < 1e-13
    assert lo < k / n <= hi


@pytest.mark.parametrize("n", [1, 10, 1000, 10**6, 4_923_630_084, 10**11])
def test_one_event_in_billions_keeps_its_digits(n):
    """With none, or one, of n: the lower bound of one event and the upper bound of none have closed
    forms (1 - (1 - p)^n = 2.5%; (1 - p)^n = 2.5%), and the upper bound of one tends to Poisson's
    (e^-m (1 + m) = 2.5%) as n grows."""
    lo, _ = clopper_pearson(1, n)
    assert lo == pytest.approx(-math.expm1(math.log(0.975) / n), rel=1e-13)
    assert clopper_pearson(0, n) == (0.0, pytest.approx(-math.expm1(math.log(0.025) / n), rel=1e-13))
    assert clopper_pearson(n, n) == (pytest.approx(math.exp(math.log(0.025) / n), rel=1e-13), 1.0)
    if n >= 10**6:
        low, high = 0.0, 20.0  # the limit m, where e^-m (1 + m) = 2.5%, by bisection
        for _ in range(200):
            low, high = ((low + high) / 2, high) if math.exp(-(low + high) / 2) * (1 + (low + high) / 2) > 0.025 \
                else (low, (low + high) / 2)
        assert clopper_pearson(1, n)[1] * n == pytest.approx(low, rel=10 / n + 1e-12)


def test_the_interval_is_symmetric_and_has_its_confidence():
    for k, n in ((3, 10), (123_456, 987_654_321), (5 * 10**8, 10**9)):
        lo, hi = clopper_pearson(k, n)
        mirror = clopper_pearson(n - k, n)
        assert (lo, hi) == (pytest.approx(1 - mirror[1], rel=1e-12), pytest.approx(1 - mirror[0], rel=1e-12))
    narrow, wide = clopper_pearson(30, 1000, 0.5), clopper_pearson(30, 1000, 0.999)
    assert wide[0] < narrow[0] < 0.03 < narrow[1] < wide[1]
    assert clopper_pearson(0, 0) == (0.0, 1.0)
    for k, n in ((-1, 5), (6, 5)):
        with pytest.raises(ValueError):
            clopper_pearson(k, n)


def test_the_incomplete_beta_function_and_its_pieces():
    for x in (1e-12, 0.001, 0.3, 0.7, 0.9):
        assert beta_cdf(x, 1, 7.5) == pytest.approx(-math.expm1(7.5 * math.log1p(-x)), rel=1e-13)  # I_x(1, b)
        assert beta_cdf(x, 3.5, 1) == pytest.approx(x ** 3.5, rel=1e-13)  # I_x(a, 1)
        assert beta_cdf(x, 4, 9) + beta_cdf(1 - x, 9, 4) == pytest.approx(1, abs=1e-15)
        assert beta_quantile(beta_cdf(x, 4, 9), 4, 9) == pytest.approx(x, rel=1e-10)
    assert (beta_cdf(0, 2, 3), beta_cdf(1, 2, 3)) == (0.0, 1.0)
    for a, b in ((0.5, 0.5), (2, 3), (7.5, 40), (300, 1000)):  # where lgamma has no cancellation to lose
        assert log_beta(a, b) == pytest.approx(math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b), rel=1e-13)
    for a in (1, 2, 17):  # B(a, b) = (a-1)! / (b (b+1) ... (b+a-1)) for a whole a, b in the billions
        b = 4_923_630_083
        exact = math.lgamma(a) - sum(math.log(b + i) for i in range(a))
        assert log_beta(a, b) == pytest.approx(exact, rel=1e-14) and log_beta(b, a) == log_beta(a, b)
