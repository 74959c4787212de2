"""The engines that play a deal, and the rule that picks one.

    bitmask    (`--engine fast`) two players, at most 64 cards and 16 penalty cards: hands as
               penalty bitmasks, a trick costs a few register operations. The production engine.
    percard    (`--engine percard`) two players, any deck: one card at a time from ring buffers,
               with a two-player trick. The straightforward baseline `bmn bench` reports.
    percard    (`--engine general`) the same module's n-player trick: 2-8 players, up to 1024 cards.
    reference  plain Python, every state remembered: the slow, obviously correct oracle.

All of them follow docs/rules.md and agree on every count and every cycle id; the tests hold
each compiled engine to the reference.
"""

from __future__ import annotations

from .._jit import kernel
from ..errors import BmnError
from .bitmask import fits, play2
from .percard import play_general

ENGINES = ("auto", "fast", "percard", "general")
# The engine number the compiled search loops dispatch on (`play_one`).
ENGINE_IDS = {"fast": 0, "percard": 1, "general": 2}


def pick_engine(players: int, total: int, penalty_cards: int, max_value: int, engine_name: str = "auto") -> str:
    """The engine for deals of this shape: the fastest that can hold them, unless one is named."""
    if engine_name not in ENGINES:
        raise BmnError(f"unknown engine {engine_name!r}; choose one of {', '.join(ENGINES)}")
    if engine_name == "fast" and not fits(players, total, penalty_cards, max_value):
        raise BmnError(
            "the fast kernel holds two-player deals of at most 64 cards and 16 penalty cards; "
            "use --engine percard for these deals"
        )
    if engine_name == "percard" and players != 2:
        raise BmnError("the per-card two-player kernel plays two-player deals only; use --engine general")
    if engine_name != "auto":
        return engine_name
    if fits(players, total, penalty_cards, max_value):
        return "fast"
    return "percard" if players == 2 else "general"


@kernel(inline="always")
def play_one(engine, seq, split, leader0, brent_start, hands, head, size, still_in, pile, enc, row):
    """Play one deal with engine number `engine` (ENGINE_IDS) into the result row `row`."""
    if engine == 0:
        play2(seq, split[0], leader0, brent_start, row)
    elif engine == 1:
        play_general(seq, split, leader0, brent_start, True, hands, head, size, still_in, pile, enc, row)
    else:
        play_general(seq, split, leader0, brent_start, False, hands, head, size, still_in, pile, enc, row)
