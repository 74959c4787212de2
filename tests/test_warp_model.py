"""The model of the shipped GPU sweep, kernels/sweep/cuda.py (benchmarks/warp_model.py, benchmarks/sass.py): CUDA's
occupancy rules, the recorded games against game2, the flat loop's scheduling and a scheduler's latencies on games
and instructions built by hand, the kernel's SASS read by region and by function (each kernel compiled once for the
module), and the figures benchmarks/README.md and docs/gpu.md give from it, on 100,000 recorded games."""

from __future__ import annotations

import os
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "benchmarks"))

import sass  # noqa: E402
import warp_model  # noqa: E402
from warp_model import GAME_END, SEG, TRICK_END, Traces, flat, flat_model, occupancy  # noqa: E402

# ---------------------------------------------------------------- occupancy

@pytest.mark.parametrize("registers, threads, shared, cc, warps, limit", [
    # 98 registers: 3,136 a warp, allocated as 3,328; a sub-partition's 16,384 hold 4 warps: 16 a
    # multiprocessor, 4 blocks of 4 warps
    (98, 128, 16384, (9, 0), 16, "registers"),
    (126, 128, 16384, (9, 0), 16, "registers"),  # 4,032 -> 4,096 a warp: 4 a sub-partition
    (93, 32, 8980, (9, 0), 20, "registers"),  # 2,976 -> 3,072: 5 a sub-partition (not 65,536 / 3,072 = 21)
    (96, 32, 8980, (9, 0), 20, "registers"),
    (94, 32, 11028, (9, 0), 19, "shared memory"),  # 11,028 + 1,024 -> 12,160 bytes a block: 19 in 228 KiB
    (32, 32, 0, (9, 0), 32, "blocks"),  # 32 blocks a multiprocessor at most
    (32, 256, 0, (9, 0), 64, "registers"),  # 64 warps: registers and warps both allow 8 blocks
    (40, 32, 48 * 1024, (9, 0), 4, "shared memory"),  # 49 KiB + 1 KiB reserved a block: 4 in 228 KiB
    (128, 128, 0, (7, 5), 16, "registers"),  # Turing: 4,096 a warp, 4 a sub-partition
    (64, 128, 0, (7, 5), 32, "registers"),  # 8 a sub-partition, and Turing's 32 warps: a tie
    (93, 32, 8980, (8, 0), 16, "shared memory"),  # 10,112 bytes a block in 164 KiB
    (93, 32, 8980, (8, 9), 10, "shared memory"),  # in 100 KiB
    (257, 32, 0, (9, 0), 0, "registers"),  # over cuda_occupancy.h's 256 registers a thread: no block fits
])
def test_occupancy_follows_cudas_allocation_rules(registers, threads, shared, cc, warps, limit):
    found = occupancy(registers, threads, shared, cc)
    assert found["warps"] == warps
    assert found["limit"] == limit  # on a tie, the first of registers, shared memory, warps, blocks
    assert found["fraction"] == pytest.approx(warps / warp_model.LIMITS[cc]["warps"])


# ---------------------------------------------------------------- traces

def games(*tricks_rounds) -> Traces:
    """Games given as their payment rounds per trick: (1, 0) is a game of two tricks, the first with one
    round of payment after its free play, the second over in its free play."""
    codes, offsets = [], [0]
    for game in tricks_rounds:
        for t, rounds in enumerate(game):
            codes += [SEG] * rounds + [GAME_END if t == len(game) - 1 else TRICK_END]
        offsets.append(len(codes))
    n = len(tricks_rounds)
    return Traces(np.array(codes, dtype=np.uint8), np.array(offsets, dtype=np.int64),
                  np.array([len(g) for g in tricks_rounds], dtype=np.int64), np.zeros(n, dtype=np.int64),
                  np.zeros(n, dtype=bool))


@pytest.fixture(scope="module")
def recorded():
    return warp_model.traces(100_000)


def test_the_recorder_plays_game2s_games(recorded):
    """Tricks and cards of every game equal game2's on the same 10,000 deals of the stream; the codes
    say the same tricks, and each game ends once, on its last code."""
    n = 10_000
    expected = np.zeros((n, 2), dtype=np.int64)
    warp_model.played_by_game2(warp_model.stream_key(1, 0), warp_model.STANDARD, 52, 26, n, expected)
    assert (recorded.tricks[:n] == expected[:, 0]).all()
    assert (recorded.cards[:n] == expected[:, 1]).all()
    ends = np.add.reduceat((recorded.codes != SEG).astype(np.int64), recorded.offsets[:-1])
    assert (ends == recorded.tricks).all()
    assert (recorded.codes[recorded.offsets[1:] - 1] == GAME_END).all()
    assert (recorded.codes == GAME_END).sum() == recorded.games
    assert not recorded.capped.any() and 30 < recorded.tricks.mean() < 40


def test_a_game_that_does_not_end_is_cut_and_marked():
    tr, full = warp_model.traces(200, cap=20), warp_model.traces(200)
    long = full.tricks > 20
    assert long.any() and (tr.capped == long).all()
    assert (tr.tricks == np.minimum(full.tricks, 20)).all() and (tr.cards[~long] == full.cards[~long]).all()


# ---------------------------------------------------------------- schedulings, by hand

def test_a_flat_warp_starts_the_next_game_at_once():
    # Two lanes, a checkpoint every iteration: lane 0 plays game 0 (one segment) in iteration 1 and
    # then waits; lane 1 plays game 1's five segments in iterations 1-5.
    tr = games((0,), (2, 1))
    costs = {"loop": Counter(int=1, total=1), "checkpoint": Counter(int=2, total=2),
             "refill": Counter(int=50, total=50), "take": Counter(int=3, total=3),
             "segment": Counter(int=10, total=10), "trick": Counter(int=3, bits=1, total=4),
             "finish": Counter(int=7, total=7)}
    found = flat_model(tr, costs, check=1, lanes=2)
    assert found["runs"] == dict(loop=5, checkpoint=6, refill=1, take=5, segment=5, trick=3, finish=2, brent=0)
    assert found["utilisation"] == pytest.approx(6 / 10)
    assert found["warp_instructions_per_deal"] == pytest.approx((5 + 12 + 50 + 15 + 50 + 12 + 14) / 2)
    assert found["per_deal"]["bits"] == pytest.approx(3 / 2)
    # Four games: lane 0 plays games 0, 2 and 3 while lane 1 plays its five segments.
    tr = games((0,), (2, 1), (0,), (0,))
    out = np.zeros(warp_model.N_FLAT, dtype=np.int64)
    flat(tr.codes, tr.offsets, 2, 1, 2, 64, 1000, out, warp_model.NO_MASKS)
    assert out[-2] == 8 and out[-1] == 5


def test_a_flat_warp_refills_by_its_rules():
    tr = games(*[(0,)] * 8)  # one-segment games: every lane wants a deal every iteration
    every = flat_model(tr, {}, check=1, lanes=2, threshold=2)
    assert every["runs"]["refill"] == 4 and every["utilisation"] == 1
    waiting = flat_model(tr, {}, check=4, lanes=2, threshold=-1)  # only when fewer are ready than lanes wait
    assert waiting["runs"]["refill"] == 4 and waiting["runs"]["checkpoint"] == 5
    full = flat_model(tr, {}, check=1, lanes=2, threshold=100, capacity=3)  # a refill must fit in the queue
    assert full["runs"]["refill"] == 4


def test_brents_check_runs_at_the_trick_ends_past_brent_start():
    # One lane, a game of three tricks (rounds 1, 0, 2), Brent's check from the first trick on: it runs at
    # the ends of tricks 1 and 2 (the game's end is a finish, not a check); from the second trick on, at the
    # end of trick 2 alone.
    tr = games((1, 0, 2))
    brent = {"brent": Counter(int=1, total=1), "trick": Counter(int=100, total=100)}
    found = flat_model(tr, brent, check=1, lanes=1, brent_start=1)
    assert found["runs"]["brent"] == 2 and found["warp_instructions_per_deal"] == 3 * 100 + 2
    assert flat_model(tr, brent, check=1, lanes=1, brent_start=2)["runs"]["brent"] == 1


@pytest.mark.parametrize("lanes", [1, 4, 32])
def test_identical_games_keep_every_lane_busy(lanes):
    tr = games(*[(1, 2, 0)] * (lanes * 5))
    assert flat_model(tr, {}, check=1, lanes=lanes)["utilisation"] == 1


def test_throughput_takes_the_pipe_that_binds():
    found = warp_model.throughput(Counter(int=400, imad=100, bits=50, shared=20, shared64=10, total=600))
    assert found["bounds"]["issue"] == 150 and found["bounds"]["alu"] == 200 and found["bounds"]["xu"] == 100
    assert found["bounds"]["lsu"] == 20 + 10 * 2
    assert found["bound"] == "alu" and found["deals_per_s"] == pytest.approx(132 * 1.98e9 / 200)


# ---------------------------------------------------------------- latencies, by hand

def listing(*lines):
    """Instructions from SASS text, as nvdisasm prints them."""
    return [sass.Instruction(16 * k, None, None, text.split()[0], sass.classify(text.split()[0]),
                             f"/*{16 * k:04x}*/ {text} ;", None, None) for k, text in enumerate(lines)]


def test_what_an_instruction_writes_and_reads():
    cases = {
        "ISETP.NE.AND.EX P3, PT, R53, RZ, PT, P3": (("P3",), ("R53", "P3")),
        "IADD3 R35, P1, P3, R35, UR8, R36": (("R35", "P1", "P3"), ("R35", "UR8", "R36")),
        "IADD3.X R58, RZ, UR9, R58, P1, P3": (("R58",), ("UR9", "R58", "P1", "P3")),
        "SHFL.IDX PT, R60, R56, R69, 0x1f": (("R60",), ("R56", "R69")),
        "LDS.64 R38, [R38+0x8]": (("R38", "R39"), ("R38",)),
        "STS.64 [R75], R52": ((), ("R75", "R52", "R53")),
        "IMAD.WIDE.U32 R18, R20, UR4, R18": (("R18", "R19"), ("R20", "UR4", "R18", "R19")),
        "CS2R R26, SRZ": (("R26", "R27"), ()),
        "BAR.RED.POPC.DEFER_BLOCKING 0x0, !P0": (("B",), ("P0",)),
        "B2R.RESULT R53": (("R53",), ("B",)),
        "REDG.E.ADD.64.STRONG.GPU desc[UR10][R18.64], R12": ((), ("UR10", "R18", "R19", "R12", "R13")),
        "VOTEU.ANY UR4, UPT, PT": (("UR4",), ()),
    }
    for text, expected in cases.items():
        (ins,) = listing(text)
        assert sass.dependences(ins) == expected, text
    guarded = sass.Instruction(0, None, None, "LDS", "shared", "/*0000*/ @!P1 LDS R52, [R52+0x1304] ;", None, None)
    assert sass.dependences(guarded) == (("R52",), ("P1", "R52"))
    assert sass.latency(listing("POPC R1, R2")[0]) == 10 and sass.latency(listing("LDS R1, [R2]")[0]) == 29
    assert sass.latency(listing("IMAD.MOV.U32 R1, RZ, RZ, R2")[0]) == 5


def run_schedule(rows, warps=1):
    """One part of these instructions, run once by each of `warps` warps: (cycles, issued)."""
    prog = warp_model.Program(*warp_model.encode(listing(*rows)), np.array([0, len(rows)], np.int64), {})
    parts = np.zeros(warps, dtype=np.int8)
    return warp_model.schedule(prog.latency, prog.pipe, prog.hold, prog.writes, prog.reads, prog.starts, parts,
                               np.arange(warps, dtype=np.int64), np.arange(1, warps + 1, dtype=np.int64), 64)


def test_a_warp_waits_for_what_it_reads_and_for_its_pipe():
    chain = [f"IADD3 R{k + 1}, R{k}, 0x1, RZ" for k in range(10)]  # each reads the one before
    assert run_schedule(chain) == (9 * 4 + 1, 10)  # 4 cycles each (the ALU's latency)
    apart = [f"IADD3 R{k + 20}, R{k}, 0x1, RZ" for k in range(10)]  # independent: the ALU pipe, 2 cycles each
    assert run_schedule(apart) == (9 * 2 + 1, 10)
    mixed = [f"{op} R{k + 20}, R{k}, 0x1, RZ" for k, op in zip(range(10), ["IADD3", "IMAD.IADD"] * 5)]
    assert run_schedule(mixed) == (10, 10)  # ALU and FMA pipes in turn: one a cycle
    assert run_schedule(["LDS R1, [R2]", "IADD3 R3, R1, 0x1, RZ"]) == (29 + 1, 2)


def test_warps_of_a_scheduler_hide_each_others_latencies():
    chain = [f"IADD3 R{k + 1}, R{k}, 0x1, RZ" for k in range(10)]
    one, _ = run_schedule(chain)
    two, issued = run_schedule(chain, warps=2)
    assert issued == 20 and two == one + 2  # the second warp's chain in the first one's gaps (after its pipe)
    many, _ = run_schedule(chain, warps=8)
    assert many == 8 * 10 * 2 - 1  # eight chains fill the ALU pipe, 2 cycles an instruction


# ---------------------------------------------------------------- the SASS

def tools_or_skip():
    try:
        sass.ptxas(), sass.nvdisasm()
    except sass.MissingTool as error:
        pytest.skip(str(error))


@pytest.fixture(scope="module")
def current(recorded):
    """The shipped kernel's row of the model (its SASS compiled once for the module)."""
    tools_or_skip()
    return warp_model.model_kernel(recorded, "random_sweep")


def test_every_instruction_has_a_class_a_file_and_a_line(current):
    listed = sass.instructions("random_sweep")  # raises UnknownOpcode on an opcode the table does not know
    assert all(ins.kind in sass.CLASSES for ins in listed)
    placed = [ins for ins in listed if ins.line]
    assert len(placed) > 0.95 * len(listed)
    for file in {ins.file for ins in placed}:  # the file numbers in the line table were read back right
        lines = Path(file).read_text().count("\n") + 1
        assert os.path.exists(file) and max(ins.line for ins in placed if ins.file == file) <= lines


def test_every_class_has_a_pipe_and_a_rate():
    assert set(sass.OPCODES.values()) <= set(sass.CLASSES)
    assert sass.classify("LDS.64") == "shared64" and sass.classify("IMAD.MOV.U32") == "imad"
    with pytest.raises(sass.UnknownOpcode):
        sass.classify("HMMA.16816.F32")


def test_inlined_functions_keep_their_own_instructions(current):
    """Each instruction of a function Numba inlined is attributed to that function's file and lines (what
    BRANCH_WEIGHTS relies on to weigh dealing's branches)."""
    from kernels import rng
    from kernels.engines import segments

    listed = sass.instructions("random_sweep")
    owners = sass.attribute(listed, [sass.span(segments.step), sass.span(rng.mix64)])
    found = {name: sass.count([ins for ins, o in zip(listed, owners) if o == name]) for name in set(owners)}
    assert found["step"]["total"] > 50 and found["step"]["bits"] > 0  # its counts of trailing zeros
    assert found["mix64"]["imad"] > 0  # the multiplications of SplitMix64
    assert sum(c["total"] for c in found.values()) == len(listed)


def test_the_regions_of_the_flat_loop(current):
    regions = sass.regions("random_sweep")
    for name in ("checkpoint", "refill", "take", "segment", "finish", "brent", "keep"):
        assert regions[name]["total"] > 0, name
    assert sum(c["total"] for c in regions.values()) == len(sass.instructions("random_sweep"))
    assert regions["segment"]["bits"] > 0
    assert sass.resources("random_sweep")["registers"] == current["ptxas"]["registers"]


def test_the_flat_loop_keeps_at_least_70_percent_of_lanes_busy(current):
    assert current["utilisation"] >= 0.70
    assert current["deals_per_s"] > 0 and current["bound"] in ("issue", "alu", "fma", "xu", "lsu")


def test_the_occupancy_in_the_benchmarks_readme_is_the_codes(current):
    """benchmarks/README.md states each sweep kernel's registers, shared memory and occupancy as the code
    computes them."""
    text = (HERE.parent / "benchmarks" / "README.md").read_text()
    assert current["ptxas"] == sass.resources("random_sweep")
    for kernel in ("random_sweep", "states_sweep", "exhaustive_sweep"):
        figures = sass.resources(kernel)
        occ = warp_model.occupancy(figures["registers"], sass.kernel_module().THREADS, figures["shared"])
        row = next(line for line in text.splitlines() if line.startswith(f"| `{kernel}` |"))
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert int(cells[3]) == figures["registers"] and cells[4] == f"{figures['shared']:,} bytes", (kernel, figures)
        assert re.sub(r"\D", "", cells[5].split("(")[0]) == str(occ["warps"]), \
            f"benchmarks/README.md should say {kernel}: {occ['warps']} warps ({occ['fraction']:.0%}, {occ['limit']})"


def test_the_default_random_config_fills_an_h200(recorded):
    """A GPU batch of the default random config (gpu_batch 0: as many shards as fill the device) on one
    H200, by the compiled kernel's occupancy: every resident lane gets work, and the lanes are busy at
    least 95% of the launch (recorded games). One shard a launch, as before GPU batches were one launch,
    leaves most of the device idle."""
    f = warp_model.default_fill(recorded)
    assert f["gpu_batch"] == 0 and f["lanes"] == 132 * f["warps"] * 32
    assert f["with_work"] >= 0.95 and f["busy"] >= 0.95, f
    one = warp_model.fill_model(recorded, f["lanes"], f["shard_size"], gpu_batch=1)
    assert one["busy"] < 0.2 < f["busy"]
    text = (HERE.parent / "docs" / "gpu.md").read_text()
    assert f"{f['busy']:.0%} of the launch" in text and f"{f['shards']} shards" in text, \
        f"docs/gpu.md should say: a GPU batch of {f['shards']} shards, busy {f['busy']:.0%} of the launch"


def test_latencies_cost_the_kernel_what_the_throughput_bound_leaves_out(current, recorded):
    """The shipped kernel with its occupancy's warps: in-order issue, latencies and pipes make it slower
    than the throughput bound and no faster than one warp's chains allow; more warps a scheduler, faster."""
    row = current
    t = row["latency"]
    assert t["warps_per_scheduler"] == row["occupancy"]["warps"] // 4
    assert t["deals_per_s"] < row["deals_per_s"] and row["figure"] == min(
        row["deals_per_s"], t["deals_per_s"], t["latency_bound_deals_per_s"])
    assert t["deals_per_s"] <= t["latency_bound_deals_per_s"] and 0 < t["issue_rate"] <= 1
    prog = warp_model.program()
    assert {part for part, listed in prog.instructions.items() if listed} >= {"segment", "take", "refill", "finish"}
    # the refill's loops over the 16 penalty cards, run out: more than its static instructions
    assert len(prog.instructions["refill"]) > \
           2 * sum(1 for w in sass.region_of_each("random_sweep")[1] if w == "refill")
    few = warp_model.traces(5_000)
    slow, fast = (warp_model.latency_model(few, prog, w)["deals_per_s"] for w in (1, 8))
    assert slow < fast


def test_the_gpu_figure_in_the_benchmarks_readme_is_the_models(current):
    """benchmarks/README.md's figure for the flat kernel is what the model prints (to 0.01 G)."""
    text = (HERE.parent / "benchmarks" / "README.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| `kernels/sweep/cuda.py`: flat"))
    assert f"**{current['figure'] / 1e9:.2f} G**" in row, row
    import atlas_curve  # (the hunts' prices in docs/atlas.md and README.md are at this figure)

    assert atlas_curve.GPU_GAMES_S == pytest.approx(current["figure"], abs=0.006e9)
