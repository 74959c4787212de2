"""The cycle-rate curve: how often deals and states of a composition cycle, from small decks to full ones.

Reads atlas tables (runs of benchmarks/atlas/standard.toml and camicia.toml, or the CSV of their rows
committed as benchmarks/atlas/curve.csv), fits the rate of cycling against the deck's size for each
family and unit (deal, state), and prices a hunt for a full deck's cycle:

    python benchmarks/atlas_curve.py                        # the committed rows
    python benchmarks/atlas_curve.py runs/atlas-standard runs/atlas-camicia
    python benchmarks/atlas_curve.py RUN ... --write-csv benchmarks/atlas/curve.csv

The fit: the cycling count of each deck's row is Poisson with mean `played x rate(cards)`, the rate a
straight line on a log scale against the deck's cards ("exponential") or against log cards ("power"),
a generalised linear model (statsmodels) with `played` as the exposure. The decks of a family scatter
about any smooth curve by more than sampling alone (a deck cycles or, sporadically, does not), so the
dispersion is estimated from the data (quasi-Poisson: Pearson's chi-square over the residual degrees of
freedom, never below 1) and widens every interval. A deck with an exact row contributes that row; a
sampled deck its sample. The extrapolation to the full deck is a model: its interval is the fit's 95%
interval at 52 (or 40) cards, and the two curves' spread is a second measure of what is not known.

A hunt's price: the expected games per cycle (1 / rate) at the GPU sweep's throughput (1.23 G random
standard deals a second on one H200, a model from the compiled kernel: benchmarks/README.md, "The GPU
sweep") and an assumed price per GPU-hour; and at the CPU's (2 M a second a core, measured with
`bmn bench`) at an assumed price per vCPU-hour, two vCPUs a core.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
CURVE_CSV = HERE / "atlas" / "curve.csv"
COLUMNS = ["family", "deck", "cards", "plain", "penalty_cards", "method", "unit", "played", "cycling", "rate",
           "rate_lo", "rate_hi", "cycles", "periods", "cpu_s"]
FAMILIES = {"1:4,2:4,3:4,4:4": ("standard", 52), "1:4,2:4,3:4": ("camicia", 40)}  # penalty cards -> name, full deck
MODELS = ("exponential", "power")
GPU_GAMES_S = 1.23e9  # model: one H200, random standard deals (benchmarks/README.md, "The GPU sweep")
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
    """The atlas rows of runs (directories or URIs), or of a CSV written by --write-csv."""
    if len(sources) == 1 and sources[0].endswith(".csv"):
        return pd.read_csv(sources[0])
    from cluster.query import query

    frame = query(sources, "SELECT * FROM atlas").to_pandas()
    frame["family"] = [family_of(d) for d in frame["deck"]]
    return frame[COLUMNS]


def points(frame: pd.DataFrame, family: str, unit: str) -> pd.DataFrame:
    """One row per deck of a family: its exact row where it has one, else its sample."""
    rows = frame[(frame["family"] == family) & (frame["unit"] == unit)]
    rows = rows.sort_values(["cards", "method"])  # "exact" before "sampled"
    return rows.drop_duplicates("cards", keep="first").reset_index(drop=True)


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
    result: object  # statsmodels' GLMResults

    def _x(self, cards):
        cards = np.atleast_1d(np.asarray(cards, dtype=float))
        return np.column_stack([np.ones_like(cards), cards if self.model == "exponential" else np.log(cards)])

    def predict(self, cards) -> pd.DataFrame:
        """The fitted rate at `cards`, with its 95% interval (on the log scale, then back)."""
        frame = self.result.get_prediction(self._x(cards)).summary_frame(alpha=0.05)
        return pd.DataFrame({"cards": np.atleast_1d(cards), "rate": frame["mean"].to_numpy(),
                             "rate_lo": frame["mean_ci_lower"].to_numpy(), "rate_hi": frame["mean_ci_upper"].to_numpy()})

    @property
    def per_card(self) -> float:
        """exponential: the factor the rate changes by per card added; power: the exponent."""
        return math.exp(self.slope) if self.model == "exponential" else self.slope


def fit(frame: pd.DataFrame, family: str, unit: str, model: str = "exponential") -> Fit:
    import statsmodels.api as sm

    rows = points(frame, family, unit)
    cards = rows["cards"].to_numpy(dtype=float)
    x = np.column_stack([np.ones_like(cards), cards if model == "exponential" else np.log(cards)])
    glm = sm.GLM(rows["cycling"].to_numpy(dtype=float), x, family=sm.families.Poisson(),
                 exposure=rows["played"].to_numpy(dtype=float))
    first = glm.fit()
    dispersion = max(1.0, float(first.pearson_chi2 / max(1, first.df_resid)))
    result = glm.fit(scale=dispersion)
    return Fit(family, unit, model, float(result.params[0]), float(result.params[1]), dispersion, len(rows),
               int((rows["cycling"] > 0).sum()), result)


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


def report(frame: pd.DataFrame) -> str:
    lines = []
    for family, (name, full) in ((f, FAMILIES[p]) for p, (f, _) in FAMILIES.items()):
        if not (frame["family"] == family).any():
            continue
        for unit in ("deal", "state"):
            rows = points(frame, family, unit)
            if rows.empty:
                continue
            lines.append(f"{family}, per {unit}: {len(rows)} decks ({rows['cards'].min()}-{rows['cards'].max()} "
                         f"cards), {int(rows['cycling'].sum()):,} cycling of {int(rows['played'].sum()):,} played")
            for model in MODELS:
                f = fit(frame, family, unit, model)
                at = f.predict([full]).iloc[0]
                cost = hunt(at["rate"], at["rate_lo"], at["rate_hi"])
                shape = (f"x{f.per_card:.3f} per card" if model == "exponential" else f"cards^{f.per_card:.2f}")
                lines.append(
                    f"  {model:11s} rate {shape}, dispersion {f.dispersion:.1f}, {f.cycling_decks} of {f.decks} decks "
                    f"cycling; at {full} cards {sci(at['rate'])} [{sci(at['rate_lo'])}, {sci(at['rate_hi'])}]: "
                    f"{sci(cost.games_per_cycle[0])} {unit}s a cycle [{sci(cost.games_per_cycle[1])}, "
                    f"{sci(cost.games_per_cycle[2])}], {sci(cost.gpu_hours[0])} H200-hours "
                    f"[{sci(cost.gpu_hours[1])}, {sci(cost.gpu_hours[2])}], ${sci(cost.gpu_dollars[0])}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="*", default=[str(CURVE_CSV)], help="atlas runs, or one CSV of their rows")
    parser.add_argument("--write-csv", help="write the rows read to this CSV (benchmarks/atlas/curve.csv)")
    args = parser.parse_args(argv)
    frame = load(args.sources)
    if args.write_csv:
        frame.to_csv(args.write_csv, index=False)
    print(report(frame))
    return 0


if __name__ == "__main__":
    sys.exit(main())
