"""Helpers the test modules share: the engines under test, the published figures, small decks."""

from __future__ import annotations

import csv
from pathlib import Path

from kernels.dealspace import DealSpace
from kernels.decks import parse_deck
from kernels.engines import ENGINE_TABLE
from kernels.engines.reference import play_reference, trace_reference
from kernels.notation import parse_deal
from kernels.play import play

DATA = Path(__file__).parent / "data"
KERNELS = tuple(e.name for e in ENGINE_TABLE)  # the compiled engines
CASELLA = "---K---Q-KQAJ-----AAJ--J--/----------Q----KQ-J-----KA"
CASELLA_ID = "e1fabb73dac32ded"  # FNV-1a of the canonical state (docs/rules.md, "Cycle ids")
# The first published Camicia cycle (Riccardo Zanotto, 2017): a balanced 20/20 deal on its own cycle.
ZANOTTO = "--K-Q-Q-K-KJ-----KJ-/--J--Q----Q-------J-"
ZANOTTO_ID = "cde82a86f0aeca09"
STANDARD = DealSpace.of(parse_deck("standard"))


def play_engine(deal, engine: str, leader: int = 0):
    if engine == "reference":
        return play_reference(deal, leader)
    return play(deal, leader=leader, engine_name=engine)


def records() -> list[dict]:
    with open(DATA / "records.tsv", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def space(deck, split=None, players=None) -> DealSpace:
    return DealSpace.of(parse_deck(deck), split, players)


def seat_views(deal) -> set:
    """Every trick-boundary state of a game (the start included), seen from the leader's seat.

    A deal found led by hand 2 is reported with its hands swapped, so its game is the mirror
    image of the one backward play found: comparing from the leader's seat removes the mirror.
    """
    deal = parse_deal(deal) if isinstance(deal, str) else deal
    views = {(tuple(deal[0]), tuple(deal[1]))}
    for rec in trace_reference(deal):
        views.add((rec.hands[rec.leader], rec.hands[1 - rec.leader]))
    return views


def reference_problems(text: str, strategy) -> list[str]:
    """What docs/strategies.md (its text) lacks of a strategy: its row of the strategies' table, showing its
    summary word for word, and a row for each of its keys with its default as a config writes it."""
    import json
    import re

    name = strategy.name
    rows = dict(re.findall(r"^\| `(\w+)` \| (.+?) \| `configs/\w+\.toml` \|$", text, re.M))
    problems = [] if rows.get(name) == strategy.summary else [f"the {name} row of the strategies' table"]
    if strategy.params and f"**`[{name}]`**" not in text:
        return problems + [f"the keys of [{name}]"]
    table = text.split(f"**`[{name}]`**", 1)[-1].split("**`[", 1)[0]
    for param in strategy.params:
        row = re.search(rf"^\| `{param.name}` \| ([^|]*) \|", table, re.M)
        default = list(param.default) if isinstance(param.default, tuple) else param.default
        expected = {None: "none", True: "true", False: "false"}.get(default, None) \
            if default is None or isinstance(default, bool) else \
            (f'"{default}"' if isinstance(default, str) else json.dumps(default) if isinstance(default, list)
             else str(default))
        if not row or row.group(1).replace("_", "") != expected:
            problems.append(f"[{name}] {param.name}: {row.group(1) if row else 'no row'} (default {expected})")
    return problems
