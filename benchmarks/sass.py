"""What a GPU kernel of bmn costs, read from its SASS for sm_90 (no GPU needed).

    python benchmarks/sass.py [KERNEL] [--json]

KERNEL is a name of the shipped kernels' `KERNELS` table ({name: (function, signature)}) in
kernels/sweep/cuda.py: random_sweep (the default), states_sweep or exhaustive_sweep.

The kernel is compiled by numba-cuda to PTX with line information, assembled by ptxas (the
`nvidia-cuda-nvcc-cu12` wheel) to a cubin for sm_90 and disassembled by nvdisasm (the
`nvidia-cuda-nvdisasm` wheel), whose `-g` listing gives every instruction a source line.

Numba inlines a function marked inline="always" in its own IR, and its line table then gives the
inlined code the caller's file with the callee's line numbers: line 140 may be the kernel's or
bitmask.py's. While compiling, this module therefore writes each line number as file x 100,000 +
line (a wrapper around numba-cuda's lowering, numbered per file), and reads the file back from the
listing: the code is the same (only the line table differs), and every instruction gets its true
file and line. Functions compiled apart (not inlined by Numba) keep their own file and plain lines.

Two readings of the listing:
- `regions`: for a kernel whose loop marks each kind of work with a comment `# @name` (checkpoint,
  refill, loop, take, segment, trick, finish, brent, end: kernels/sweep/cuda.py), the instructions of
  each region (see its docstring); `attribute` gives each instruction the innermost of a list of
  functions or spans of lines (`Span`) that holds its file and line (warp_model.py weighs dealing's
  branches so).
- `resources`: ptxas's register count, stack, spills and shared memory.

Every opcode is put in a *class* (OPCODES), each class in a pipe with its rate on sm_90 in
warp-instructions per clock per multiprocessor (CLASSES), from the arithmetic-instruction throughput
table of NVIDIA's CUDA C++ Programming Guide for compute capability 9.0; an opcode not in the table
raises `UnknownOpcode`. Counts are static: every instruction of a region, each branch of it included,
which is what a warp whose lanes take different branches issues. warp_model.py turns them into cycles.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
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
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ARCH = (9, 0)
MODULE = "kernels.sweep.cuda"  # the shipped kernels: their KERNELS table

# ---------------------------------------------------------------- the machine: classes, pipes, rates

# A multiprocessor of sm_90 has 4 schedulers, each issuing at most one warp-instruction a clock.
ISSUE = 4.0

# Instruction class -> (pipe, warp-instructions per clock per multiprocessor). A rate is the CUDA C++
# Programming Guide's "results per clock cycle per multiprocessor" for compute capability 9.0 over 32
# lanes. Classes of one pipe share it (warp_model.py adds their times); a class whose pipe is "issue"
# costs an issue slot only.
CLASSES = {
    # 32-bit integer add, subtract, shift, compare, min/max, bitwise logic and select: 64 a clock.
    "int": ("alu", 2.0),
    # 32-bit integer multiply and multiply-add: 64 a clock. On sm_90 IMAD (also the compiler's move,
    # shift and add in its .MOV/.SHL/.IADD forms, which it uses to balance pipes) runs on the FMA
    # datapath, beside the ALU: a pipe of its own.
    "imad": ("fma", 2.0),
    # 32-bit floating-point add, multiply, fused multiply-add: 128 a clock (only the compiler's integer
    # division helper uses them here).
    "fp32": ("fma", 4.0),
    # Population count, count of leading zeros / bit find, bit reverse: 16 a clock.
    "bits": ("xu", 0.5),
    # Conversions between integers and floats ("all other type conversions"), reciprocal: 16 a clock.
    "convert": ("xu", 0.5),
    # Shared memory, 32-bit or narrower per lane: 32 banks of 4 bytes, one warp access a clock when the
    # lanes hit 32 different banks (the kernels lay shared arrays out so); shared atomics likewise (the
    # compiler aggregates a warp's atomics on one address: VOTEU/UPOPC, then one lane's ATOMS).
    "shared": ("lsu", 1.0),
    # Shared memory, 64 bits per lane: 256 bytes a warp, two accesses of 128 bytes.
    "shared64": ("lsu", 0.5),
    # Global, local and generic memory, and constant loads: one access a clock through the same unit
    # (assumed: the guide gives no rate; here they are dealing's byte loads and stores through generic
    # addresses, the penalty values, a kept deal, the tally at the end, the kernel's arguments).
    "memory": ("lsu", 1.0),
    # Warp shuffle: 32 a clock.
    "shuffle": ("shfl", 1.0),
    # Branches, convergence barriers, exits, calls, NOPs: the branch unit (assumed one an issue slot:
    # the guide gives no rate).
    "branch": ("issue", ISSUE),
    # Block barriers, warp votes and reductions, moves from special registers (assumed one an issue
    # slot: the guide gives no rate; a few per checkpoint).
    "sync": ("issue", ISSUE),
    # The uniform datapath (one per scheduler: an issue slot each, beside the vector pipes).
    "uniform": ("issue", ISSUE),
}

# SASS opcode (its name before the first dot) -> class. Memory opcodes are split by width below.
OPCODES = {
    "IADD3": "int",      # integer add of three operands (and its .X carry form)
    "IADD": "int",       # integer add (older form)
    "VIADD": "int",      # integer add with an immediate
    "IABS": "int",       # integer absolute value
    "IMNMX": "int",      # integer minimum/maximum
    "VIMNMX": "int",     # integer minimum/maximum (sm_90 form)
    "VIADDMNMX": "int",  # integer add, then minimum/maximum (sm_90: one instruction)
    "ISETP": "int",      # integer compare into a predicate
    "ICMP": "int",       # integer compare and select
    "LOP3": "int",       # any bitwise function of three operands
    "LOP": "int",        # bitwise logic (older form)
    "SHF": "int",        # funnel shift (64-bit shifts are pairs of them)
    "SHL": "int",        # shift left
    "SHR": "int",        # shift right
    "LEA": "int",        # shift and add (address arithmetic)
    "SEL": "int",        # select by a predicate
    "FSEL": "int",       # select by a predicate (float form, an ALU select)
    "PRMT": "int",       # byte permute
    "BMSK": "int",       # bit mask of a width
    "SGXT": "int",       # sign extend from a bit
    "MOV": "int",        # register move
    "CS2R": "int",       # zero a register pair (or read a clock): an ALU move
    "PLOP3": "int",      # logic of three predicates
    "P2R": "int",        # predicates into a register
    "R2P": "int",        # a register into predicates
    "IMAD": "imad",      # integer multiply-add, and its .MOV, .SHL, .IADD, .X, .WIDE, .HI forms
    "IMUL": "imad",      # integer multiply
    "HFMA2": "imad",     # half-precision FMA pair, used by the compiler to set a register: FMA datapath
    "FFMA": "fp32",      # float fused multiply-add
    "FADD": "fp32",      # float add
    "FMUL": "fp32",      # float multiply
    "POPC": "bits",      # population count
    "FLO": "bits",       # find leading one (count of leading zeros)
    "BREV": "bits",      # bit reverse (count of trailing zeros is BREV then FLO)
    "MUFU": "convert",   # reciprocal (the integer division helper's first estimate)
    "I2F": "convert",    # integer to float conversion
    "F2I": "convert",    # float to integer conversion
    "I2FP": "convert",   # integer to float conversion (sm_90 form)
    "F2IP": "convert",   # float to integer conversion (sm_90 form)
    "LDS": "shared",     # shared memory load
    "STS": "shared",     # shared memory store
    "ATOMS": "shared",   # shared memory atomic
    "LD": "memory",      # generic load
    "ST": "memory",      # generic store
    "LDG": "memory",     # global load
    "STG": "memory",     # global store
    "LDL": "memory",     # local (stack) load: a spill
    "STL": "memory",     # local (stack) store: a spill
    "ATOM": "memory",    # generic atomic
    "ATOMG": "memory",   # global atomic
    "RED": "memory",     # global reduction (an atomic without result)
    "REDG": "memory",    # global reduction (sm_90 form)
    "LDC": "memory",     # constant bank load (the kernel's arguments)
    "SHFL": "shuffle",   # warp shuffle
    "BRA": "branch",     # branch
    "BRX": "branch",     # indirect branch
    "JMP": "branch",     # jump
    "BSSY": "branch",    # set a convergence barrier
    "BSYNC": "branch",   # wait at a convergence barrier
    "BREAK": "branch",   # leave a convergence barrier
    "BMOV": "branch",    # move a convergence barrier's state
    "EXIT": "branch",    # end of the thread
    "RET": "branch",     # return
    "CALL": "branch",    # call (the integer division helper)
    "WARPSYNC": "branch",  # wait for the lanes of a mask
    "YIELD": "branch",   # scheduling hint
    "NOP": "branch",     # padding
    "BAR": "sync",       # block barrier (syncthreads, syncthreads_count)
    "B2R": "sync",       # a barrier's result into a register
    "VOTE": "sync",      # warp vote
    "VOTEU": "sync",     # warp vote into a uniform register
    "REDUX": "sync",     # warp reduction
    "MATCH": "sync",     # warp match
    "MEMBAR": "sync",    # memory barrier
    "S2R": "sync",       # read a special register (thread index, lane mask)
    "ULDC": "uniform",   # constant load into a uniform register
    "UMOV": "uniform",   # uniform move
    "UIADD3": "uniform",  # uniform add
    "UIMAD": "uniform",  # uniform multiply-add
    "ULEA": "uniform",   # uniform shift and add
    "ULOP3": "uniform",  # uniform logic
    "USHF": "uniform",   # uniform funnel shift
    "USEL": "uniform",   # uniform select
    "UISETP": "uniform",  # uniform compare
    "UPOPC": "uniform",  # uniform population count
    "UFLO": "uniform",   # uniform find leading one
    "UPRMT": "uniform",  # uniform byte permute
    "S2UR": "uniform",   # special register into a uniform register
    "R2UR": "uniform",   # register into a uniform register
}
WIDE = {"shared": "shared64"}  # a class's form for 64-bit (or wider) accesses per lane


class UnknownOpcode(ValueError):
    """An opcode the table (OPCODES) does not classify: add it, with its class and why."""


def classify(mnemonic: str) -> str:
    """The class of a SASS mnemonic (`LDS.64`, `IMAD.MOV.U32`, ...)."""
    opcode, *modifiers = mnemonic.split(".")
    try:
        kind = OPCODES[opcode]
    except KeyError:
        raise UnknownOpcode(f"opcode {opcode} ({mnemonic}) has no class in benchmarks/sass.py OPCODES") from None
    if kind in WIDE and {"64", "128"} & set(modifiers):
        kind = WIDE[kind]
    return kind


# ---------------------------------------------------------------- tools and compilation

class MissingTool(RuntimeError):
    """ptxas or nvdisasm is not installed (their wheels: the `test` or `gpu` extra of bmn)."""


def _wheel_binary(package: str, name: str) -> Path:
    try:
        module = importlib.import_module(package)
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


def cache_folder() -> Path:
    return Path(tempfile.gettempdir()) / "bmn-sass"


def kernel_module():
    """kernels/sweep/cuda.py, imported when first needed (it needs numba-cuda)."""
    return importlib.import_module(MODULE)


def kernel_function(name: str):
    """The Python function of a kernel and its signature (the KERNELS table of kernels/sweep/cuda.py)."""
    return kernel_module().KERNELS[name]


LINE_BASE = 100_000  # a compiled line number is (file's number + 1) x LINE_BASE + line


@contextlib.contextmanager
def _files_in_line_numbers(files: dict[str, int]):
    """While compiling: every line number Numba writes into the line table carries its file, numbered
    in `files` (the file of the IR statement being lowered, which Numba's inlining keeps and its line
    table drops). Only the line table changes, not the code."""
    from numba.cuda import debuginfo, lowering

    try:
        lower_inst = lowering.Lower.lower_inst
        adjust = lowering.BaseLower._adjust_line_if_prologue
        mark_location = debuginfo.DIBuilder.mark_location
    except AttributeError as error:
        raise RuntimeError(f"numba-cuda's lowering is not as benchmarks/sass.py knows it (0.30): {error}") from None

    def lower_with_file(self, inst):
        self.debuginfo._bmn_file = self.loc.filename
        return lower_inst(self, inst)

    def adjust_in_own_file(self, line):
        # numba-cuda moves a line above the function's `def` to the `def` (a decorator's line, it
        # assumes): right in the function's own file, wrong for an inlined function of another file.
        return adjust(self, line) if self.loc.filename == self.func_ir.loc.filename else line

    def mark_with_file(self, builder, line):
        file = getattr(self, "_bmn_file", None)
        if file is not None and 0 <= line < LINE_BASE:
            line += (files.setdefault(file, len(files)) + 1) * LINE_BASE
        return mark_location(self, builder, line)

    lowering.Lower.lower_inst = lower_with_file
    lowering.BaseLower._adjust_line_if_prologue = adjust_in_own_file
    debuginfo.DIBuilder.mark_location = mark_with_file
    try:
        yield
    finally:
        lowering.Lower.lower_inst = lower_inst
        lowering.BaseLower._adjust_line_if_prologue = adjust
        debuginfo.DIBuilder.mark_location = mark_location


class Compiled(NamedTuple):
    report: str  # ptxas -v's report
    listing: str  # nvdisasm -g's listing
    files: list[str]  # the files of the line numbers, by number


@cache
def compiled(name: str) -> Compiled:
    """The kernel for sm_90: ptxas's report, nvdisasm's listing and its files. Kept in a temporary
    folder under a hash of the PTX, so a second call in any process only compiles the PTX."""
    from numba import cuda

    fn, signature = kernel_function(name)
    files: dict[str, int] = {}
    with _files_in_line_numbers(files):
        text, _ = cuda.compile_ptx(fn, signature, cc=ARCH, lineinfo=True)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    folder = cache_folder() / digest
    report, listing, table = folder / "ptxas.txt", folder / "sass.txt", folder / "files.json"
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
        table.write_text(json.dumps(sorted(files, key=files.get)))
        tmp = listing.with_suffix(f".{os.getpid()}")
        tmp.write_text(out.stdout)
        tmp.replace(listing)  # last: its presence says the folder is complete
    return Compiled(report.read_text(), listing.read_text(), json.loads(table.read_text()))


def resources(name: str) -> dict:
    """ptxas's figures for the kernel on sm_90: registers, stack frame, spill bytes, shared memory."""
    report = compiled(name).report

    def number(pattern: str) -> int:
        found = re.search(pattern, report)
        return int(found.group(1)) if found else 0

    return {"registers": number(r"Used (\d+) registers"), "stack": number(r"(\d+) bytes stack frame"),
            "spill_stores": number(r"(\d+) bytes spill stores"), "spill_loads": number(r"(\d+) bytes spill loads"),
            "shared": number(r"(\d+) bytes smem")}


# ---------------------------------------------------------------- the listing

INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(?:\{\s*)?(@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)")
LINE = re.compile(r'^\s*//## File "([^"]+)", line (\d+)')
LABEL = re.compile(r"^(\.L_x_\d+):")
TARGET = re.compile(r"`\((\.L_x_\d+)\)")


class Instruction(NamedTuple):
    address: int
    file: str | None  # the source file and line of the line table (None before the first entry)
    line: int | None
    mnemonic: str  # opcode with its modifiers: IMAD.MOV.U32
    kind: str  # its class (CLASSES)
    text: str  # the listing's line
    target: str | None  # a branch's label
    label: str | None  # the label just before it, if any

    @property
    def opcode(self) -> str:
        return self.mnemonic.split(".")[0]


def instructions(name: str) -> list[Instruction]:
    """Every instruction of the kernel in address order, with its file, line and class."""
    return parse(compiled(name))


def parse(result: Compiled) -> list[Instruction]:
    file = line = label = None
    found = []
    unknown = set()
    for text in result.listing.splitlines():
        m = LINE.match(text)
        if m:
            file, line = m.group(1), int(m.group(2))
            if line >= LINE_BASE:
                file, line = result.files[line // LINE_BASE - 1], line % LINE_BASE
            continue
        m = LABEL.match(text)
        if m:
            label = m.group(1)
            continue
        m = INSTRUCTION.match(text)
        if m:
            mnemonic = m.group(3)
            try:
                kind = classify(mnemonic)
            except UnknownOpcode:
                unknown.add(mnemonic)
                kind = "?"
            target = TARGET.search(text)
            found.append(Instruction(int(m.group(1), 16), file, line, mnemonic, kind, text.strip(),
                                     target.group(1) if target else None, label))
            label = None
    if unknown:
        raise UnknownOpcode(f"opcodes without a class in benchmarks/sass.py OPCODES: {sorted(unknown)}")
    return found


def loops(listed: list[Instruction]) -> list[tuple[int, int]]:
    """The loops of the listing as (first, last) indexes: a branch back to a label at or before it."""
    at = {ins.label: k for k, ins in enumerate(listed) if ins.label}
    return [(at[ins.target], k) for k, ins in enumerate(listed)
            if ins.opcode == "BRA" and ins.target in at and at[ins.target] <= k]


def count(listed) -> Counter:
    """Counter of class -> instructions, and 'total'."""
    counts = Counter(ins.kind for ins in listed)
    counts["total"] = len(listed)
    return counts


# ---------------------------------------------------------------- dependences and latencies

# Cycles from an instruction's issue to the earliest issue of an instruction that reads what it wrote (its
# dependent-issue latency), by opcode, else by class: (cycles, where the figure comes from). Published figures
# for Hopper where there are any; else Volta's (sm_70), the last generation measured instruction by
# instruction; "assumed" where no source gives one (benchmarks/README.md says which matter).
LATENCY = {
    "int": (4, "H100 PCIe INT32 'true latency' 4 (Jarmusch et al., HiPC 2025, Table II); IADD3, LOP3, SHF, SEL, "
               "ISETP, MOV 4 on V100 and T4 (Jia et al., arXiv:1804.06826 and 1903.07486, Table 4.1)"),
    "imad": (5, "IMAD 5 on V100 and T4 (Jia et al., Table 4.1); no Hopper figure published"),
    "fp32": (4, "H100 PCIe FP32 4 (Jarmusch et al., Table II)"),
    "POPC": (10, "POPC 10 on V100 (Jia et al., Table 4.1; ~15 on T4); no Hopper figure published"),
    "bits": (14, "FLO, BREV 14 on V100 (Jia et al., Table 4.1; ~15 on T4); no Hopper figure published"),
    "convert": (14, "MUFU 14 on V100 (Jia et al., Table 4.1)"),
    "shared": (29, "shared-memory load 29.0 on H800 (Luo et al., arXiv:2402.13499, Table IV); an ATOMS's returned "
                   "value charged the same (assumed: no Hopper ATOMS figure published)"),
    "shared64": (29, "as shared (64-bit loads: 24 against 24 for 32-bit on Ampere, Huerta et al. MICRO 2025 Table 2)"),
    "memory": (41, "L1 hit 40.7 on H800 (Luo et al., Table IV): generic and global loads; a global atomic's "
                   "returned value charged the same (assumed)"),
    "LDC": (29, "constant load 26-29 on Ampere (Huerta et al., Table 2)"),
    "ULDC": (29, "constant load 26-29 on Ampere (Huerta et al., Table 2)"),
    "shuffle": (29, "assumed: no SHFL latency published; charged a shared-memory load's"),
    "sync": (29, "assumed: no latency published for S2R, BAR's result (B2R), VOTE, REDUX; charged a shared-memory "
                 "load's"),
    "uniform": (4, "assumed: no uniform-datapath latency published; charged the integer ALU's"),
    "S2UR": (29, "assumed, as S2R"),
    "branch": (0, "writes no register"),
}
BARRIER = "B"  # the register-like result of BAR.RED, read by B2R
NO_DESTINATION = {"ST", "STS", "STG", "STL", "RED", "REDG", "BRA", "BRX", "JMP", "BREAK", "BSSY", "BSYNC", "BMOV",
                  "CALL", "RET", "EXIT", "NOP", "WARPSYNC", "YIELD", "MEMBAR"}
REGISTER = re.compile(r"(?<![A-Za-z0-9_])(UR|R|UP|P)(\d+)(\.64|\.128)?(?![0-9])")
PREDICATE = re.compile(r"^!?U?P(\d+|T)$")


def latency(ins: Instruction) -> int:
    """The instruction's dependent-issue latency in cycles (LATENCY: by opcode, else by class)."""
    return LATENCY.get(ins.opcode, LATENCY.get(ins.kind))[0]


def _registers(operand: str, width: int = 1) -> list[str]:
    out = []
    for kind, number, suffix in REGISTER.findall(operand):
        n = {".64": 2, ".128": 4}.get(suffix, width)
        out += [f"{kind}{int(number) + k}" for k in range(n)]
    return out


def dependences(ins: Instruction) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the registers it writes, the registers it reads): R, UR, P and UP registers by name (RZ, URZ, PT and UPT
    are constants), and BARRIER for a block barrier's count. Its destinations are its first operand and the
    predicates right after it (ISETP P0, PT; IADD3 R2, P0, P1; a shuffle's or global atomic's PT, R2); a
    64-bit (.64, .WIDE, CS2R) result is a pair of registers, a 64-bit store's or atomic's data too."""
    body = re.sub(r"^\s*/\*[0-9a-f]+\*/\s*(\{\s*)?", "", ins.text).split(";")[0]
    body = re.sub(r"`\([^)]*\)", "", body)  # a branch's target
    guard = re.match(r"@(!?U?P[0-9T])\s+", body)
    sources = _registers(guard.group(1)) if guard else []
    rest = body[guard.end():] if guard else body
    parts = rest.split(None, 1)
    operands = [o.strip() for o in parts[1].split(",")] if len(parts) > 1 else []
    op, mods = ins.opcode, ins.mnemonic.split(".")[1:]
    wide = 4 if "128" in mods else 2 if ("64" in mods or "WIDE" in mods or op == "CS2R" or
                                          (op == "F2I" and "U64" in mods)) else 1
    destinations: list[str] = []
    if op == "BAR" and "RED" in mods:
        destinations = [BARRIER]
    elif op not in NO_DESTINATION and operands and not operands[0].startswith("["):
        n = 1
        while n < len(operands) and PREDICATE.match(operands[n]):
            n += 1
        if PREDICATE.match(operands[0]) and n == 1 and len(operands) > 1:
            n = 2  # SHFL PT, R2, ...; ATOMG PT, R2, ...: the predicate and the register
        for k in range(n):
            is_register = not PREDICATE.match(operands[k])
            destinations += _registers(operands[k], wide if is_register else 1)
        operands = operands[n:]
    if op == "B2R":
        sources.append(BARRIER)
    stored = op in NO_DESTINATION or op == "ATOMG"
    for k, operand in enumerate(operands):  # a store's data and a wide multiply-add's addend: its last operand
        paired = (stored or op in ("IMAD", "UIMAD") and "WIDE" in mods) and k == len(operands) - 1
        sources += _registers(operand, wide if paired and "[" not in operand else 1)
    keep = [r for r in destinations if not r.endswith("T")]
    return tuple(keep), tuple(sources)


# ---------------------------------------------------------------- by function

class Span(NamedTuple):
    """Lines first..last of a source file, under a name (a function, or a part of one)."""
    name: str
    file: str
    first: int
    last: int

    def holds(self, file: str | None, line: int | None) -> bool:
        return line is not None and file == self.file and self.first <= line <= self.last


def python_function(fn):
    """The Python function of a Numba dispatcher, intrinsic or CUDA device function (or fn itself)."""
    return getattr(fn, "py_func", None) or getattr(fn, "_defn", None) or fn


def span(fn, name: str | None = None) -> Span:
    """A function's lines."""
    fn = python_function(fn)
    source, first = inspect.getsourcelines(fn)
    return Span(name or fn.__qualname__, os.path.abspath(inspect.getsourcefile(fn)), first, first + len(source) - 1)


def block(fn, starts: str, name: str) -> Span:
    """The lines of the block of a function that starts at its first line containing `starts` (a
    loop, a branch): that line and the lines after it indented deeper (or blank)."""
    whole = span(fn)
    source, first = inspect.getsourcelines(python_function(fn))
    k = next(i for i, text in enumerate(source) if starts in text)
    indent = len(source[k]) - len(source[k].lstrip())
    last = k
    for i in range(k + 1, len(source)):
        text = source[i]
        if text.strip() and len(text) - len(text.lstrip()) <= indent:
            break
        if text.strip():
            last = i
    return Span(name, whole.file, first + k, first + last)


def attribute(listed: list[Instruction], spans: list[Span]) -> list[str]:
    """Per instruction: the name of the innermost of `spans` (fewest lines) that holds its file and line,
    else 'other'."""
    spans = sorted(spans, key=lambda s: s.last - s.first)
    return [next((s.name for s in spans if s.holds(ins.file, ins.line)), "other") for ins in listed]


# ---------------------------------------------------------------- by region of a marked loop

MARK = re.compile(r"#\s*@([a-z]+)\b")


def marks(fn) -> tuple[dict[int, str], int, int]:
    """The kernel's `# @name` comments: {line: name}, the kernel's first and last line."""
    source, first = inspect.getsourcelines(fn)
    found = {first + k: m.group(1) for k, text in enumerate(source) if (m := MARK.search(text))}
    return found, first, first + len(source) - 1


def region_of_each(name: str) -> tuple[list[Instruction], list[str]]:
    """The instructions of a marked kernel and the region of each (see `regions`)."""
    fn, _ = kernel_function(name)
    listed = instructions(name)
    found, first, last = marks(fn)
    if "end" not in found.values():
        raise ValueError("the kernel marks no @end")
    kernel_file = os.path.abspath(inspect.getsourcefile(fn))
    loop_first = min(found)
    end_line = max(line for line, n in found.items() if n == "end")
    anchors = sorted(found)
    # The rare paths the kernel keeps in helpers of their own: a kept deal's slot (`_keep`), and a lane's tally
    # added to its piece's when the piece changes (`_flush`: where pieces meet, and at the end).
    rare = {"keep": span(kernel_module()._keep), "flush": span(kernel_module()._flush)}

    def mine(ins: Instruction) -> bool:
        return ins.file == kernel_file and ins.line is not None

    # The region of each instruction on one of the loop's own lines, and for every instruction the
    # next such region in address order (an inlined function's code comes before the loop line that
    # uses its result: the segment's before the test of its event, a deal's before its slot's).
    own = [found[max(a for a in anchors if a <= ins.line)] if mine(ins) and loop_first <= ins.line <= last else None
           for ins in listed]
    following: list[str | None] = [None] * len(listed)
    after = None
    for k in range(len(listed) - 1, -1, -1):
        after = own[k] or after
        following[k] = after
    out = []
    started = ended = False
    for k, ins in enumerate(listed):
        if own[k] is not None:
            started = True
            ended = ended or ins.line >= end_line
            where = own[k]
        elif not started:
            where = "prologue"
        elif mine(ins) and ins.line > last:
            # the helpers defined after the kernel in its file: a kept deal's slot and a piece's flush (rare),
            # or the tally
            where = next((name for name, helper in rare.items() if helper.holds(ins.file, ins.line)), "finish")
        else:
            where = following[k] or "epilogue"  # an inlined function's line
            if where == "checkpoint":
                where = "refill"  # a checkpoint calls nothing; a refill's deal was moved before its test
        if ended:
            where = "epilogue"
        out.append(where)
    # What comes before the kernel's loop (its longest backward branch) runs once, whatever line the compiler
    # gave it (a loop-invariant hoisted out of the loop keeps the line it came from).
    spans = loops(listed)
    if spans:
        first = max(spans, key=lambda span: span[1] - span[0])[0]
        out[:first] = ["prologue"] * first
    return listed, out


def regions(name: str) -> dict[str, Counter]:
    """Region name -> Counter of class -> static SASS instructions (and 'total'), for a kernel whose loop
    marks each kind of work with `# @name` (kernels/sweep/cuda.py).

    Walking the SASS in address order, an instruction on one of the loop's own lines belongs to the
    region that line is in; an instruction of an inlined function belongs to the region of the next
    loop line after it, the statement that uses what the function computed (or to the refill, the only
    caller of functions at a checkpoint, where the compiler moved a deal's code above its test).
    Instructions before the loop's first line are the prologue, after `@end` the epilogue; those of
    functions defined after the kernel in its file (`_finished`, `_tallied`, `_keep`, `_flush`: a finished
    game's tally) are the finish region's, but `_keep`'s and `_flush`'s, the rare paths of a kept deal and
    of a lane's tally added to its piece's, which are the keep and flush regions'."""
    listed, where = region_of_each(name)
    out: dict[str, Counter] = {}
    for ins, region in zip(listed, where):
        out.setdefault(region, Counter())[ins.kind] += 1
    for counts in out.values():
        counts["total"] = sum(counts.values())
    return out


# ---------------------------------------------------------------- the command

def _table(rows: dict[str, Counter]) -> list[str]:
    kinds = list(CLASSES)
    width = max([12] + [len(r) + 2 for r in rows])
    lines = [f"{'':<{width}}" + "".join(f"{k:>9}" for k in kinds) + f"{'total':>9}"]
    for row, counts in rows.items():
        lines.append(f"{row:<{width}}" + "".join(f"{counts[k]:>9}" for k in kinds) + f"{counts['total']:>9}")
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kernel", nargs="?", default="random_sweep")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        figures = resources(args.kernel)
        table = regions(args.kernel)
    except MissingTool as error:
        sys.exit(f"sass.py: {error}: pip install nvidia-cuda-nvcc-cu12 nvidia-cuda-nvdisasm")
    if args.json:
        print(json.dumps({"ptxas": figures, "counts": {k: dict(v) for k, v in table.items()}}))
        return
    print(f"{args.kernel} ({MODULE}) for sm_{ARCH[0]}{ARCH[1]}: {figures}")
    print("static SASS instructions by class (pipe, warp-instructions a clock per multiprocessor): "
          + ", ".join(f"{k} ({p}, {r:g})" for k, (p, r) in CLASSES.items()))
    print("\n".join(_table(table)))


if __name__ == "__main__":
    main()
