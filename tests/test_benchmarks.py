"""Every benchmark script still imports, and those that can run in a second or two run with tiny arguments.

The scripts are not part of the package, so nothing else would notice when an API they call moves
(benchmarks/cluster_scaling.py once imported `run_shard` from a module that no longer had it).
The parametrization is over the folder, so a new script is imported here without being listed.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = sorted(BENCHMARKS.glob("*.py"))

# How each script's main is run with the tiniest arguments it accepts: (argv as sys.argv[1:], or
# None when main reads sys.argv itself; the arguments; what its output must contain).
TINY = {
    "atlas_curve": ([], [], "camicia, per deal: "),
    "atlas_speed": ([], ["0.001", "0:4,1:2,2:2", "0:3,1:2,2:1@3"], "standard, random"),
    "climb_vs_random": (None, ["2000", "1"], "climb longer in"),
    "construct_census": ([], ["0:6,1:2,2:2,3:2,4:2"], "'cycles': 18,"),
    "construct_vs_states": ([], ["0:6,1:2,2:2,3:2,4:2"], "| `0:6,1:2,2:2,3:2,4:2` (14) | "),
    "cycle_probes": ([], ["states", "0:6,1:2,2:2", "0.05"], "500,000 random states"),
    "gene_search": ([], ["0:6,1:1,2:1,3:1", "--budget", "10000", "--whole"], "| bounds, lookahead 3 (the default) |"),
    "gene_census": ([], ["3", "7"], "| 7 | 72 | 7 (1: 3, 2: 4) | 7 |"),
    "gadgets": ([], ["--small", "J-", "--max-len", "6", "--seconds", "0.01"], "| `J-` | `-` | J | 7 (3: 1, 6: 6) |"),
    "dormant_swaps": ([], ["J-K-Q--A-/--Q-J--K-A-"], "24 swaps"),
    "gpu_host": ([], ["1000000", "3000", "20000"], "the host's share"),
    "factory_reach": ([], ["0:8,1:2,2:2,3:2,4:2", "0.05", "tries=3000", "seed_states=500"], "beam 0:"),
    "longest_growth": (None, [], "strategy,seed,cpu_s,longest"),
    "longest_vs_random": (None, ["0.001", "1", "1000"], "longest longer than climb"),
    "record_cost": ([], ["--deals", "20000", "--lo", "300"], "P(X > 8344) = "),
    "shard_balance": ([], ["0:9,1:1,3:1,4:3", "--shards", "3"], "| equal estimated work |"),
    "states_bias": (None, ["--seconds", "0.05", "--decks", "0:6,1:2,2:2"], "max_imbalance 1"),
    "states_speed": ([], ["2000", "0:6,1:2,2:2"], "0:6,1:2,2:2 deals: "),
}
# Scripts whose main starts servers or a Ray cluster (tens of seconds even with tiny arguments):
# imported only, which still catches an import from a module that moved.
IMPORT_ONLY = {
    "cluster_scaling": "starts a local Ray twice",
    "driver_throughput": "starts a slowed moto S3 server in a subprocess and a local Ray",
    # compiling a kernel to SASS takes seconds: tests/test_warp_model.py runs both on the real kernels
    "sass": "compiles the GPU kernels (tests/test_warp_model.py runs it)",
    "warp_model": "compiles the GPU kernels and records 100,000 games (tests/test_warp_model.py runs it)",
    "gpu_check": "plays its cases under the simulator in a process of its own (tests/test_gpu.py runs it)",
    "known_cycles": "measures every cycle of the catalogue's sources (tests/test_catalogue.py holds its published "
                    "half to the shipped file)",
}


def load(script: Path):
    name = f"benchmark_{script.stem}"
    spec = importlib.util.spec_from_file_location(name, script)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # as an import would (dataclasses look their module up there)
    spec.loader.exec_module(module)
    return module


def test_the_benchmarks_folder_has_scripts():
    assert len(SCRIPTS) >= 8


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_imports(script):
    module = load(script)
    assert callable(module.main) and module.__doc__, f"{script.name} needs a main and a docstring"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_every_script_is_run_or_says_why_not(script):
    assert (script.stem in TINY) != (script.stem in IMPORT_ONLY), \
        f"add {script.stem} to TINY (its tiniest arguments) or IMPORT_ONLY (why it cannot run in a test)"


@pytest.mark.parametrize("stem", sorted(TINY))
def test_runs_with_tiny_arguments(stem, monkeypatch, capsys):
    argv, args, expected = TINY[stem]
    module = load(BENCHMARKS / f"{stem}.py")
    if argv is None:
        monkeypatch.setattr(sys, "argv", [f"{stem}.py", *args])
        module.main()
    else:
        module.main(args)
    out = capsys.readouterr().out
    assert expected in out and out.strip(), out


def test_states_bias_measures_shapes_and_the_census_by_imbalance(capsys):
    module = load(BENCHMARKS / "states_bias.py")
    imbalance, depths, share = module.shapes(([1, 0, 0], [0, 2]))
    assert (imbalance, depths) == (0, [0.0, 1.0]) and share == pytest.approx(0.5 / 0.6)
    module.census_table(["0:6,1:2,2:2"])  # 10 cards: its one cycle's 43 states, exactly, by imbalance
    out = capsys.readouterr().out
    assert "| `0:6,1:2,2:2` | 10 | 11,340 | 43 | " in out and out.count("per M") == 4
