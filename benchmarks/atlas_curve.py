"""The cycle-rate curve: how often deals and states of a composition cycle, from small decks to full ones.

Reads atlas tables (runs of benchmarks/atlas/standard.toml, camicia.toml, camicia-style.toml and
two-suit.toml, or the CSV of their rows committed as benchmarks/atlas/curve.csv), fits the rate of
cycling against the deck's size for each family and unit (deal, state) where its decks cycle, bounds
it where they do not, and prices a hunt for a full deck's cycle:

    python benchmarks/atlas_curve.py                        # the committed rows
    python benchmarks/atlas_curve.py runs/atlas-standard runs/atlas-camicia ...
    python benchmarks/atlas_curve.py RUN ... --write-csv benchmarks/atlas/curve.csv   # atlas runs, `states` hunts
    python benchmarks/atlas_curve.py --markdown             # docs/atlas.md's tables

The fit: the cycling count of each deck's row is Poisson with mean `played x rate(cards)`, the rate a
straight line on a log scale against the deck's cards ("exponential") or against log cards ("power"),
a generalised linear model with `played` as the exposure, fitted by iteratively reweighted least
squares (`poisson_fit`). The decks of a family scatter about any smooth curve by more than sampling
alone (a deck cycles or, sporadically, does not), so the dispersion is estimated from the data
(quasi-Poisson: Pearson's chi-square over the residual degrees of freedom, never below 1) and widens
every interval (Wald's, on the log scale). A deck with an exact row contributes that row; a
sampled deck its sample; the decks below the first that cycles are left out (no deck that small has
a cycle at all: a threshold, not the curve), and a family with fewer than three decks that cycle
supports no curve. A family none of whose decks cycles has its full deck's rate
is then bracketed, above by that deck's own sample (the 95% bound) and below by the cycles known on
it (the states, or balanced deals, that enter them, from their backward closures, over all of the
deck's states or deals: an exact count, so a floor).

A hunt's price: the expected games per cycle (1 / rate) at the GPU sweep's throughput (1.14 G random
standard deals a second on one H200, a model from the compiled kernel: benchmarks/README.md, "The GPU
sweep") and an assumed price per GPU-hour; and at the CPU's (2 M a second a core, measured with
`bmn bench`) at an assumed price per vCPU-hour, two vCPUs a core.
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
CURVE_CSV = HERE / "atlas" / "curve.csv"
COLUMNS = ["family", "deck", "cards", "plain", "penalty_cards", "method", "unit", "played", "cycling", "rate",
           "rate_lo", "rate_hi", "cycles", "periods", "cpu_s"]
# penalty cards -> the family's name and its full deck's cards (None: a family of small decks only)
FAMILIES = {"1:4,2:4,3:4,4:4": ("standard", 52), "1:4,2:4,3:4": ("camicia", 40),
            "1:2,2:2,3:2": ("camicia-style", None), "1:2,2:2,3:2,4:2": ("two-suit", None)}
# A cycle known on each full deck (tests/helpers.py): Casella's (2024) and Zanotto's.
KNOWN = {"standard": ("Casella's", "---K---Q-KQAJ-----AAJ--J--/----------Q----KQ-J-----KA"),
         "camicia": ("Zanotto's", "--K-Q-Q-K-KJ-----KJ-/--J--Q----Q-------J-")}
MODELS = ("exponential", "power")
Z_95 = NormalDist().inv_cdf(0.975)  # a two-sided 95% interval, in standard errors
MIN_CYCLING_DECKS = 3  # a curve of two parameters and its dispersion need at least this many decks that cycle
GPU_GAMES_S = 1.14e9  # model: one H200, random standard deals (benchmarks/README.md, "The GPU sweep")
GPU_DOLLARS_H = 3.50  # assumed price of one H200-hour (cloud list prices vary, about $2-10)
CPU_GAMES_S = 2.0e6  # measured per core, `bmn bench` (the fast engine, standard deals)
CPU_DOLLARS_H = 0.04  # assumed: two vCPUs a core at $0.02 per vCPU-hour (docs/cloud.md)


def family_of(deck: str) -> str:
    """A deck's family by its penalty cards ("standard", "camicia"; the full decks by name)."""
    if deck in ("standard", "camicia"):
        return deck
    penalties = ",".join(p for p in deck.split(",") if not p.startswith("0:"))
    return FAMILIES.get(penalties, (penalties, None))[0]


def load(sources: list[str]) -> pd.DataFrame:
    """The rows of CSVs written by --write-csv, of atlas runs (their atlas tables) and of `states` runs (a
    hunt: one sampled row of its deck's random states), in the order given."""
    from cluster.runs.runmeta import read_run_config

    frames = []
    for source in sources:
        if source.endswith(".csv"):
            frames.append(pd.read_csv(source))
        elif read_run_config(source).strategy == "states":
            frames.append(hunt_row(source))
        else:
            from cluster.commands.query import query

            frame = query([source], "SELECT * FROM atlas").to_pandas()
            frame["family"] = [family_of(d) for d in frame["deck"]]
            frames.append(frame[COLUMNS])
    return pd.concat(frames, ignore_index=True)[COLUMNS]


def hunt_row(uri: str) -> pd.DataFrame:
    """A `states` run as one sampled row of its deck: the states played, those whose games cycled (with the
    exact 95% interval on their rate), its distinct cycles and their periods, its CPU time."""
    from cluster.commands.query import query
    from cluster.runs.atlas import rate_interval
    from cluster.runs.runmeta import read_run_config
    from kernels.decks import parse_deck

    config = read_run_config(uri)
    (totals,) = query([uri], "SELECT sum(deals) AS played, sum(cycles) AS cycling, sum(elapsed_s) AS cpu_s "
                             "FROM shards WHERE status = 'done'").to_pylist()
    periods = query([uri], "SELECT period_tricks || '/' || period_cards AS p FROM cycles "
                           "ORDER BY period_cards, period_tricks").column("p").to_pylist()
    deck = parse_deck(config.deck)
    played, cycling = int(totals["played"] or 0), int(totals["cycling"] or 0)
    lo, hi = rate_interval(cycling, played)
    return pd.DataFrame([dict(family=family_of(config.deck), deck=config.deck, cards=deck.total,
                              plain=deck.counts[0], penalty_cards=deck.penalty_cards, method="sampled",
                              unit="state", played=played, cycling=cycling, rate=cycling / played if played else 0.0,
                              rate_lo=lo, rate_hi=hi, cycles=len(periods), periods=", ".join(periods) or None,
                              cpu_s=round(float(totals["cpu_s"] or 0), 3))])[COLUMNS]


def points(frame: pd.DataFrame, family: str, unit: str) -> pd.DataFrame:
    """One row per deck of a family: its exact row where it has one, else its samples pooled (an atlas's
    sample and a hunt's are independent samples of the deck's random deals or states: their counts add)."""
    from cluster.runs.atlas import rate_interval

    rows = frame[(frame["family"] == family) & (frame["unit"] == unit)]
    out = []
    for _, group in rows.groupby("cards", sort=True):
        exact = group[group["method"] == "exact"]
        if not exact.empty or len(group) == 1:
            out.append((exact if not exact.empty else group).iloc[0].to_dict())
            continue
        row = group.iloc[0].to_dict()
        played, cycling = int(group["played"].sum()), int(group["cycling"].sum())
        row.update(played=played, cycling=cycling, rate=cycling / played, cycles=int(group["cycles"].sum()),
                   periods=", ".join(p for p in group["periods"] if isinstance(p, str)) or None,
                   cpu_s=float(group["cpu_s"].sum()))
        row["rate_lo"], row["rate_hi"] = rate_interval(cycling, played)
        out.append(row)
    return pd.DataFrame(out, columns=rows.columns).reset_index(drop=True)


@dataclass
class Fit:
    family: str
    unit: str
    model: str
    intercept: float
    slope: float
    dispersion: float  # the quasi-Poisson scale (1: the decks scatter no more than sampling says)
    decks: int
    cycling_decks: int
    covariance: np.ndarray  # of (intercept, slope), the dispersion included

    def _x(self, cards):
        cards = np.atleast_1d(np.asarray(cards, dtype=float))
        return np.column_stack([np.ones_like(cards), cards if self.model == "exponential" else np.log(cards)])

    def predict(self, cards) -> pd.DataFrame:
        """The fitted rate at `cards`, with its 95% interval (on the log scale, then back)."""
        x = self._x(cards)
        log_rate = x @ np.array([self.intercept, self.slope])
        spread = Z_95 * np.sqrt(np.einsum("ij,jk,ik->i", x, self.covariance, x))
        return pd.DataFrame({"cards": np.atleast_1d(cards), "rate": np.exp(log_rate),
                             "rate_lo": np.exp(log_rate - spread), "rate_hi": np.exp(log_rate + spread)})

    @property
    def per_card(self) -> float:
        """exponential: the factor the rate changes by per card added; power: the exponent."""
        return math.exp(self.slope) if self.model == "exponential" else self.slope


def fit(frame: pd.DataFrame, family: str, unit: str, model: str = "exponential") -> Fit | None:
    """The curve fitted to a family's decks from the first that cycles on (the smaller decks have no
    cycle at all: a threshold, not the curve's tail); None where fewer than MIN_CYCLING_DECKS cycle."""
    rows = points(frame, family, unit)
    if (rows["cycling"] > 0).sum() < MIN_CYCLING_DECKS:
        return None
    rows = rows[rows["cards"] >= rows.loc[rows["cycling"] > 0, "cards"].min()]  # from the first deck that cycles
    cards = rows["cards"].to_numpy(dtype=float)
    x = np.column_stack([np.ones_like(cards), cards if model == "exponential" else np.log(cards)])
    counts = rows["cycling"].to_numpy(dtype=float)
    coefficients, information, expected = poisson_fit(counts, x, rows["played"].to_numpy(dtype=float))
    pearson = float(np.sum((counts - expected) ** 2 / expected))
    dispersion = max(1.0, pearson / max(1, len(rows) - x.shape[1]))
    return Fit(family, unit, model, float(coefficients[0]), float(coefficients[1]), dispersion, len(rows),
               int((rows["cycling"] > 0).sum()), dispersion * np.linalg.inv(information))


def poisson_fit(counts: np.ndarray, x: np.ndarray, exposure: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The maximum-likelihood coefficients of a Poisson model, log(mean) = log(exposure) + x @ b, by
    iteratively reweighted least squares (Newton's method on the log-likelihood, which is concave), the
    Fisher information at them (x' W x, W the fitted means), and those fitted means."""
    offset = np.log(exposure)
    mean = counts + 0.5  # a start no count leaves at zero, as for any Poisson fit
    eta = np.log(mean)
    coefficients = np.zeros(x.shape[1])
    for _ in range(100):
        working = eta - offset + (counts - mean) / mean  # the linearised response
        information = x.T @ (mean[:, None] * x)
        updated = np.linalg.solve(information, x.T @ (mean * working))
        eta = offset + x @ updated
        mean = np.exp(eta)
        if np.max(np.abs(updated - coefficients)) <= 1e-12 * max(1.0, np.max(np.abs(updated))):
            return updated, x.T @ (mean[:, None] * x), mean
        coefficients = updated
    raise ArithmeticError("the Poisson fit did not converge in 100 iterations")


@dataclass
class Hunt:
    """What finding one cycle of a full deck costs, from a fitted rate (and its interval)."""

    games_per_cycle: tuple[float, float, float]  # expected; at the rate's upper bound; at its lower bound
    gpu_hours: tuple[float, float, float]
    gpu_dollars: tuple[float, float, float]
    cpu_core_hours: tuple[float, float, float]
    cpu_dollars: tuple[float, float, float]


def hunt(rate: float, rate_lo: float, rate_hi: float) -> Hunt:
    games = tuple(1 / r if r > 0 else math.inf for r in (rate, rate_hi, rate_lo))
    gpu = tuple(g / GPU_GAMES_S / 3600 for g in games)
    cpu = tuple(g / CPU_GAMES_S / 3600 for g in games)
    return Hunt(games, gpu, tuple(h * GPU_DOLLARS_H for h in gpu), cpu, tuple(h * CPU_DOLLARS_H for h in cpu))


def sci(value: float) -> str:
    return "inf" if not math.isfinite(value) else f"{value:.2g}" if value < 1e4 else f"{value:.1e}"


@dataclass
class Floor:
    """The cycles known on a full deck: the states and balanced deals entering them, over all of them."""

    name: str
    states: int  # entering the known cycle (its complete backward closure)
    deals: int  # balanced deals among them
    all_states: int
    all_deals: int

    def entering(self, unit: str) -> int:
        return self.deals if unit == "deal" else self.states

    def out_of(self, unit: str) -> int:
        return self.all_deals if unit == "deal" else self.all_states

    def rate(self, unit: str) -> float:
        return self.entering(unit) / self.out_of(unit)


@functools.cache  # a closure search: the report and the tables ask per unit
def floor(family: str) -> Floor | None:
    """The known cycle's closure on the family's full deck (kernels/backward.py), counted exactly."""
    if family not in KNOWN:
        return None
    from kernels.backward import closure
    from kernels.dealspace import _multinomial
    from kernels.decks import parse_deck
    from kernels.notation import parse_deal

    name, deal = KNOWN[family]
    found = closure(parse_deal(deal), max_states=10**7)
    if found.truncated:
        return None
    deck = parse_deck(family)
    orders = _multinomial(deck.counts)
    return Floor(name, found.states, len(found.deals), orders * (deck.total - 1), orders)


def _cost(cost: Hunt, unit: str) -> str:
    return (f"{sci(cost.games_per_cycle[0])} {unit}s a cycle, {sci(cost.gpu_hours[0])} H200-hours "
            f"(${sci(cost.gpu_dollars[0])}), {sci(cost.cpu_core_hours[0])} core-hours (${sci(cost.cpu_dollars[0])})")


def report(frame: pd.DataFrame) -> str:
    """Each family and unit: its decks and games, the fitted curves (or, where none cycles, the bracket
    on its full deck's rate) and what a hunt on its full deck costs."""
    lines = []
    for name, full in FAMILIES.values():
        for unit in ("deal", "state"):
            rows = points(frame, name, unit)
            if rows.empty:
                continue
            lines.append(f"{name}, per {unit}: {len(rows)} decks ({rows['cards'].min()}-{rows['cards'].max()} cards), "
                         f"{int(rows['cycling'].sum()):,} cycling of {int(rows['played'].sum()):,} played, "
                         f"{int((rows['cycling'] > 0).sum())} decks cycling")
            fits = {model: fit(frame, name, unit, model) for model in MODELS}
            for model, f in fits.items():
                if f is None:
                    continue
                target = full or int(rows["cards"].max())
                at = f.predict([target]).iloc[0]
                shape = f"x{f.per_card:.3f} per card" if model == "exponential" else f"cards^{f.per_card:.2f}"
                line = (f"  {model} fit: rate {shape}, dispersion {f.dispersion:.1f}; at {target} cards "
                        f"{sci(at['rate'])} [{sci(at['rate_lo'])}, {sci(at['rate_hi'])}]")
                if full:
                    line += ": " + _cost(hunt(at["rate"], at["rate_lo"], at["rate_hi"]), unit)
                lines.append(line)
            if 0 < (rows["cycling"] > 0).sum() < MIN_CYCLING_DECKS:
                lines.append(f"  fewer than {MIN_CYCLING_DECKS} decks cycle: no curve to fit")
            elif not (rows["cycling"] > 0).any():
                lines.append("  no deck cycles: no curve to fit")
            if full and fits["exponential"] is None:  # the full deck's rate bracketed instead
                own = rows[rows["cards"] == full]
                if not own.empty:
                    bound = float(own["rate_hi"].iloc[0])
                    lines.append(f"  at {full} cards the rate is below {sci(bound)} "
                                 f"(95%, {int(own['played'].iloc[0]):,} played): a hunt needs at least "
                                 + _cost(hunt(bound, bound, bound), unit))
                known = floor(name)
                if known is not None:
                    rate = known.rate(unit)
                    lines.append(f"  {known.name} cycle: {known.entering(unit):,} {unit}s of {sci(known.out_of(unit))} "
                                 f"enter it, so the rate is at least {sci(rate)}: a hunt needs at most "
                                 + _cost(hunt(rate, rate, rate), unit))
    return "\n".join(lines)


def markdown(frame: pd.DataFrame) -> str:
    """docs/atlas.md's two tables: the fitted curves, and each full deck's rate (fitted, or bracketed)
    with what a hunt for a cycle costs."""
    fits = ["| family | unit | decks fitted (cycling) | exponential: rate per card added | power: exponent "
            "| dispersion | at the full deck (or its largest) [95%] |",
            "| --- | --- | --- | ---: | ---: | ---: | --- |"]
    hunts = ["| full deck | per | rate fitted [95%] | rate below (95%, its sample) | rate at least (known cycle) "
             "| games a cycle | H200-hours a cycle (model) | dollars at $3.50 an H200-hour (assumed) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, full in FAMILIES.values():
        for unit in ("deal", "state"):
            rows = points(frame, name, unit)
            exp, power = fit(frame, name, unit, "exponential"), fit(frame, name, unit, "power")
            if exp is not None:
                top = full or int(rows["cards"].max())
                at = exp.predict([top]).iloc[0]
                fits.append(f"| {name} | {unit} | {exp.decks} ({exp.cycling_decks}) | x{exp.per_card:.3f} "
                            f"| {power.per_card:.1f} | {exp.dispersion:.1f} | {top} cards: {sci(at['rate'])} "
                            f"[{sci(at['rate_lo'])}, {sci(at['rate_hi'])}] |")
            known = floor(name) if full else None
            own = rows[rows["cards"] == full] if full else rows.iloc[0:0]
            if known is None or own.empty:
                continue
            bound, floor_rate = float(own["rate_hi"].iloc[0]), known.rate(unit)
            if exp is not None:  # expected at the fitted rate, the range from its interval
                at = exp.predict([full]).iloc[0]
                fitted = f"{sci(at['rate'])} [{sci(at['rate_lo'])}, {sci(at['rate_hi'])}]"
                cost = hunt(at["rate"], at["rate_lo"], at["rate_hi"])
                span = [f"{sci(v[0])} [{sci(v[1])}, {sci(v[2])}]" for v in
                        (cost.games_per_cycle, cost.gpu_hours, cost.gpu_dollars)]
            else:  # between the bounds
                fitted = "no curve"
                low, high = hunt(bound, bound, bound), hunt(floor_rate, floor_rate, floor_rate)
                span = [f"{sci(a[0])} to {sci(b[0])}" for a, b in
                        ((low.games_per_cycle, high.games_per_cycle), (low.gpu_hours, high.gpu_hours),
                         (low.gpu_dollars, high.gpu_dollars))]
            hunts.append(f"| {name} | {unit} | {fitted} | {sci(bound)} ({int(own['played'].iloc[0]):,}) "
                         f"| {sci(floor_rate)} ({known.name}: {known.entering(unit):,} of {sci(known.out_of(unit))}) "
                         f"| {span[0]} | {span[1]} | {span[2]} |")
    return "\n".join(fits) + "\n\n" + "\n".join(hunts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="*", default=[str(CURVE_CSV)], help="atlas runs, or one CSV of their rows")
    parser.add_argument("--write-csv", help="write the rows read to this CSV (benchmarks/atlas/curve.csv)")
    parser.add_argument("--markdown", action="store_true", help="docs/atlas.md's tables of the fits and the hunts")
    args = parser.parse_args(argv)
    frame = load(args.sources)
    if args.write_csv:
        frame.to_csv(args.write_csv, index=False)
    print(markdown(frame) if args.markdown else report(frame))
    return 0


if __name__ == "__main__":
    sys.exit(main())
