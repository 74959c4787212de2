"""`bmn query`, `bmn top`, `bmn cycles`, each own table's command (`bmn atlas`), `bmn compact`: looking at results."""

from __future__ import annotations

import argparse
import sys

from kernels.errors import BmnError

from ..runs.compact import DEFAULT_SHARDS_PER_FILE, compact
from ..runs.owned import own_tables
from .catalogue import add_catalogue_option, say_contradictions
from .query import FORMATS, cycles_report, format_table, own_report, query, top_games

DEDICATED = ("genes",)  # own tables whose command is a module of its own (cluster/commands/genes.py)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "query",
        help=f"SQL over runs' tables (games, cycles, shards, histogram, {', '.join(own_tables())})",
        description=f"Run SQL (DuckDB) over the views games, cycles, shards, histogram and "
        f"{', '.join(own_tables())} of one or more runs (directories or s3:// URIs), finished or still "
        "running. Several runs are queried as one: games deduplicated by deal, cycles by cycle_id. Queries "
        "never modify a run.",
        epilog='example: bmn query runs/local "SELECT cards, tricks, hands FROM games ORDER BY cards DESC LIMIT 5"',
    )
    p.add_argument("args", nargs="+", metavar="RUN... SQL", help="one or more runs, then the SQL")
    p.add_argument("--format", default="table", choices=FORMATS)
    add_catalogue_option(p)
    p.set_defaults(handler=cmd_query)

    p = sub.add_parser("top", help="the longest finite games of runs")
    p.add_argument("runs", nargs="+", metavar="RUN")
    p.add_argument("-n", type=int, default=10, help="how many (default 10)")
    p.add_argument("--by", default="cards", choices=("cards", "tricks"))
    p.add_argument("--format", default="table", choices=FORMATS)
    p.set_defaults(handler=lambda a: _print_with_notes(lambda notes: top_games(a.runs, a.n, a.by, notes), a.format))

    p = sub.add_parser("cycles", help="the distinct cycles found by runs, each labelled known (its source) or new",
                       description="The distinct cycles of one or more runs, one row each, labelled by the catalogue "
                       "of known cycles (bmn catalogue): `known` names who found the cycle first, or says new. A cycle "
                       "that a deal enters whose deck and split a complete exhaustive search covered, and that the "
                       "catalogue lacks, contradicts that search: bmn says so on stderr.")
    p.add_argument("runs", nargs="+", metavar="RUN")
    p.add_argument("--new", action="store_true", help="only the cycles no catalogue knows")
    p.add_argument("--balanced", action="store_true", help="only the cycles that balanced deals enter, the most "
                   "first (construct counts them all; the deals are the games rows of the cycle)")
    p.add_argument("--format", default="table", choices=FORMATS)
    add_catalogue_option(p)
    p.set_defaults(handler=cmd_cycles)

    for own in own_tables().values():  # a strategy's own table (the atlas): its command, of its name
        if own.name in DEDICATED:
            continue
        p = sub.add_parser(own.name, help=own.help, description=own.description)
        p.add_argument("runs", nargs="+", metavar="RUN")
        p.add_argument("--wide", action="store_true", help="every column")
        p.add_argument("--format", default="table", choices=FORMATS)
        p.set_defaults(handler=lambda a, own=own: _print_with_notes(
            lambda notes: own_report(own, a.runs, notes, a.wide), a.format))

    p = sub.add_parser("compact", help="merge a run's small shard files into large ones")
    p.add_argument("run", metavar="RUN")
    p.add_argument("--shards-per-file", type=int, default=DEFAULT_SHARDS_PER_FILE)
    p.set_defaults(handler=cmd_compact)


def _print_with_notes(make, fmt: str) -> int:
    """Print the table; what the runs lack (missing shards, damaged files) goes to stderr."""
    notes: list[str] = []
    table = make(notes)
    for note in notes:
        print(f"bmn: note: {note}", file=sys.stderr)
    print(format_table(table, fmt))
    return 0


def cmd_cycles(args) -> int:
    contradictions: list[str] = []
    code = _print_with_notes(lambda notes: cycles_report(args.runs, notes, args.new, contradictions, args.balanced),
                             args.format)
    say_contradictions(contradictions)
    return code


def cmd_query(args) -> int:
    if len(args.args) < 2:
        raise BmnError("give one or more runs, then the SQL "
                       "(for example: bmn query runs/local \"SELECT * FROM cycles\")")
    *runs, sql = args.args
    return _print_with_notes(lambda notes: query(runs, sql, notes), args.format)


def cmd_compact(args) -> int:
    result = compact(args.run, args.shards_per_file)
    for rel, target, why in result["foreign"]:
        print(f"bmn: {rel} is not this run's ({why}); moved it to {target}; its shards are not counted",
              file=sys.stderr)
    print(f"{result['shards']:,} shards: {result['files_before']:,} files merged into {result['files_after']:,}")
    return 0
