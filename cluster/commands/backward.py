"""`bmn ancestors`: the balanced deals whose games enter a cycle (or reach a deal's start)."""

from __future__ import annotations

import argparse
import json

from kernels.errors import BmnError
from kernels.notation import parse_deal
from kernels.backward import DEFAULT_MAX_STATES, ancestors


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ancestors",
        help="balanced deals whose games enter this deal's cycle (or reach its start)",
        description="Backward play (docs/rules.md): for a deal whose game is infinite, every balanced "
        "deal whose game enters the same cycle; for a finite game, the balanced deals whose "
        "games pass through its start. Each deal found is replayed forward and checked.",
    )
    p.add_argument("hands", nargs="+", metavar="HAND")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--limit", type=int, default=None, help="report at most N deals (the longest games first)")
    p.add_argument("--max-states", type=int, default=DEFAULT_MAX_STATES,
                   help=f"ancestor states to visit at most (default {DEFAULT_MAX_STATES:,})")
    p.set_defaults(handler=cmd_ancestors)


def cmd_ancestors(args) -> int:
    if args.max_states < 1:
        raise BmnError("--max-states must be at least 1")
    found = ancestors(parse_deal(args.hands), limit=args.limit, max_states=args.max_states)
    original = found.original
    if args.json:
        print(json.dumps({
            "count": found.count,
            "cycle_id": original.cycle_id,
            "outcome": original.outcome,
            "period_tricks": original.period_tricks,
            "period_cards": original.period_cards,
            "states": found.states,
            "truncated": found.truncated,
            "deals": [{"hands": d.hands, "tricks": d.result.tricks, "cards": d.result.cards} for d in found.deals],
        }))
        return 0
    for d in found.deals:
        print(f"{d.hands}  {d.result.tricks:>6} tricks  {d.result.cards:>7} cards")
    if original.outcome == "cycle":
        print(f"{found.count} balanced deals enter cycle {original.cycle_id} "
              f"(period {original.period_tricks} tricks, {original.period_cards} cards)")
    else:
        print(f"{found.count} balanced deals reach the start of this {original.cards}-card game")
    if len(found.deals) < found.count:
        print(f"(showing the {len(found.deals)} longest games; --limit)")
    if found.truncated:
        print(f"the search stopped at --max-states ({found.states:,} states visited): there may be more")
    return 0
