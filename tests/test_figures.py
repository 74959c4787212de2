"""What a worker returns for a shard (cluster/runs/figures.py): one PlayedShard, its candidate deals and the
figures of its result that the summary tables need, made where the shard was played, without pyarrow."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from helpers import STANDARD, space

from cluster.runs.figures import PlayedShard, ShardFigures, game_json, game_of_json
from kernels.strategies import Shard, run_exhaustive, run_random
from kernels.strategies.base import StreamShard
from kernels.tally import Counts


def test_the_figures_of_a_result():
    result = run_random(STANDARD, 3, 0, 50, min_cards=300)
    f = ShardFigures.from_result(result, elapsed_s=0.123456, worker="local:1")
    assert (f.counts, f.max_cards, f.candidates) == \
           (Counts(50, result.cards, 0), result.max_cards, len(result.candidates))
    assert f.histogram == {k: int(result.histogram[k]) for k in range(len(result.histogram)) if result.histogram[k]}
    assert sum(f.histogram.values()) == 50 and f.wins == tuple(result.wins)
    assert f.longest == result.longest and f.longest.result.cards == result.max_cards
    assert game_of_json(game_json(f.longest)) == f.longest  # (as a summary writes it, and reads it back)
    assert (f.elapsed_s, f.worker, f.device, f.cycle_ids, f.cycle_rows) == (0.1235, "local:1", "cpu", (), ())
    assert f.finished_at > 0


def test_the_figures_are_flat_in_a_file_and_a_gpu_worker_written_as_bmn_always_has():
    """A file holds the figures flat (the counts among them) and a GPU's worker as NODE:PID/gpu; read back,
    the device is a field again, whatever bmn wrote the file."""
    result = run_random(STANDARD, 3, 0, 50, min_cards=300)
    f = ShardFigures.from_result(result, elapsed_s=1.0, worker="10.0.0.7:42", device="gpu")
    flat = f.flat()
    assert (flat["deals"], flat["cards"], flat["cycles"], flat["worker"]) == (50, result.cards, 0, "10.0.0.7:42/gpu")
    assert "counts" not in flat and "device" not in flat and ShardFigures.of_flat(flat) == f
    assert ShardFigures.of_flat({"worker": "10.0.0.7:42", "deals": 3}) == ShardFigures(counts=Counts(deals=3),
                                                                                      worker="10.0.0.7:42")


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
    play = ("import sys; from cluster.cloud.worker import ShardRunner; from kernels.strategies import Shard; "
            "runner = ShardRunner('standard', (26, 26), 'random'); runner.warm_up(); "
            "from kernels.strategies.base import StreamShard; "
            "params = StreamShard(seed=5, shard=1, count=50, min_cards=500, min_tricks=0); "
            "played = runner.run(Shard(1, 'random', params)); "
            "print(played.figures.counts.deals, 'pyarrow' in sys.modules, 'scipy' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", play], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["50", "False", "False"]
    configs = Path(__file__).resolve().parents[1] / "configs"
    for lock in ("image-requirements.lock", "image-requirements-gpu.lock"):
        assert not re.search(r"^scipy==", (configs / lock).read_text(), re.M), lock


def test_a_played_shard_is_its_candidates_and_figures():
    """One value comes back from a worker: the shard it played, its candidates (plain values), the deck
    they are of (the run's, or the result's own: an atlas deck), its first rank, and its figures."""
    deals = space("0:6,1:2,2:2")
    result = run_exhaustive(deals, 100, 400, min_cards=20)
    shard = Shard(3, "exhaustive", StreamShard(seed=0, shard=3, count=1, min_cards=20, min_tricks=0))
    played = PlayedShard.of(shard, result, deck="0:6,1:2,2:2", elapsed_s=0.5, worker="w")
    assert (played.shard, played.deck, played.rank_base) == (shard, "0:6,1:2,2:2", 100) and played.done
    given_up = PlayedShard.given_up(shard, 3, "worker lost")
    assert (given_up.done, given_up.figures, given_up.attempts, given_up.error, given_up.candidates) == \
        (False, None, 3, "worker lost", [])
    assert played.candidates == result.candidates and played.figures.candidates == len(result.candidates) > 0
    result.deck = "0:6,1:2,2:2,3:0"
    assert PlayedShard.of(shard, result, deck="standard", elapsed_s=0, worker="w").deck == "0:6,1:2,2:2,3:0"
