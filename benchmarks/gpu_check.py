"""The one-shot check for the first minutes on a GPU: is bmn's GPU sweep right there, and how fast is it.

    python benchmarks/gpu_check.py [--out DIR] [--skip-tools]      # on a GPU machine (sized for 8 minutes on an H100)
    NUMBA_ENABLE_CUDASIM=1 python benchmarks/gpu_check.py --tiny    # here, under numba-cuda's simulator (the tests)

Needs only Python with numpy, numba and numba-cuda (no Ray, no DuckDB, nothing fetched), and uses CUDA's
compute-sanitizer and Nsight Compute (ncu) where they are on the PATH. In order:

1. The machine: the device, its driver, CUDA's and the packages' versions; each sweep kernel's first
   compile, and its load from Numba's disk cache in a second process.
2. Correctness, each GPU shard played twice (the two equal: determinism) and held field by field to the
   CPU's ShardResult: random standard deals (millions, as one GPU batch of several shards), a small deck
   that keeps many deals (its cycles and the kept-deal path), every deal of two small decks, a rank
   range of an 18-card deck, random states (the standard deck's and a small deck's with cycles), the
   ranks around Casella's and Zanotto's cycles, the standard deck's ranks across a prefix's end; and
   every simulator case of tests/gpu_sim_cases.py, on the device.
3. Speed: launches of 10^5 to 10^9 random standard deals, and a 30-second bench with the SM clock read
   beside it (nvidia-smi), against the model's figure (benchmarks/warp_model.py).
4. Tools: compute-sanitizer's racecheck and synccheck on a small launch of each kernel; ncu's achieved
   occupancy, issue-active, ALU pipe and threads per instruction (the lanes in use) on a large launch.

It writes gpu_check.json and gpu_check.md into --out (default $OUT, else ./gpu-check) and exits 1 if any
GPU result differs from the CPU's or from itself or a tool found an error, 2 if a step could not run.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

BEYOND = {"ray", "pyarrow", "duckdb", "rich", "pandas", "boto3", "moto", "scipy", "pytest"}
NCU_METRICS = {
    "achieved occupancy (% of the SM's warps)": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "issue active (% of cycles)": "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "ALU pipe (% of peak)": "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active",
    "threads per instruction (of 32)": "smsp__thread_inst_executed_per_inst_executed.ratio",
}


# ---------------------------------------------------------------- the cases

def cases(tiny: bool) -> dict:
    """name -> (what it plays, a function of device that returns a list of ShardResults)."""
    from helpers import CASELLA, ZANOTTO, space

    from kernels.notation import parse_deal
    from kernels.strategies.states import closed
    from kernels.sweep import gpu, run_exhaustive_batch, run_random_batch, run_random_states_batch

    n = (lambda big, small: small) if tiny else (lambda big, small: big)
    standard, camicia = space("standard"), space("camicia")
    casella, zanotto = standard.rank(parse_deal(CASELLA)), camicia.rank(parse_deal(ZANOTTO))
    (piece,) = gpu.exhaustive_pieces(standard, [(casella, casella + 1)])
    edge = casella - piece.first + piece.suffix_size - n(5_000, 40)  # the end of a prefix's suffix space
    small, sixteen, twenty = space("0:6,1:2,2:2"), space("0:8,1:2,2:2,3:2,4:2"), space("0:14,1:2,2:2,3:2")
    eighteen = space("0:10,1:2,2:2,3:2,4:2")
    k = n(1_000_000, 150)
    return {
        "random standard deals, a batch of 4 shards": (
            f"4 x {k:,} deals, min_cards 1,500", lambda device: run_random_batch(
                standard, [(2026, s, k, 0) for s in range(4)], min_cards=1500, device=device)),
        "a small deck that keeps many deals": (
            f"{n(2_000_000, 400):,} random deals of 0:6,1:2,2:2, min_cards 20 (its cycles kept)",
            lambda device: run_random_batch(small, [(7, 0, n(2_000_000, 400), 0)], min_cards=20, device=device)),
        "every deal of the 16-card two-suit deck": (
            f"{sixteen.count if not tiny else 600:,} ranks (11,928 never end in all), two shards",
            lambda device: run_exhaustive_batch(
                sixteen, [(0, n(sixteen.count // 2, 300)), (n(sixteen.count // 2, 300), n(sixteen.count, 600))],
                min_cards=150, device=device)),
        "every deal of the 20-card Camicia-kind deck": (
            f"{n(twenty.count, 500):,} ranks (Gentilini's 16 infinite deals)", lambda device: run_exhaustive_batch(
                twenty, [(0, n(twenty.count, 500))], min_cards=10**6, device=device)),
        "a rank range of an 18-card deck": (
            f"{n(20_000_000, 400):,} ranks of 0:10,1:2,2:2,3:2,4:2", lambda device: run_exhaustive_batch(
                eighteen, [(10**7, 10**7 + n(20_000_000, 400))], min_cards=250, device=device)),
        "random states": (
            f"{n(2_000_000, 200):,} standard states and {n(1_000_000, 600):,} of 0:6,1:2,2:2, closures on the CPU",
            lambda device: [closed(standard, r, 10_000) for r in run_random_states_batch(
                standard, [(5, 0, n(2_000_000, 200), 0)], device=device)] +
            [closed(small, r, 10_000) for r in run_random_states_batch(small, [(5, 1, n(1_000_000, 600), 0)],
                                                                      device=device)]),
        "the known cycles' ranges": (
            "ranks around Casella's (standard) and Zanotto's (Camicia) deals", lambda device: run_exhaustive_batch(
                standard, [(casella - n(5_000, 3), casella + n(5_000, 3))], min_cards=10**6, device=device) +
            run_exhaustive_batch(camicia, [(zanotto - n(5_000, 2), zanotto + n(5_000, 4))], min_cards=10**6,
                                 device=device)),
        "standard ranks across a prefix's end": (
            f"{n(10_000, 80):,} ranks around the end of the suffix space of Casella's deal",
            lambda device: run_exhaustive_batch(standard, [(edge, edge + n(10_000, 80))], min_cards=10**6,
                                                device=device)),
    }


def check_cases(tiny: bool, report: dict) -> bool:
    """Each case on the CPU and twice on the GPU: equal in every field; True when all are."""
    from gpu_sim_cases import difference

    from kernels.sweep import gpu

    ok = True
    report["cases"] = {}
    for name, (what, play) in cases(tiny).items():
        t = time.perf_counter()
        cpu = play("cpu")
        cpu_s = time.perf_counter() - t
        t = time.perf_counter()
        before = dict(gpu.STATS)
        first = play("gpu")
        gpu_s = time.perf_counter() - t
        again = play("gpu")
        against_cpu = "; ".join(d for d in map(difference, cpu, first) if d)
        against_itself = "; ".join(d for d in map(difference, first, again) if d)
        ok = ok and not against_cpu and not against_itself
        report["cases"][name] = dict(
            what=what, shards=len(cpu), deals=sum(r.deals for r in cpu), cycles=sum(r.cycles for r in cpu),
            kept=sum(len(r.candidates) for r in cpu), against_cpu=against_cpu, against_itself=against_itself,
            cpu_s=round(cpu_s, 3), gpu_s=round(gpu_s, 3),
            launches=(gpu.STATS["launches"] - before["launches"]) // 2,
            continued=(gpu.STATS["continued"] - before["continued"]) // 2)
    return ok


def check_simulator_cases(report: dict) -> bool:
    """tests/gpu_sim_cases.py's cases, on this device (its own process: it plays them on CPU and GPU)."""
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "gpu_sim_cases.py")], capture_output=True, text=True,
                          timeout=900, cwd=ROOT)
    if done.returncode:
        report["simulator_cases"] = {"error": done.stderr[-2000:]}
        return False
    cases = json.loads(done.stdout.strip().splitlines()[-1])
    report["simulator_cases"] = {name: case["difference"] for name, case in cases.items()}
    return not any(case["difference"] for case in cases.values())


# ---------------------------------------------------------------- the machine

def machine(report: dict) -> None:
    from kernels.sweep import cuda as engine
    from kernels.sweep import gpu

    versions = {}
    for package in ("numpy", "numba", "numba-cuda", "llvmlite"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = None
    report["machine"] = dict(python=platform.python_version(), platform=platform.platform(), packages=versions,
                             simulator=engine.SIMULATOR, device=gpu.describe_gpu())
    if engine.SIMULATOR:
        return
    from numba import cuda
    report["machine"]["driver"] = cuda.cudadrv.driver.driver.get_version()
    report["machine"]["runtime"] = cuda.runtime.get_version()
    if shutil.which("nvidia-smi"):
        smi = subprocess.run(["nvidia-smi",
                              "--query-gpu=name,driver_version,memory.total,clocks.max.sm,ecc.mode.current",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=60)
        report["machine"]["nvidia_smi"] = smi.stdout.strip()


def compile_times(report: dict) -> None:
    """Each mode's kernel compiled (its first launch's cost), then loaded in a second process (Numba's disk
    cache: a GPU actor that starts later pays only that)."""
    from kernels.sweep import cuda as engine
    from kernels.sweep import gpu
    from kernels.sweep.modes import NAMES

    times = {}
    for mode, name in NAMES.items():
        t = time.perf_counter()
        blocks = gpu.resident_blocks(engine, mode)
        times[name] = dict(compile_s=round(time.perf_counter() - t, 2), resident_blocks=blocks)
    if not engine.SIMULATOR:
        load = ("import time; t = time.perf_counter(); from kernels.sweep import gpu, cuda; from kernels.sweep.modes "
                "import NAMES; [gpu.resident_blocks(cuda, m) for m in NAMES]; print(time.perf_counter() - t)")
        done = subprocess.run([sys.executable, "-c", load], capture_output=True, text=True, timeout=600, cwd=ROOT)
        times["second_process_s"] = float(done.stdout.strip()) if done.returncode == 0 else done.stderr[-500:]
    report["compile"] = times


# ---------------------------------------------------------------- speed

def clock_reader(samples: list, stop: threading.Event) -> None:
    while not stop.wait(2.0):
        done = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,temperature.gpu,power.draw",
                               "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=30)
        samples.append(done.stdout.strip())


def speed(tiny: bool, report: dict) -> None:
    from helpers import space

    from kernels.sweep import run_random_batch

    standard = space("standard")
    sizes = [100, 300] if tiny else [10**5, 10**6, 10**7, 10**8, 10**9]
    launches = []
    run_random_batch(standard, [(9, 0, 32, 0)], min_cards=10**6, device="gpu")  # (warm)
    for count in sizes:
        t = time.perf_counter()
        run_random_batch(standard, [(9, 1, count, 0)], min_cards=10**6, device="gpu")
        s = time.perf_counter() - t
        launches.append(dict(deals=count, seconds=round(s, 4), deals_per_s=round(count / s)))
    report["launches"] = launches
    seconds, count = (0.5, 100) if tiny else (30.0, 10**9)
    samples: list[str] = []
    stop = threading.Event()
    reader = threading.Thread(target=clock_reader, args=(samples, stop), daemon=True)
    if shutil.which("nvidia-smi"):
        reader.start()
    played, t, k = 0, time.perf_counter(), 0
    while time.perf_counter() - t < seconds:
        played += sum(r.deals for r in run_random_batch(standard, [(10, k, count, 0)], min_cards=10**6, device="gpu"))
        k += 1
    elapsed = time.perf_counter() - t
    stop.set()
    try:
        model = model_here(samples, 2_000 if tiny else 20_000)
    except Exception as error:  # (the model is a comparison, not a step of the check)
        model = dict(error=f"{type(error).__name__}: {str(error)[:300]}")
    report["bench"] = dict(seconds=round(elapsed, 2), deals=played, deals_per_s=round(played / elapsed), model=model,
                           clock_samples=samples[:20])


def model_here(samples: list[str], games: int = 20_000) -> dict:
    """benchmarks/warp_model.py's figure scaled to this device: its multiprocessors, and its SM clock under the
    bench's load (the median nvidia-smi read; else the device's top clock). The model compiles the kernel for
    sm_90 with the CUDA toolkit's ptxas and nvdisasm wheels, in a process of its own (never the simulator)."""
    from kernels.sweep import cuda as engine

    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "warp_model.py"), "--games", str(games), "--json"],
                          capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)
    if done.returncode:
        return dict(error=(done.stderr.strip().splitlines() or ["no output"])[-1][:300])
    model = json.loads(done.stdout)
    figure = model["row"]["figure"]
    h200 = model["machine"]["multiprocessors"] * model["machine"]["clock_hz"]
    if engine.SIMULATOR:
        multiprocessors, clock_hz = model["machine"]["multiprocessors"], model["machine"]["clock_hz"]
    else:
        device = engine.cuda.get_current_device()
        multiprocessors = device.MULTIPROCESSOR_COUNT
        clocks = sorted(float(x.split(",")[0]) * 1e6 for x in samples if x.split(",")[0].strip().isdigit())
        clock_hz = clocks[len(clocks) // 2] if clocks else device.CLOCK_RATE * 1e3
    return dict(deals_per_s=round(figure * multiprocessors * clock_hz / h200), h200_deals_per_s=round(figure),
                multiprocessors=multiprocessors, clock_hz=clock_hz)


# ---------------------------------------------------------------- tools

LAUNCH = """
import sys
sys.path.insert(0, {root!r}); sys.path.insert(0, {tests!r})
from helpers import space
from kernels.sweep import run_exhaustive_batch, run_random_batch, run_random_states_batch
size = int(sys.argv[1])
run_random_batch(space("standard"), [(3, 0, size, 0), (3, 1, size // 2, 0)], min_cards=500, device="gpu")
if size < 10**6:
    run_exhaustive_batch(space("0:6,1:2,2:2"), [(0, 600), (600, 1260)], min_cards=0, device="gpu")
    run_random_states_batch(space("0:6,1:2,2:2"), [(3, 0, size, 0)], device="gpu")
"""


def tools(report: dict) -> bool:
    """compute-sanitizer's racecheck and synccheck on small launches; ncu's counters on a large one. True
    where no tool found an error (a missing tool is said, not failed)."""
    script = LAUNCH.format(root=str(ROOT), tests=str(ROOT / "tests"))
    out: dict = {}
    clean = True
    sanitizer = shutil.which("compute-sanitizer")
    for tool in ("racecheck", "synccheck"):
        if not sanitizer:
            out[tool] = "compute-sanitizer is not on the PATH"
            continue
        done = subprocess.run([sanitizer, "--tool", tool, sys.executable, "-c", script, "2000"], capture_output=True,
                              text=True, timeout=600, cwd=ROOT)
        summary = [line for line in done.stdout.splitlines() + done.stderr.splitlines() if "ERROR SUMMARY" in line]
        out[tool] = dict(returncode=done.returncode, summary=summary[-1] if summary else done.stdout[-500:])
        clean = clean and done.returncode == 0 and bool(summary) and " 0 errors" in summary[-1]
    ncu = shutil.which("ncu")
    if ncu:
        done = subprocess.run([ncu, "--kernel-name", "regex:random_sweep", "--launch-skip", "0", "--launch-count", "1",
                               "--metrics", ",".join(NCU_METRICS.values()), "--csv", sys.executable, "-c", script,
                               "100000000"], capture_output=True, text=True, timeout=600, cwd=ROOT)
        values = {}
        for label, metric in NCU_METRICS.items():
            rows = [line for line in done.stdout.splitlines() if metric in line]
            values[label] = rows[-1].split('","')[-1].strip('"') if rows else None
        out["ncu"] = dict(returncode=done.returncode, metrics=values,
                          tail=done.stdout[-800:] if done.returncode else "")
    else:
        out["ncu"] = "ncu is not on the PATH"
    report["tools"] = out
    return clean


# ---------------------------------------------------------------- the report

def markdown(report: dict) -> str:
    m = report["machine"]
    lines = ["# bmn GPU check", "", f"- device: {m['device']}", f"- python {m['python']}, {m['packages']}"]
    if "driver" in m:
        lines.append(f"- driver {m['driver']}, CUDA runtime {m['runtime']}; nvidia-smi: {m.get('nvidia_smi')}")
    lines += ["", "## Compile", "", "| kernel | first compile (s) | resident one-warp blocks |",
              "| --- | ---: | ---: |"]
    for name, c in report.get("compile", {}).items():
        if isinstance(c, dict):
            lines.append(f"| {name} | {c['compile_s']} | {c['resident_blocks']:,} |")
    if "second_process_s" in report.get("compile", {}):
        lines.append(f"\nLoaded again in a second process: {report['compile']['second_process_s']} s.")
    lines += ["", "## GPU against CPU (each GPU shard twice)", "",
              "| case | what | shards | deals | kept | launches | GPU s | CPU s | against the CPU | against itself |",
              "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    for name, c in report.get("cases", {}).items():
        lines.append(f"| {name} | {c['what']} | {c['shards']} | {c['deals']:,} | {c['kept']:,} | {c['launches']} | "
                     f"{c['gpu_s']} | {c['cpu_s']} | {c['against_cpu'] or 'equal'} | "
                     f"{c['against_itself'] or 'equal'} |")
    sim = report.get("simulator_cases", {})
    if sim:
        lines.append("\nThe simulator's cases on this device: "
                     + ("all equal" if not any(sim.values()) else "; ".join(f"{k}: {v}" for k, v in sim.items() if v)))
    if "launches" in report:
        lines += ["", "## Speed (random standard deals, cycle detection on)", "", "| deals a launch | s | deals/s |",
                  "| ---: | ---: | ---: |"]
        lines += [f"| {x['deals']:,} | {x['seconds']} | {x['deals_per_s']:,} |" for x in report["launches"]]
        b = report["bench"]
        m = b["model"]
        said = (f"the model says {m['deals_per_s']:.3g} for this device ({m['h200_deals_per_s']:.3g} for an H200)"
                if "deals_per_s" in m else f"no model here: {m['error']}")
        lines.append(f"\nBench: {b['deals']:,} deals in {b['seconds']} s = {b['deals_per_s']:,} deals/s ({said}); SM "
                     f"clock, temperature, power: {', '.join(b['clock_samples'][:5]) or 'not read'}.")
    if "tools" in report:
        lines += ["", "## Tools", ""] + [f"- {k}: {v}" for k, v in report["tools"].items()]
    if report.get("errors"):
        lines += ["", "## Steps that could not run", ""] + [f"- {k}: {v}" for k, v in report["errors"].items()]
    lines += ["", f"Verdict: {report['verdict']}", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.environ.get("OUT") or "gpu-check")
    parser.add_argument("--tiny", action="store_true", help="tiny sizes (under the simulator)")
    parser.add_argument("--skip-tools", action="store_true", help="no compute-sanitizer, no ncu")
    args = parser.parse_args(argv)
    report: dict = {"kind": "measured" if not os.environ.get("NUMBA_ENABLE_CUDASIM") else "simulated", "errors": {}}
    equal = True
    steps = [("machine", lambda: machine(report)), ("compile", lambda: compile_times(report)),
             ("cases", lambda: check_cases(args.tiny, report))]
    if not args.tiny:
        steps.append(("simulator cases", lambda: check_simulator_cases(report)))
    steps.append(("speed", lambda: speed(args.tiny, report)))
    if not (args.tiny or args.skip_tools):
        steps.append(("tools", lambda: tools(report)))
    for name, step in steps:
        t = time.perf_counter()
        try:
            result = step()
            if result is False:
                equal = False
        except Exception as error:  # the report says which step failed and how; the others still run
            report["errors"][name] = f"{type(error).__name__}: {str(error)[:1000]}"
        report.setdefault("step_seconds", {})[name] = round(time.perf_counter() - t, 1)
    # What a device image may lack (the check needs numpy, numba and numba-cuda alone): none of it imported.
    report["imported_beyond_numba"] = sorted({name.split(".")[0] for name in sys.modules} & BEYOND)
    code = 1 if not equal else (2 if report["errors"] else 0)
    report["verdict"] = {0: "every GPU result equals the CPU's and itself",
                         1: "a GPU result differs from the CPU's or from itself, or a tool found an error (see above)",
                         2: "a step could not run (see above)"}[code]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "gpu_check.json").write_text(json.dumps(report, indent=1, default=str))
    (out / "gpu_check.md").write_text(markdown(report))
    print(markdown(report))
    return code


if __name__ == "__main__":
    sys.exit(main())
