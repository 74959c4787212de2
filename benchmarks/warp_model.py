"""A model of the shipped GPU sweep (kernels/sweep/cuda.py) on one H200, fed by recorded games and by the
kernel's SASS.

    python benchmarks/warp_model.py [--games 100000] [--kernel random_sweep] [--json]
    python benchmarks/warp_model.py --fill [--games 100000] [--json]

No GPU is needed and none is simulated: every figure it prints is a model, with its inputs and assumptions
beside it, uncalibrated until a GPU measures the kernel (benchmarks/gpu_check.py).

1. Traces (`traces`). N random standard deals of one stream (kernels/rng.py, as the random sweep
   deals them) are played by segments (kernels/engines/segments.py `step`): a FREE segment (free play
   from a trick boundary up to the next penalty card played, or to a player running out) or one PAY
   round (the payer pays until the payment completes, a penalty card flips the roles, or the payer
   runs out). Per game: its segments' codes (SEG, TRICK_END, GAME_END; a trick's first segment is its
   free play, the others its payment rounds), tricks, cards, and whether it was cut at `cap` tricks (a
   cycle; none among random standard deals).
2. Warps (`flat`). The traces are replayed through 32-lane warps as the kernel's flat loop runs them:
   every iteration each lane with a game plays one segment, a lane whose game ended takes a prepared
   deal from the warp's queue, and every `check` iterations the warp meets at a checkpoint and refills
   its queue (one deal a lane) when fewer than `threshold` deals are ready (and the refill fits in
   `capacity`). Lane utilisation: the lanes' segments over 32 x the warp's segment-iterations.
3. Costs (`flat_costs`): what a warp issues each time it runs a part of the kernel, a Counter of
   instruction class (benchmarks/sass.py CLASSES) -> warp-instructions, from the regions its loop marks
   with `# @name` in its SASS for sm_90 (benchmarks/sass.py `regions`), or any dict given (`flat_model`).
   A part any lane of a warp runs costs the warp all its static instructions (every branch of it: 32
   independent games take different branches). A refill's loops run once per penalty card, divided by
   the compiler's unrolling; inside them, branches that no lane or every lane alike takes at a known
   rate are weighed by that rate (BRANCH_WEIGHTS).
4. Throughput (`throughput`). Per multiprocessor, the cycles a deal needs are the largest of: its
   warp-instructions over the issue rate (4 a clock), and for each pipe the sum over its classes of
   warp-instructions over the class's rate. deals/s = multiprocessors x clock / cycles per deal, which
   assumes the resident warps hide every latency: the occupancy by CUDA's rules (`occupancy`, from
   ptxas's registers and shared memory) is printed beside it.
5. Latencies (`latency_model`). Each part's instructions in address order, with the registers each
   writes and reads and its dependent-issue latency (benchmarks/sass.py `dependences`, LATENCY:
   published figures, Hopper's where there are any), run by the warps of one scheduler (`schedule`, a
   cycle at a time): in order within a warp, one instruction a cycle, each pipe held 4 / its rate
   cycles by each instruction. It gives the cycles a deal takes, and beside them the latency bound (one
   warp alone, over the warps a scheduler has). The figure printed is the smallest of the three
   (throughput, latency bound, schedule).
6. Filling the device (`--fill`, `fill_model`): how a GPU batch of the default `random` config's shards
   fills an H200's resident lanes (kernels/sweep/gpu.py's sizing, the recorded games' lengths).
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import sys
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import numpy as np
from numba import njit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import sass  # noqa: E402

from kernels.engines.bitmask import game2, words_from_positions  # noqa: E402
from kernels.engines.segments import MID, OVER, step  # noqa: E402
from kernels.engines.workspace import default_brent_start  # noqa: E402
from kernels.rng import deal_state, random_deal, stream_key  # noqa: E402

H200 = dict(name="NVIDIA H200 SXM", multiprocessors=132, clock_hz=1.98e9)  # 132 SMs, 1.98 GHz boost
LANES = 32
SEG, TRICK_END, GAME_END = 0, 1, 2  # what a recorded segment did
STANDARD = np.array([1, 2, 3, 4] * 4, dtype=np.uint8)  # the standard deck's penalty cards, as the sweep lists them
BRENT_START = default_brent_start(52)
ASSUMPTIONS = [
    "throughput bound: every resident warp issues whenever a pipe is free, latencies hidden (the loops touch "
    "registers and shared memory, no global memory but a kept deal's slot and the tally)",
    "latencies: each warp issues its instructions in order, one when every register it reads is "
    "written (its writer's issue + the writer's latency, below); a scheduler issues one instruction a cycle, the "
    "warp that issued last first, then the others in turn; a pipe is held 4 / its rate cycles by each of its "
    "instructions (a multiprocessor's 4 schedulers share its pipes alike); a warp's iterations are a contiguous "
    "share of those of one warp over the recorded games; branches, reconvergence and barriers cost their issue "
    "slot and nothing more; no register-bank conflicts, no dual issue, no instruction-cache misses",
    "a part of the kernel any lane of a warp runs costs the warp every static instruction of it (all its branches)",
    "loops inside a deal run their trip counts (penalty cards, the deck's cards) divided by the compiler's "
    "unrolling, read from the loop's memory accesses",
    "Brent's check runs only at trick ends past brent_start = 416 tricks (how many games get there is printed "
    "above); no cycles among random standard deals",
    "a lane adds its tally to its piece's (`_flush`, global atomics) only where the launch's pieces meet and "
    "at its end: a few times a lane in a launch of ~10^2 deals a lane, not counted",
    "no deal is kept (a record hunt keeps a few in 10^9); a warp's shared atomics on one address aggregated by "
    "the compiler (one lane's ATOMS); the kernel's shared arrays [entry, lane] free of bank conflicts",
    "inside dealing's loops, Lemire's rejection branch never runs and a new random word is drawn every second "
    "draw in every lane alike (BRANCH_WEIGHTS)",
    "132 multiprocessors at 1.98 GHz; pipe rates from the CUDA C++ Programming Guide's throughput table for "
    "compute capability 9.0 (benchmarks/sass.py CLASSES); branches, barriers, votes and the uniform datapath "
    "cost an issue slot each",
]


# ---------------------------------------------------------------- occupancy (CUDA's allocation rules)

# Per compute capability, as cuda_occupancy.h (the CUDA toolkit's occupancy calculator) and the device
# properties give them: registers per SM, max warps and blocks per SM, shared memory per SM (the
# largest carveout, the default), the shared memory the driver reserves per block, the allocation
# units of registers (per warp) and shared memory (per block).
LIMITS = {
    (7, 5): dict(registers=65536, warps=32, blocks=16, shared=65536, reserved=0, reg_unit=256, smem_unit=256),
    (8, 0): dict(registers=65536, warps=64, blocks=32, shared=167936, reserved=1024, reg_unit=256, smem_unit=128),
    (8, 9): dict(registers=65536, warps=48, blocks=24, shared=102400, reserved=1024, reg_unit=256, smem_unit=128),
    (9, 0): dict(registers=65536, warps=64, blocks=32, shared=233472, reserved=1024, reg_unit=256, smem_unit=128),
}
SUB_PARTITIONS = 4  # schedulers per SM, each with a quarter of the register file (sm_70 on)
MAX_REGISTERS = 256  # per thread, as cuda_occupancy.h has it from sm_70 on (ptxas itself gives at most 255)


def occupancy(registers: int, threads_per_block: int, shared_bytes_per_block: int,
              cc: tuple[int, int] = (9, 0)) -> dict:
    """Resident blocks and warps per multiprocessor, by cuda_occupancy.h's rules, for a kernel of
    `registers` per thread, `threads_per_block` and `shared_bytes_per_block` (static and dynamic).

    Registers go to warps in units of 256, and each of the 4 sub-partitions holds a quarter of the
    register file: warps per SM = 4 x floor(16,384 / registers a warp). Shared memory goes to blocks
    in units of 128 bytes (256 on sm_75), the driver's reserved 1 KiB per block included. A block is
    resident whole or not at all. Returns blocks, warps, fraction (of the SM's warps) and limit (what
    binds first: registers, shared memory, warps or blocks)."""
    lim = LIMITS[cc]
    warps_per_block = -(-threads_per_block // 32)
    per_warp = -(-registers * 32 // lim["reg_unit"]) * lim["reg_unit"]
    # The hardware's check: a block's warps rounded up to whole sets of sub-partitions fit the register file.
    assumed = per_warp * -(-warps_per_block // SUB_PARTITIONS) * SUB_PARTITIONS
    if registers > MAX_REGISTERS or assumed > lim["registers"]:
        by_registers = 0
    elif per_warp:
        by_registers = (lim["registers"] // SUB_PARTITIONS // per_warp) * SUB_PARTITIONS // warps_per_block
    else:
        by_registers = lim["blocks"]
    per_block = -(-(shared_bytes_per_block + lim["reserved"]) // lim["smem_unit"]) * lim["smem_unit"]
    by_shared = lim["shared"] // per_block if per_block else lim["blocks"]
    by_warps = lim["warps"] // warps_per_block
    limits = [(by_registers, "registers"), (by_shared, "shared memory"), (by_warps, "warps"), (lim["blocks"], "blocks")]
    blocks, limit = min(limits, key=lambda x: x[0])
    return dict(blocks=blocks, warps=blocks * warps_per_block, fraction=blocks * warps_per_block / lim["warps"],
                limit=limit)


# ---------------------------------------------------------------- traces

class Traces(NamedTuple):
    """Recorded games: codes[offsets[g]:offsets[g + 1]] are game g's segments (SEG: the trick goes on,
    TRICK_END, GAME_END); per game its tricks, cards, and whether it was cut at `cap` tricks."""
    codes: np.ndarray  # uint8
    offsets: np.ndarray  # int64, games + 1
    tricks: np.ndarray  # int64
    cards: np.ndarray  # int64
    capped: np.ndarray  # bool

    @property
    def games(self) -> int:
        return len(self.offsets) - 1


@njit(cache=True)
def record(key, penalties, total, size0, first, count, cap, codes, offsets, tricks, cards, capped):
    """Play deals first..first+count-1 of the stream by segments (as the random sweep deals them) into
    the arrays of `Traces`. Returns the number of codes written, -1 when `codes` is too small."""
    seq = np.zeros(total, dtype=np.uint8)
    positions = np.zeros(total, dtype=np.int64)
    k = 0
    for g in range(count):
        offsets[g] = k
        random_deal(deal_state(key, first + g), positions, penalties, seq)
        m0, n0, q0, m1, n1, q1 = words_from_positions(seq, positions, penalties.shape[0], size0)
        mX, nX, qX, mY, nY, qY = m0, np.uint32(n0), q0, m1, np.uint32(n1), q1
        who = v = pl = pc = np.uint32(0)
        pm = pq = np.uint64(0)
        t = 0
        c = 0
        while True:
            mX, nX, qX, mY, nY, qY, who, v, pm, pq, pl, pc, event = step(mX, nX, qX, mY, nY, qY, who, v, pm, pq,
                                                                          pl, pc)
            if k >= codes.shape[0]:
                return -1
            code = SEG
            if event != MID:
                t += 1
                c += np.int64(pl)
                code = TRICK_END
                if event == OVER or t >= cap:
                    code = GAME_END
                    capped[g] = event != OVER
            codes[k] = code
            k += 1
            if code == GAME_END:
                break
        tricks[g] = t
        cards[g] = c
    offsets[count] = k
    return k


def traces(games: int, seed: int = 1, shard: int = 0, cap: int = 100_000) -> Traces:
    """Record `games` random standard deals of stream (seed, shard), from its deal 0."""
    codes = np.zeros(games * 128, dtype=np.uint8)
    arrays = [np.zeros(games + 1, dtype=np.int64), np.zeros(games, dtype=np.int64), np.zeros(games, dtype=np.int64),
              np.zeros(games, dtype=np.bool_)]
    while True:
        n = record(stream_key(seed, shard), STANDARD, 52, 26, 0, games, cap, codes, *arrays)
        if n >= 0:
            return Traces(codes[:n].copy(), *arrays)
        codes = np.zeros(len(codes) * 2, dtype=np.uint8)


@njit(cache=True)
def played_by_game2(key, penalties, total, size0, count, out):
    """out[g] = (tricks, cards) of game2 (kernels/engines/bitmask.py) on deal g of the stream: what the
    recorder must agree with."""
    seq = np.zeros(total, dtype=np.uint8)
    positions = np.zeros(total, dtype=np.int64)
    for g in range(count):
        random_deal(deal_state(key, g), positions, penalties, seq)
        m0, n0, q0, m1, n1, q1 = words_from_positions(seq, positions, penalties.shape[0], size0)
        period, winner, tricks, cards = game2(m0, n0, q0, m1, n1, q1, 0, 1 << 30)
        out[g, 0] = tricks
        out[g, 1] = np.int64(cards)


# ---------------------------------------------------------------- the flat loop's scheduling

# What flat() counts: the iterations in which a warp runs each part of the flat loop (any lane).
FLAT_RUNS = ("loop", "checkpoint", "refill", "take", "segment", "trick", "finish", "brent")
N_FLAT = len(FLAT_RUNS) + 2  # and the lane-segments played, the iterations
NO_MASKS = np.zeros(0, dtype=np.uint16)


@njit(cache=True)
def flat(codes, offsets, lanes, check, threshold, capacity, brent_start, out, masks):
    """The flat loop over one warp playing the games in order. out[:8]: iterations that run each of
    FLAT_RUNS; out[8]: lane-segments played; out[9]: iterations. threshold < 0: refill when fewer
    deals are ready than lanes are waiting for one. masks (empty: not kept): iteration k's parts, bit i
    for FLAT_RUNS[i]."""
    games = offsets.shape[0] - 1
    at = np.full(lanes, -1, dtype=np.int64)  # the lane's next code, -1: no game
    trick = np.zeros(lanes, dtype=np.int64)  # the lane's tricks so far
    prepared = 0  # games put into the queue
    ready = 0
    turn = 0
    while True:
        mask = 1  # the loop
        if turn % check == 0:
            out[1] += 1
            idle = 0
            for i in range(lanes):
                idle += at[i] < 0
            if idle == lanes and prepared == games and ready == 0:
                break
            mask |= 2
            low = ready < (idle if threshold < 0 else threshold)
            if low and prepared < games and ready + lanes <= capacity:
                out[2] += 1
                mask |= 4
                made = min(lanes, games - prepared)
                prepared += made
                ready += made
        out[0] += 1
        took = False
        for i in range(lanes):
            if at[i] < 0:
                took = True
                if ready > 0:
                    g = prepared - ready
                    ready -= 1
                    at[i] = offsets[g]
                    trick[i] = 0
        played = any_trick = any_end = any_brent = False
        for i in range(lanes):
            if at[i] >= 0:
                played = True
                out[8] += 1
                c = codes[at[i]]
                at[i] += 1
                if c != SEG:
                    any_trick = True
                    trick[i] += 1
                if c == GAME_END:
                    any_end = True
                    at[i] = -1
                elif c == TRICK_END and trick[i] >= brent_start:
                    any_brent = True
        for k, ran in enumerate((took, played, any_trick, any_end, any_brent)):
            if ran:
                out[3 + k] += 1
                mask |= 1 << (3 + k)
        if masks.shape[0]:
            masks[out[9]] = mask
        out[9] += 1
        turn += 1


# ---------------------------------------------------------------- costs from the SASS

def flat_costs(kernel: str = "random_sweep", penalty_cards: int = 16) -> dict[str, Counter]:
    """Region -> Counter(class -> warp-instructions each time a warp runs it), from the kernel's SASS by
    the regions its loop marks (`# @name`): a refill's loops run once per penalty card (divided by their
    unrolling), their branches weighed by BRANCH_WEIGHTS."""
    table = sass.regions(kernel)
    refill = Counter(table.get("refill", Counter()))
    for body, weighted, unroll in refill_loops(kernel):
        trips = max(1, penalty_cards // unroll)
        for kind in set(body) | set(weighted):
            refill[kind] += weighted[kind] * trips - body[kind]  # the static count holds the body once
    costs = {r: Counter(table.get(r, Counter())) for r in FLAT_RUNS + ("keep",) if r in table}
    costs["refill"] = refill
    return costs


def refill_loop_spans(listed: list[sass.Instruction], where: list[str]) -> list[tuple[int, int, int]]:
    """The innermost loops of the kernel's refill region over the deal's penalty cards: each one's first
    and last index in the listing and its unrolling (byte loads per iteration, over the loads per penalty
    card in the source: 2 where the loop also stores bytes, the draws' swap; else 1)."""
    spans = sass.loops(listed)
    inner = [(a, b) for a, b in spans if not any(a <= c and d <= b and (c, d) != (a, b) for c, d in spans)]
    out = []
    for a, b in inner:
        body = listed[a:b + 1]
        if not all(w == "refill" for w in where[a:b + 1]):
            continue
        byte_loads = sum(1 for ins in body if ins.opcode in ("LD", "LDS") and ".U8" in ins.mnemonic)
        byte_stores = sum(1 for ins in body if ins.opcode in ("ST", "STS") and ".U8" in ins.mnemonic)
        if byte_loads:  # (else an atomic's retry loop, or another loop not over the cards)
            out.append((a, b, max(1, byte_loads // (2 if byte_stores else 1))))
    return out


def refill_loops(kernel: str) -> list[tuple[Counter, Counter, int]]:
    """The refill's loops over the penalty cards (refill_loop_spans): each one's instructions by class, the
    same weighed by BRANCH_WEIGHTS, and its unrolling."""
    listed, where = sass.region_of_each(kernel)
    weights = branch_weights(listed)
    return [(sass.count(listed[a:b + 1]), weighed(listed[a:b + 1], weights[a:b + 1]), unroll)
            for a, b, unroll in refill_loop_spans(listed, where)]


# Branches inside dealing's loops that no lane, or every lane alike, takes at a known rate (the rule
# that a part costs a warp all its static instructions is for branches its lanes take independently):
# (module of kernels, function, the block's first line or None for the whole function, share of the loop's
# trips).
BRANCH_WEIGHTS = [
    # Lemire's rejection test: its 64-bit remainder runs when the low product < r, probability r / 2^32
    # (< 10^-8 for r <= 52).
    ("rng", "bounded", "if low < r:", 0.0),
    # A new 64-bit word every second draw (`have == 0`), in every lane of the warp alike.
    ("rng", "next_word", None, 0.5),
    ("rng", "mix64", None, 0.5),
]


def branch_weights(listed: list[sass.Instruction]) -> list[float]:
    """Per instruction: the share of a loop's trips in which the warp runs it (BRANCH_WEIGHTS, else 1)."""
    spans, share = [], {}
    for mod, fn, starts, weight in BRANCH_WEIGHTS:
        function = getattr(importlib.import_module(f"kernels.{mod}"), fn)
        span = sass.block(function, starts, f"{fn}:{starts}") if starts else sass.span(function)
        spans.append(span)
        share[span.name] = weight
    return [share.get(owner, 1.0) for owner in sass.attribute(listed, spans)]


def weighed(body: list[sass.Instruction], weights: list[float]) -> Counter:
    out = Counter()
    for ins, w in zip(body, weights):
        out[ins.kind] += w
        out["total"] += w
    return out


# ---------------------------------------------------------------- latencies: a scheduler's warps, in order

ITERATION = ("checkpoint", "refill", "loop", "take", "segment", "trick", "finish", "brent")  # a flat iteration's parts
PIPES = ("alu", "fma", "xu", "lsu", "shfl")  # a scheduler's pipes ("issue": none but the issue slot)


class Program(NamedTuple):
    """The kernel's parts as a scheduler runs them, one instruction a row: its latency, its pipe (-1: none),
    the cycles it holds the pipe, the registers it writes and reads (numbered; -1 pads); part p is rows
    starts[p]:starts[p + 1]."""
    latency: np.ndarray
    pipe: np.ndarray
    hold: np.ndarray
    writes: np.ndarray
    reads: np.ndarray
    starts: np.ndarray
    instructions: dict  # part -> its instructions, in the order it runs them


def part_instructions(kernel: str = "random_sweep", penalty_cards: int = 16) -> dict[str, list[sass.Instruction]]:
    """Each part of ITERATION: its instructions in address order, every branch of it (a warp's lanes take
    them all, as the throughput model counts). A refill's loops over the penalty cards run penalty_cards
    // unrolling times; an instruction BRANCH_WEIGHTS runs on a share w of the trips runs on trip k when
    floor((k + 1) w) > floor(k w) (a new random word every second draw)."""
    listed, where = sass.region_of_each(kernel)
    weights = branch_weights(listed)
    inner = {a: (b, unroll) for a, b, unroll in refill_loop_spans(listed, where)}
    out: dict[str, list] = {part: [] for part in ITERATION}
    k = 0
    while k < len(listed):
        region = where[k]
        if region == "refill" and k in inner:
            b, unroll = inner[k]
            for trip in range(max(1, penalty_cards // unroll)):
                out["refill"] += [ins for ins, w in zip(listed[k:b + 1], weights[k:b + 1])
                                  if math.floor((trip + 1) * w) > math.floor(trip * w)]
            k = b + 1
            continue
        if region in out:
            out[region].append(listed[k])
        k += 1
    return out


def encode(rows: list[sass.Instruction]) -> tuple[np.ndarray, ...]:
    """Instructions for `schedule`: each one's latency (benchmarks/sass.py LATENCY), pipe (-1: none) and the
    cycles it holds it (4 schedulers share a multiprocessor's pipes: 4 / the class's rate), the registers it
    writes and reads (numbered, -1 pads)."""
    names: dict[str, int] = {}
    writes = np.full((len(rows), 6), -1, dtype=np.int32)
    reads = np.full((len(rows), 10), -1, dtype=np.int32)
    latency, pipe, hold = (np.zeros(len(rows), dtype=np.int32) for _ in range(3))
    for i, ins in enumerate(rows):
        dst, src = sass.dependences(ins)
        for table, regs in ((writes, dst), (reads, src)):
            for c, reg in enumerate(dict.fromkeys(regs)):
                table[i, c] = names.setdefault(reg, len(names))
        latency[i] = sass.latency(ins)
        where, rate = sass.CLASSES[ins.kind]
        pipe[i] = PIPES.index(where) if where in PIPES else -1
        hold[i] = round(sass.ISSUE / rate) if where in PIPES else 1
    return latency, pipe, hold, writes, reads


def program(kernel: str = "random_sweep", penalty_cards: int = 16) -> Program:
    """The kernel's parts for `schedule`, in ITERATION's order (`encode`)."""
    parts = part_instructions(kernel, penalty_cards)
    starts = np.cumsum([0] + [len(parts[p]) for p in ITERATION]).astype(np.int64)
    return Program(*encode([ins for part in ITERATION for ins in parts[part]]), starts, parts)


def iteration_parts(masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The parts each recorded iteration runs, in ITERATION's order, laid end to end (indexes of ITERATION),
    and where each iteration starts in that list."""
    bit = [FLAT_RUNS.index(part) for part in ITERATION]
    ran = ((masks[:, None].astype(np.int64) >> np.array(bit)) & 1).astype(bool)
    parts = np.nonzero(ran)[1].astype(np.int8)
    firsts = np.concatenate([[0], np.cumsum(ran.sum(axis=1))]).astype(np.int64)
    return parts, firsts


@njit(cache=True)
def schedule(latency, pipe, hold, writes, reads, starts, parts, begin, end, registers):
    """One scheduler issuing its warps' instructions, at most one a cycle: warp w runs the parts
    parts[begin[w]:end[w]] (their rows of the program) in order, an instruction issuing once every register
    it reads is written (its writer's issue + latency) and its pipe is free (held `hold` cycles by each
    instruction), the warp that issued last first, then the others in turn (greedy, then oldest). Returns
    (the cycles until the last warp is done, the instructions issued)."""
    warps = begin.shape[0]
    ready = np.zeros((warps, registers), dtype=np.int64)
    at = begin.copy()  # each warp's part (an index into parts)
    row = np.zeros(warps, dtype=np.int64)  # its next instruction
    done = np.zeros(warps, dtype=np.bool_)
    left = 0
    for w in range(warps):
        while at[w] < end[w] and starts[parts[at[w]]] == starts[parts[at[w]] + 1]:
            at[w] += 1
        if at[w] >= end[w]:
            done[w] = True
        else:
            row[w] = starts[parts[at[w]]]
            left += 1
    free = np.zeros(8, dtype=np.int64)
    t = 0
    issued = 0
    last = 0
    while left > 0:
        chosen = -1
        for k in range(warps + 1):
            w = last if k == 0 else k - 1
            if done[w]:
                continue
            i = row[w]
            if pipe[i] >= 0 and free[pipe[i]] > t:
                continue
            ok = True
            for c in range(reads.shape[1]):
                r = reads[i, c]
                if r < 0:
                    break
                if ready[w, r] > t:
                    ok = False
                    break
            if ok:
                chosen = w
                break
        if chosen >= 0:
            w = chosen
            i = row[w]
            if pipe[i] >= 0:
                free[pipe[i]] = t + hold[i]
            for c in range(writes.shape[1]):
                r = writes[i, c]
                if r < 0:
                    break
                ready[w, r] = t + latency[i]
            issued += 1
            last = w
            row[w] += 1
            while row[w] == starts[parts[at[w]] + 1]:
                at[w] += 1
                if at[w] == end[w]:
                    done[w] = True
                    left -= 1
                    break
                row[w] = starts[parts[at[w]]]
        t += 1
    return t, issued


def latency_model(tr: Traces, prog: Program, warps: int, check: int = 16, capacity: int = 64,
                  lanes: int = LANES, brent_start: int = BRENT_START, machine: dict = H200) -> dict:
    """The recorded games played by one scheduler's `warps` warps (each a contiguous share of the flat loop's
    iterations over one warp of the games), every instruction issued in order as `schedule` does: cycles a
    deal per multiprocessor (its 4 schedulers alike) and deals/s. Beside it, the latency bound: one warp
    alone (its chains of dependent instructions, in order, one issue a cycle) over the warps a scheduler
    has, which no scheduling can beat."""
    out = np.zeros(N_FLAT, dtype=np.int64)
    flat(tr.codes, tr.offsets, lanes, check, lanes, capacity, brent_start, out, NO_MASKS)
    masks = np.zeros(int(out[-1]), dtype=np.uint16)
    flat(tr.codes, tr.offsets, lanes, check, lanes, capacity, brent_start, np.zeros(N_FLAT, dtype=np.int64), masks)
    parts, firsts = iteration_parts(masks)
    registers = int(max(prog.writes.max(), prog.reads.max())) + 1
    cut = firsts[np.linspace(0, len(masks), warps + 1).astype(np.int64)]
    cycles, issued = schedule(prog.latency, prog.pipe, prog.hold, prog.writes, prog.reads, prog.starts, parts,
                              cut[:-1], cut[1:], registers)
    alone, _ = schedule(prog.latency, prog.pipe, prog.hold, prog.writes, prog.reads, prog.starts, parts,
                        firsts[:1], firsts[-1:], registers)
    per_deal = cycles / (sass.ISSUE * tr.games)  # 4 schedulers a multiprocessor, each playing these games
    bound = alone / (warps * sass.ISSUE * tr.games)
    clock = machine["multiprocessors"] * machine["clock_hz"]
    return dict(warps_per_scheduler=warps, cycles_per_deal=per_deal, deals_per_s=clock / per_deal,
                issue_rate=issued / cycles, latency_bound_cycles=bound, latency_bound_deals_per_s=clock / bound,
                alone_cycles_per_instruction=alone / issued)


# ---------------------------------------------------------------- how a launch fills the device

@njit(cache=True)
def lanes_busy(costs, lanes, deals, grab):
    """A launch of `deals` on `lanes` lanes, each lane taking `grab` deals from the work counter whenever it
    is free (deal d costs costs[d % len(costs)] iterations: its segments and its take): (the lanes' busy
    iterations, the iterations until the last lane is done). A binary heap of the lanes' free times."""
    heap = np.zeros(lanes, dtype=np.int64)  # every lane free at 0
    n = costs.shape[0]
    busy = 0
    done = 0
    d = 0
    while d < deals:
        t = heap[0]  # the first lane free takes the next run
        work = 0
        for k in range(d, min(d + grab, deals)):
            work += costs[k % n]
        d += grab
        busy += work
        t += work
        done = max(done, t)
        # sift the root down with its new free time
        i = 0
        while True:
            c = 2 * i + 1
            if c >= lanes:
                break
            if c + 1 < lanes and heap[c + 1] < heap[c]:
                c += 1
            if heap[c] >= t:
                break
            heap[i] = heap[c]
            i = c
        heap[i] = t
    return busy, done


def fill_model(tr: Traces, lanes: int, shard_size: int, gpu_batch: int = 0) -> dict:
    """How a GPU batch of the plan's shards fills the device (kernels/sweep/gpu.py): the shards a batch takes
    (gpu_batch, or 0: `batch_for` its lanes), the deals of its launch, the grab, the fraction of the resident
    lanes that get work, and the fraction of the lanes' time spent playing until the launch's last game
    ends (each deal costing a recorded game's segments and one take, the lanes taking runs greedily)."""
    sys.path.insert(0, str(ROOT))
    from kernels.sweep import cuda, gpu

    batch = gpu_batch or gpu.batch_for(shard_size, lanes)
    deals = batch * shard_size
    grab = gpu.grab_for(deals, lanes, cuda.GRAB)
    costs = np.diff(tr.offsets) + 1
    busy, done = lanes_busy(costs, lanes, deals, grab)
    return dict(shards=batch, deals=deals, grab=grab, lanes=lanes,
                with_work=gpu.lanes_with_work(deals, lanes, cuda.GRAB), busy=busy / (lanes * done) if done else 0.0)


def default_fill(tr: Traces, machine: dict = H200) -> dict:
    """fill_model for the default `random` config (cluster/runs/config.py's SearchConfig: its shard_size and
    gpu_batch) on `machine`, its lanes from the compiled random sweep's occupancy."""
    from cluster.runs.config import SearchConfig

    figures = sass.resources("random_sweep")
    occ = occupancy(figures["registers"], sass.kernel_module().THREADS, figures["shared"])
    lanes = machine["multiprocessors"] * occ["warps"] * LANES
    config = SearchConfig()
    return dict(fill_model(tr, lanes, config.shard_size, config.gpu_batch), machine=machine["name"],
                warps=occ["warps"], shard_size=config.shard_size, gpu_batch=config.gpu_batch)


# ---------------------------------------------------------------- the figures

def throughput(per_deal: Counter, machine: dict = H200) -> dict:
    """Cycles per deal per multiprocessor (the bound that binds) and deals/s on the machine, from the
    warp-instructions a deal issues by class."""
    bounds = {"issue": per_deal["total"] / sass.ISSUE}
    for kind, (pipe, rate) in sass.CLASSES.items():
        if pipe != "issue":
            bounds[pipe] = bounds.get(pipe, 0.0) + per_deal[kind] / rate
    binding = max(bounds, key=bounds.get)
    cycles = bounds[binding]
    return dict(cycles_per_deal=cycles, bound=binding, bounds=bounds,
                deals_per_s=machine["multiprocessors"] * machine["clock_hz"] / cycles if cycles else float("inf"))


def _spend(runs: dict[str, float], costs: dict[str, Counter], games: int) -> Counter:
    per_deal = Counter()
    for part, n in runs.items():
        for kind, k in costs.get(part, Counter()).items():
            per_deal[kind] += n * k / games
    return per_deal


def flat_model(tr: Traces, costs: dict[str, Counter], check: int = 16, threshold: int = LANES, capacity: int = 64,
               lanes: int = LANES, brent_start: int = BRENT_START) -> dict:
    """The flat scheduling of the recorded games, costed: each part of FLAT_RUNS found in `costs` (a
    Counter of class -> warp-instructions) is charged for every iteration in which any lane runs it."""
    out = np.zeros(N_FLAT, dtype=np.int64)
    flat(tr.codes, tr.offsets, lanes, check, threshold, capacity, brent_start, out, NO_MASKS)
    runs = dict(zip(FLAT_RUNS, (int(x) for x in out[:len(FLAT_RUNS)])))
    per_deal = _spend(runs, costs, tr.games)
    return dict(scheduling="flat", utilisation=out[-2] / (lanes * out[-1]), iterations=int(out[-1]), runs=runs,
                warp_instructions_per_deal=per_deal["total"], per_deal=dict(per_deal), **throughput(per_deal))


def model_kernel(tr: Traces, kernel: str = "random_sweep") -> dict:
    """The model's row for one kernel of kernels/sweep/cuda.py: its flat loop's scheduling costed by its
    SASS (throughput), its latencies (`latency_model`), and the smallest of the three figures."""
    cuda = sass.kernel_module()
    figures = sass.resources(kernel)
    occ = occupancy(figures["registers"], cuda.THREADS, figures["shared"])
    costs = flat_costs(kernel)
    row = flat_model(tr, costs, check=cuda.CHECK, capacity=cuda.QUEUE)
    timing = latency_model(tr, program(kernel), occ["warps"] // SUB_PARTITIONS, check=cuda.CHECK,
                           capacity=cuda.QUEUE)
    return dict(row, label=f"{sass.MODULE}: flat", costs=costs, check=cuda.CHECK, queue=cuda.QUEUE, latency=timing,
                figure=min(row["deals_per_s"], timing["deals_per_s"], timing["latency_bound_deals_per_s"]),
                kernel=kernel, module=sass.MODULE, ptxas=figures, threads_per_block=cuda.THREADS, occupancy=occ)


def model(games: int = 100_000, kernel: str = "random_sweep", seed: int = 1) -> dict:
    tr = traces(games, seed)
    return dict(kind="model", kernel=kernel, games=games, seed=seed, segments_per_game=len(tr.codes) / games,
                tricks_per_game=float(tr.tricks.mean()), max_tricks=int(tr.tricks.max()),
                past_brent_start=int((tr.tricks > BRENT_START).sum()), capped=int(tr.capped.sum()),
                row=model_kernel(tr, kernel), machine=H200, assumptions=ASSUMPTIONS)


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    return x


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kernel", default="random_sweep", help="a kernel of kernels/sweep/cuda.py's KERNELS")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--fill", action="store_true",
                        help="how the default random config's GPU batch fills the device (no kernel cost model)")
    args = parser.parse_args(argv)
    if args.fill:
        f = default_fill(traces(args.games, args.seed))
        if args.json:
            print(json.dumps(_jsonable(f)))
            return
        print(f"MODEL (no GPU ran): the default random config (shard_size {f['shard_size']:,}, gpu_batch "
              f"{f['gpu_batch']}: as many as fill the device) on one {f['machine']}: {f['lanes']:,} resident lanes "
              f"({f['warps']} warps a multiprocessor by the compiled kernel's occupancy); a GPU batch of "
              f"{f['shards']:,} shards, {f['deals']:,} deals a launch, runs of {f['grab']} deals: "
              f"{f['with_work']:.1%} of the lanes get work, busy {f['busy']:.1%} of the launch (recorded games' "
              f"segments, lanes taking runs greedily)")
        return
    try:
        r = model(args.games, args.kernel, args.seed)
    except sass.MissingTool as error:
        sys.exit(f"warp_model.py: {error}: pip install nvidia-cuda-nvcc-cu12 nvidia-cuda-nvdisasm")
    if args.json:
        print(json.dumps(_jsonable(r)))
        return
    m = r["machine"]
    print(f"MODEL (no GPU ran): {r['kernel']} on one {m['name']} ({m['multiprocessors']} SMs, "
          f"{m['clock_hz'] / 1e9:.2f} GHz), {r['games']:,} random standard games of seed {r['seed']} "
          f"({r['segments_per_game']:.1f} segments and {r['tricks_per_game']:.1f} tricks a game, longest "
          f"{r['max_tricks']} tricks, {r['past_brent_start']} past brent_start, {r['capped']} cut as cycles)")
    row = r["row"]
    p, o = row["ptxas"], row["occupancy"]
    print(f"\n{row['label']}  [{row['module']}]")
    print(f"  ptxas sm_90: {p['registers']} registers, {p['stack']} B stack, {p['spill_stores']} B spills, "
          f"{p['shared']} B shared; {row['threads_per_block']} threads a block: occupancy {o['warps']} warps/SM "
          f"({o['fraction']:.0%}, {o['blocks']} blocks, limited by {o['limit']}; CUDA's rules)")
    print("  warp-instructions each time a warp runs a part: "
          + "; ".join(f"{part} {c['total']:.0f}" for part, c in row["costs"].items()))
    spent = {k: v / r["games"] * row["costs"].get(k, {}).get("total", 0) for k, v in row["runs"].items()}
    print("  runs a deal (warp-instructions a deal): " + ", ".join(
        f"{k} {v / r['games']:.3g} ({spent[k]:.0f})" for k, v in row["runs"].items() if v))
    bounds = ", ".join(f"{k} {v:.0f}" for k, v in row["bounds"].items())
    print(f"  lane utilisation {row['utilisation']:.1%} (model); {row['warp_instructions_per_deal']:.0f} "
          f"warp-instructions a deal (model); SM-cycles a deal: {bounds}")
    print(f"  throughput bound: {row['cycles_per_deal']:.1f} SM-cycles a deal, {row['bound']} bound: "
          f"{row['deals_per_s'] / 1e9:.2f} G deals/s (if the {o['warps']} resident warps hid every latency)")
    t = row["latency"]
    print(f"  latency bound: one warp alone issues one instruction every {t['alone_cycles_per_instruction']:.2f} "
          f"cycles (its dependent chains, in order); over the {t['warps_per_scheduler']} warps a scheduler has: "
          f"{t['latency_bound_cycles']:.1f} SM-cycles a deal, {t['latency_bound_deals_per_s'] / 1e9:.2f} G")
    print(f"  the {t['warps_per_scheduler']} warps of a scheduler issuing in order (latencies, pipes held): "
          f"{t['issue_rate']:.2f} instructions a cycle of 1, {t['cycles_per_deal']:.1f} SM-cycles a deal, "
          f"{t['deals_per_s'] / 1e9:.2f} G")
    print(f"  => {row['figure'] / 1e9:.2f} G random standard deals/s on one H200 (model: the smallest)")
    print("\nassumptions:")
    for a in r["assumptions"]:
        print(f"  - {a}")
    print("latencies, cycles from an instruction's issue to a dependent one's (benchmarks/sass.py LATENCY):")
    for what, (cycles, source) in sass.LATENCY.items():
        print(f"  - {what}: {cycles} ({source})")


if __name__ == "__main__":
    main()
