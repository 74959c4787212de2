"""The results of a small search of every strategy are pinned (tests/data/results_pins.json).

A change to the kernels that changes any of them (the random stream, an engine's counts, a
strategy's logic) must also bump kernels.RESULTS_VERSION, so that `bmn resume` refuses to mix the
old and the new computation in one run; then regenerate the pins:
    .venv/bin/python tests/test_results_version.py
and the digests of the larger cluster tests' tables (tests/data/table_pins.json), which those tests
then fail to find, saying so:
    BMN_PIN_TABLES=1 .venv/bin/python -m pytest THE_FAILING_TESTS
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from kernels import RESULTS_VERSION  # noqa: E402

from cluster_helpers import DETERMINISTIC_SHARD_COLUMNS, direct_tables, make_config, unlabelled  # noqa: E402
from helpers import CASELLA, DATA  # noqa: E402

PINS = DATA / "results_pins.json"
SMALL = {
    "random": dict(strategy="random", deals=40_000, shard_size=10_000, min_cards=900, seed=3),
    "exhaustive": dict(strategy="exhaustive", deck="0:10,1:3,2:1", shard_size=1000, min_cards=40),
    "climb": dict(strategy="climb", deals=40_000, shard_size=20_000, min_cards=1200, seed=3,
                  climb={"pool": 10_000, "top": 2, "max_states": 5_000}),
    "longest": dict(strategy="longest", deals=40_000, shard_size=20_000, min_cards=1200, seed=3,
                    longest={"round_deals": 10_000, "per_root": 2_000}),
    "deals": dict(strategy="deals", min_cards=0, shard_size=2),
    "extend": dict(strategy="extend", min_cards=0, shard_size=2, extend={"max_states": 5_000}),
    "ancestors": dict(strategy="ancestors", deal=CASELLA, ancestors={"parts": 2}),
    "census": dict(strategy="census", deck="0:6,1:2,2:2", shard_size=5000, census={"decks": ["0:4,1:2,2:2"]}),
    "atlas": dict(strategy="atlas", deck="1:2,2:2,3:2", shard_size=20_000, min_cards=40,
                  atlas={"plain": "0:8", "census": True, "census_max_states": 500_000}),
    "states": dict(strategy="states", deck="0:8,1:2,2:2,3:2", deals=40_000, shard_size=10_000, seed=3),
    "cycles": dict(strategy="cycles", deck="0:8,1:2,2:2,3:2,4:2", seed=3,
                   cycles={"beams": 2, "tries": 8_000, "seed_plain": 6, "seed_states": 4_000, "variations": 300}),
    "construct": dict(strategy="construct", deck="0:6,1:2,2:2,3:2,4:2", construct={"max_states": 100_000}),
}
INPUTS = ["-J------Q------AAA-----QQ-/K----JA-----------KQ-K-JJK", CASELLA,
          "Q-Q-Q--J------J---K----AA-/---K-JA----Q-K--J-A------K"]


def digest(name: str, tmp: Path) -> str:
    values = dict(SMALL[name])
    if name in ("deals", "extend"):
        path = tmp / f"{name}.txt"
        path.write_text("\n".join(INPUTS) + "\n")
        values["deals_file"] = str(path)
    tables = direct_tables(make_config(tmp / name, **values))
    tables["cycles"] = unlabelled(tables["cycles"])  # (the catalogue's labels are not results)
    parts = [tables[t].to_pylist() for t in ("games", "cycles", "histogram")]
    parts.append(tables["shards"].select(DETERMINISTIC_SHARD_COLUMNS).to_pylist())
    if tables["atlas"].num_rows:
        parts.append(tables["atlas"].drop_columns(["cpu_s", "deals_per_s"]).to_pylist())
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def test_every_strategy_is_pinned():
    from kernels.strategies import STRATEGIES

    assert set(SMALL) == set(STRATEGIES)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_results_are_those_of_this_results_version(name, tmp_path):
    pins = json.loads(PINS.read_text())
    assert pins["results_version"] == RESULTS_VERSION, "regenerate the pins after bumping RESULTS_VERSION"
    assert digest(name, tmp_path) == pins[name], (
        f"the {name} strategy now computes other results: bump kernels.RESULTS_VERSION and regenerate "
        f"the pins (python tests/test_results_version.py)")


def test_the_cluster_tests_pins_hold_their_tables_and_say_when_they_are_missing(tmp_path, monkeypatch):
    """assert_kernels_tables (the larger cluster tests' check against the kernels' own tables): a pinned
    digest spares computing them; other tables fail naming their table; equal tables without their pin
    fail until BMN_PIN_TABLES=1 writes it."""
    import cluster_helpers
    from cluster_helpers import assert_kernels_tables, tables_digest

    pins = tmp_path / "pins.json"
    pins.write_text("{}")
    monkeypatch.setattr(cluster_helpers, "TABLE_PINS", pins)
    config = make_config(tmp_path / "run", **SMALL["random"])
    tables = direct_tables(config)
    with pytest.raises(pytest.fail.Exception, match=f"no pin {tables_digest(tables)} for the config {config.fingerprint()}"):
        assert_kernels_tables(tables, config)
    other = dict(tables, games=tables["games"].slice(1))
    with pytest.raises(AssertionError, match="games"):
        assert_kernels_tables(other, config)
    monkeypatch.setenv("BMN_PIN_TABLES", "1")
    assert_kernels_tables(tables, config)
    assert json.loads(pins.read_text()) == {config.fingerprint(): tables_digest(tables)}
    monkeypatch.delenv("BMN_PIN_TABLES")
    monkeypatch.setattr(cluster_helpers, "direct_tables", lambda config: pytest.fail("computed"))
    assert_kernels_tables(tables, config)  # from the pin alone
    with pytest.raises(pytest.fail.Exception, match="computed"):
        assert_kernels_tables(other, config)


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        pins = {"results_version": RESULTS_VERSION, **{n: digest(n, Path(tmp)) for n in sorted(SMALL)}}
    PINS.write_text(json.dumps(pins, indent=1, sort_keys=True) + "\n")
    print(f"wrote {PINS}")
