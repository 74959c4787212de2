"""The exact (Clopper-Pearson) interval on a binomial rate, in the standard library alone.

The atlas bounds a sampled rate with it (cluster/runs/atlas.py). Its bounds are quantiles of beta
distributions: with k of n, the lower bound is the alpha/2 quantile of Beta(k, n - k + 1), the upper
the 1 - alpha/2 quantile of Beta(k + 1, n - k). A quantile is found by bisection on the log of the
rate (a rate of 1e-10 keeps its relative precision) of the regularized incomplete beta function,
which a continued fraction gives (evaluated by Lentz's method). Samples run to billions of games, so
the log of the beta function is taken as a difference of Stirling series where an argument is large,
not of two log-gammas that large (whose rounding would cost six digits).

Kept apart from scipy on purpose: importing scipy costs every process that loads the kernels ~0.35 s
of CPU (Numba's CPU target imports scipy.linalg, its BLAS probe, wherever scipy is installed), and an
atlas needs only this interval.
"""

from __future__ import annotations

import math

_TINY = 1e-300
_SUM_BELOW = 2000  # beta_cdf: sum at most this many binomial terms


def _stirling_tail(x: float) -> float:
    """lgamma(x) - ((x - 1/2) ln x - x + ln(2 pi)/2), for x >= 10 (error below 1e-16)."""
    r = 1.0 / (x * x)
    return (1.0 / 12 - r * (1.0 / 360 - r * (1.0 / 1260 - r * (1.0 / 1680)))) / x


def log_beta(a: float, b: float) -> float:
    """ln B(a, b) = lgamma(a) + lgamma(b) - lgamma(a + b), accurate where b (or a) is in the billions."""
    small, large = min(a, b), max(a, b)
    if large < 10:
        return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    # lgamma(large) - lgamma(small + large) from both Stirling series: the large parts cancel exactly.
    difference = (-(large - 0.5) * math.log1p(small / large) - small * math.log(small + large) + small
                  + _stirling_tail(large) - _stirling_tail(small + large))
    return math.lgamma(small) + difference


def _continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (converges fast for x < (a+1)/(a+b+2))."""
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    value = d
    for m in range(1, 100_000):
        # the even step, then the odd one
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            step = c * d
            value *= step
        if abs(step - 1.0) < 1e-16:
            return value
    raise ArithmeticError(f"the incomplete beta function's fraction did not converge (a={a}, b={b}, x={x})")


def beta_cdf(x: float, a: float, b: float) -> float:
    """The regularized incomplete beta function I_x(a, b): P(X <= x) for X ~ Beta(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    below_mean = x <= (a + 1) / (a + b + 2)
    if not below_mean and a == int(a) and a <= _SUM_BELOW and a < b:
        # Above the mean of a skewed beta (a rare event's rate just past its count): its few binomial
        # terms, where the other form's fraction would cancel (1 - x, rounded, against numbers near 1:
        # a rate of 1e-10 would keep three digits).
        return 1.0 - _binomial_head(int(a), a + b - 1, x)
    front = math.exp(a * math.log(x) + b * math.log1p(-x) - log_beta(a, b))  # x^a (1 - x)^b / B(a, b)
    if below_mean:  # the fraction converges fast
        return front * _continued_fraction(a, b, x) / a
    # I_x(a, b) = 1 - I_(1-x)(b, a), whose fraction converges fast there; the front is the same
    return 1.0 - front * _continued_fraction(b, a, 1.0 - x) / b


def _binomial_head(a: int, trials: float, x: float) -> float:
    """P(Y < a) for Y ~ Binomial(trials, x), from its terms' logs (I_x(a, b) = P(Y >= a), trials = a + b - 1)."""
    log_term = trials * math.log1p(-x)  # P(Y = 0)
    step = math.log(x) - math.log1p(-x)
    logs = [log_term]
    for j in range(a - 1):
        log_term += math.log((trials - j) / (j + 1)) + step
        logs.append(log_term)
    top = max(logs)
    return math.exp(top) * math.fsum(math.exp(v - top) for v in logs)


def beta_quantile(q: float, a: float, b: float) -> float:
    """The x in (0, 1) with I_x(a, b) = q, by bisection on ln x (to a relative 1e-15)."""
    lo, hi = math.log(_TINY), 0.0
    while hi - lo > 1e-15 * max(1.0, abs(lo)):
        mid = 0.5 * (lo + hi)
        if beta_cdf(math.exp(mid), a, b) < q:
            lo = mid
        else:
            hi = mid
    return math.exp(0.5 * (lo + hi))


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact binomial interval on a rate, k events in n trials: (lower, upper); (0, 1) for n = 0."""
    if not 0 <= k <= n:
        raise ValueError(f"{k} events in {n} trials")
    if n == 0:
        return 0.0, 1.0
    if 2 * k > n:  # from the rarer outcome: bounds near 1 keep their precision as 1 - (a small rate)
        lo, hi = clopper_pearson(n - k, n, confidence)
        return 1.0 - hi, 1.0 - lo
    tail = (1.0 - confidence) / 2
    lower = 0.0 if k == 0 else beta_quantile(tail, k, n - k + 1)
    upper = beta_quantile(1.0 - tail, k + 1, n - k)
    return lower, upper
