"""`bmn search`, `bmn resume`, `bmn status`: launching, resuming and watching a search."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from typing import TYPE_CHECKING

from kernels.errors import BmnError
from kernels.strategies import REGISTRY

from ..loop.progress import ProgressView
from ..runs.config import EXECUTION_KEYS, SearchConfig, build_config, load_toml, readers, resolve, with_execution
from ..runs.known import summary as known_summary
from ..runs.runmeta import read_run_config
from .catalogue import add_catalogue_option, say_contradictions
from .status import run_status

if TYPE_CHECKING:
    from ..loop.report import RunReport

FLAGS = [
    ("--out", "out", str, "run directory or URI (s3://bucket/prefix) for the tables"),
    ("--strategy", "strategy", str, ", ".join(REGISTRY)),
    ("--deck", "deck", str, "standard, camicia or VALUE:COUNT,..."),
    ("--players", "players", int, "number of hands (equal split)"),
    ("--split", "split", str, "hand sizes, e.g. 26,26"),
    ("--deals", "deals", int, f"{', '.join(readers('deals'))}: deals to play in all"),
    ("--range", "range", str, f"{', '.join(readers('range'))}: rank range LO:HI"),
    ("--seed", "seed", int, f"{', '.join(readers('seed'))}: the seed of the random streams"),
    ("--min-cards", "min_cards", int, "keep finite games of at least this many cards"),
    ("--min-tricks", "min_tricks", int, "also keep finite games of at least this many tricks"),
    ("--shard-size", "shard_size", int, "deals per shard"),
    ("--workers", "workers", int, "actors (default 0: one per CPU of the cluster, now or later)"),
    ("--max-workers", "max_workers", int, "with --workers 0: at most this many actors"),
    ("--address", "address", str, "join this Ray cluster (default: RAY_ADDRESS, else a local Ray)"),
    ("--time-limit", "time_limit", float, "stop after this many seconds (resume later; a resume keeps the "
     "limit, 0 lifts it)"),
    ("--shard-timeout", "shard_timeout", float, "seconds a worker may spend on one shard before it is "
     "taken for stuck and the shard runs elsewhere (default 0: ten times the slowest shard so far, at least 300)"),
    ("--device", "device", str, "random, exhaustive and states: cpu, gpu (an actor per GPU of the cluster) or "
     "auto (default: an actor per GPU, CPU actors on the other CPUs)"),
    ("--gpu-batch", "gpu_batch", int, "shards a GPU worker takes per call, in one launch where they fit (default 0: "
     "as many as fill its device)"),
    ("--audit", "audit", float, "the fraction of GPU shards played again on CPU workers and compared (default 0; "
     "a mismatch stops the search)"),
    ("--deals-file", "deals_file", str, f"{', '.join(readers('deals_file'))}: one deal per line"),
    ("--deal", "deal", str, f"{', '.join(readers('deal'))}: the deal (HAND/HAND) to search back from"),
]
# What `bmn resume` may change: the execution keys that have a flag (the run names `out`).
RESUME_FLAGS = [f for f in FLAGS if f[1] in EXECUTION_KEYS and f[1] != "out"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "search",
        help="run a search on Ray (a local Ray unless --address)",
        description="Run a search: a config file (configs/*.toml) with flags on top. Results go to "
        "Parquet tables under --out; running the same command again resumes the run.",
    )
    p.add_argument("config", nargs="?", metavar="CONFIG.toml")
    for flag, dest, kind, help_text in FLAGS:
        p.add_argument(flag, dest=dest, type=kind, default=None, help=help_text)
    p.add_argument("--long-gene", dest="long_gene", action="append", default=None, metavar="COMPOSITION|LENGTH",
                   help="construct: search the genes of this composition (VALUE:COUNT,...) or of every composition "
                   "of this length, and build every cycle they make ([construct] long_gene; repeat for several)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the final report as JSON")
    add_catalogue_option(p)
    p.set_defaults(handler=cmd_search)

    p = sub.add_parser("resume", help="finish an interrupted run",
                       description="Resume a run from its files: finished shards are skipped.")
    p.add_argument("run", metavar="RUN")
    for flag, dest, kind, help_text in RESUME_FLAGS:
        p.add_argument(flag, dest=dest, type=kind, default=None, help=help_text)
    p.add_argument("--no-progress", action="store_true")
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
    where = f"config file {args.config}" if args.config else "search"
    # A split names the players and --players asks for equal hands: a flag for one replaces the
    # config file's other.
    if args.split is not None and args.players is None:
        values.pop("players", None)
    if args.players is not None and args.split is None:
        values.pop("split", None)
    for _, dest, _, _ in FLAGS:
        value = getattr(args, dest)
        if value is not None:
            values[dest] = value
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
    changes = {key: getattr(args, key) for _, key, _, _ in RESUME_FLAGS if getattr(args, key) is not None}
    config = with_execution(read_run_config(args.run), {**changes, "out": args.run, "progress": not args.no_progress},
                            f"bmn resume {args.run}")
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
