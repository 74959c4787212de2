"""The cycle-rate curve (benchmarks/atlas_curve.py): the fit recovers a known rate, its interval widens
with the decks' scatter, a hunt is priced from it, and the committed rows of the two families
(benchmarks/atlas/curve.csv) are those of atlas tables, every full deck's row among them, and docs/atlas.md's tables
are what the script prints from them."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cluster.runs.atlas import rate_interval

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import atlas_curve  # noqa: E402


def synthetic(rate_at, cards, played, seed=0, family="standard", unit="deal", method="sampled"):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"family": family, "deck": [f"0:{c - 16},1:4,2:4,3:4,4:4" for c in cards], "cards": cards,
                         "method": method, "unit": unit, "played": played,
                         "cycling": [rng.poisson(p * rate_at(c)) for c, p in zip(cards, played)]})


def test_the_fit_recovers_a_known_exponential_rate_and_its_interval_holds_it():
    cards = np.arange(16, 40, 2)
    truth = lambda c: 1e-3 * math.exp(-0.3 * (c - 16))  # noqa: E731
    frame = synthetic(truth, cards, [10**9] * len(cards))
    f = atlas_curve.fit(frame, "standard", "deal", "exponential")
    assert f.per_card == pytest.approx(math.exp(-0.3), rel=0.02) and f.decks == len(cards)
    at = f.predict([52]).iloc[0]
    assert at["rate_lo"] < truth(52) < at["rate_hi"] and at["rate_lo"] < at["rate"] < at["rate_hi"]
    assert f.dispersion == pytest.approx(1, abs=1)  # Poisson data: no more scatter than sampling


def test_decks_that_scatter_widen_the_interval():
    cards = np.arange(16, 40, 2)
    steady = synthetic(lambda c: 1e-5, cards, [10**8] * len(cards))
    sporadic = steady.copy()
    sporadic.loc[::2, "cycling"] = 0  # every other deck never cycles
    sporadic.loc[1::2, "cycling"] *= 2
    calm, wild = (atlas_curve.fit(f, "standard", "deal") for f in (steady, sporadic))
    assert wild.dispersion > 10 and calm.dispersion < 3
    width = lambda f: np.log(f.predict([52]).iloc[0]["rate_hi"] / f.predict([52]).iloc[0]["rate_lo"])  # noqa: E731
    assert width(wild) > 3 * width(calm)


def test_a_deck_counts_once_its_exact_row_first():
    exact = synthetic(lambda c: 1e-4, [16, 18], [10**7, 10**7], method="exact")
    sampled = synthetic(lambda c: 1e-4, [18, 20], [10**6, 10**6], seed=1)
    rows = atlas_curve.points(pd.concat([sampled, exact]), "standard", "deal")
    assert list(rows["cards"]) == [16, 18, 20] and list(rows["method"]) == ["exact", "exact", "sampled"]
    assert atlas_curve.points(exact, "standard", "state").empty


def test_a_hunt_is_priced_from_the_rate_and_its_bounds():
    cost = atlas_curve.hunt(1e-12, 1e-13, 1e-11)
    assert cost.games_per_cycle == (1e12, 1e11, 1e13)  # expected; at the upper bound; at the lower
    assert cost.gpu_hours[0] == pytest.approx(1e12 / atlas_curve.GPU_GAMES_S / 3600)
    assert cost.gpu_dollars[0] == pytest.approx(cost.gpu_hours[0] * atlas_curve.GPU_DOLLARS_H)
    assert cost.cpu_dollars[2] == pytest.approx(1e13 / atlas_curve.CPU_GAMES_S / 3600 * atlas_curve.CPU_DOLLARS_H)
    assert atlas_curve.hunt(1e-12, 0.0, 1e-11).games_per_cycle[2] == math.inf  # no lower bound: no upper cost


def test_the_families_of_decks():
    assert [atlas_curve.family_of(d) for d in ("0:8,1:4,2:4,3:4,4:4", "standard", "0:2,1:4,2:4,3:4", "camicia",
                                               "1:4,2:4,3:4")] == ["standard"] * 2 + ["camicia"] * 3
    assert atlas_curve.family_of("0:2,1:2,2:2,3:2") == "camicia-style"
    assert atlas_curve.family_of("0:2,1:3,2:3") == "1:3,2:3"


def test_a_family_without_a_cycling_deck_has_no_curve():
    assert atlas_curve.fit(synthetic(lambda c: 0.0, [16, 18, 20], [10**6] * 3), "standard", "deal") is None


def test_the_floor_is_the_known_cycles_closure_over_the_whole_deck():
    """Casella's cycle on the standard deck, Zanotto's on the Camicia deck: the states and balanced deals
    entering them, from complete closures, over all states (every split) and all balanced deals."""
    from kernels.dealspace import DealSpace
    from kernels.decks import parse_deck

    standard, camicia = atlas_curve.floor("standard"), atlas_curve.floor("camicia")
    assert (standard.states, standard.deals, camicia.states, camicia.deals) == (2670, 30, 1215, 90)
    assert standard.all_deals == DealSpace.of(parse_deck("standard")).count == 653_534_134_886_878_245_000
    assert standard.all_states == standard.all_deals * 51 and camicia.all_states == camicia.all_deals * 39
    assert camicia.rate("deal") == 90 / camicia.all_deals and atlas_curve.floor("two-suit") is None


def test_the_committed_rows_are_the_families_small_to_full():
    frame = pd.read_csv(atlas_curve.CURVE_CSV)
    assert list(frame.columns) == atlas_curve.COLUMNS
    for family, full, first in (("standard", 52, 16), ("camicia", 40, 12)):
        rows = frame[frame["family"] == family]
        assert set(rows["cards"]) == set(range(first, full + 1, 2))
        assert {(m, u) for m, u in zip(rows["method"], rows["unit"])} >= {("exact", "deal"), ("sampled", "deal"),
                                                                           ("sampled", "state")}
        assert (rows[rows["cards"] == full]["method"] == "sampled").all()
        sampled = rows[rows["method"] == "sampled"]
        assert (sampled["rate_lo"] <= sampled["rate"]).all() and (sampled["rate"] <= sampled["rate_hi"]).all()
        assert (sampled["rate_hi"] > 0).all() and (sampled["played"] > 10**8).all()
        assert [rate_interval(c, p) for c, p in zip(sampled["cycling"], sampled["played"])] == \
               list(zip(sampled["rate_lo"], sampled["rate_hi"]))  # as the atlas table gives them
    # each full deck's states hunt of 2 x 10^10 (docs/atlas.md)
    for family, full in (("standard", 52), ("camicia", 40)):
        hunts = frame[(frame["family"] == family) & (frame["cards"] == full) & (frame["unit"] == "state")
                      & (frame["played"] >= 2 * 10**10)]
        assert len(hunts) == 1 and hunts["cpu_s"].iloc[0] > 0, family
    for family in ("camicia-style", "two-suit"):  # the families of two of each value, whose decks cycle
        rows = frame[frame["family"] == family]
        assert (rows["method"] == "exact").all() and (rows["cycling"] > 0).sum() >= 3
    text = atlas_curve.report(frame)  # what `python benchmarks/atlas_curve.py` prints (test_benchmarks runs it)
    for family in ("standard", "camicia", "camicia-style", "two-suit"):
        for unit in ("deal", "state"):
            assert f"{family}, per {unit}: " in text
    for family in ("camicia-style", "two-suit"):
        block = text.split(f"{family}, per deal: ")[1].split(", per state: ")[0]
        assert "exponential fit: rate x" in block and "power fit: rate cards^" in block
    for family, cycle in (("standard", "Casella's cycle: 30 deals"), ("camicia", "Zanotto's cycle: 90 deals")):
        block = text.split(f"{family}, per deal: ")[1].split(", per state: ")[0]
        assert cycle in block and "rate is below" in block  # no curve for these deals: the bracket
    # docs/atlas.md's tables of the fits and the hunts are what --markdown prints from these rows
    tables = atlas_curve.markdown(frame)  # `python benchmarks/atlas_curve.py --markdown`
    doc = (ROOT / "docs" / "atlas.md").read_text()
    for line in tables.strip().splitlines():
        assert line in doc, line
    for deck in ("standard", "camicia"):  # each full deck's hunt, per deal and per state
        for unit in ("deal", "state"):
            assert f"\n| {deck} | {unit} | " in tables


def test_a_states_hunt_is_a_sampled_row_pooled_with_the_atlas_sample_of_its_deck():
    """A `states` run read as one row of its deck's random states (its cycling states, distinct cycles and
    periods from its tables); with an atlas sample of the same deck, the two samples' counts add."""
    run = str(HERE / "data" / "runs_before_typed" / "states")  # 3,000 states of 0:6,1:2,2:2
    (row,) = atlas_curve.hunt_row(run).to_dict("records")
    assert (row["deck"], row["cards"], row["plain"], row["penalty_cards"], row["method"], row["unit"]) == \
        ("0:6,1:2,2:2", 10, 6, 4, "sampled", "state")
    assert row["played"] == 3000 and 0 < row["cycling"] < 100 and (row["cycles"], row["periods"]) == (1, "3/15")
    assert (row["rate_lo"], row["rate_hi"]) == rate_interval(row["cycling"], 3000)
    atlas = pd.DataFrame([{**row, "played": 7000, "cycling": 30, "cycles": 1, "cpu_s": 1.0}])
    frame = pd.concat([atlas_curve.load([run]), atlas], ignore_index=True)
    (pooled,) = atlas_curve.points(frame, row["family"], "state").to_dict("records")
    assert (pooled["played"], pooled["cycling"]) == (10_000, row["cycling"] + 30)
    assert (pooled["rate_lo"], pooled["rate_hi"]) == rate_interval(row["cycling"] + 30, 10_000)
    exact = pd.DataFrame([{**row, "method": "exact", "played": 11_340, "cycling": 43}])
    (kept,) = atlas_curve.points(pd.concat([frame, exact]), row["family"], "state").to_dict("records")
    assert (kept["method"], kept["cycling"]) == ("exact", 43)  # an exact row is the deck's whole story
