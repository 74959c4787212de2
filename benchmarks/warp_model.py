"""A model of the GPU sweep on one H200, fed by recorded games and by the compiled kernel's SASS.

    python benchmarks/warp_model.py [--games 100000] [--kernel random_sweep] [--json]

No GPU is needed and none is simulated: every figure it prints is a model, with its inputs beside it.

1. Traces. N random standard deals of one stream (kernels/rng.py) are played by segments
   (kernels/engines/segments.py: free play, or one round of payment) and each segment recorded: did
   it end a trick, did it end the game.
2. Warps. The traces are replayed through 32-lane warps under two schedulings:
   - converged (how the sweep ran before the flat loop: each lane plays its deals one after another,
     the warp converging on every game, every trick and every trick's payment loop): a warp spends,
     for each round of deals, the longest lane's tricks, and in each trick the longest lane's rounds;
   - flat (kernels/sweep/cuda.py): every iteration each lane with a game plays one segment, a lane
     whose game ended takes a prepared deal, and every CHECK iterations the warp meets at a checkpoint
     and refills its queue (one deal a lane) when fewer deals than lanes are ready.
   Lane utilisation: the lanes' segments over 32 x the warp's segment-iterations.
3. Costs. benchmarks/sass.py counts the static SASS instructions of each region of the kernel's loop
   for sm_90, by pipe. A region executed by any lane of a warp costs the warp all its instructions
   (lanes on different branches of it each take their own: the count of every branch is the cost of a
   warp whose lanes differ, which with 32 independent games is the usual case). A refill's loops run
   once per penalty card, divided by the unrolling the compiler chose (ASSUMPTIONS).
4. Throughput. Per multiprocessor, the cycles a deal needs are the largest of: its warp-instructions
   over the issue rate (4 a clock), and for each pipe its warp-instructions over that pipe's rate
   (benchmarks/sass.py PIPES). deals/s = multiprocessors x clock / cycles per deal, which assumes the
   resident warps hide every latency (the occupancy, from the register count, is printed beside it).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np
from numba import njit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import sass  # noqa: E402

from kernels.engines import default_brent_start  # noqa: E402
from kernels.engines.bitmask import words_from_positions  # noqa: E402
from kernels.engines.segments import MID, OVER, step  # noqa: E402
from kernels.rng import deal_state, random_deal, stream_key  # noqa: E402

H200 = dict(multiprocessors=132, clock_hz=1.98e9)  # NVIDIA H200 SXM: 132 SMs, 1.98 GHz boost
LANES = 32
SEG, TRICK_END, GAME_END = 0, 1, 2  # what a recorded segment did
ASSUMPTIONS = [
    "every resident warp issues whenever a pipe is free: latencies hidden (no memory stalls: the loop touches "
    "shared memory only)",
    "a region any lane of a warp runs costs the warp every static instruction of it (all its branches)",
    "a refill's loops run once per penalty card (16), divided by the compiler's unrolling (read from the loop: "
    "loads of the positions array per iteration)",
    "Brent's check (the brent region) runs only in games past brent_start = 416 tricks: charged once for each "
    "recorded game that reached it (a lower bound for those few games); no cycles among random standard deals",
    "no deal is kept (the keep region, a kept deal's global atomic, runs for games past min_cards: none of these "
    "games at a record hunt's threshold); the finish region holds a game's tally and its shared-memory histogram "
    "atomic",
    "132 multiprocessors at 1.98 GHz; pipe rates from the CUDA C++ Programming Guide's table for "
    "compute capability 9.0 (benchmarks/sass.py PIPES)",
]


# ---------------------------------------------------------------- occupancy (CUDA's allocation rules)

# Per compute capability: registers per SM, max warps and blocks per SM, shared memory per SM (bytes,
# the most a kernel may configure), the shared memory the driver reserves per block, the register
# allocation unit (per warp) and the shared memory allocation unit.
LIMITS = {
    (7, 5): dict(registers=65536, warps=32, blocks=16, shared=65536, reserved=0, reg_unit=256, smem_unit=256),
    (8, 0): dict(registers=65536, warps=64, blocks=32, shared=167936, reserved=1024, reg_unit=256, smem_unit=128),
    (8, 9): dict(registers=65536, warps=48, blocks=24, shared=101376, reserved=1024, reg_unit=256, smem_unit=128),
    (9, 0): dict(registers=65536, warps=64, blocks=32, shared=233472, reserved=1024, reg_unit=256, smem_unit=128),
}


def occupancy(registers: int, threads: int, shared: int, cc: tuple[int, int] = (9, 0)) -> dict:
    """Resident warps and blocks per multiprocessor for a kernel of `registers` per thread, `threads` per
    block and `shared` bytes of static shared memory per block, by CUDA's allocation rules: registers are
    given per warp in units of reg_unit, shared memory per block in units of smem_unit plus the
    driver's reservation; a block is resident whole or not at all."""
    lim = LIMITS[cc]
    warps_per_block = -(-threads // 32)
    per_warp = -(-registers * 32 // lim["reg_unit"]) * lim["reg_unit"]
    by_registers = (lim["registers"] // per_warp) // warps_per_block if per_warp else lim["blocks"]
    per_block = -(-(shared + lim["reserved"]) // lim["smem_unit"]) * lim["smem_unit"]
    by_shared = lim["shared"] // per_block if shared else lim["blocks"]
    by_warps = lim["warps"] // warps_per_block
    blocks = min(by_registers, by_shared, by_warps, lim["blocks"])
    limit = min((by_registers, "registers"), (by_shared, "shared memory"), (by_warps, "warps"),
                (lim["blocks"], "blocks"))[1]
    return dict(blocks=blocks, warps=blocks * warps_per_block, fraction=blocks * warps_per_block / lim["warps"],
                limit=limit)


# ---------------------------------------------------------------- traces

@njit(cache=True)
def record(key, penalties, total, size0, count, brent_start, codes, offsets):
    """Play deals 0..count-1 of the stream by segments; codes[offsets[g]:offsets[g+1]] are game g's
    segments (SEG, TRICK_END, GAME_END). Returns the number of codes written (-1: `codes` too small).
    A game that has not ended after brent_start tricks is cut there (random standard deals: none)."""
    seq = np.zeros(total, dtype=np.uint8)
    positions = np.zeros(total, dtype=np.int64)
    k = 0
    for g in range(count):
        offsets[g] = k
        random_deal(deal_state(key, g), positions, penalties, seq)
        m0, n0, q0, m1, n1, q1 = words_from_positions(seq, positions, penalties.shape[0], size0)
        mX, nX, qX, mY, nY, qY = m0, np.uint32(n0), q0, m1, np.uint32(n1), q1
        who = v = pl = pc = np.uint32(0)
        pm = pq = np.uint64(0)
        tricks = 0
        while True:
            mX, nX, qX, mY, nY, qY, who, v, pm, pq, pl, pc, event = step(mX, nX, qX, mY, nY, qY, who, v, pm, pq,
                                                                          pl, pc)
            if k >= codes.shape[0]:
                return -1
            if event == MID:
                codes[k] = SEG
            else:
                tricks += 1
                codes[k] = GAME_END if event == OVER or tricks >= brent_start else TRICK_END
            k += 1
            if codes[k - 1] == GAME_END:
                break
    offsets[count] = k
    return k


def traces(games: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    penalties = np.array([1, 2, 3, 4] * 4, dtype=np.uint8)
    codes = np.zeros(games * 200, dtype=np.uint8)
    offsets = np.zeros(games + 1, dtype=np.int64)
    while True:
        n = record(stream_key(seed, 0), penalties, 52, 26, games, default_brent_start(52), codes, offsets)
        if n >= 0:
            return codes[:n], offsets
        codes = np.zeros(len(codes) * 2, dtype=np.uint8)


# ---------------------------------------------------------------- schedulings

# Regions of the flat loop, in the order flat() counts their executions.
FLAT_REGIONS = ("loop", "checkpoint", "refill", "take", "segment", "trick", "finish")


@njit(cache=True)
def flat(codes, offsets, lanes, check, out):
    """The flat loop over one warp playing the games in order. out[:7]: executions of FLAT_REGIONS;
    out[7]: lane-segments played; out[8]: iterations."""
    games = offsets.shape[0] - 1
    at = np.full(lanes, -1, dtype=np.int64)  # the lane's next code, -1: no game
    stop = np.zeros(lanes, dtype=np.int64)
    prepared = 0  # games put into the queue
    ready = 0
    turn = 0
    while True:
        if turn % check == 0:
            out[1] += 1
            idle = 0
            for i in range(lanes):
                idle += at[i] < 0
            if idle == lanes and prepared == games and ready == 0:
                break
            if ready < lanes and prepared < games:
                out[2] += 1
                made = min(lanes, games - prepared)
                prepared += made
                ready += made
        turn += 1
        out[0] += 1
        out[8] += 1
        took = False
        for i in range(lanes):
            if at[i] < 0:
                took = True
                if ready > 0:
                    g = prepared - ready
                    ready -= 1
                    at[i] = offsets[g]
                    stop[i] = offsets[g + 1]
        if took:
            out[3] += 1
        played = False
        trick = False
        ended = False
        for i in range(lanes):
            if at[i] >= 0:
                played = True
                out[7] += 1
                c = codes[at[i]]
                at[i] += 1
                if c != SEG:
                    trick = True
                if c == GAME_END:
                    ended = True
                    at[i] = -1
        out[4] += played
        out[5] += trick
        out[6] += ended


@njit(cache=True)
def converged(codes, offsets, lanes, out):
    """The converged scheduling: lane i plays games i, i+lanes, i+2 lanes, ...; per round of games the
    warp runs the longest lane's tricks, and in each trick the longest lane's payment rounds. out[0]:
    deal rounds; out[1]: trick iterations; out[2]: payment-round iterations; out[3]: lane-segments;
    out[4]: warp segment-iterations."""
    games = offsets.shape[0] - 1
    rounds = np.zeros((lanes, 4096), dtype=np.int64)  # a lane's payment rounds in each trick of its game
    tricks = np.zeros(lanes, dtype=np.int64)
    for first in range(0, games, lanes):
        out[0] += 1
        tricks[:] = 0
        for i in range(lanes):
            g = first + i
            if g >= games:
                continue
            t = 0
            r = -1  # the first segment of a trick is its free play
            for k in range(offsets[g], offsets[g + 1]):
                r += 1
                out[3] += 1
                if codes[k] != SEG:
                    rounds[i, t] = r
                    t += 1
                    r = -1
            tricks[i] = t
        for t in range(tricks.max()):
            out[1] += 1
            most = 0
            for i in range(lanes):
                if t < tricks[i] and rounds[i, t] > most:
                    most = rounds[i, t]
            out[2] += most
            out[4] += 1 + most


# ---------------------------------------------------------------- costs and the figure

def _at_brent(codes: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Per code: whether it ends a game that was cut at brent_start tricks (not over by then)."""
    tricks = np.zeros(len(codes), dtype=bool)
    ends = np.flatnonzero(codes == GAME_END)
    counts = np.diff(np.concatenate([[0], np.cumsum(codes != SEG)[ends]]))
    tricks[ends] = counts >= default_brent_start(52)
    return tricks


def loop_costs(kernel: str = "random_sweep", module: str = "kernels.sweep.cuda", penalty_cards: int = 16) -> dict:
    """Region -> Counter(pipe -> warp-instructions each time a warp runs it), from the kernel's SASS; the
    refill's loops counted once per penalty card (divided by their unrolling)."""
    table = sass.regions(kernel, module)
    refill = Counter(table.get("refill", Counter()))
    for body, unroll in refill_loops(kernel, module):
        trips = max(1, penalty_cards // unroll)
        for pipe, n in body.items():
            refill[pipe] += n * (trips - 1)
    costs = {r: Counter(table.get(r, Counter())) for r in FLAT_REGIONS + ("brent", "keep")}
    costs["refill"] = refill
    return costs


def refill_loops(kernel: str, module: str) -> list[tuple[Counter, int]]:
    """The innermost loops of the refill region (a backward branch to a label within it): each one's
    instructions by pipe, and its unrolling (loads of a byte array per iteration, over the loads per
    penalty card in the source: 2 where the loop also stores bytes, random_positions' swap; else 1)."""
    fn, _ = sass.kernel_function(kernel, module)
    _, listing = sass.compiled(kernel, module)
    found, _, _ = sass.marks(fn)
    refill_lines = _lines_of(found, "refill")
    labels, listed, line = {}, [], None
    for text in listing.splitlines():
        m = sass.LINE.match(text)
        if m:
            line = int(m.group(2))
            continue
        m = re.match(r"^(\.L_x_\d+):", text)
        if m:
            labels[m.group(1)] = len(listed)
            continue
        m = sass.INSTRUCTION.match(text)
        if m:
            target = re.search(r"`\((\.L_x_\d+)\)", text)
            listed.append((line, m.group(3), text, target.group(1) if target else None))
    loops = [(labels[t], k) for k, (_, op, _, t) in enumerate(listed) if op == "BRA" and t and labels[t] <= k]
    inner = [(a, b) for a, b in loops if not any(a <= c and d <= b and (c, d) != (a, b) for c, d in loops)]
    out = []
    for a, b in inner:
        body = listed[a:b + 1]
        byte_loads = sum(1 for _, op, text, _ in body if op in ("LD", "LDS") and ".U8" in text)
        byte_stores = sum(1 for _, op, text, _ in body if op in ("ST", "STS") and ".U8" in text)
        if not byte_loads:
            continue  # an atomic's retry loop, or another loop not over the cards
        # a refill loop is one whose code falls in the refill region (its inlined lines precede refill lines)
        following = next((ln for ln, *_ in listed[b + 1:] if ln is not None and ln in found_lines(found)), None)
        if following not in refill_lines:
            continue
        per_card = 2 if byte_stores else 1
        counts = Counter(sass.PIPE_OF[op] for _, op, _, _ in body)
        counts["total"] = len(body)
        out.append((counts, max(1, byte_loads // per_card)))
    return out


def found_lines(found: dict) -> set:
    first, last = min(found), max(found)
    return set(range(first, last + 1))


def _lines_of(found: dict, region: str) -> set:
    anchors = sorted(found)
    return {line for line in range(min(found), max(found) + 1) if found[max(a for a in anchors if a <= line)] == region}


def throughput(per_deal: Counter) -> dict:
    """Cycles per deal per multiprocessor (the binding bound) and deals/s on one H200."""
    bounds = {"issue": per_deal["total"] / sass.ISSUE}
    for pipe, rate in sass.PIPES.items():
        if pipe != "issue":
            bounds[pipe] = per_deal[pipe] / rate
    binding = max(bounds, key=bounds.get)
    cycles = bounds[binding]
    return dict(cycles_per_deal=cycles, bound=binding, bounds=bounds,
                deals_per_s=H200["multiprocessors"] * H200["clock_hz"] / cycles)


def model(games: int = 100_000, kernel: str = "random_sweep", module: str = "kernels.sweep.cuda") -> dict:
    codes, offsets = traces(games)
    costs = loop_costs(kernel, module)
    check = __import__(module, fromlist=["CHECK"]).CHECK
    out = np.zeros(9, dtype=np.int64)
    flat(codes, offsets, LANES, check, out)
    runs = dict(zip(FLAT_REGIONS, (int(x) for x in out[:7])))
    per_deal = Counter()
    for region, n in runs.items():
        for pipe, k in costs[region].items():
            per_deal[pipe] += n * k / games
    runs["brent"] = int(((codes == GAME_END) & _at_brent(codes, offsets)).sum())
    new = dict(utilisation=out[7] / (LANES * out[8]), iterations=int(out[8]), runs=runs,
               warp_instructions_per_deal=per_deal["total"], **throughput(per_deal))
    # Converged: the same kernel's costs, spent as the converged loops spend them: every trick iteration
    # a segment (free play) and a trick's end, every payment-round iteration a segment, every round of
    # deals one deal each lane (a refill) and one game's end.
    old_out = np.zeros(5, dtype=np.int64)
    converged(codes, offsets, LANES, old_out)
    old_per_deal = Counter()
    for region, n in (("segment", old_out[1] + old_out[2]), ("trick", old_out[1]), ("refill", old_out[0]),
                      ("finish", old_out[0]), ("loop", old_out[1] + old_out[2])):
        for pipe, k in costs[region].items():
            old_per_deal[pipe] += n * k / games
    old = dict(utilisation=old_out[3] / (LANES * old_out[4]), warp_instructions_per_deal=old_per_deal["total"],
               **throughput(old_per_deal))
    figures = sass.registers(kernel, module)
    threads = __import__(module, fromlist=["THREADS"]).THREADS
    occ = occupancy(figures["registers"], threads, figures["shared"])
    segments = len(codes) / games
    tricks = int((codes != SEG).sum()) / games
    return dict(kind="model", games=games, kernel=kernel, segments_per_game=segments, tricks_per_game=tricks,
                costs={r: dict(c) for r, c in costs.items()}, ptxas=figures, occupancy=occ, flat=new,
                converged=old, machine=H200, assumptions=ASSUMPTIONS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--kernel", default="random_sweep")
    parser.add_argument("--module", default="kernels.sweep.cuda")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    try:
        result = model(args.games, args.kernel, args.module)
    except sass.MissingTool as error:
        sys.exit(f"warp_model.py: {error}: pip install nvidia-cuda-nvcc-cu12 nvidia-cuda-nvdisasm")
    if args.json:
        print(json.dumps(result, default=float))
        return
    r = result
    print(f"MODEL (no GPU): {r['kernel']} on one H200, {r['games']:,} random standard games "
          f"({r['segments_per_game']:.1f} segments, {r['tricks_per_game']:.1f} tricks a game)")
    p, o = r["ptxas"], r["occupancy"]
    print(f"  ptxas sm_90: {p['registers']} registers, {p['stack']} B stack, {p['spill_stores']} B spills, "
          f"{p['shared']} B shared; occupancy {o['warps']} warps/SM ({o['fraction']:.0%}, limited by {o['limit']})")
    print("  SASS per region (warp-instructions each time a warp runs it):")
    for region, c in r["costs"].items():
        print(f"    {region:<11}" + "  ".join(f"{k} {v}" for k, v in c.items()))
    for name in ("converged", "flat"):
        f = r[name]
        print(f"  {name:<10} lane utilisation {f['utilisation']:.1%}, {f['warp_instructions_per_deal']:.0f} "
              f"warp-instructions a deal, {f['cycles_per_deal']:.1f} SM-cycles a deal ({f['bound']} bound): "
              f"{f['deals_per_s'] / 1e9:.2f} G deals/s (model)")
    print("  assumptions:")
    for a in r["assumptions"]:
        print(f"    - {a}")


if __name__ == "__main__":
    main()
