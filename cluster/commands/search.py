"""`bmn search`, `bmn resume`, `bmn status`: launching, resuming and watching a search."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from typing import TYPE_CHECKING, Any, NamedTuple

from kernels.errors import BmnError
from kernels.strategies.base import OPTIONAL_KEYS

from ..loop.progress import ProgressView
from ..runs.config import (
    EXECUTION_KEYS,
    KEYS,
    USER_KEYS,
    SearchConfig,
    build_config,
    load_toml,
    readers,
    resolve,
    with_execution,
)
from ..runs.known import summary as known_summary
from ..runs.runmeta import read_run_config
from .catalogue import add_catalogue_option, say_contradictions
from .status import run_status

if TYPE_CHECKING:
    from ..loop.report import RunReport


class Flag(NamedTuple):
    """A top-level key's flag: `--min-cards` for min_cards, its help the key's doc (after the strategies that read
    it, for the optional keys) and its default. Argparse takes its value as text; the key's Param decodes it, as
    it decodes a config's value (`value`)."""

    option: str
    key: str
    help: str

    def value(self, args: argparse.Namespace, where: str) -> Any:
        """The flag's value, decoded and checked by the key's Param (None where it was not given)."""
        text = getattr(args, self.key)
        return None if text is None else KEYS[self.key].coerce(text, where, text=True)


def _flag(name: str, default: str | None = None) -> Flag:
    """The key's flag; its help says the key's default, or `default`."""
    p = KEYS[name]
    readers_of = f"{', '.join(readers(name))}: " if name in OPTIONAL_KEYS else ""
    return Flag(f"--{name.replace('_', '-')}", name,
                f"{readers_of}{p.doc} (default: {shown(p.default) if default is None else default})")


def shown(value: Any) -> str:
    """A default as a config writes it (none, true, 1_000_000, 26,26)."""
    if value is None or isinstance(value, bool):
        return {None: "none", True: "true", False: "false"}[value]
    if isinstance(value, int):
        return f"{value:_}"
    if isinstance(value, tuple):
        return ",".join(map(shown, value))
    return str(value)


# Every key a config sets has a flag of its name (the declarations' own: cluster/runs/config.py's KEYS).
FLAGS = [_flag(name) for name in USER_KEYS]
# What `bmn resume` may change: the execution keys (the run names `out`), each the run's own unless given (a resume
# shows its progress unless told not to).
RESUME_FLAGS = [_flag(key, "true" if key == "progress" else "the run's") for key in EXECUTION_KEYS if key != "out"]
WHERE = "command line"  # where a flag's value is said to come from when it is wrong


def add_flags(parser: argparse.ArgumentParser, flags: list[Flag]) -> None:
    for flag in flags:
        parser.add_argument(flag.option, dest=flag.key, default=None, help=flag.help.replace("%", "%%"))


def given(args: argparse.Namespace, flags: list[Flag], where: str) -> dict:
    """The flags given, by key, each value decoded and checked (a sentence for a wrong one)."""
    values = {flag.key: flag.value(args, where) for flag in flags}
    return {key: value for key, value in values.items() if value is not None}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "search",
        help="run a search on Ray (a local Ray unless --address)",
        description="Run a search: a config file (configs/*.toml) with flags on top. Results go to "
        "Parquet tables under --out; running the same command again resumes the run.",
    )
    p.add_argument("config", nargs="?", metavar="CONFIG.toml")
    add_flags(p, FLAGS)
    p.add_argument("--long-gene", dest="long_gene", action="append", default=None, metavar="COMPOSITION|LENGTH",
                   help="construct: search the genes of this composition (VALUE:COUNT,...) or of every composition "
                   "of this length, and build every cycle they make ([construct] long_gene; repeat for several)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (progress false)")
    p.add_argument("--json", action="store_true", help="print the final report as JSON")
    add_catalogue_option(p)
    p.set_defaults(handler=cmd_search)

    p = sub.add_parser("resume", help="finish an interrupted run",
                       description="Resume a run from its files: finished shards are skipped.")
    p.add_argument("run", metavar="RUN")
    add_flags(p, RESUME_FLAGS)
    p.add_argument("--no-progress", action="store_true", help="no progress bar (progress false)")
    p.add_argument("--json", action="store_true")
    add_catalogue_option(p)
    p.set_defaults(handler=cmd_resume)

    p = sub.add_parser("status", help="progress of a running or finished run, from its files")
    p.add_argument("run", metavar="RUN")
    p.add_argument("--json", action="store_true")
    add_catalogue_option(p)
    p.set_defaults(handler=lambda args: run_status(args.run, args.json))


def config_from_args(args) -> SearchConfig:
    values = load_toml(args.config) if args.config else {}
    if isinstance(values.get("deals_file"), str) and not os.path.isabs(os.path.expanduser(values["deals_file"])):
        # A deals file named in a config file is found beside that file.
        values["deals_file"] = os.path.join(os.path.dirname(os.path.abspath(args.config)), values["deals_file"])
    where = f"config file {args.config}" if args.config else WHERE
    # A split names the players and --players asks for equal hands: a flag for one replaces the
    # config file's other.
    if args.split is not None and args.players is None:
        values.pop("players", None)
    if args.players is not None and args.split is None:
        values.pop("split", None)
    values.update(given(args, FLAGS, WHERE))
    if getattr(args, "long_gene", None):
        table = values.setdefault("construct", {})
        if not isinstance(table, dict):
            raise BmnError(f"{where}: [construct] must be a table")
        table["long_gene"] = list(args.long_gene)
    if getattr(args, "no_progress", False):
        values["progress"] = False
    return resolve(build_config(values, where))


def _terminate_as_interrupt() -> None:
    def handler(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)


def run_search(config: SearchConfig, **options) -> RunReport:
    """The coordinator's run_search, imported when a search starts: importing Ray takes seconds,
    which every other command (play, query, status, ...) does without."""
    from ..loop.coordinator import run_search as run

    return run(config, **options)


def cmd_search(args) -> int:
    config = config_from_args(args)
    _terminate_as_interrupt()
    report = run_search(config, progress=ProgressView(enabled=config.progress))
    return print_report(report, args.json)


def cmd_resume(args) -> int:
    where = f"bmn resume {args.run}"
    changes = {"progress": True, **given(args, RESUME_FLAGS, where), "out": args.run}
    if args.no_progress:
        changes["progress"] = False
    config = with_execution(read_run_config(args.run), changes, where)
    _terminate_as_interrupt()
    report = run_search(config, resume=True, progress=ProgressView(enabled=config.progress))
    return print_report(report, args.json)


def print_report(report: RunReport, as_json: bool) -> int:
    code = {"finished": 0, "time limit": 0, "interrupted": 130, "incomplete": 1}[report.state]
    if report.state == "finished" and report.shards_failed:
        code = 1
    if as_json:
        print(json.dumps(report.to_json()))
        return code
    print(f"{report.state}: {report.shards_done:,} of {report.shards_total:,} shards done"
          + (f", {report.shards_failed} failed" if report.shards_failed else "")
          + f"; {report.deals:,} {report.unit} played ({report.new_shards:,} shards in {report.elapsed_s:.1f} s)")
    if report.longest and report.finite_games:
        print("longest games:")
        for g in report.longest[:3]:
            print(f"  {g['cards']:>6} cards {g['tricks']:>5} tricks  hand {g['winner']} wins  {g['hands']}")
    uri = report.uri
    if report.cycles:
        new = sum(label is None for label in report.cycle_labels)
        print(f"cycles: {report.cycles} distinct: {known_summary(report.cycle_labels)} (bmn cycles {uri}"
              + (f"; the new ones: bmn cycles --new {uri}" if new else "") + ")")
        if report.balanced:
            print(f"balanced: {len(report.balanced)} of them entered by balanced deals, "
                  f"{sum(report.balanced):,} deals in all (bmn cycles --balanced {uri})")
    else:
        print("cycles: no cycle found")
    say_contradictions(report.contradictions)
    own = report.table  # a table of the strategy's own (the atlas), printed by the command of its name
    print(f"tables: {uri}/games.parquet, cycles.parquet, shards.parquet, histogram.parquet"
          + (f", {own}.parquet" if own else ""))
    if own:
        print(f"{own}:  bmn {own} {uri}")
    # A strategy that keeps finite games shows its longest; one that keeps none (states, construct), its cycles.
    sql = ("SELECT hands, cards, tricks FROM games ORDER BY cards DESC LIMIT 10" if report.finite_games else
           "SELECT cycle_id, period_cards, closure, closest, imbalance FROM cycles ORDER BY imbalance LIMIT 10")
    print(f"query:  bmn query {uri} \"{sql}\"")
    print("replay: bmn play HAND/HAND")
    if report.state == "interrupted":
        print(f"interrupted: resume with `bmn resume {uri}`", file=sys.stderr)
    elif report.state == "time limit":
        # A resume keeps the run's limit (it is a setting of the run, like workers): say how to lift it.
        print(f"stopped at the time limit: `bmn resume {uri}` continues under the same limit, "
              f"`bmn resume {uri} --time-limit 0` without one")
    elif report.state == "incomplete":
        shown = ", ".join(map(str, report.missing[:10])) + (", ..." if len(report.missing) > 10 else "")
        print(f"{len(report.missing):,} shards are missing from the tables ({shown}): their files could not be "
              f"read; `bmn resume {uri}` computes them", file=sys.stderr)
    elif report.shards_failed:
        print(f"{report.shards_failed} shards failed; `bmn resume {uri}` runs them again", file=sys.stderr)
    return code
