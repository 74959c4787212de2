"""The engines that play a deal: one table of them, the rule that picks one, the compiled dispatch.

    bitmask    (`--engine fast`) two players, at most 64 cards and 16 penalty cards: hands as
               penalty bitmasks, a trick costs a few register operations. The production engine.
    percard    (`--engine percard`) two players, any deck: one card at a time from ring buffers,
               with a two-player trick. The straightforward baseline `bmn bench` reports.
    percard    (`--engine general`) the same module's n-player trick: 2-8 players, up to 1024 cards.
    reference  plain Python, every state remembered: the slow, obviously correct oracle.

All of them follow docs/rules.md and agree on every count and every cycle id; the tests hold
each compiled engine to the reference (tests/test_engines.py).

`ENGINE_TABLE` is the one list of compiled engines: each `Engine` has its name (`--engine NAME`),
its id, which deals it holds, and its kernels. Python dispatches through the table. Compiled loops
cannot choose a function at run time cheaply, so they branch on the engine's id instead, in one
place: `play_one`, which mirrors the table (tests/test_engines.py checks that it does).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
from numba import prange

from .._jit import kernel
from ..errors import BmnError
from .bitmask import fits, play_fast
from .percard import play_general, play_percard
from .workspace import Workspace, default_brent_start, new_workspace

__all__ = ["ENGINES", "ENGINE_TABLE", "Engine", "FAST", "GENERAL", "PERCARD", "Workspace", "default_brent_start",
           "engine_named", "new_workspace", "pick_engine", "play_one", "play_parallel", "play_rows"]

# The engine ids, what compiled loops branch on; an engine's id is its index in ENGINE_TABLE.
FAST = 0
PERCARD = 1
GENERAL = 2


@kernel(inline="always")
def play_one(engine, deal, split, leader0, brent_start, ws, out):
    """Play one deal with the engine of id `engine` in the workspace `ws` into the result row `out`.

    Every engine's one-deal kernel takes (deal, split, leader0, brent_start, ws, out): the card
    sequence, the hand sizes that cut it, the leader (0-based), the trick after which cycle
    detection starts (`default_brent_start`), a workspace (`new_workspace`), the result row.
    """
    if engine == FAST:
        play_fast(deal, split, leader0, brent_start, ws, out)
    elif engine == PERCARD:
        play_percard(deal, split, leader0, brent_start, ws, out)
    else:
        play_general(deal, split, leader0, brent_start, ws, out)


@kernel
def play_rows(engine, rows, splits, brent_start, out):
    """Play row i cut into hands by splits[i] (hand 1 leads) into out[i], one after another.

    On this core: for the few dozen deals of a climb or a cycle's children, `play_parallel`'s thread
    start-up (~5 ms) costs more than the games, and a cluster worker should keep to its core.
    """
    ws = new_workspace(splits.shape[1], rows.shape[1])
    for i in range(rows.shape[0]):
        play_one(engine, rows[i], splits[i], np.int64(0), brent_start, ws, out[i])  # not 0: see sweep_kernel


@kernel(parallel=True)
def play_parallel(engine, deals, split, leader0, brent_start, out):
    """Play every row of `deals` (card sequences all cut by `split`) in parallel; results into `out`."""
    n_deals = deals.shape[0]
    chunk = 64
    n_chunks = (n_deals + chunk - 1) // chunk
    for c in prange(n_chunks):
        ws = new_workspace(split.shape[0], deals.shape[1])
        for i in range(c * chunk, min(n_deals, (c + 1) * chunk)):
            play_one(engine, deals[i], split, leader0, brent_start, ws, out[i])


def _two_players(players: int, total: int, penalty_cards: int, max_value: int) -> bool:
    return players == 2


def _any_deal(players: int, total: int, penalty_cards: int, max_value: int) -> bool:
    # The notation's limits (2-8 players, up to MAX_CARDS cards) are checked where a deal is read.
    return True


@dataclass(frozen=True)
class Engine:
    """A compiled engine, as the table lists it."""

    name: str  # `--engine NAME`
    id: int  # what compiled loops branch on (`play_one`); its index in ENGINE_TABLE
    holds: Callable[[int, int, int, int], bool]  # (players, cards, penalty cards, highest value): can it play them?
    refusal: str  # the error when it is named for deals it cannot hold
    play: Callable  # one-deal kernel: (deal, split, leader0, brent_start, ws, out), as `play_one` takes
    batch: Callable  # (deals, split, leader0, brent_start, out): every row of `deals`, in parallel


# Fastest first: "auto" picks the first engine that holds the deals.
ENGINE_TABLE = (
    Engine("fast", FAST, fits, "the fast kernel holds two-player deals of at most 64 cards and 16 penalty "
           "cards; use --engine percard for these deals", play_fast, partial(play_parallel, FAST)),
    Engine("percard", PERCARD, _two_players, "the per-card two-player kernel plays two-player deals only; "
           "use --engine general", play_percard, partial(play_parallel, PERCARD)),
    Engine("general", GENERAL, _any_deal, "", play_general, partial(play_parallel, GENERAL)),
)
ENGINES = ("auto", *(e.name for e in ENGINE_TABLE))  # the choices of `--engine`


def engine_named(name: str) -> Engine:
    for engine in ENGINE_TABLE:
        if engine.name == name:
            return engine
    raise BmnError(f"unknown engine {name!r}; choose one of {', '.join(ENGINES)}")


def pick_engine(players: int, total: int, penalty_cards: int, max_value: int, engine_name: str = "auto") -> str:
    """The engine for deals of this shape: the fastest that can hold them, unless one is named."""
    shape = (players, total, penalty_cards, max_value)
    if engine_name == "auto":
        return next(e.name for e in ENGINE_TABLE if e.holds(*shape))
    engine = engine_named(engine_name)
    if not engine.holds(*shape):
        raise BmnError(engine.refusal)
    return engine.name
