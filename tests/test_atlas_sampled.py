"""The atlas's sampled rows (kernels/strategies/atlas.py, cluster/runs/atlas.py): decks past exhaustive reach
sampled by random balanced deals and random states, each rate with its exact binomial interval.

The plan and its sizing from the budget, the refusals, the intervals themselves, sampled rows against
the exact rows of the same small decks (every cycling deal replayed on the reference player), and
sampled rows reproduced by seed on a real Ray cluster with another number of workers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cluster_helpers import assert_same_tables, direct_tables, make_config, tables_of

from cluster.loop.coordinator import run_search
from cluster.runs.atlas import rate_interval
from cluster.runs.config import build_config
from cluster.runs.plan import Plan
from kernels.engines.reference import play_reference
from kernels.errors import BmnError
from kernels.notation import parse_deal
from kernels.strategies import REGISTRY, codec
from kernels.strategies.atlas import MIN_SAMPLE, SIZING_RATES, family, run_atlas, sample_sizes

BMN = Path(sys.executable).parent / "bmn"
CAMICIA_STYLE = "1:2,2:2,3:2"  # two each of J Q K
STANDARD = "1:4,2:4,3:4,4:4"  # four each of J Q K A
FAST = SIZING_RATES["fast"][1]


def atlas(plain, deck=CAMICIA_STYLE, **values):
    table = {"plain": plain, **values.pop("atlas", {})}
    return build_config({"strategy": "atlas", "deck": deck, "shard_size": 1_000_000, "atlas": table, **values})


def test_the_interval_is_the_exact_binomial_one():
    """Clopper-Pearson: where none (or all) of n cycle, the bound solves (1 - p)^n = 2.5% in closed form."""
    for n in (1, 10, 1000, 10**9):
        lo, hi = rate_interval(0, n)
        assert lo == 0 and hi == pytest.approx(1 - 0.025 ** (1 / n), rel=1e-9)
        lo, hi = rate_interval(n, n)
        assert lo == pytest.approx(0.025 ** (1 / n), rel=1e-9) and hi == 1
    for k, n in ((1, 400_000), (90, 400_000), (7, 1000)):
        lo, hi = rate_interval(k, n)
        assert lo < k / n < hi
        assert (lo, hi) == pytest.approx((1 - rate_interval(n - k, n)[1], 1 - rate_interval(n - k, n)[0]), rel=1e-9)
    assert rate_interval(3, 10**6)[1] == pytest.approx(8.767e-6, rel=1e-3)  # the textbook 3-event bound


def test_decks_past_exact_max_deals_are_sampled_within_the_budget():
    config = atlas("0:28", deck="1:4,2:4,3:4", atlas={"exact_max_deals": 100_000_000, "cpu_hours": 1})
    search, table = config.search(), config.table()
    decks = family(search, table)
    assert [(d.plain, d.exact, d.sampled) for d in decks][:4] == [
        (0, True, False), (2, True, False), (4, True, False), (6, False, True)]
    assert decks[-1].spec == "camicia" and decks[-1].cards == 40
    sizes = sample_sizes(search, table)
    assert list(sizes) == [d.spec for d in decks[3:]] and len(set(sizes.values())) == 1
    # The exact decks and the 2 x 12 sampled rows take the budget: an hour at the sizing rate.
    exact_s = sum(d.deals for d in decks if d.exact) / FAST
    assert exact_s + 24 * sizes["camicia"] / FAST == pytest.approx(3600, abs=1)
    plan = Plan(config)
    shards = [plan.shard(k).params.to_json() for k in range(plan.count)]  # (as the run keeps them)
    sampled = [s for s in shards if s.get("sample")]
    assert {s["sample"] for s in sampled} == {"deals", "states"} and all(s["balanced"] for s in sampled)
    assert not any("sample" in s or "seed" in s for s in shards if s not in sampled)  # exact shards as before
    # Each row: one stream of the run's seed, cut into shards of shard_size, the row's shard count carried.
    rows = {}
    for s in sampled:
        rows.setdefault((s["deck"], s["sample"]), []).append(s)
    assert len(rows) == 24 and len({(p[0]["seed"], p[0]["stream"]) for p in rows.values()}) == 24
    for (deck, _sample), parts in rows.items():
        assert [(p["lo"], p["hi"]) for p in parts][0] == (0, 1_000_000) and parts[-1]["hi"] == sizes[deck]
        assert {p["deck_shards"] for p in parts} == {len(parts)} and {p["seed"] for p in parts} == {config.seed}
    assert "3 exact, 12 sampled (deals and states" in config.strategy_def.describe(search, None, table)
    # A larger sample is the smaller one and more: the same streams, longer.
    larger = atlas("0:28", deck="1:4,2:4,3:4", atlas={"exact_max_deals": 100_000_000, "cpu_hours": 2})
    big = Plan(larger)
    first = [big.shard(k).params.to_json() for k in range(big.count) if big.shard(k).params.sample]
    assert [(p["deck"], p["stream"], p["lo"]) for p in first if p["lo"] == 0] == \
           [(p["deck"], p["stream"], p["lo"]) for p in sampled if p["lo"] == 0]


def test_what_a_run_computes_includes_the_sampling_only_where_it_samples():
    plain = atlas("0:8", atlas={"census": True}, shard_size=100_000)
    assert "exact_max_deals" not in plain.identity()["strategy_params"]
    assert plain.fingerprint() == "c7b983ee35d1df4b"  # as before sampled rows existed: such runs resume
    sampled = atlas("0:30", atlas={"exact_max_deals": 10**6})
    assert atlas("0:30", atlas={"exact_max_deals": 10**6, "cpu_hours": 2}).fingerprint() != sampled.fingerprint()
    fixed = atlas("0:30", atlas={"exact_max_deals": 10**6, "sample_size": 50_000})
    assert atlas("0:30", atlas={"exact_max_deals": 10**6, "sample_size": 50_000, "cpu_hours": 2}).fingerprint() == \
           fixed.fingerprint()  # sized by hand: the budget only checks
    assert atlas("0:30", atlas={"exact_max_deals": 10**6, "samples": ["deals"]}).fingerprint() != sampled.fingerprint()


@pytest.mark.parametrize("values, message", [
    (dict(plain="0:36", deck=STANDARD, atlas={"exact_max_deals": 10**8, "cpu_hours": 0.0088}),
     "too large for its budget: its exact decks take about 0.01 of cpu_hours = 0.0088 CPU-hours at the sizing "
     "rates .*, which leaves its 36 sampled rows fewer than 10,000 games each"),
    (dict(plain="0:36", deck=STANDARD, atlas={"exact_max_deals": 10**8, "sample_size": 10**9}),
     "36 sampled rows of 1,000,000,000 games take about 5.01 CPU-hours"),
    (dict(plain="0:36", deck=STANDARD, atlas={"exact_max_deals": 10**8, "samples": ["hands"]}),
     "atlas.samples must list \"deals\", \"states\" or both"),
    (dict(plain="0:36", deck=STANDARD, atlas={"exact_max_deals": 10**8, "samples": []}), "atlas.samples must list"),
    (dict(plain="0:36", deck=STANDARD, atlas={"exact_max_deals": 10**8, "samples": ["deals", "deals"]}),
     "atlas.samples must list"),
    (dict(plain="0:15", players=3, atlas={"exact_max_deals": 10**6}),
     "random states are two-player states; sample 3-player decks with atlas.samples = \\[\"deals\"\\]"),
    (dict(plain="0:36", deck=STANDARD, atlas={"exact_max_deals": -1}), "atlas.exact_max_deals must not be negative"),
    (dict(plain="0:36", deck=STANDARD), "sample the large ones \\(atlas.exact_max_deals\\)"),
])
def test_a_family_too_large_or_badly_sampled_is_refused_in_one_sentence(values, message):
    with pytest.raises(BmnError, match=message):
        atlas(values.pop("plain"), **values)
    assert MIN_SAMPLE == 10_000


def test_a_three_player_family_samples_deals():
    config = atlas("0:15", players=3, atlas={"exact_max_deals": 10**6, "samples": ["deals"], "rate": 10**6})
    assert {p.sample or None for p in (Plan(config).shard(k).params for k in range(Plan(config).count))} == \
           {None, "deals"}


SMALL = dict(strategy="atlas", deck=CAMICIA_STYLE, shard_size=150_000, min_cards=10**6, seed=5,
             atlas={"plain": "8:10", "census": True, "census_max_states": 4_000_000, "sample_all": True,
                    "sample_size": 300_000})


def test_sampled_rows_agree_with_the_exact_rows_of_the_same_decks(tmp_path):
    """Every deck played exactly and sampled (sample_all): each sampled rate's 95% interval holds the
    exact rate (deals: every deal; states: the census, every state of every split: test_atlas.py holds
    those rows to the kernels). Every cycling deal of a sample replays on the reference player."""
    tables = direct_tables(make_config(tmp_path, **SMALL))
    rows = {(r["deck"], r["method"], r["unit"]): r for r in tables["atlas"].to_pylist()}
    assert len(rows) == 2 * 3 + 1  # each deck: exact and sampled deals, sampled states; the censused one's states
    for deck, units in (("0:8,1:2,2:2,3:2", ("deal", "state")), ("0:10,1:2,2:2,3:2", ("deal",))):
        for unit in units:
            exact, sampled = rows[(deck, "exact", unit)], rows[(deck, "sampled", unit)]
            assert sampled["played"] == 300_000 and sampled["complete"] and sampled["shards"] == 2
            assert sampled["rate_lo"] < exact["rate"] < sampled["rate_hi"], (deck, unit)
            assert sampled["rate"] == sampled["cycling"] / 300_000 and sampled["cycling"] > 0
        assert rows[(deck, "sampled", "state")]["cycling"] > 0
    # The 14-card deck's four cycles, met by both samples; its census's basins are the cycles table's,
    # not added to the random states that met them (its sampled state row leaves its counts out).
    for unit in ("deal", "state"):
        assert rows[("0:8,1:2,2:2,3:2", "sampled", unit)]["periods"] == "10/70 x4"
    assert rows[("0:8,1:2,2:2,3:2", "sampled", "state")]["cycle_deals"] is None
    basins = sorted((r["basin"] for r in tables["cycles"].to_pylist() if r["deck"] == "0:8,1:2,2:2,3:2"), reverse=True)
    assert basins == [288, 288, 144, 144] and rows[("0:8,1:2,2:2,3:2", "exact", "state")]["cycle_deals"] == \
           "288 x2, 144 x2"
    # A deck's sampled deal row counts its draws (a deal drawn twice, or also played exactly, twice).
    sampled = rows[("0:8,1:2,2:2,3:2", "sampled", "deal")]
    assert sum(int(n.split(" x")[0]) * int((n.split(" x") + ["1"])[1]) for n in sampled["cycle_deals"].split(", ")) \
           == sampled["cycling"]
    # The games table keeps a deal once (here: its exact shard's row); the sample's own cycling deals,
    # as its shards play them, each on the reference player.
    shard = [codec.decode(REGISTRY["atlas"], r["params"]) for r in tables["shards"].to_pylist()
             if '"sample": "deals"' in r["params"]][0]
    played = run_atlas(shard.deck, shard.split, shard.lo, shard.hi, shard.balanced, shard.basins, min_cards=10**6,
                       sample="deals", seed=shard.seed, stream=shard.stream)
    assert played.cycles == len(played.candidates) > 0
    for c in played.candidates:
        r = play_reference(parse_deal(c.hands))
        assert (r.outcome, r.cycle_id, r.period_cards) == ("cycle", c.result.cycle_id, c.result.period_cards)


def test_sampled_rows_are_the_same_on_any_number_of_workers(ray_address, tmp_path):
    """The same seed gives the same table on a Ray cluster (two workers) as in one process; another
    seed other samples of the same decks."""
    config = make_config(tmp_path / "ray", **{**SMALL, "workers": 2, "shard_size": 100_000,
                                              "atlas": {**SMALL["atlas"], "plain": "10:12", "census": False}})
    assert run_search(config).state == "finished"
    tables = tables_of(tmp_path / "ray")
    assert_same_tables(tables, direct_tables(config))
    shown = subprocess.run([str(BMN), "atlas", str(tmp_path / "ray")], capture_output=True, text=True)
    lines = shown.stdout.splitlines()
    assert shown.returncode == 0 and lines[0].split()[3:9] == ["method", "unit", "played", "cycling", "rate_lo",
                                                                "rate_hi"]
    assert [line.split()[3:5] for line in lines[2:-1]] == [["exact", "deal"], ["sampled", "deal"],
                                                          ["sampled", "state"]] * 2 and lines[-1] == "(6 rows)"
    other = direct_tables(make_config(tmp_path / "seed", **{**SMALL, "seed": 6, "shard_size": 100_000,
                                                           "atlas": {**SMALL["atlas"], "plain": "10:12",
                                                                     "census": False}}))
    mine = {(r["deck"], r["method"], r["unit"]): r["cycling"] for r in tables["atlas"].to_pylist()}
    theirs = {(r["deck"], r["method"], r["unit"]): r["cycling"] for r in other["atlas"].to_pylist()}
    assert {k: v for k, v in mine.items() if k[1] == "exact"} == {k: v for k, v in theirs.items() if k[1] == "exact"}
    assert {k: v for k, v in mine.items() if k[1] == "sampled"} != \
           {k: v for k, v in theirs.items() if k[1] == "sampled"}
