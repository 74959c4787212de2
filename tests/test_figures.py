"""What a worker reports of a shard (cluster/figures.py): the figures of its result that the summary
tables need, made where the shard was played, without pyarrow."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from cluster.figures import ShardFigures
from kernels.strategies import run_exhaustive, run_random

from helpers import STANDARD, space


def test_the_figures_of_a_result():
    result = run_random(STANDARD, 3, 0, 50, min_cards=300)
    f = ShardFigures.from_result(result, elapsed_s=0.123456, worker="local:1")
    assert (f.deals, f.cards, f.max_cards, f.candidates) == (50, result.cards, result.max_cards, len(result.candidates))
    assert f.histogram == {k: int(result.histogram[k]) for k in range(len(result.histogram)) if result.histogram[k]}
    assert sum(f.histogram.values()) == 50 and f.wins == tuple(result.wins)
    assert f.longest["hands"] == result.longest.hands and f.longest["cards"] == result.max_cards
    assert (f.elapsed_s, f.worker, f.cycle_ids, f.cycle_rows) == (0.1235, "local:1", (), ())
    assert f.finished_at > 0


def test_the_cycles_of_a_result_are_named_once_each():
    deals = space("0:6,1:2,2:2")  # 1,260 deals, 7 of them never end
    result = run_exhaustive(deals, 0, deals.count, min_cards=10**9)
    f = ShardFigures.from_result(result, elapsed_s=0.0, worker="w")
    ids = {c.result.cycle_id for c in result.candidates if c.result.cycle_id} | {r.cycle_id for r in result.cycle_rows}
    assert f.cycle_ids == tuple(sorted(ids)) and f.cycle_ids and f.cycle_rows == tuple(result.cycle_rows)


def test_an_actor_plays_a_shard_without_pyarrow_or_scipy():
    """What an actor imports and runs (this module, a shard, its figures) leaves pyarrow out: it would
    add a tenth of a second to the start of every actor; the driver makes the Arrow tables. Nor is
    scipy there, for Numba's CPU target to import (a third of a second): bmn does not depend on it, and
    the images' locks leave it out."""
    play = ("import sys; from cluster.worker import ShardRunner; from kernels.strategies import Shard; "
            "runner = ShardRunner('standard', (26, 26), 'random'); runner.warm_up(); "
            "params = {'seed': 5, 'shard': 1, 'count': 50, 'min_cards': 500, 'min_tricks': 0}; "
            "rows, figures = runner.run(Shard(1, 'random', params)); "
            "print(figures.deals, 'pyarrow' in sys.modules, 'scipy' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", play], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["50", "False", "False"]
    configs = Path(__file__).resolve().parents[1] / "configs"
    for lock in ("image-requirements.lock", "image-requirements-gpu.lock"):
        assert not re.search(r"^scipy==", (configs / lock).read_text(), re.M), lock
