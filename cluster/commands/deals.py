"""`bmn play`, `bmn rank`, `bmn unrank`: one deal at a time, for people checking a claim."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from typing import TextIO

import numpy as np

from kernels.dealspace import DealSpace
from kernels.decks import Deck, parse_deck
from kernels.engines.reference import play_reference, trace_reference
from kernels.errors import BmnError
from kernels.game import GameResult
from kernels.notation import format_deal, format_hand, parse_deal, uses_letters
from kernels.play import ENGINES, as_sequence, play, play_batch

FILE_CHUNK = 65536


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "play",
        help="play a deal and print its outcome",
        description="Play a deal (hand 1 leads). Hands are separate arguments or joined by '/'; "
        "'-' or '0' is a plain card, J Q K A are 1 2 3 4, digits 1-9 are penalty values.",
    )
    p.add_argument("hands", nargs="*", metavar="HAND", help="the hands, top card first")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--trace", action="store_true", help="show the hands after every trick")
    p.add_argument("--file", metavar="PATH", help="play one deal per line of PATH ('-' for stdin), print JSON lines")
    p.add_argument(
        "--engine",
        default="auto",
        choices=[*ENGINES, "reference"],
        help="kernel to play with (default: the fastest that holds the deal; 'reference' is the slow oracle)",
    )
    p.set_defaults(handler=cmd_play)

    p = sub.add_parser("rank", help="print the rank (deal number) of a deal")
    p.add_argument("hands", nargs="+", metavar="HAND")
    p.set_defaults(handler=cmd_rank)

    p = sub.add_parser("unrank", help="print the deal of a rank")
    p.add_argument("rank", metavar="RANK")
    p.add_argument("--deck", default="standard", help="standard, camicia or VALUE:COUNT,... (default standard)")
    p.add_argument("--split", default=None, help="hand sizes, e.g. 26,26 (default: equal split)")
    p.add_argument("--players", type=int, default=None, help="number of hands for an equal split (default 2)")
    p.set_defaults(handler=cmd_unrank)


def play_with(deal, engine: str) -> GameResult:
    if engine == "reference":
        return play_reference(deal)
    return play(deal, engine_name=engine)


def cmd_play(args) -> int:
    if args.file is not None:
        if args.hands:
            raise BmnError("give either hands or --file, not both")
        if args.trace:
            raise BmnError("--trace plays one deal; it cannot be combined with --file")
        if args.file == "-":
            return play_lines(sys.stdin, args.engine, sys.stdout)
        try:
            with open(args.file, encoding="utf-8") as handle:
                return play_lines(handle, args.engine, sys.stdout)
        except OSError as error:
            raise BmnError(f"cannot read {args.file}: {error.strerror}") from None
    if not args.hands:
        raise BmnError("give the hands to play (for example: bmn play ---K--Q-... -----A--...), or --file PATH")
    deal = parse_deal(args.hands)
    result = play_with(deal, args.engine)
    if args.json:
        print(json.dumps(result.to_dict()))
        return 0
    if args.trace:
        print_trace(deal)
        print()
    print_summary(deal, result)
    return 0


def print_summary(deal, result: GameResult, out: TextIO | None = None) -> None:
    w = (out or sys.stdout).write
    w(f"deal       {format_deal(deal)}\n")
    if result.outcome == "win":
        w(f"outcome    hand {result.winner} wins\n")
        w(f"tricks     {result.tricks}\n")
        w(f"cards      {result.cards}\n")
    else:
        w("outcome    cycle: the game never ends\n")
        w(f"tricks     {result.tricks}  (when the first repeated state comes back)\n")
        w(f"cards      {result.cards}\n")
        w(f"preperiod  {result.preperiod_tricks} tricks, {result.preperiod_cards} cards\n")
        w(f"period     {result.period_tricks} tricks, {result.period_cards} cards\n")
        w(f"cycle_id   {result.cycle_id}\n")


def print_trace(deal, out: TextIO | None = None) -> None:
    """Trick by trick: who leads next and every hand (top card first)."""
    out = out or sys.stdout
    letters = uses_letters(deal)
    n = len(deal)
    width = max(4, sum(len(h) for h in deal))
    header = (f"{'trick':>5} {'cards':>6}  {'leads':>5}  "
              + "  ".join(f"{'hand ' + str(i + 1):<{width}}" for i in range(n)))
    out.write(header.rstrip() + "\n")
    start = "  ".join(f"{format_hand(h, letters):<{width}}" for h in deal)
    out.write(f"{0:>5} {0:>6}  {1:>5}  {start}".rstrip() + "\n")
    for rec in trace_reference(deal):
        hands = "  ".join(f"{format_hand(h, letters):<{width}}" for h in rec.hands)
        out.write(f"{rec.tricks:>5} {rec.cards:>6}  {rec.leader + 1:>5}  {hands}".rstrip() + "\n")


def _deal_lines(lines: Iterable[str]):
    """(line number, deal or error message) for every deal line; blank lines and # comments skipped."""
    for number, raw in enumerate(lines, start=1):
        text = raw.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            yield number, parse_deal(text.split())
        except BmnError as error:
            yield number, str(error)


def play_lines(lines: Iterable[str], engine: str, out: TextIO) -> int:
    """Play one deal per line; one JSON object per deal line, in order. Exit 2 if any line was bad."""
    bad = False
    chunk: list = []
    for item in _deal_lines(lines):
        chunk.append(item)
        if len(chunk) >= FILE_CHUNK:
            bad |= _play_chunk(chunk, engine, out)
            chunk = []
    if chunk:
        bad |= _play_chunk(chunk, engine, out)
    return 2 if bad else 0


def _play_chunk(chunk: list, engine: str, out: TextIO) -> bool:
    results: dict[int, dict] = {}
    groups: dict[tuple, list[int]] = {}
    for k, (number, deal) in enumerate(chunk):
        if isinstance(deal, str):
            results[k] = {"line": number, "error": deal}
        elif engine == "reference":
            results[k] = play_reference(deal).to_dict()
        else:
            groups.setdefault(tuple(len(h) for h in deal), []).append(k)
    for split, members in groups.items():
        deals = np.stack([as_sequence(chunk[k][1])[0] for k in members])
        try:
            rows = play_batch(deals, split, engine_name=engine)
        except BmnError as error:
            for k in members:
                results[k] = {"line": chunk[k][0], "error": str(error)}
            continue
        for k, row in zip(members, rows):
            results[k] = GameResult.from_row(row).to_dict()
    for k in range(len(chunk)):
        out.write(json.dumps(results[k]) + "\n")
    return any("error" in r for r in results.values())


def cmd_rank(args) -> int:
    deal = parse_deal(args.hands)
    space = DealSpace.of(Deck.of_deal(deal), [len(h) for h in deal])
    print(space.rank(deal))
    return 0


def parse_rank(text: str) -> int:
    cleaned = text.replace(",", "").replace("_", "").strip()
    if not cleaned.isdigit():
        raise BmnError(f"rank {text!r} is not a whole number (ranks count from 0)")
    return int(cleaned)


def cmd_unrank(args) -> int:
    deck = parse_deck(args.deck)
    space = DealSpace.of(deck, args.split, args.players)
    print(format_deal(space.unrank(parse_rank(args.rank)), uses_letters([deck.cards()])))
    return 0


