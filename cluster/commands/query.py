"""SQL over runs: DuckDB views `games`, `cycles`, `shards`, `histogram` and every strategy's own table
(`atlas`: cluster/runs/owntable.py) over one or more runs.

A finished (or stopped) run is read from its summary tables; a run that is still being written,
or whose driver died, is read from its shard files, which are always complete. Several runs are
queried as one: games deduplicated by deal (the first run listed wins), cycles rebuilt from those
games (so a cycle found by two runs is one row whose `deals` counts each deal once), histograms
added, manifests stacked with a `run` column, an own table's rows (by its key: an atlas's decks by
deck, split, method and unit) taken from the first run that has each; an own table no run keeps is
an empty view.

Queries only read: the views are in-memory Arrow tables and DuckDB's access to files is switched
off, so no query can write to a run (or anywhere else).
"""

from __future__ import annotations

import csv
import decimal
import io
import json
from collections.abc import Sequence

import duckdb
import numpy as np
import pyarrow as pa

from kernels.errors import BmnError
from kernels.strategies import REGISTRY

from ..runs import known
from ..runs.known import labelled
from ..runs.lease import is_live, read_lock
from ..runs.owned import own_tables
from ..runs.owntable import OwnTable
from ..runs.plan import Plan
from ..runs.runmeta import existing_run, read_progress, read_run_config, run_table_names, stored_config
from ..runs.summary import manifest_summaries
from ..runs.tables import (
    CYCLES_SCHEMA,
    GAMES_SCHEMA,
    Ownership,
    build_tables,
    cycles_table,
    first_per_deal,
    read_contents,
    reported_rows,
)

FORMATS = ("table", "csv", "json")


def run_tables(uri: str, notes: list[str] | None = None) -> dict[str, pa.Table]:
    """The tables of one run (and its strategy's own), current even while it is being written. What the tables lack
    (shards of a stopped run not done, damaged shard files) is said in `notes`."""
    store = existing_run(uri)
    config = stored_config(store)  # (read once: which tables it keeps, its plan)
    lock = read_lock(store)
    running = lock is not None and is_live(lock)
    tables = None
    progress = read_progress(store)
    state = progress.get("state")
    # The summary tables are the run's only when its last session wrote them (an interrupted one
    # does not: they would be an earlier session's).
    if state in ("finished", "time limit", "interrupted") and lock is None and progress.get("tables", True):
        try:
            tables = {name: store.read_parquet(f"{name}.parquet") for name in run_table_names(config)}
            # (labelled as the catalogue says now: a run of an earlier bmn has no `known` column, nor `balanced`)
            tables["cycles"] = labelled(with_columns(tables["cycles"], CYCLES_SCHEMA))
        except (OSError, pa.ArrowException):
            tables = None  # missing or damaged summary tables: rebuilt from the shard files below
    plan = None
    if tables is None:
        plan = Plan(config)
        contents = read_contents(store, owner=Ownership(plan, config.fingerprint()))
        tables = build_tables(contents)
        for rel, why in contents.damaged.items():
            _note(notes, f"{uri}: {rel} is damaged ({why}); `bmn resume {uri}` recomputes its shards")
        for rel, why in contents.foreign.items():
            _note(notes, f"{uri}: {rel} is not this run's ({why}); its shards are not counted (`bmn resume "
                         f"{uri}` moves it to foreign/)")
    if not running and notes is not None:
        planned = (plan or Plan(config)).count
        have = {s.shard for s in manifest_summaries(tables["shards"]) if s.done}
        missing = sorted(set(range(planned)) - have)
        if missing:
            shown = ", ".join(map(str, missing[:10])) + (", ..." if len(missing) > 10 else "")
            _note(notes, f"{uri}: {len(missing):,} of {planned:,} shards are missing ({shown}); "
                         f"`bmn resume {uri}` computes them")
    return tables


def with_columns(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """A table written by an earlier bmn with the columns added since (null), in the schema's order, as read."""
    missing = [f for f in schema if f.name not in table.column_names]
    for f in missing:
        table = table.append_column(f.name, pa.nulls(table.num_rows, f.type))
    return table.select([f.name for f in schema if f.name in table.column_names]) if missing else table


def _note(notes: list[str] | None, text: str) -> None:
    if notes is not None:
        notes.append(text)


def combined_tables(uris: Sequence[str], notes: list[str] | None = None) -> dict[str, pa.Table]:
    if len(uris) == 1:  # (with an empty view of each own table the run does not keep)
        return {**{name: own.schema.empty_table() for name, own in own_tables().items()}, **run_tables(uris[0], notes)}
    per_run = [run_tables(u, notes) for u in uris]
    games = first_per_deal(pa.concat_tables([t["games"].cast(GAMES_SCHEMA) for t in per_run]))
    shards = pa.concat_tables([
        t["shards"].append_column("run", pa.array([u] * t["shards"].num_rows, pa.string()))
        for u, t in zip(uris, per_run)
    ])
    merged: dict[int, int] = {}
    for t in per_run:
        for cards, count in zip(t["histogram"]["cards"].to_pylist(), t["histogram"]["games"].to_pylist()):
            merged[cards] = merged.get(cards, 0) + count
    histogram = pa.table({"cards": pa.array(sorted(merged), pa.int64()),
                          "games": pa.array([merged[k] for k in sorted(merged)], pa.int64())})
    # The cycles runs reported (census, cycles), each from the first run that has it: two runs may
    # cover the same states, so their basins are not added up.
    reported: dict[str, tuple] = {}
    for t in per_run:
        for shard, row in reported_rows(t["cycles"]):
            reported.setdefault(row.cycle_id, (shard, row))
    return {"games": games, "cycles": cycles_table(games, list(reported.values())), "shards": shards,
            "histogram": histogram, **{name: _stacked(own, per_run) for name, own in own_tables().items()}}


def _stacked(own: OwnTable, per_run: list[dict[str, pa.Table]]) -> pa.Table:
    """An own table of several runs: each row (by the table's key) from the first run that has it."""
    table = pa.concat_tables([t[own.name].cast(own.schema) for t in per_run if own.name in t]
                             or [own.schema.empty_table()])
    if table.num_rows:
        keys = [" ".join(map(str, key)) for key in zip(*(table[c].to_pylist() for c in own.key))]
        _, first = np.unique(np.asarray(keys, dtype=object), return_index=True)
        table = table.take(pa.array(np.sort(first)))
    return table


def connect(tables: dict[str, pa.Table]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    for name, table in tables.items():
        con.register(name, table)
    # Nothing but the registered tables: no file can be read or written by a query.
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    return con


def query(uris: Sequence[str], sql: str, notes: list[str] | None = None) -> pa.Table:
    """Run SQL over the runs' tables; what they lack is said in `notes` (see run_tables)."""
    con = connect(combined_tables(uris, notes))
    try:
        relation = con.sql(sql)
        table = relation.to_arrow_table() if relation is not None else pa.table({})
    except duckdb.Error as error:
        message = str(error).strip().splitlines()[0]
        raise BmnError(f"SQL error: {message}") from None
    finally:
        con.close()
    return table


def _plain(value):
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def format_table(table: pa.Table, fmt: str = "table") -> str:
    if fmt not in FORMATS:
        raise BmnError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    names = table.column_names
    rows = [[_plain(v) for v in row.values()] for row in table.to_pylist()]
    if fmt == "json":
        return json.dumps([dict(zip(names, r)) for r in rows])
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(names)
        writer.writerows(["" if v is None else v for v in r] for r in rows)
        return out.getvalue().rstrip("\n")
    cells = [[("NULL" if v is None else str(v)) for v in r] for r in rows]
    widths = [max([len(n)] + [len(r[i]) for r in cells]) for i, n in enumerate(names)]
    numeric = [all(_is_number(r[i]) for r in rows if r[i] is not None) and rows for i in range(len(names))]
    lines = ["  ".join(n.rjust(w) if num else n.ljust(w) for n, w, num in zip(names, widths, numeric)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    for r in cells:
        lines.append("  ".join(c.rjust(w) if num else c.ljust(w) for c, w, num in zip(r, widths, numeric)).rstrip())
    lines.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(lines)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def top_games(uris: Sequence[str], n: int = 10, by: str = "cards", notes: list[str] | None = None) -> pa.Table:
    if by not in ("cards", "tricks"):
        raise BmnError("--by must be cards or tricks")
    if n < 1:
        raise BmnError("-n must be at least 1")
    other = "tricks" if by == "cards" else "cards"
    return query(uris, f"SELECT {by}, {other}, winner, hands, strategy, shard FROM games "
                       f"WHERE outcome = 'win' ORDER BY {by} DESC, {other} DESC, hands LIMIT {int(n)}", notes)


def cycles_report(uris: Sequence[str], notes: list[str] | None = None, new: bool = False,
                  contradictions: list[str] | None = None, balanced: bool = False) -> pa.Table:
    """The distinct cycles of the runs, each labelled: the catalogue's source, or "new" (`new`: only those;
    `balanced`: only those that balanced deals enter, the most first). The cycles that contradict a complete
    exhaustive search are said in `contradictions`."""
    tables = combined_tables(uris, notes)
    if contradictions is not None:
        contradictions += known.contradictions(tables["cycles"])
    where = [w for w, on in (("known IS NULL", new), ("balanced > 0", balanced)) if on]
    order = "balanced DESC, " if balanced else ""
    con = connect(tables)
    try:
        return con.sql(
            f"SELECT cycle_id, coalesce(known, '{known.NEW}') AS known, deck, period_tricks, period_cards, deals, "
            "balanced, basin, complete, closure, imbalance, min_preperiod_tricks, max_preperiod_tricks, hands, state, "
            f"closest FROM cycles {'WHERE ' + ' AND '.join(where) + ' ' if where else ''}"
            f"ORDER BY {order}deals DESC, basin DESC NULLS LAST, cycle_id").to_arrow_table()
    finally:
        con.close()


def own_report(own: OwnTable, uris: Sequence[str], notes: list[str] | None = None, wide: bool = False) -> pa.Table:
    """A strategy's own table over runs of that strategy (`bmn atlas`): its command's columns (--wide: every
    one), in its order."""
    for uri in uris:
        config = read_run_config(uri)
        if config.strategy_def.own_table != own.name:
            owners = [name for name, s in REGISTRY.items() if s.own_table == own.name]
            raise BmnError(f"{uri} is a run of the {config.strategy} strategy; bmn {own.name} reads runs of the "
                           f"{' and '.join(owners)} strateg{'ies' if len(owners) > 1 else 'y'} "
                           f"(configs/{owners[0]}.toml)")
    columns = "*" if wide else ", ".join(own.columns)
    return query(uris, f"SELECT {columns} FROM {own.name} ORDER BY {own.order}", notes)
