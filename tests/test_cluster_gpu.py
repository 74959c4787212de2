"""GPU actors on real Ray clusters, on a machine without a GPU (cluster/loop/coordinator.py, cluster/loop/pool.py).

A Ray cluster may declare GPUs it does not have (`ray start --num-gpus 1`): bmn then gives that GPU an
actor, as on a cloud GPU node. Where the driver runs under numba-cuda's simulator (NUMBA_ENABLE_CUDASIM=1),
so does the GPU actor, and its shards are the GPU kernels' (simulated); where not, the actor finds no
CUDA driver and fails, as a GPU node with a broken driver does. Either way the tables must be the
kernels' own, as on CPUs.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from cluster_helpers import assert_same_tables, direct_tables, make_config, ray_head, tables_of, wait_for

BMN = Path(sys.executable).parent / "bmn"
pytestmark = pytest.mark.slow

# Small shards: the simulator plays about a thousand deals a second.
RANDOM = dict(strategy="random", deals=1200, shard_size=300, min_cards=400, seed=5)
EXHAUSTIVE = dict(strategy="exhaustive", deck="0:6,1:2,2:2", shard_size=210, min_cards=50)
STATES = dict(strategy="states", deck="0:6,1:2,2:2", deals=2000, shard_size=500, seed=3)


@pytest.fixture(scope="module")
def gpu_cluster():
    """A cluster of 2 CPUs declaring 1 GPU (with no device behind it)."""
    pytest.importorskip("numba.cuda", reason="numba-cuda is not installed (pip install 'bmn[gpu]')")
    with ray_head(num_cpus=2, num_gpus=1) as address:
        yield address


def environment(simulator: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "NUMBA_ENABLE_CUDASIM")}
    return dict(env, NUMBA_ENABLE_CUDASIM="1") if simulator else env


def command(values: dict, out, address: str, device: str) -> list[str]:
    flags = [f"--{key.replace('_', '-')}={value}" for key, value in values.items()]
    return [str(BMN), "search", *flags, "--address", address, "--device", device, "--out", str(out), "--no-progress"]


def search(values: dict, out, address: str, device: str, simulator: bool):
    return subprocess.run(command(values, out, address, device), capture_output=True, text=True,
                          env=environment(simulator), timeout=600)


def workers(out) -> set[str]:
    return set(pq.read_table(Path(out) / "shards.parquet").column("worker").to_pylist())


@pytest.mark.parametrize("values", [EXHAUSTIVE, STATES], ids=["exhaustive", "states"])
def test_gpu_shards_give_the_cpu_tables(gpu_cluster, tmp_path, values):
    """device = "gpu": every shard on the (simulated) GPU actor; the tables are the CPU kernels'."""
    done = search(values, tmp_path / "run", gpu_cluster, "gpu", simulator=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert all(w.endswith("/gpu") for w in workers(tmp_path / "run"))
    tables = tables_of(tmp_path / "run")
    assert_same_tables(tables, direct_tables(make_config(tmp_path / "cpu", **values)))
    assert tables["cycles"].num_rows == 1  # the deck's one cycle
    if values is STATES:
        assert tables["games"].num_rows == 7 and tables["cycles"]["closure"].to_pylist() == [43]  # the census's


def test_auto_gives_the_gpu_an_actor_and_the_other_cpu_one(gpu_cluster, tmp_path):
    """device = "auto" on 2 CPUs and 1 GPU: a GPU actor and one CPU actor (which of them plays which
    shard is a race: the CPU actor, far faster than the simulator, may play them all; tests/test_pool.py
    holds the pool to giving both kinds shards); the same tables, and no GPU failing. With audit = 1, every
    shard the GPU played is played again by the CPU actor, found equal, and marked so (bmn status counts them)."""
    values = dict(RANDOM, audit=1.0)
    done = search(values, tmp_path / "run", gpu_cluster, "auto", simulator=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "GPU worker" not in done.stderr
    assert_same_tables(tables_of(tmp_path / "run"), direct_tables(make_config(tmp_path / "cpu", **values)))
    from cluster.runs.storage import RunStore
    from cluster.runs.tables import read_summaries
    summaries = read_summaries(RunStore(str(tmp_path / "run")))
    on_gpu = {k for k, s in summaries.items() if s.figures.device == "gpu"}
    assert {k for k, s in summaries.items() if s.audit == "matched"} == on_gpu
    status = subprocess.run([str(BMN), "status", str(tmp_path / "run"), "--json"], capture_output=True, text=True)
    assert '"mismatches": 0' in status.stdout and f'"audited": {len(on_gpu)}' in status.stdout


def test_a_run_stopped_on_the_gpu_resumes_on_cpus_with_the_same_tables(gpu_cluster, tmp_path):
    """One run, two devices: stopped (SIGTERM, as `ray job stop` sends) after a few shards on the GPU,
    resumed with --device cpu; the tables are the kernels' own."""
    values = dict(RANDOM, deals=3000, gpu_batch=2)  # ten shards, two per call to the GPU actor
    out = tmp_path / "run"
    driver = subprocess.Popen(command(values, out, gpu_cluster, "gpu"), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, env=environment(simulator=True))
    shards = out / "shards"
    assert wait_for(lambda: shards.exists() and len(list(shards.glob("*.parquet"))) >= 2, timeout=300)
    driver.send_signal(signal.SIGTERM)
    assert driver.wait(timeout=60) == 130, driver.stderr.read()[-3000:]
    on_gpu = len(list(shards.glob("*.parquet")))
    assert 2 <= on_gpu < 10
    resumed = subprocess.run([str(BMN), "resume", str(out), "--address", gpu_cluster, "--device", "cpu",
                              "--no-progress"], capture_output=True, text=True, env=environment(simulator=False),
                             timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    ran = pq.read_table(out / "shards.parquet").column("worker").to_pylist()
    assert sum(w.endswith("/gpu") for w in ran) == on_gpu and len(ran) == 10
    assert_same_tables(tables_of(out), direct_tables(make_config(tmp_path / "cpu", **values)))


def test_a_failing_gpu_gives_its_shards_to_cpu_actors(gpu_cluster, tmp_path):
    """No CUDA driver behind the declared GPU: its actor fails to start; one sentence says so, and the
    CPU actors play every shard."""
    done = search(RANDOM, tmp_path / "run", gpu_cluster, "auto", simulator=False)
    assert done.returncode == 0, done.stderr[-3000:]
    said = [line for line in done.stderr.splitlines() if "GPU worker" in line]
    assert len(said) == 1 and "failed" in said[0] and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert not any(w.endswith("/gpu") for w in workers(tmp_path / "run"))
    assert_same_tables(tables_of(tmp_path / "run"), direct_tables(make_config(tmp_path / "cpu", **RANDOM)))


def test_device_gpu_stops_with_a_sentence_when_every_gpu_fails(gpu_cluster, tmp_path):
    done = search(RANDOM, tmp_path / "run", gpu_cluster, "gpu", simulator=False)
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if line.startswith("bmn: error:")]
    assert len(errors) == 1 and "every GPU of the cluster failed" in errors[0], done.stderr[-3000:]
    assert "Traceback" not in done.stderr


def test_device_gpu_on_a_cluster_without_gpus_stops_with_a_sentence(ray_cluster, tmp_path):
    done = search(RANDOM, tmp_path / "run", ray_cluster, "gpu", simulator=False)
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if line.startswith("bmn: error:")]
    assert len(errors) == 1 and "has no GPUs" in errors[0], done.stderr[-3000:]
