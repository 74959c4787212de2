"""`bmn catalogue list|add|check`: the catalogue of known cycles (kernels/catalogue.py, docs/catalogue.md).

`list` shows the shipped catalogue and the user's files; `add` writes the new cycles of runs (or of one
deal) into a catalogue file of the user's, each measured and replayed here, with where it was found;
`check` replays every entry on the reference player. The commands that show cycles (cycles, query,
status, search, resume) take `--catalogue FILE` to read a file of the user's beside the shipped one.
"""

from __future__ import annotations

import argparse
import datetime
import sys

from kernels.backward import DEFAULT_MAX_STATES
from kernels.catalogue import KnownCycle, confirm, entry_of, read_cycles, write_cycles
from kernels.errors import BmnError
from kernels.notation import format_deal, parse_deal

from ..runs import known


def add_catalogue_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--catalogue", action="append", default=None, metavar="FILE",
                   help="a catalogue file of your own, read beside the shipped one (repeat for more; also "
                        "BMN_CATALOGUE=FILE[:FILE...])")


def say_contradictions(sentences: list[str]) -> None:
    """Loudly: a cycle that a complete exhaustive search should have met is news, or a bug somewhere."""
    for sentence in sentences:
        print(f"bmn: {sentence}", file=sys.stderr)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "catalogue", help="the catalogue of known cycles: list it, add your finds, replay it",
        description="The catalogue of known cycles that labels every cycle bmn shows (known: who found it "
        "first; or new). bmn ships every published cycle it could find and the project's own finds; your "
        "finds go into a file of your own (bmn catalogue add ... --to FILE), read with --catalogue FILE "
        "or BMN_CATALOGUE. The format: docs/catalogue.md.")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)

    q = actions.add_parser("list", help="the cycles of the catalogue (shipped, and your files)")
    q.add_argument("--deck", default=None, help="only the cycles of this deck")
    q.add_argument("--format", default="table", choices=("table", "csv", "json"))
    add_catalogue_option(q)
    q.set_defaults(handler=cmd_list)

    q = actions.add_parser(
        "add", help="add the new cycles of runs (or of one deal) to a catalogue file of yours",
        description="Write every cycle of the runs that no catalogue knows (or the cycle of --deal) into FILE "
        "(made with its header if it does not exist): its canonical state, id and period replayed on the "
        "reference player, its closure counted by backward play (two players), where it was found and when.")
    q.add_argument("runs", nargs="*", metavar="RUN")
    q.add_argument("--deal", default=None, metavar="HAND/HAND",
                   help="the cycle this deal's game enters, instead of runs")
    q.add_argument("--to", required=True, metavar="FILE", help="your catalogue file")
    q.add_argument("--source", default=None,
                   help="who found it, and when: what bmn will show as its label (default: the run and today's date)")
    q.add_argument("--reference", default=None, help="where it is published (default: the run, shard and bmn version)")
    q.add_argument("--max-states", type=int, default=DEFAULT_MAX_STATES,
                   help=f"backward-play budget for each cycle's closure (default {DEFAULT_MAX_STATES:,})")
    q.add_argument("--balanced", action="store_true", help="only the cycles that balanced deals enter (a construct "
                   "census builds hundreds of thousands of cycles; these are the ones users ask for)")
    add_catalogue_option(q)
    q.set_defaults(handler=cmd_add)

    q = actions.add_parser("check", help="replay every entry of the catalogue on the reference player")
    q.add_argument("--closure", action="store_true",
                   help="also count each two-player cycle's closure by backward play again (slower)")
    add_catalogue_option(q)
    q.set_defaults(handler=cmd_check)


def cmd_list(args) -> int:
    import pyarrow as pa

    from .query import format_table

    catalogue = known.current()
    deck = None if args.deck is None else _spec(args.deck)
    rows = [{"deck": e.deck, "cycle_id": e.cycle_id, "period_tricks": e.period_tricks, "period_cards": e.period_cards,
             "balanced_deals": e.balanced_deals, "closure": e.closure, "source": e.source, "state": e.state}
            for e in catalogue.cycles if deck is None or e.deck == deck]
    columns = ("deck", "cycle_id", "period_tricks", "period_cards", "balanced_deals", "closure", "source", "state")
    print(format_table(pa.Table.from_pylist(rows) if rows else pa.table({c: [] for c in columns}), args.format))
    return 0


def _spec(deck: str) -> str:
    from kernels.catalogue import deck_spec

    return deck_spec(deck)


def cmd_add(args) -> int:
    if bool(args.runs) == bool(args.deal):
        raise BmnError("give runs, or --deal HAND/HAND (one of them)")
    if args.max_states < 1:
        raise BmnError("--max-states must be at least 1")
    catalogue = known.current()
    mine = {(e.cycle_id, e.deck) for e in _existing(args.to)}
    today = datetime.date.today().isoformat()
    version = _version()
    found: list[tuple[str, str]] = []  # (a state or deal entering the cycle, its default reference)
    if args.deal:
        deal = format_deal(parse_deal(args.deal))
        found.append((deal, f"the deal {deal}, added with bmn {version} on {today}"))
    else:
        from ..runs.runmeta import read_run_config
        from .query import cycles_report

        for uri in args.runs:
            config = read_run_config(uri)
            contradictions: list[str] = []
            for row in cycles_report([uri], None, new=True, contradictions=contradictions,
                                     balanced=args.balanced).to_pylist():
                where = (f"bmn {version} run {uri} ({config.strategy}, deck {config.deck}, seed {config.seed}; "
                         f"config {config.fingerprint()}), found {today}")
                found.append((row["state"] or row["hands"], where))
            say_contradictions(contradictions)
    entries: list[KnownCycle] = []
    for state, where in found:
        entry = entry_of(state,
                         source=args.source or (f"{args.runs[0]} ({today})" if args.runs else f"own find ({today})"),
                         reference=args.reference or where, max_states=args.max_states)
        key = (entry.cycle_id, entry.deck)
        label = catalogue.label(entry.cycle_id, entry.deck)
        if label is not None or key in mine or key in {(e.cycle_id, e.deck) for e in entries}:
            print(f"{entry.cycle_id} ({entry.deck}): known already ({label or args.to}), not added")
            continue
        confirm(entry)
        entries.append(entry)
    write_cycles(args.to, entries)
    for e in entries:
        deals = "?" if e.balanced_deals is None else f"{e.balanced_deals:,}"
        print(f"{e.cycle_id} ({e.deck}): period {e.period_tricks}/{e.period_cards}, {deals} balanced deals, added")
    print(f"{len(entries)} cycle{'s' if len(entries) != 1 else ''} added to {args.to}"
          + ("" if args.to in known.current().files else f"; read it with --catalogue {args.to} or BMN_CATALOGUE"))
    return 0


def _existing(path: str) -> list[KnownCycle]:
    try:
        return read_cycles(path)
    except BmnError as error:
        if "does not exist" in str(error):
            return []
        raise


def _version() -> str:
    from .. import __version__

    return __version__


def cmd_check(args) -> int:
    catalogue = known.current()
    for entry in catalogue.cycles:
        confirm(entry, max_states=DEFAULT_MAX_STATES if args.closure else None)
    files = ", ".join(catalogue.files)
    print(f"{len(catalogue.cycles)} cycles replayed on the reference player"
          + (", their closures counted again" if args.closure else "") + f": all as catalogued ({files})")
    return 0
