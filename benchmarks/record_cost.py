"""What the record costs: the exponential tail of random games' lengths, fitted, and a game longer than
8,344 cards priced (../README.md, "What a search costs"; benchmarks/README.md, "What the record costs").

    python benchmarks/record_cost.py [--deals N] [--seed S] [--shard-size M] [--lo L] [--hi H]
    python benchmarks/record_cost.py RUN [RUN ...] [--lo L] [--hi H]

Without a run it plays N uniformly random standard deals itself on this process's one core: the
streams (seed, 0), (seed, 1), ... in shards of M deals, the deals `bmn search --strategy random
--seed S --shard-size M --deals N` plays, so the same histogram. Given runs (directories or s3://
URIs of `random` runs of the standard deck), it reads their merged histogram.parquet instead.

**The fit.** Beyond `lo` cards the chance that a game lasts more than L cards is modelled as
P(X > L) = pi * q^(L - lo): pi = P(X > lo), and each further card makes a game q times as rare (its
scale, -1 / ln q cards, the cards that make a game e times rarer). Game lengths are whole cards, so
the lengths beyond `lo` are geometric; games longer than `hi` (when given) count as censored. Both
parameters by maximum likelihood (closed forms); the 95% intervals by profile likelihood (the
log-likelihood within chi2(1, 0.95) / 2 = 1.92 of its maximum), for the scale and for P(X > 8344).
The intervals are statistical only: they assume the tail stays exponential out to 8,344 cards, far
beyond the data. The fits from other starting points (`lo`) and over windows show how far the
scale drifts with the length, which the interval does not include.

**The price.** A game longer than 8,344 cards expects 1 / P(X > 8344) random deals (geometric
waiting), priced at the README's rates: one CPU core at 2 M random deals a second (measured, `bmn
bench`), one H200 at 1.14 G deals a second (a model: benchmarks/README.md, "The GPU sweep"), $0.04 a
core-hour (two vCPUs at an assumed $0.02) and $3.50 an H200-hour (assumed). The rate this process
(or the runs' shards) measured is printed beside them.

**The strategies.** climb and longest add climbed deals to their histograms, so their histograms are
no sample of random deals and are not fitted. Their measured curves (benchmarks/longest_growth.csv:
the longest game against CPU time, 3 seeds each at 30 CPU-minutes) are compared with what random
deals reach in the same CPU time by the fit: a strategy ahead by D cards does the work of e^(D /
scale) times as many random deals, if the lead held out to the record.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

RECORD = 8344                 # cards of the longest known finite game (Nessler 2022; README.md)
CPU_RATE = 2.0e6              # random standard deals a second on one core: measured (`bmn bench`, README.md)
GPU_RATE = 1.14e9             # random standard deals a second on one H200: a model (benchmarks/README.md)
CORE_HOUR = 0.04              # $ a core-hour: two vCPUs at an assumed $0.02 (README.md, docs/cloud.md)
GPU_HOUR = 3.50               # $ an H200-hour: assumed (README.md)
HALF_CHI2 = 1.920729410347062  # chi2(1 degree of freedom, 0.95) / 2: the profile likelihood's 95% drop
GROWTH_CSV = Path(__file__).resolve().parent / "longest_growth.csv"
CAMPAIGN = Path(__file__).resolve().parent.parent / "configs" / "record.toml"  # the campaign config it prices
# The runs' shard sizes in longest_growth.csv (benchmarks/README.md, "30 CPU-minutes on 2 cores": its commands):
# one row a shard done, so a row's random deals are its rank times its strategy's shard size.
GROWTH_SHARDS = {"random": 20_000_000, "climb": 20_000_000, "longest": 40_000_000}
CHECKPOINTS = (60, 120, 300, 600, 1200, 1700)  # CPU seconds at which the strategies' curves are compared
EULER_GAMMA = 0.5772156649015329


def _log1mexp(x: float) -> float:
    """log(1 - e^x) for x < 0, accurately."""
    return math.log(-math.expm1(x)) if x > -0.693 else math.log1p(-math.exp(x))


def _odds(x: float) -> float:
    """e^x / (1 - e^x) for x < 0: the derivative of -log(1 - e^x)."""
    return 1.0 / math.expm1(-x)


def _bisect(f, lo: float, hi: float, steps: int = 200) -> float:
    """The root of f, which changes sign from lo to hi (f(lo) and f(hi) of opposite signs)."""
    f_lo = f(lo)
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        f_mid = f(mid)
        if (f_mid > 0) == (f_lo > 0):
            lo, f_lo = mid, f_mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _interval(f, at: float) -> tuple[float, float]:
    """The roots of f on either side of `at` < 0, where f(at) > 0: f is concave in a log-probability, falls
    below 0 going down (found by doubling steps) and towards 0 (at * 1e-6, a probability near 1)."""
    step = 1e-3 * abs(at)
    while f(at - step) > 0:
        step *= 2
    return _bisect(f, at - step, at), _bisect(f, at, at * 1e-6)


@dataclass(frozen=True)
class TailFit:
    """The exponential tail beyond `lo` cards of a histogram of finite games (up to `hi`: censored beyond).

    games: finite games in all (N); over: games longer than lo (n0); inside: those of them no longer than
    hi (all of them when hi is None); excess: the sum over those of (cards - lo - 1), plus (hi - lo) for
    each game longer than hi. The log-likelihood, with a = ln pi and u = ln q:
        over * a + (games - over) * ln(1 - e^a) + inside * ln(1 - e^u) + excess * u."""

    lo: int
    hi: int | None
    games: int
    over: int
    inside: int
    excess: int
    longest: int

    @property
    def log_pi(self) -> float:
        return math.log(self.over / self.games)

    @property
    def log_q(self) -> float:
        return math.log(self.excess / (self.inside + self.excess))

    @property
    def scale(self) -> float:
        """Cards that make a game e times rarer: -1 / ln q."""
        return -1.0 / self.log_q

    def _binomial(self, a: float) -> float:
        return self.over * a + (self.games - self.over) * _log1mexp(a)

    def _geometric(self, u: float) -> float:
        return self.inside * _log1mexp(u) + self.excess * u

    def _d_binomial(self, a: float) -> float:
        return self.over - (self.games - self.over) * _odds(a)

    def _d_geometric(self, u: float) -> float:
        return self.excess - self.inside * _odds(u)

    def scale_interval(self) -> tuple[float, float]:
        """The scale's 95% interval by profile likelihood (the geometric part alone holds q)."""
        top = self._geometric(self.log_q)

        def f(u):
            return self._geometric(u) - top + HALF_CHI2

        u_lo, u_hi = _interval(f, self.log_q)
        return -1.0 / u_lo, -1.0 / u_hi

    def log_survival(self, cards: int) -> float:
        """ln P(X > cards) by the fit (cards >= lo)."""
        return self.log_pi + (cards - self.lo) * self.log_q

    def _profile(self, g: float, k: int) -> float:
        """The largest log-likelihood with ln pi + k ln q = g (k > 0): over u, with a = g - k u < 0 and u < 0."""
        def slope(u):
            return -k * self._d_binomial(g - k * u) + self._d_geometric(u)

        lo, hi = g / k, 0.0  # a < 0 needs u > g / k; the log-likelihood is concave in u
        eps = 1e-12 * max(1.0, abs(lo))
        u = _bisect(slope, lo + eps, hi - eps)
        return self._binomial(g - k * u) + self._geometric(u)

    def survival_interval(self, cards: int) -> tuple[float, float, float]:
        """(estimate, low, high) of P(X > cards), the interval by profile likelihood over (pi, q)."""
        k = cards - self.lo
        g_hat = self.log_survival(cards)
        if k == 0:  # pi alone
            top = self._binomial(self.log_pi)

            def f(a):
                return self._binomial(a) - top + HALF_CHI2
        else:
            top = self._binomial(self.log_pi) + self._geometric(self.log_q)

            def f(g):
                return self._profile(g, k) - top + HALF_CHI2
        low, high = _interval(f, g_hat)
        return math.exp(g_hat), math.exp(low), math.exp(high)

    def expected_longest(self, deals: float) -> float:
        """The mean longest game of `deals` random deals by the fit: the longest of a continuous exponential tail
        follows a Gumbel law of scale `scale` with its mode where deals * P(X > L) = 1 and its mean EULER_GAMMA
        scales beyond; whole cards round it up (+ 1/2). Valid where that mode is well beyond lo."""
        return self.lo + (self.log_pi + math.log(deals) + EULER_GAMMA) * self.scale + 0.5

    @property
    def longest_sd(self) -> float:
        """The spread (standard deviation) of the longest game of many random deals: pi / sqrt(6) scales."""
        return math.pi / math.sqrt(6) * self.scale


def fit_tail(histogram: np.ndarray, lo: int, hi: int | None = None) -> TailFit:
    """The maximum-likelihood exponential tail of `histogram` (finite games by cards) beyond `lo` cards."""
    histogram = np.asarray(histogram, dtype=np.int64)
    cards = np.arange(len(histogram))
    if hi is not None and hi <= lo:
        raise ValueError(f"the fit's range needs lo < hi, got {lo} and {hi}")
    beyond = cards > lo
    inside = beyond if hi is None else beyond & (cards <= hi)
    over = int(histogram[beyond].sum())
    n_inside = int(histogram[inside].sum())
    censored = over - n_inside
    excess = int((histogram[inside] * (cards[inside] - lo - 1)).sum()) + censored * ((hi or lo) - lo)
    nonzero = np.nonzero(histogram)[0]
    if n_inside < 2 or excess == 0 or over == histogram.sum():
        raise ValueError(f"too few games beyond {lo} cards to fit a tail ({over} of {int(histogram.sum())})")
    return TailFit(lo=lo, hi=hi, games=int(histogram.sum()), over=over, inside=n_inside, excess=excess,
                   longest=int(nonzero[-1]))


@dataclass(frozen=True)
class Price:
    """What drawing one game longer than the record costs, at P(X > record) = p."""

    p: float
    cpu_rate: float = CPU_RATE
    gpu_rate: float = GPU_RATE
    core_hour: float = CORE_HOUR
    gpu_hour: float = GPU_HOUR

    @property
    def deals(self) -> float:
        """The expected random deals to draw one (geometric waiting): 1 / p."""
        return 1.0 / self.p

    @property
    def core_hours(self) -> float:
        return self.deals / self.cpu_rate / 3600

    @property
    def gpu_hours(self) -> float:
        return self.deals / self.gpu_rate / 3600

    @property
    def cpu_dollars(self) -> float:
        return self.core_hours * self.core_hour

    @property
    def gpu_dollars(self) -> float:
        return self.gpu_hours * self.gpu_hour

    def chance(self, core_hours: float) -> float:
        """The chance that `core_hours` of random deals draw at least one (Poisson)."""
        return -math.expm1(-core_hours * 3600 * self.cpu_rate * self.p)


def play_histogram(deals: int, seed: int, shard_size: int) -> tuple[np.ndarray, float]:
    """The histogram of `deals` random standard deals played here, as `bmn search --strategy random` plays
    them (streams (seed, k) in shards of shard_size), and the CPU seconds it took (compilation excluded)."""
    from kernels.dealspace import DealSpace
    from kernels.decks import parse_deck
    from kernels.sweep import run_random
    from kernels.tally import HIST_BINS

    space = DealSpace.of(parse_deck("standard"), players=2)
    run_random(space, seed, 0, 16, min_cards=10**6)  # compile, or load the cache
    histogram = np.zeros(HIST_BINS, dtype=np.int64)
    start = time.process_time()
    for shard, first in enumerate(range(0, deals, shard_size)):
        histogram += run_random(space, seed, shard, min(shard_size, deals - first), min_cards=10**6).histogram
    return histogram, time.process_time() - start


def run_histogram(runs: list[str]) -> tuple[np.ndarray, int, float]:
    """The merged histogram of random runs of the standard deck, their deals and their shards' seconds."""
    from cluster.commands.query import query
    from cluster.runs.runmeta import read_run_config
    from kernels.decks import parse_deck
    from kernels.tally import HIST_BINS

    for run in runs:
        config = read_run_config(run)
        equal = config.split is None or tuple(config.split) == (26, 26)
        if config.strategy != "random" or parse_deck(config.deck) != parse_deck("standard") or \
                config.players != 2 or not equal:
            raise SystemExit(f"{run} is a {config.strategy} run of {config.deck} with {config.players} players: only "
                             f"random runs of the standard deck, 26/26, sample the lengths of random standard deals")
    rows = query(runs, "SELECT cards, games FROM histogram").to_pylist()
    histogram = np.zeros(max([HIST_BINS] + [r["cards"] + 1 for r in rows]), dtype=np.int64)
    for row in rows:
        histogram[row["cards"]] += row["games"]
    [shards] = query(runs, "SELECT sum(deals) AS deals, sum(elapsed_s) AS seconds FROM shards "
                           "WHERE status = 'done'").to_pylist()
    return histogram, int(shards["deals"] or 0), float(shards["seconds"] or 0.0)


def _growth_runs(path: Path) -> dict[tuple[str, str], list[tuple[float, int]]]:
    """longest_growth.csv by (strategy, seed): its rows (CPU seconds of the shards done, longest game by then)."""
    runs: dict[tuple[str, str], list[tuple[float, int]]] = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            runs.setdefault((row["strategy"], row["seed"]), []).append((float(row["cpu_s"]), int(row["longest"])))
    return runs


def growth_means(path: Path = GROWTH_CSV) -> dict[str, list[float]]:
    """Per strategy, the mean over its runs of the longest game found within each of CHECKPOINTS CPU seconds."""
    runs = _growth_runs(path)
    means: dict[str, list[float]] = {}
    for strategy in dict.fromkeys(s for s, _ in runs):
        mine = [rows for (s, _), rows in runs.items() if s == strategy]
        means[strategy] = [sum(max([length for t, length in rows if t <= at], default=0) for rows in mine) / len(mine)
                           for at in CHECKPOINTS]
    return means


def growth_comparison(fit: TailFit, path: Path = GROWTH_CSV) -> list[dict]:
    """Per strategy of longest_growth.csv: its runs' random deals per CPU-second, their mean longest game at
    their last CPU time, beside the mean longest game of random deals in that CPU time by the fit (at the
    random runs' own rate), the lead in cards, its standard error (the longest game's Gumbel spread, over
    the runs) and what the lead is worth in random deals, e^(lead / scale)."""
    runs = _growth_runs(path)

    def rate(strategy: str) -> float:
        mine = [rows for (s, _), rows in runs.items() if s == strategy]
        return sum(len(rows) * GROWTH_SHARDS[strategy] for rows in mine) / sum(rows[-1][0] for rows in mine)

    random_rate = rate("random")
    out = []
    for strategy in dict.fromkeys(s for s, _ in runs):
        finals = [rows[-1] for (s, _), rows in runs.items() if s == strategy]
        cpu_s = sum(t for t, _ in finals) / len(finals)
        measured = sum(length for _, length in finals) / len(finals)
        expected = fit.expected_longest(cpu_s * random_rate)
        lead = measured - expected
        out.append(dict(strategy=strategy, runs=len(finals), rate=rate(strategy), cpu_s=cpu_s, measured=measured,
                        expected=expected, lead=lead, se=fit.longest_sd / math.sqrt(len(finals)),
                        worth=math.exp(lead / fit.scale)))
    return out


def _sci(x: float) -> str:
    mantissa, exponent = f"{x:.2e}".split("e")
    return f"{mantissa} x 10^{int(exponent)}"


def _money(x: float) -> str:
    if x >= 1e6:
        return f"${x / 1e6:,.2f} M"
    return f"${x:,.0f}"


def report(histogram: np.ndarray, lo: int, hi: int | None, rate: tuple[float, str] | None,
           cpu_rate: float = CPU_RATE, growth: Path | None = GROWTH_CSV) -> TailFit:
    """Print the fit, its checks, the price and the strategies' comparison as markdown; the headline fit."""
    fit = fit_tail(histogram, lo, hi)
    s_lo, s_hi = fit.scale_interval()
    p, p_lo, p_hi = fit.survival_interval(RECORD)
    span = f"({lo}, {hi}]" if hi is not None else f"more than {lo}"
    print(f"{fit.games:,} finite random games; {fit.over:,} of them longer than {lo} cards "
          f"(P(X > {lo}) = {fit.over / fit.games:.3e}); the longest {fit.longest} cards")
    if rate is not None:
        print(f"measured here: {rate[0] / 1e6:.2f} M random deals a second on one core ({rate[1]})")
    print(f"\nfit over games of {span} cards (maximum likelihood, geometric lengths; "
          f"95% profile-likelihood intervals):")
    print(f"  scale {fit.scale:.1f} cards (95%: {s_lo:.1f}-{s_hi:.1f}): each {fit.scale:.0f} cards make a game "
          f"e times rarer")
    print(f"  P(X > {RECORD}) = {_sci(p)} (95%: {_sci(p_lo)} to {_sci(p_hi)}), assuming the tail stays exponential "
          f"out to {RECORD} cards")

    print("\nthe scale by starting point and window (the drift the interval leaves out):\n")
    print(f"| games | games fitted | scale, cards (95%) | P(X > {RECORD}) |")
    print("| --- | ---: | ---: | ---: |")
    checks = [(a, None) for a in (500, 1000, 1500, 2000, 2500)] + \
             [(a, a + 500) for a in (500, 1000, 1500, 2000)]
    for a, b in checks:
        try:
            f = fit_tail(histogram, a, b)
        except ValueError:
            continue
        c_lo, c_hi = f.scale_interval()
        window = f"({a}, {b}]" if b is not None else f"> {a}"
        extrapolated = _sci(math.exp(f.log_survival(RECORD))) if b is None else "-"
        print(f"| {window} | {f.inside:,} | {f.scale:.1f} ({c_lo:.1f}-{c_hi:.1f}) | {extrapolated} |")

    prices = [Price(x, cpu_rate=cpu_rate) for x in (p, p_hi, p_lo)]  # estimate, cheapest, dearest
    print(f"\nthe price of one game longer than {RECORD} cards (estimate; 95% interval from P's):\n")
    print("| | estimate | 95% interval |")
    print("| --- | ---: | ---: |")
    for name, value, money in (
            ("random deals expected (1 / P)", lambda x: x.deals, _sci),
            (f"CPU core-hours at {cpu_rate / 1e6:g} M deals/s a core (measured, `bmn bench`)",
             lambda x: x.core_hours, _sci),
            (f"dollars at ${CORE_HOUR} a core-hour (assumed)", lambda x: x.cpu_dollars, _money),
            (f"H200-hours at {GPU_RATE / 1e9:g} G deals/s (**model**)", lambda x: x.gpu_hours, _sci),
            (f"dollars at ${GPU_HOUR:.2f} an H200-hour (assumed)", lambda x: x.gpu_dollars, _money)):
        print(f"| {name} | {money(value(prices[0]))} | {money(value(prices[1]))} to {money(value(prices[2]))} |")
    print("\nthe chance that a campaign of random deals on CPUs draws one (estimate):\n")
    print("| core-hours | dollars (assumed) | expected longest, cards | chance of a game > 8,344 |")
    print("| ---: | ---: | ---: | ---: |")
    for hours in (1e3, 1e4, 1e5, 1e6):
        longest = fit.expected_longest(hours * 3600 * cpu_rate)
        print(f"| {hours:,.0f} | {_money(hours * CORE_HOUR)} | {longest:,.0f} | {prices[0].chance(hours):.1e} |")

    rows: list[dict] = []
    if growth is not None and growth.exists():
        rows = growth_comparison(fit, growth)
        print(f"\nthe strategies at equal CPU time ({growth.name}): the mean over each strategy's runs of the longest "
              f"game by then, cards\n")
        print("| strategy | " + " | ".join(f"{t:,} CPU-s" for t in CHECKPOINTS) + " |")
        print("| --- |" + " ---: |" * len(CHECKPOINTS))
        for strategy, means in growth_means(growth).items():
            print(f"| {strategy} | " + " | ".join(f"{m:,.0f}" for m in means) + " |")
        print("\nat their last CPU time, beside random deals by the fit at the random runs' rate; a lead of D cards "
              "does the work of e^(D / scale) times the random deals, and would divide the record's core-hours by "
              "as much if it held out to the record:\n")
        print("| strategy | runs | random deals per CPU-s | CPU-s | longest | random by the fit "
              "| lead, cards (SE) | worth in random deals (lead +- 1.96 SE) | the record: core-hours, dollars |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for r in rows:
            low, high = (math.exp((r["lead"] + z * r["se"]) / fit.scale) for z in (-1.96, 1.96))
            worth = f"x{r['worth']:.2g} ({low:.2g}-{high:.2g})"
            hours = prices[0].core_hours / r["worth"]
            record = "- (the fit's check)" if r["strategy"] == "random" else \
                f"{_sci(hours)}, {_money(hours * CORE_HOUR)}"
            print(f"| {r['strategy']} | {r['runs']} | {r['rate'] / 1e6:.2f} M | {r['cpu_s']:,.0f} "
                  f"| {r['measured']:,.0f} | {r['expected']:,.0f} | {r['lead']:+,.0f} ({r['se']:.0f}) | {worth} "
                  f"| {record} |")
    if CAMPAIGN.exists():
        campaign = tomllib.loads(CAMPAIGN.read_text())
        deals, hours = campaign["deals"], campaign["deals"] / cpu_rate / 3600
        worth = next((r["worth"] for r in rows if r["strategy"] == campaign["strategy"]), 1.0)
        chance = -math.expm1(-deals * p)
        print(f"\n{CAMPAIGN.parent.name}/{CAMPAIGN.name}: {campaign['strategy']}, {_sci(deals)} random deals: "
              f"{hours:,.0f} core-hours at {cpu_rate / 1e6:g} M deals/s a core, {_money(hours * CORE_HOUR)}; by the "
              f"fit, the longest of that many random deals {fit.expected_longest(deals):,.0f} cards (+- "
              f"{fit.longest_sd:.0f}) and a game longer than {RECORD} with chance {chance:.1e} "
              f"({-math.expm1(-deals * p * worth):.1e} if {campaign['strategy']}'s lead held: x{worth:.2g})")
    return fit


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", help="random runs of the standard deck to read (none: play deals here)")
    parser.add_argument("--deals", type=int, default=300_000_000, help="random deals to play here (default 3 x 10^8)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--shard-size", type=int, default=1_000_000)
    parser.add_argument("--lo", type=int, default=1500, help="fit games longer than this many cards (default 1500)")
    parser.add_argument("--hi", type=int, default=None, help="games longer than this count as censored (default none)")
    parser.add_argument("--cpu-rate", type=float, default=CPU_RATE,
                        help="random deals a second on one core to price at (default 2e6, README's `bmn bench`)")
    args = parser.parse_args(argv)
    if args.runs:
        histogram, deals, seconds = run_histogram(args.runs)
        rate = (deals / seconds, f"{deals:,} deals in {seconds:,.0f} s of the runs' shards") if seconds else None
    else:
        histogram, seconds = play_histogram(args.deals, args.seed, args.shard_size)
        rate = (args.deals / seconds, f"{args.deals:,} deals in {seconds:,.0f} CPU-s, seed {args.seed}") \
            if seconds > 0 else None
    report(histogram, args.lo, args.hi, rate, cpu_rate=args.cpu_rate)


if __name__ == "__main__":
    main()
