"""The results of every strategy's example search (its `example`, kernels/strategies/base.py `Example`)
are pinned by the strategy itself (`example.pin`).

A change to the kernels that changes any of them (the random stream, an engine's counts, a
strategy's logic) must also bump kernels.RESULTS_VERSION, so that `bmn resume` refuses to mix the
old and the new computation in one run, unless the shards that compute something else have other
parameters (construct's `search`: an earlier run's shard files are then not the run's, and a resume
computes them again); a column added to a table changes the pins too, and computes nothing else.
Then regenerate the pins (each written into its strategy's module, as is a new strategy's first one):
    .venv/bin/python tests/test_results_version.py
and the digests of the larger cluster tests' tables (tests/data/table_pins.json), which those tests
then fail to find, saying so:
    BMN_PIN_TABLES=1 .venv/bin/python -m pytest THE_FAILING_TESTS
"""

from __future__ import annotations

import hashlib
import inspect
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from cluster_helpers import DETERMINISTIC_SHARD_COLUMNS, direct_tables, example_config, unlabelled  # noqa: E402

from cluster.runs.owned import own_table  # noqa: E402
from kernels.strategies import REGISTRY, Strategy  # noqa: E402


def digest(strategy: Strategy, tmp: Path) -> str:
    """The sha256 of the tables of the strategy's example search (what its pin holds)."""
    tables = direct_tables(example_config(strategy, tmp))
    tables["cycles"] = unlabelled(tables["cycles"])  # (the catalogue's labels are not results)
    parts = [tables[t].to_pylist() for t in ("games", "cycles", "histogram")]
    parts.append(tables["shards"].select(DETERMINISTIC_SHARD_COLUMNS).to_pylist())
    own = own_table(strategy)
    if own is not None and tables[own.name].num_rows:
        parts.append(tables[own.name].drop_columns(list(own.timings)).to_pylist())
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def test_every_strategy_declares_an_example_and_its_pin():
    for name, strategy in REGISTRY.items():
        assert strategy.example is not None, f"the {name} strategy declares no example search"
        assert len(strategy.example.pin) == 64, (f"the {name} strategy's example has no pin: write it with "
                                                  f"python tests/test_results_version.py")


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_results_are_those_of_this_results_version(name, tmp_path):
    strategy = REGISTRY[name]
    assert digest(strategy, tmp_path) == strategy.example.pin, (
        f"the {name} strategy now computes other results: bump kernels.RESULTS_VERSION and regenerate "
        f"the pins (python tests/test_results_version.py)")


def write_pins(tmp: Path) -> list[str]:
    """Each strategy's pin computed afresh and written into its module where it differs: the modules changed."""
    changed = []
    for strategy in REGISTRY.values():
        pin = digest(strategy, tmp)
        if pin == strategy.example.pin:
            continue
        path = Path(inspect.getsourcefile(type(strategy)))
        text = path.read_text()
        old = f'pin="{strategy.example.pin}"'
        assert text.count(old) == 1, f"{path}: the example's pin is written as {old}, once"
        path.write_text(text.replace(old, f'pin="{pin}"'))
        changed.append(str(path))
    return changed


def test_the_cluster_tests_pins_hold_their_tables_and_say_when_they_are_missing(tmp_path, monkeypatch):
    """assert_kernels_tables (the larger cluster tests' check against the kernels' own tables): a pinned
    digest spares computing them; other tables fail naming their table; equal tables without their pin
    fail until BMN_PIN_TABLES=1 writes it."""
    import cluster_helpers
    from cluster_helpers import assert_kernels_tables, tables_digest

    pins = tmp_path / "pins.json"
    pins.write_text("{}")
    monkeypatch.setattr(cluster_helpers, "TABLE_PINS", pins)
    config = example_config(REGISTRY["random"], tmp_path)
    tables = direct_tables(config)
    with pytest.raises(pytest.fail.Exception,
                       match=f"no pin {tables_digest(tables)} for the config {config.fingerprint()}"):
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
        for path in write_pins(Path(tmp)):
            print(f"wrote the pin in {path}")
