"""`bmn ancestors`: the balanced deals whose games enter a cycle (or reach a deal's start); with
`--every-split`, every state of every split that enters a cycle."""

from __future__ import annotations

import argparse
import json

from kernels.backward import DEFAULT_MAX_STATES, ancestors, entering
from kernels.errors import BmnError
from kernels.notation import parse_deal


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
    p.add_argument("--every-split", action="store_true",
                   help="for a cycle: every state of every split whose game enters it, as deals led by their "
                        "leader, counted by split (--json lists them), each replayed")
    p.set_defaults(handler=cmd_ancestors)


def cmd_ancestors(args) -> int:
    if args.max_states < 1:
        raise BmnError("--max-states must be at least 1")
    if args.every_split:
        return every_split(args)
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


def every_split(args) -> int:
    found = entering(parse_deal(args.hands), max_states=args.max_states)
    cycle, splits = found.cycle, found.splits()
    if args.json:
        print(json.dumps({"cycle_id": cycle.cycle_id, "period_tricks": cycle.period_tricks,
                          "period_cards": cycle.period_cards, "states": len(found.deals), "truncated": found.truncated,
                          "splits": {f"{a}/{b}": n for (a, b), n in splits.items()}, "deals": found.deals}))
        return 0
    for (lead, other), n in splits.items():
        print(f"{lead:>3}/{other:<3} {n:>9,}")
    print(f"{len(found.deals):,} states enter cycle {cycle.cycle_id} (period {cycle.period_tricks} tricks, "
          f"{cycle.period_cards} cards), by split (the leader's cards first); each replayed into it")
    if found.truncated:
        print(f"the search stopped at --max-states ({args.max_states:,} states): there may be more")
    return 0
