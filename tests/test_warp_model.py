"""The GPU sweep's model (benchmarks/warp_model.py, benchmarks/sass.py): CUDA's occupancy rules, the two
schedulings on games built by hand, the SASS read region by region, and the flat loop's lane
utilisation on 100,000 recorded games."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "benchmarks"))

import warp_model  # noqa: E402
from warp_model import GAME_END, SEG, TRICK_END, converged, flat, occupancy  # noqa: E402


@pytest.mark.parametrize("registers, threads, shared, warps, limit", [
    (98, 128, 16384, 16, "registers"),  # 3,136 registers a warp, allocated as 3,328: 19 warps fit, 4 whole blocks
    (126, 128, 16384, 16, "registers"),
    (96, 32, 9000, 21, "registers"),  # 3,072 a warp: 21 one-warp blocks
    (32, 32, 0, 32, "blocks"),  # 32 blocks a multiprocessor at most
    (32, 256, 0, 64, "registers"),  # 64 warps: registers and warps both allow 8 blocks
    (40, 32, 48 * 1024, 4, "shared memory"),  # 49 KiB + 1 KiB reserved a block: 4 in 228 KiB
])
def test_occupancy_follows_cudas_allocation_rules(registers, threads, shared, warps, limit):
    found = occupancy(registers, threads, shared)
    assert found["warps"] == warps
    if limit != "registers" or warps != 64:
        assert found["limit"] == limit


def games(*tricks_rounds) -> tuple[np.ndarray, np.ndarray]:
    """Games given as their payment rounds per trick: (1, 0) is a game of two tricks, the first with one
    round of payment after its free play, the second over in its free play."""
    codes, offsets = [], [0]
    for game in tricks_rounds:
        for t, rounds in enumerate(game):
            codes += [SEG] * rounds + [GAME_END if t == len(game) - 1 else TRICK_END]
        offsets.append(len(codes))
    return np.array(codes, dtype=np.uint8), np.array(offsets, dtype=np.int64)


def test_converged_warps_wait_for_their_longest_lane():
    # Lane 0: one trick of 1 segment; lane 1: two tricks of 3 and 2 segments. The warp runs 2 trick
    # iterations with 2 and 1 payment rounds: 5 segment-iterations for 1 + 5 lane-segments.
    codes, offsets = games((0,), (2, 1))
    out = np.zeros(5, dtype=np.int64)
    converged(codes, offsets, 2, out)
    assert list(out) == [1, 2, 3, 6, 5]


def test_a_flat_warp_starts_the_next_game_at_once():
    codes, offsets = games((0,), (2, 1), (0,), (0,))
    out = np.zeros(9, dtype=np.int64)
    flat(codes, offsets, 2, 1, out)  # two lanes, a checkpoint every iteration
    assert out[7] == 1 + 5 + 1 + 1  # every segment played
    # lane 0 plays games 0, 2 and 3 in the first three iterations while lane 1 plays its five: 5 iterations
    assert out[8] == 5


@pytest.mark.parametrize("lanes", [1, 4, 32])
def test_identical_games_keep_every_lane_busy_either_way(lanes):
    codes, offsets = games(*[(1, 2, 0)] * (lanes * 5))
    out = np.zeros(5, dtype=np.int64)
    converged(codes, offsets, lanes, out)
    assert out[3] == lanes * out[4]
    out = np.zeros(9, dtype=np.int64)
    flat(codes, offsets, lanes, 1, out)
    assert out[7] == lanes * out[8]


def test_the_recorded_games_are_game2s():
    """The recorder's segments, tricks per game, agree with tricks2/game2's count (tests/test_segments.py
    holds the segments to game2 game by game; here the trace's own bookkeeping)."""
    codes, offsets = warp_model.traces(2000, seed=4)
    tricks = np.add.reduceat((codes != SEG).astype(np.int64), offsets[:-1])
    assert len(tricks) == 2000 and tricks.min() >= 1 and 20 < tricks.mean() < 60
    assert (codes[offsets[1:] - 1] == GAME_END).all()


sass = pytest.importorskip("sass")


def tools_or_skip():
    try:
        sass.ptxas(), sass.nvdisasm()
    except sass.MissingTool as error:
        pytest.skip(str(error))


@pytest.fixture(scope="module")
def result():
    tools_or_skip()
    return warp_model.model(100_000)


def test_every_opcode_of_the_kernel_is_in_a_pipe_and_every_region_is_found(result):
    """The random sweep's SASS (compiled once for the module: `python benchmarks/sass.py KERNEL` reads the
    other two the same way) splits into the loop's regions, every instruction counted once."""
    regions = sass.regions("random_sweep")  # raises on an opcode the table does not know
    for name in ("checkpoint", "refill", "take", "segment", "finish", "brent", "keep"):
        assert regions[name]["total"] > 0, name
    assert sum(c["total"] for c in regions.values()) == len(sass.instructions(sass.compiled("random_sweep")[1]))
    assert regions["segment"]["xu"] > 0  # the count of trailing zeros and popcount of a segment


def test_the_flat_loop_keeps_at_least_70_percent_of_lanes_busy(result):
    assert result["flat"]["utilisation"] >= 0.70
    assert result["converged"]["utilisation"] < 0.30  # the converged loops' idle lanes, as issue 30 measured
    assert result["flat"]["warp_instructions_per_deal"] < result["converged"]["warp_instructions_per_deal"]
    assert result["kind"] == "model" and result["assumptions"]


def test_the_occupancy_in_the_benchmarks_readme_is_the_codes(result):
    """benchmarks/README.md states the random sweep's registers and occupancy as the code computes them."""
    text = (HERE.parent / "benchmarks" / "README.md").read_text()
    registers, occ = result["ptxas"]["registers"], result["occupancy"]
    row = next(line for line in text.splitlines() if line.startswith("| `random_sweep` |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert int(cells[3]) == registers
    assert re.sub(r"\D", "", cells[5].split("(")[0]) == str(occ["warps"])
