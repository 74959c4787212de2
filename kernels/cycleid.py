"""Cycle identity (docs/rules.md, "Games that never end"), in plain Python.

A cycle is the set of trick-boundary states its games run through. Its id is computed from the
cycle alone, never from the deal that reached it:

1. Every state of the cycle is written *from the leader's seat*: the leader's hand, then the
   next player's clockwise, and so on, each hand as its card values top first followed by the
   byte 0xFF. Writing from the leader's seat makes the id independent of who is called player 1
   (for two players, the mirrored cycle is the same cycle).
2. The canonical form is the lexicographically smallest of these byte strings over the period.
3. cycle_id = FNV-1a 64-bit hash of the canonical form, shown as 16 lowercase hex digits.

This module holds both halves of the hashing: plain Python (`state_encoding`, `fnv1a64`,
`cycle_id_of_states`) for the reference player and backward play, and the Numba kernels
(`fnv1a64_array`, `bytes_less`) that the engines call on their state encodings; tests hold the
two equal on every engine.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ._jit import kernel

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
MASK64 = 0xFFFFFFFFFFFFFFFF
SEPARATOR = 0xFF


def state_encoding(leader: int, hands: Sequence[Sequence[int]]) -> bytes:
    n = len(hands)
    out = bytearray()
    for i in range(n):
        out.extend(hands[(leader + i) % n])
        out.append(SEPARATOR)
    return bytes(out)


def fnv1a64(data: bytes) -> int:
    h = FNV_OFFSET
    for byte in data:
        h = ((h ^ byte) * FNV_PRIME) & MASK64
    return h


def cycle_id_of_states(states: Iterable[tuple[int, Sequence[Sequence[int]]]]) -> int:
    """The cycle id (as an unsigned 64-bit int) of the boundary states (leader, hands) of one period."""
    canonical = min(state_encoding(leader, hands) for leader, hands in states)
    return fnv1a64(canonical)


# -- the same hashing in Numba, for the engines ---------------------------------------------------
_FNV_OFFSET64 = np.uint64(FNV_OFFSET)
_FNV_PRIME64 = np.uint64(FNV_PRIME)


@kernel
def fnv1a64_array(data):
    """FNV-1a 64-bit of a uint8 array (as `fnv1a64` on its bytes)."""
    h = _FNV_OFFSET64
    for i in range(data.shape[0]):
        h = (h ^ np.uint64(data[i])) * _FNV_PRIME64
    return h


@kernel
def bytes_less(a, b):
    """a < b lexicographically (equal-length uint8 arrays): picks the canonical encoding."""
    for i in range(a.shape[0]):
        if a[i] != b[i]:
            return a[i] < b[i]
    return False
