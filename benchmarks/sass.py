"""What the GPU sweep's compiled loop costs, read from its SASS for sm_90 (no GPU needed).

    python benchmarks/sass.py [random_sweep|states_sweep|exhaustive_sweep] [--json]

The kernel (kernels/sweep/cuda.py) is compiled by numba-cuda to PTX with line information, assembled
by ptxas (the `nvidia-cuda-nvcc-cu12` wheel) to a cubin for sm_90 and disassembled by nvdisasm (the
`nvidia-cuda-nvdisasm` wheel), whose `-g` output gives every instruction its source line.

Each instruction is put in a *region* of the kernel's loop: the kernel marks where each kind of work
starts with a comment `# @name` (checkpoint, refill, loop, take, segment, trick, finish, brent, end). Walking
the SASS in address order, an instruction whose line is one of the loop's own lines belongs to the
region that line is in; an instruction of an inlined function (Numba inlines them at its own IR
level, and their line numbers reach the line table without their file) belongs to the region of the
next loop line after it, the statement that uses what the function computed (or to the refill, the
only caller of functions at a checkpoint, where the compiler moved a deal's code above its test). Instructions before the loop's first line are the prologue, after
`@end` the epilogue; those of functions defined after the kernel in its file (`_finished`, `_keep`:
a finished game's tally) are the finish region's, but `_keep`'s, the rare path of a kept deal, which
are the keep region's. The counts are static: every instruction of a
region, each branch of it included, which is what a warp whose lanes take different branches issues.

Each opcode is put in the pipe that executes it on sm_90, with that pipe's rate in warp-instructions
per clock per multiprocessor (PIPES, from the arithmetic-instruction throughput table of NVIDIA's CUDA
C++ Programming Guide for compute capability 9.0: 64 results per clock for 32-bit integer add, logic,
shift, compare and multiply-add, 16 for population count and bit find/reverse; 32 lanes per clock of
shared memory). warp_model.py turns these into cycles.
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ARCH = (9, 0)

# Opcode (its name before the first dot) -> pipe. A pipe's rate is in warp-instructions per clock per
# multiprocessor on sm_90 (4 schedulers each issue one warp-instruction a clock: ISSUE).
ISSUE = 4.0
PIPES = {
    # 32-bit integer arithmetic, logic, shifts, compares and selects: 64 lanes a clock.
    "alu": 2.0,
    # integer multiply-add (IMAD, also used by the compiler as a move): 64 lanes a clock, a pipe of its own.
    "fma": 2.0,
    # population count, bit find, bit reverse: 16 lanes a clock.
    "xu": 0.5,
    # shared memory loads, stores and atomics, local and global memory: 32 lanes a clock.
    "lsu": 1.0,
    # branches, barriers, warp votes and shuffles, moves from special registers, the uniform datapath:
    # counted for issue only.
    "issue": ISSUE,
}
OPCODES = {
    "alu": {"IADD3", "IADD", "LOP3", "LOP", "SHF", "SHL", "SHR", "ISETP", "SEL", "LEA", "PLOP3", "VIADD", "IMNMX",
            "VIMNMX", "IABS", "PRMT", "MOV", "P2R", "R2P", "CS2R", "ICMP", "IMUL", "FSEL", "I2F", "F2I", "I2FP",
            "F2IP", "BMSK", "SGXT", "IDP", "ISCADD"},
    "fma": {"IMAD", "HFMA2", "FFMA", "FADD", "FMUL"},
    "xu": {"POPC", "FLO", "BREV", "MUFU"},
    "lsu": {"LDS", "STS", "ATOMS", "LD", "ST", "LDG", "STG", "ATOM", "ATOMG", "RED", "LDL", "STL", "LDC", "LDSM",
            "REDUX", "MATCH", "REDG", "LDGSTS", "STAS", "ATOMG"},
    "issue": {"BRA", "BSSY", "BSYNC", "BREAK", "EXIT", "RET", "CALL", "WARPSYNC", "BAR", "B2R", "NOP", "YIELD",
              "S2R", "S2UR", "SHFL", "VOTE", "VOTEU", "ULDC", "UMOV", "UIADD3", "USEL", "UISETP", "ULEA", "USHF",
              "ULOP3", "UFLO", "UPOPC", "UIMAD", "UPRMT", "UBMSK", "USGXT", "UP2UR", "R2UR", "ELECT", "PLOP",
              "DEPBAR", "MEMBAR", "ERRBAR", "CCTL", "BMOV", "JMP", "BPT", "KILL", "NANOSLEEP", "FENCE", "CS2UR",
              "UCLEA", "ULEPC", "ACQBULK", "PMTRIG", "USETMAXREG", "UCGABAR_ARV", "UCGABAR_WAIT", "LEPC"},
}
PIPE_OF = {op: pipe for pipe, ops in OPCODES.items() for op in ops}
INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(?:\{\s*)?(@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*)")
LINE = re.compile(r'^\s*//## File "([^"]+)", line (\d+)')
MARK = re.compile(r"#\s*@([a-z]+)\b")


class MissingTool(RuntimeError):
    """ptxas or nvdisasm is not installed (their wheels: `pip install 'bmn[gpu]'` or the test extra)."""


def _wheel_binary(package: str, name: str) -> Path:
    try:
        module = __import__(package, fromlist=["__path__"])
    except ImportError:
        module = None
    roots = list(getattr(module, "__path__", [])) if module else []
    if package == "nvidia":  # a namespace package: its tools sit in versioned folders (cu13/bin, ...)
        found = sorted(p for root in roots for p in Path(root).glob(f"*/bin/{name}"))
    else:
        found = [Path(root) / "bin" / name for root in roots]
    found = [p for p in found if p.exists()]
    if not found:
        located = shutil.which(name)
        if located:
            return Path(located)
        raise MissingTool(f"{name} is not installed")
    return found[-1]


def ptxas() -> Path:
    return _wheel_binary("nvidia.cuda_nvcc", "ptxas")


def nvdisasm() -> Path:
    return _wheel_binary("nvidia", "nvdisasm")


def kernel_function(name: str, module: str = "kernels.sweep.cuda"):
    """The Python function of a sweep kernel and its signature (the module's KERNELS table)."""
    mod = __import__(module, fromlist=["KERNELS"])
    return mod.KERNELS[name]


@cache
def compiled(name: str, module: str = "kernels.sweep.cuda") -> tuple[str, str]:
    """(ptxas's report, nvdisasm's listing with line information) of the kernel for sm_90; both kept
    in a temporary folder under a hash of the PTX, so a second call in any process is quick."""
    from numba import cuda

    fn, signature = kernel_function(name, module)
    text, _ = cuda.compile_ptx(fn, signature, cc=ARCH, lineinfo=True)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / "bmn-sass" / digest
    report, listing = folder / "ptxas.txt", folder / "sass.txt"
    if not listing.exists():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "kernel.ptx").write_text(text)
        cubin = folder / "kernel.cubin"
        done = subprocess.run([str(ptxas()), f"-arch=sm_{ARCH[0]}{ARCH[1]}", "-lineinfo", "-v",
                               str(folder / "kernel.ptx"), "-o", str(cubin)], capture_output=True, text=True,
                              timeout=300)
        if done.returncode:
            raise RuntimeError(done.stderr)
        out = subprocess.run([str(nvdisasm()), "-g", "-c", str(cubin)], capture_output=True, text=True, timeout=300)
        if out.returncode:
            raise RuntimeError(out.stderr)
        report.write_text(done.stderr)
        tmp = listing.with_suffix(f".{os.getpid()}")
        tmp.write_text(out.stdout)
        tmp.replace(listing)
    return report.read_text(), listing.read_text()


def registers(name: str, module: str = "kernels.sweep.cuda") -> dict:
    """ptxas's figures for the kernel on sm_90: registers, stack frame, spill bytes, shared memory."""
    report, _ = compiled(name, module)

    def number(pattern: str) -> int:
        found = re.search(pattern, report)
        return int(found.group(1)) if found else 0

    return {"registers": number(r"Used (\d+) registers"), "stack": number(r"(\d+) bytes stack frame"),
            "spill_stores": number(r"(\d+) bytes spill stores"), "spill_loads": number(r"(\d+) bytes spill loads"),
            "shared": number(r"(\d+) bytes smem")}


def instructions(listing: str) -> list[tuple[int, int | None, str]]:
    """(address, source line, opcode) of every instruction, in address order."""
    line = None
    found = []
    for text in listing.splitlines():
        m = LINE.match(text)
        if m:
            line = int(m.group(2))
            continue
        m = INSTRUCTION.match(text)
        if m:
            found.append((int(m.group(1), 16), line, m.group(3)))
    return found


def marks(fn) -> tuple[dict[int, str], int, int]:
    """The kernel's `# @name` comments: {line: name}, the kernel's first and last line."""
    source, first = inspect.getsourcelines(fn)
    found = {first + k: m.group(1) for k, text in enumerate(source) if (m := MARK.search(text))}
    return found, first, first + len(source) - 1


def regions(name: str, module: str = "kernels.sweep.cuda") -> dict[str, Counter]:
    """Region name -> Counter of pipe -> static SASS instructions (and 'total')."""
    fn, _ = kernel_function(name, module)
    _, listing = compiled(name, module)
    found, first, last = marks(fn)
    if "end" not in found.values():
        raise ValueError("the kernel marks no @end")
    loop_first = min(found)
    end_line = max(line for line, n in found.items() if n == "end")
    anchors = sorted(found)
    listed = instructions(listing)
    helper = getattr(__import__(module, fromlist=["_keep"]), "_keep", None)
    keep_lines = []
    if helper is not None:
        body, start = inspect.getsourcelines(getattr(helper, "py_func", helper))
        keep_lines.append((start, start + len(body) - 1))
    # The region of each instruction on one of the loop's own lines, and for every instruction the
    # next such region in address order (an inlined function's code comes before the loop line that
    # uses its result: the segment's before the test of its event, a deal's before its slot's).
    own = [found[max(a for a in anchors if a <= line)] if line is not None and loop_first <= line <= last else None
           for _, line, _ in listed]
    following = [None] * len(listed)
    after = None
    for k in range(len(listed) - 1, -1, -1):
        after = own[k] or after
        following[k] = after
    out: dict[str, Counter] = {}
    started = ended = False
    for k, (_, line, opcode) in enumerate(listed):
        pipe = PIPE_OF.get(opcode)
        if pipe is None:
            raise ValueError(f"opcode {opcode} is in no pipe of the table (benchmarks/sass.py OPCODES)")
        if own[k] is not None:
            started = True
            ended = ended or line >= end_line
            where = own[k]
        elif not started:
            where = "prologue"
        elif line is not None and line > last:
            # the helpers defined after the kernel in its file: a kept deal's slot (rare), or the tally
            where = "keep" if any(a <= line <= b for a, b in keep_lines) else "finish"
        else:
            where = following[k] or "epilogue"  # an inlined function's line
            if where == "checkpoint":
                where = "refill"  # a checkpoint calls nothing; a refill's deal was moved before its test
        if ended:
            where = "epilogue"
        counts = out.setdefault(where, Counter())
        counts[pipe] += 1
        counts["total"] += 1
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kernel", nargs="?", default="random_sweep")
    parser.add_argument("--module", default="kernels.sweep.cuda")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    try:
        table = regions(args.kernel, args.module)
        figures = registers(args.kernel, args.module)
    except MissingTool as error:
        sys.exit(f"sass.py: {error}: pip install nvidia-cuda-nvcc-cu12 nvidia-cuda-nvdisasm")
    if args.json:
        print(json.dumps({"registers": figures, "regions": {k: dict(v) for k, v in table.items()}}))
        return
    print(f"{args.kernel} for sm_{ARCH[0]}{ARCH[1]}: {figures}")
    pipes = list(PIPES)
    print(f"{'region':<12}" + "".join(f"{p:>8}" for p in pipes) + f"{'total':>8}")
    for region, counts in table.items():
        print(f"{region:<12}" + "".join(f"{counts[p]:>8}" for p in pipes) + f"{counts['total']:>8}")


if __name__ == "__main__":
    main()
