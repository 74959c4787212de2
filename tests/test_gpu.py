"""The GPU sweep on a machine without a GPU (kernels/sweep/cuda.py, kernels/sweep/gpu.py).

Two checks need no device: every kernel compiles to PTX for the GPUs bmn targets (Turing sm_75,
Ampere sm_80, Ada sm_89, Hopper sm_90) with numba-cuda and the CUDA toolkit's wheels, and keeps
its game in registers (no local memory in the PTX; ptxas reports no stack frame, no spills and at most
REGISTER_BUDGET registers);
and under numba-cuda's simulator the GPU sweeps give the CPU sweeps' ShardResults exactly
(tests/gpu_sim_cases.py, in a process of its own since the simulator is chosen at import).
How fast the kernels are can only be measured on a GPU (benchmarks/README.md).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from helpers import space

from kernels.errors import BmnError
from kernels.strategies.census import census_counts
from kernels.sweep.gpu import check_space

cuda = pytest.importorskip("numba.cuda", reason="numba-cuda is not installed (pip install 'bmn[gpu]')")

TARGETS = ((7, 5), (8, 0), (8, 9), (9, 0))
# Registers per thread each sweep kernel may use on every target (ptxas): at 96, CUDA's allocation rules
# keep 20 one-warp blocks on a Hopper multiprocessor (benchmarks/warp_model.py `occupancy`), the
# exhaustive sweep too (it also keeps a run of ranks and its deal's words).
REGISTER_BUDGET = {"random_sweep": 96, "states_sweep": 96, "exhaustive_sweep": 96}
KERNEL_NAMES = ("random_sweep", "exhaustive_sweep", "states_sweep")
HERE = Path(__file__).parent


def front_end(fn, signature):
    """A kernel through numba-cuda's front end (typing, lowering to NVVM IR: ~4 s of the ~4.5 s a
    compile_ptx of a sweep kernel takes), for the oldest target, the one that allows least."""
    from numba.cuda.compiler import _compile_pyfunc_with_fixup

    library, _ = _compile_pyfunc_with_fixup(fn, signature, device=False, cc=min(TARGETS), abi="numba")
    return library


@cache
def nvvm_library(name: str):
    """A sweep kernel's front end, once."""
    from kernels.sweep import cuda as gpu
    return front_end(*gpu.KERNELS[name])


@cache
def ptx(name: str, cc: tuple[int, int]) -> str:
    """A sweep kernel's PTX for a target: NVVM compiles the kernel's IR for it, as compile_ptx does."""
    (text,) = nvvm_library(name).get_asm_strs(cc=cc)
    return text


def unnamed(text: str) -> str:
    # Each compilation gives the kernel and its shared arrays names of its own.
    return re.sub(r"_cudapy_smem_\d+", "SMEM", re.sub(r"_ZN\w+", "NAME", text))


def _shuffled(out, k):
    """A small kernel with a shared array and a loop: what the check below compiles both ways."""
    block = cuda.shared.array(32, np.int64)
    lane = cuda.threadIdx.x
    block[lane] = lane * k
    cuda.syncthreads()
    total = 0
    for i in range(32):
        total += block[(lane + i) % 32] ^ i
    out[lane] = total


def test_the_ptx_is_compile_ptxs():
    """The front end run once, NVVM per target (what `ptx` does for the sweep kernels): the PTX of
    numba-cuda's own compile_ptx, but for names. Checked on a small kernel: a sweep kernel's
    compile_ptx takes 5-14 s of the suite, the front end's cost once more."""
    from numba import types

    signature = (types.int64[::1], types.int64)
    library = front_end(_shuffled, signature)
    for cc in ((7, 5), (8, 0)):
        text, _ = cuda.compile_ptx(_shuffled, signature, cc=cc)
        (ours,) = library.get_asm_strs(cc=cc)
        assert f".target sm_{cc[0]}{cc[1]}" in text and "SMEM" in unnamed(text)
        assert unnamed(ours) == unnamed(text)


def local_memory(text: str) -> list[str]:
    """The PTX lines that declare or touch local memory (a thread's spilled arrays and registers)."""
    return [line.strip() for line in text.splitlines() if re.search(r"\.local\b|\blocal\.", line)]


@pytest.mark.parametrize("cc", TARGETS, ids=lambda cc: f"sm_{cc[0]}{cc[1]}")
@pytest.mark.parametrize("name", KERNEL_NAMES)
def test_kernel_compiles_to_ptx_without_local_memory(name, cc):
    text = ptx(name, cc)
    assert f".target sm_{cc[0]}{cc[1]}" in text
    assert re.search(rf"\.entry\s+\S*{name}", text)
    assert local_memory(text) == []


def test_local_memory_is_seen_where_a_kernel_has_some():
    """The check above can fail: a thread's own array is local memory, and the PTX says so."""
    from numba import types

    def with_array(out, k):
        scratch = cuda.local.array(64, types.uint8)
        for i in range(64):
            scratch[i] = i * k
        out[0] = scratch[k % 64]

    text, _ = cuda.compile_ptx(with_array, (types.uint8[::1], types.int64), cc=(8, 0))
    assert local_memory(text)


def ptxas() -> Path | None:
    try:
        import nvidia.cuda_nvcc as nvcc
    except ImportError:
        return None
    found = [Path(p) / "bin" / "ptxas" for p in nvcc.__path__]
    return next((p for p in found if p.exists()), None)


@pytest.mark.parametrize("cc", TARGETS, ids=lambda cc: f"sm_{cc[0]}{cc[1]}")
@pytest.mark.parametrize("name", KERNEL_NAMES)
def test_ptxas_finds_no_stack_no_spills_and_registers_within_the_budget(name, cc, tmp_path):
    """ptxas (from the toolkit's wheel) assembles each target's PTX: no stack frame, nothing spilled."""
    assembler = ptxas()
    if assembler is None:
        pytest.skip("ptxas is not installed (nvidia-cuda-nvcc's wheel)")
    source = tmp_path / f"{name}.ptx"
    source.write_text(ptx(name, cc))
    done = subprocess.run([str(assembler), f"-arch=sm_{cc[0]}{cc[1]}", "-v", str(source), "-o", os.devnull],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" in done.stderr
    registers = int(re.search(r"Used (\d+) registers", done.stderr).group(1))
    assert registers <= REGISTER_BUDGET[name], registers


@pytest.fixture(scope="module")
def simulated():
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    done = subprocess.run([sys.executable, str(HERE / "gpu_sim_cases.py")], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


# Each case, what the CPU's result holds (so that a case that no longer plays what it should fails).
EXPECTED = {
    "random standard": dict(deals=500, cycles=0),
    "random standard, min_tricks": dict(deals=600, cycles=0),
    "random small deck": dict(deals=400),
    "exhaustive small deck": dict(deals=1260, cycles=7),
    "exhaustive 14 cards, a range": dict(deals=997, cycles=0),
    "exhaustive around Casella's cycle": dict(deals=6, cycles=1, candidates=1),
    "exhaustive around Zanotto's cycle": dict(deals=6, cycles=1, candidates=1),
    "exhaustive, empty range": dict(deals=0, cycles=0, candidates=0),
    "states small deck": dict(deals=2500, candidates=7),
    "states standard": dict(deals=300, cycles=0, candidates=0),
    "states near equal hands": dict(deals=400, candidates=7),
    # several shards in one launch of three blocks, each its own ShardResult (the CPU's of that shard alone)
    "batch of random shards, three blocks": dict(deals=440, shards=3, launches=1),
    "batch of exhaustive shards, every deal kept, a small buffer": dict(deals=1260, candidates=1260, shards=3),
    "standard ranks across prefixes, and around Casella's cycle": dict(deals=85, cycles=1, candidates=1, launches=1),
    "batch of states shards": dict(deals=800, shards=2, launches=1),
    "batch of near-equal states shards": dict(deals=300, shards=2, launches=1),
    "launches cut at a limit": dict(launches=4),
}


@pytest.mark.parametrize("case", EXPECTED)
def test_gpu_sweep_equals_cpu_sweep_under_the_simulator(simulated, case):
    report = simulated[case]
    assert report["difference"] == ""
    for key, value in EXPECTED[case].items():
        assert report[key] == value, key
    if case.startswith("random small"):
        assert report["cycles"] > 0
    if "empty" not in case and "cycle" not in case and case not in ("states standard", "launches cut at a limit"):
        assert report["candidates"] > 0
    if "small buffer" in case:
        # The kept deals filled their buffer again and again: the launch went on, no deal played twice.
        assert report["continued"] >= 2 and report["launches"] == report["continued"] + 1


def test_gpu_states_find_what_the_census_finds(simulated):
    """The states shard played on the (simulated) GPU meets the small deck's one cycle, and its closure
    and balanced deals are the census's basin and deals."""
    census = census_counts("0:6,1:2,2:2")
    rows = simulated["states small deck"]["cycle_rows"]
    assert {r["cycle_id"]: (r["closure"], r["state"], r["complete"]) for r in rows} == \
        {cid: (c["basin"], c["state"], True) for cid, c in census.items()}
    assert simulated["states small deck"]["candidates"] == sum(c["deals"] for c in census.values())
    assert rows[0]["basin"] == simulated["states small deck"]["cycles"] > 0


def test_every_kernel_is_listed():
    from kernels.sweep import cuda as gpu
    assert set(gpu.KERNELS) == set(KERNEL_NAMES)


def test_every_simulated_case_is_checked(simulated):
    assert set(simulated) == set(EXPECTED)


def test_the_comparison_sees_a_difference():
    sys.path.insert(0, str(HERE))
    from gpu_sim_cases import difference

    from kernels.sweep import run_random
    a = run_random(space("standard"), 1, 0, 50, min_cards=300)
    b = run_random(space("standard"), 1, 0, 50, min_cards=300)
    assert difference(a, b) == ""
    b.histogram = b.histogram.copy()
    b.histogram[np.argmax(b.histogram)] -= 1
    assert difference(a, b).startswith("histogram")
    b = run_random(space("standard"), 1, 0, 50, min_cards=300)
    b.candidates = b.candidates[1:]
    assert a.candidates and difference(a, b).startswith("candidates")


@pytest.mark.parametrize("deck, split, players", [
    ("standard", "18,17,17", None),  # three players
    ("0:60,1:10", None, None),  # more than 64 cards
    ("0:21,1:17", None, None),  # more than 16 penalty cards
])
def test_deals_the_gpu_engine_cannot_hold_are_refused(deck, split, players):
    with pytest.raises(BmnError, match="the GPU engine holds two-player deals"):
        check_space(space(deck, split, players))


SIMULATOR_ATOMICS = """
import numpy as np
from numba import cuda
import kernels.sweep.cuda  # its simulator settings

@cuda.jit
def add_and_sub(cell):
    for i in range(300):
        cuda.atomic.add(cell, 0, 1)
        cuda.atomic.sub(cell, 0, 1)

cell = np.zeros(1, dtype=np.int64)
add_and_sub[1, 32](cell)
print(int(cell[0]))
"""


def test_the_simulators_atomic_operations_on_one_cell_are_atomic_together():
    """numba-cuda's simulator locks each kind of atomic operation apart: an add and a sub of one cell
    could interleave and lose one (the sweep's queue count takes both; once in a suite the simulated
    GPU's shard then differed from the CPU's). Under the simulator, kernels/sweep/cuda.py gives them one
    lock: 32 threads adding and taking away 1 three hundred times each leave the cell at 0."""
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    done = subprocess.run([sys.executable, "-c", SIMULATOR_ATOMICS], capture_output=True, text=True, env=env,
                          timeout=300, cwd=HERE.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["0"]


def test_the_one_shot_gpu_check_runs_under_the_simulator(tmp_path):
    """benchmarks/gpu_check.py, the first command on a GPU machine, runs whole (its tiny sizes, the simulator):
    every case equal to the CPU's and to itself, exit 0, its report in both forms."""
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    done = subprocess.run([sys.executable, str(HERE.parent / "benchmarks" / "gpu_check.py"), "--tiny", "--out",
                           str(tmp_path)], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((tmp_path / "gpu_check.json").read_text())
    assert report["kind"] == "simulated" and not report["errors"] and report["imported_beyond_numba"] == []
    assert len(report["cases"]) == 8
    for name, case in report["cases"].items():
        assert case["against_cpu"] == case["against_itself"] == "", name
        assert case["deals"] > 0 and case["launches"] >= 1, name
    assert report["cases"]["a small deck that keeps many deals"]["kept"] > 0
    assert report["cases"]["the known cycles' ranges"]["cycles"] == 2
    assert report["bench"]["deals"] > 0 and [x["deals"] for x in report["launches"]] == [100, 300]
    model = report["bench"]["model"]  # the model's figure beside the bench (an H200's, under the simulator)
    assert model.get("deals_per_s", 0) > 1e8 or "pip install nvidia-cuda" in model.get("error", ""), model
    assert "Verdict: every GPU result equals the CPU's and itself" in (tmp_path / "gpu_check.md").read_text()


def test_the_gpu_checks_launch_for_the_sanitizers_and_ncu_runs_under_the_simulator():
    """The small program gpu_check.py runs under compute-sanitizer and ncu (a launch of each kernel), here
    under the simulator at a tiny size, so that the step only a GPU machine runs cannot rot."""
    sys.path.insert(0, str(HERE.parent / "benchmarks"))
    import gpu_check

    script = gpu_check.LAUNCH.format(root=str(gpu_check.ROOT), tests=str(gpu_check.ROOT / "tests"))
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    done = subprocess.run([sys.executable, "-c", script, "60"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
