"""What every engine shares: the workspace a game is played in, and when cycle detection starts.

A `Workspace` is one named value (a NamedTuple, which Numba takes as a kernel argument like any
array), made by `new_workspace` once per shape and reused for every deal of that shape: a
compiled loop allocates nothing per deal. Its layout is the per-card engine's
(kernels/engines/percard.py): "slot" s holds one game in progress, so one workspace holds the
game (slot 0), a saved copy for cycle detection (slot 1) and a second runner for measuring the
preperiod (slot 2):
    hands[s, p, :]  ring buffer of hand p (capacity a power of two, `mask` = capacity - 1)
    head[s, p]      index of hand p's top card; size[s, p] its number of cards
    still_in[s, p]  0 once player p had to play holding no card (docs/rules.md: "out")
    pile            the cards of the trick in progress, in the order played
    enc[k, :]       two encodings of a state (kernels/cycleid.py): the smallest so far, the current
An engine that keeps its game elsewhere (the bitmask engine keeps it in registers) ignores it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit import kernel


class Workspace(NamedTuple):
    hands: np.ndarray  # uint8 (3, players, capacity)
    head: np.ndarray  # int64 (3, players)
    size: np.ndarray  # int64 (3, players)
    still_in: np.ndarray  # uint8 (3, players)
    pile: np.ndarray  # uint8 (capacity,)
    enc: np.ndarray  # uint8 (2, cards + players)


def default_brent_start(total: int) -> int:
    """Tricks after which Brent's check starts: by then almost every finite game of a deck of
    `total` cards is over, so the common case pays nothing for cycle detection. A cycle entered
    earlier is still found exactly, only a little later."""
    return 8 * total


@kernel
def new_workspace(players, total):
    """The workspace for games of `players` hands and `total` cards (callable from Python too)."""
    cap = 2
    while cap < total:
        cap *= 2
    return Workspace(np.zeros((3, players, cap), dtype=np.uint8), np.zeros((3, players), dtype=np.int64),
                     np.zeros((3, players), dtype=np.int64), np.zeros((3, players), dtype=np.uint8),
                     np.zeros(cap, dtype=np.uint8), np.zeros((2, total + players), dtype=np.uint8))
