"""Bit tricks the fast kernel needs, as LLVM intrinsics (one instruction each on x86-64/ARM64)."""

from llvmlite import ir
from numba.core import types
from numba.core.extending import intrinsic


@intrinsic
def ctz(typingctx, x):
    """Count trailing zeros of a uint64 (64 for 0)."""
    if x != types.uint64:
        return None

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 0))

    return types.uint64(types.uint64), codegen


@intrinsic
def popcount(typingctx, x):
    """Number of set bits of a uint64."""
    if x != types.uint64:
        return None

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return types.uint64(types.uint64), codegen
