"""The lanes engine's vector code (kernels/sweep/lanes.py): its compiled lane loop, counted instruction by instruction.

    python benchmarks/lanes_asm.py [--lanes 8|16 ...] [--dump DIR] [--remarks]

Compiles each lanes kernel once more without Numba's disk cache (code loaded from the cache cannot
be inspected), reads its x86-64 assembly (`inspect_asm`) and finds the lane loop: the loop (a
backward branch to an earlier label) with the most instructions on vector registers. For it, and for
the whole kernel, it prints the instructions, those naming a ymm (256-bit) or an xmm (128-bit)
register, the packed-integer opcodes (vp*), the vector popcount of AVX2 (vpshufb + vpsadbw: the
count of trailing zeros and the popcount of the segment step, which x86-64 has as vector
instructions only from AVX-512 on) and any scalar tzcnt/popcnt/bsf (one of those in the lane loop
would mean the step was not vectorized). `--dump DIR` writes each kernel's assembly there;
`--remarks` prints LLVM's loop-vectorizer remarks (why a loop was or was not vectorized).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from numba import njit, types  # noqa: E402

from kernels import _jit  # noqa: E402
from kernels.sweep import lanes  # noqa: E402

# The kernels' argument types, as kernels/sweep/lanes.py `run_random` calls them.
SIGNATURE = (types.uint64, types.uint8[::1], types.int64, types.int64, types.int64, types.int64, types.int64,
             types.int64, types.int64, types.int64[:, ::1], types.int64[::1], types.int64[::1])
LABEL = re.compile(r"^(\.?L[\w$.]+):")
JUMP = re.compile(r"^\s+j\w+\s+(\.?L[\w$.]+)\s*$")


def assembly(n_lanes: int) -> str:
    """The x86-64 assembly of the lanes kernel for n_lanes, compiled afresh with the kernels' options."""
    options = {k: v for k, v in _jit._OPTIONS.items() if k != "cache"}
    fresh = njit(**options)(lanes.KERNELS[n_lanes].py_func)
    fresh.compile(SIGNATURE)
    return fresh.inspect_asm(fresh.signatures[0])


def instructions(lines: list[str]) -> list[str]:
    """The instruction lines (no labels, directives or comments)."""
    out = []
    for line in lines:
        s = line.strip()
        if not s or s.startswith((".", "#")) or LABEL.match(line) or not line[:1].isspace():
            continue
        out.append(s)
    return out


def loops(lines: list[str]) -> list[tuple[int, int]]:
    """(first, last) line of every loop: a jump back to a label above it."""
    where = {}
    found = []
    for k, line in enumerate(lines):
        m = LABEL.match(line)
        if m:
            where[m.group(1)] = k
        m = JUMP.match(line)
        if m and m.group(1) in where:
            found.append((where[m.group(1)], k))
    return found


def counts(ins: list[str]) -> dict:
    ops = Counter(i.split()[0] for i in ins)
    return {
        "instructions": len(ins),
        "ymm": sum("%ymm" in i for i in ins),
        "xmm": sum("%xmm" in i and "%ymm" not in i for i in ins),
        "vp*": sum(n for op, n in ops.items() if op.startswith("vp")),
        "vpshufb+vpsadbw": ops["vpshufb"] + ops["vpsadbw"],
        "scalar tzcnt/popcnt/bsf": sum(n for op, n in ops.items() if op.startswith(("tzcnt", "popcnt", "bsf"))),
        "stack spills/reloads (ymm/xmm <-> rsp)": sum("(%rsp)" in i and "mm" in i for i in ins),
        "top opcodes": ", ".join(f"{op} {n}" for op, n in ops.most_common(8)),
    }


def lane_loop(asm: str) -> tuple[dict, dict, tuple[int, int]]:
    """(counts of the lane loop, counts of the whole kernel, the loop's line range). The lane loop is the
    innermost loop holding the vector popcount (vpsadbw) or, if the step was not vectorized, the
    innermost holding two scalar tzcnt (the step's two counts of trailing zeros)."""
    lines = asm.splitlines()
    found = loops(lines)

    def has(r, op, times=1):
        return sum(i.split()[0].startswith(op) for i in instructions(lines[r[0]:r[1] + 1])) >= times

    chosen = [r for r in found if has(r, "vpsadbw")] or [r for r in found if has(r, "tzcnt", 2)]
    best = min(chosen, key=lambda r: r[1] - r[0])
    return counts(instructions(lines[best[0]:best[1] + 1])), counts(instructions(lines)), best


def lanes_per_iteration(asm: str, loop: tuple[int, int], n_lanes: int) -> int | None:
    """The lanes one pass of the lane loop plays: its index step, where the loop counts lanes up to n_lanes
    (`addq $K` ... `cmpq $n_lanes`); None where the loop counts otherwise."""
    ins = instructions(asm.splitlines()[loop[0]:loop[1] + 1])
    steps = [int(m.group(1)) for i in ins if (m := re.match(r"addq\s+\$(\d+),", i))]
    if steps and any(re.match(rf"cmpq\s+\${n_lanes},", i) for i in ins):
        return steps[-1]
    return None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lanes", type=int, nargs="+", default=list(lanes.LANES), choices=list(lanes.LANES))
    parser.add_argument("--dump", type=Path, help="write each kernel's assembly into this folder")
    parser.add_argument("--remarks", action="store_true", help="print LLVM's loop-vectorizer remarks")
    args = parser.parse_args(argv)
    if args.remarks:
        import llvmlite.binding as llvm
        llvm.set_option("", "-pass-remarks=loop-vectorize")
        llvm.set_option("", "-pass-remarks-missed=loop-vectorize")
        llvm.set_option("", "-pass-remarks-analysis=loop-vectorize")
    cpu = next((line.split(":", 1)[1].split() for line in open("/proc/cpuinfo") if line.startswith("flags")), [])
    print(f"CPU: avx2 {'avx2' in cpu}, avx512f {'avx512f' in cpu}; BRENT_IN_LOOP {lanes.BRENT_IN_LOOP}")
    for n in args.lanes:
        asm = assembly(n)
        if args.dump:
            args.dump.mkdir(parents=True, exist_ok=True)
            (args.dump / f"lanes{n}.s").write_text(asm)
        loop, whole, (a, b) = lane_loop(asm)
        per = lanes_per_iteration(asm, (a, b), n)
        print(f"lanes{n}: the lane loop (assembly lines {a + 1}-{b + 1}"
              + (f", {per} lanes a pass, {n // per} passes an iteration of the main loop" if per else "") + "):")
        for k, val in loop.items():
            print(f"  {k}: {val}")
        if per:
            print(f"  instructions per lane-segment: {loop['instructions'] / per:.1f}")
        print(f"  whole kernel: {whole['instructions']} instructions, {whole['ymm']} naming ymm, "
              f"{whole['vp*']} vp*, scalar tzcnt/popcnt/bsf {whole['scalar tzcnt/popcnt/bsf']} (dealing, the rare pass)")


if __name__ == "__main__":
    main()
