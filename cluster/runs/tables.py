"""The run's tables: what a shard's output looks like, and how the summary tables are rebuilt.

A shard file (`shards/<shard>.parquet`) holds the `games` rows of the shards it covers and, in its
Parquet key-value metadata under `bmn.shards`, one summary per shard (cluster/runs/summary.py: the
manifest row, the shard's game-length histogram, its wins, its longest game, the cycles it
reported). One file is written in one atomic step, so a shard is either wholly there or not at
all; `bmn compact` later merges many shard files into one, carrying their summaries along.
Readers take each shard once.

Summary tables (rebuilt from the shard files, the same whatever the number of workers, the
order shards finished in, or the failures on the way):
    games      one row per candidate deal (a deal met twice is kept once: the first by shard, index)
    cycles     one row per distinct cycle_id: every cycle a candidate deal enters, and every cycle a
               shard reported finding (census, cycles) even if no candidate deal enters it
    shards     the manifest, one row per shard
    histogram  finite games by length in cards, merged over shards
and the strategy's own table, for a strategy that keeps one (cluster/runs/owntable.py: the atlas's).
"""

from __future__ import annotations

import concurrent.futures as futures
import decimal
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kernels.strategies import REGISTRY, CycleRow, codec
from kernels.tally import CLOSURE_FIELDS

from .figures import PlayedShard
from .known import labelled
from .owned import own_table
from .owntable import OwnTable
from .storage import RunStore, StoreUnavailable
from .summary import ShardSummary, manifest_table
from .totals import RunTotals

SCHEMA_VERSION = 1
SHARDS_DIR = "shards"
DAMAGED_DIR = "damaged"  # damaged shard files are moved here (kept, never deleted)
FOREIGN_DIR = "foreign"  # shard files of another run are moved here (kept, never counted)
META_KEY = b"bmn.shards"
READ_THREADS = 32  # shard files read at once
# The names bmn gives shard files: one shard, or a compacted range. Any other file is not ours.
SHARD_FILE = re.compile(r"^(\d{12}|c\d{12}-\d{12})\.parquet$")
TABLES = ("games", "cycles", "shards", "histogram")  # every run's (and its strategy's own, if it keeps one)

GAMES_SCHEMA = pa.schema([
    ("hands", pa.string()),
    ("outcome", pa.string()),
    ("winner", pa.int8()),
    ("tricks", pa.int64()),
    ("cards", pa.int64()),
    ("preperiod_tricks", pa.int64()),
    ("preperiod_cards", pa.int64()),
    ("period_tricks", pa.int64()),
    ("period_cards", pa.int64()),
    ("cycle_id", pa.string()),
    ("strategy", pa.string()),
    ("shard", pa.int64()),
    ("index", pa.int64()),  # where the shard met the deal (offset in the range, deal number in the stream)
    ("rank", pa.decimal128(38, 0)),  # exhaustive: the deal's rank (ranks exceed 64 bits)
    ("deck", pa.string()),
])

CYCLES_SCHEMA = pa.schema([
    ("cycle_id", pa.string()),
    ("period_tricks", pa.int64()),
    ("period_cards", pa.int64()),
    ("hands", pa.string()),  # a representative deal: the first that entered it (by shard, index)
    ("deals", pa.int64()),  # candidate deals that entered it
    ("first_shard", pa.int64()),
    ("min_preperiod_tricks", pa.int64()),
    ("max_preperiod_tricks", pa.int64()),
    ("deck", pa.string()),
    ("state", pa.string()),  # a state on the cycle as a deal, leader first (where a shard reported it)
    ("basin", pa.int64()),  # census: trick-boundary states that enter it, summed over shards
    ("complete", pa.bool_()),  # every balanced deal entering it is a row of games (null: not listed)
    # states: its backward closure (null: not searched): the states entering it (exact where complete,
    # else a lower bound), the first of them with the most nearly equal hands, and its cards away from
    # equal hands
    ("closure", pa.int64()),
    ("closest", pa.string()),
    ("imbalance", pa.int64()),
    # construct: the balanced deals entering it (exact where complete; each a row of games)
    ("balanced", pa.int64()),
    # who found it first, by the catalogue of known cycles (cluster/runs/known.py); null: a new cycle. The
    # catalogue's word, not the search's: set again whenever a table is built or read
    ("known", pa.string()),
])

HISTOGRAM_SCHEMA = pa.schema([("cards", pa.int64()), ("games", pa.int64())])


def games_table(played: PlayedShard) -> pa.Table:
    """A played shard's games rows: one per candidate deal."""
    strategy, shard, deck, rank_base = played.shard.strategy, played.shard.id, played.deck, played.rank_base
    cols = {name: [] for name in GAMES_SCHEMA.names}
    for c in played.candidates:
        r = c.result
        cols["hands"].append(c.hands)
        cols["outcome"].append(r.outcome)
        cols["winner"].append(r.winner)
        cols["tricks"].append(r.tricks)
        cols["cards"].append(r.cards)
        cols["preperiod_tricks"].append(r.preperiod_tricks)
        cols["preperiod_cards"].append(r.preperiod_cards)
        cols["period_tricks"].append(r.period_tricks)
        cols["period_cards"].append(r.period_cards)
        cols["cycle_id"].append(r.cycle_id)
        cols["strategy"].append(strategy)
        cols["shard"].append(shard)
        cols["index"].append(c.index)
        cols["rank"].append(None if rank_base is None else rank_base + c.index)
        cols["deck"].append(deck)
    cols["rank"] = [None if v is None else decimal.Decimal(v) for v in cols["rank"]]
    return pa.table(cols, schema=GAMES_SCHEMA)


def shard_file_table(games: pa.Table, summaries: list[ShardSummary]) -> pa.Table:
    meta = {META_KEY: json.dumps([s.to_json() for s in summaries], sort_keys=True).encode()}
    return games.replace_schema_metadata(meta)


def shard_file_name(shard_id: int) -> str:
    return f"{SHARDS_DIR}/{shard_id:012d}.parquet"


def compacted_file_name(first: int, last: int) -> str:
    """The file `bmn compact` writes for shards first..last."""
    return f"{SHARDS_DIR}/c{first:012d}-{last:012d}.parquet"


@dataclass
class RunContents:
    """Everything the shard files of a run hold, each shard once."""

    summaries: dict[int, ShardSummary] = field(default_factory=dict)
    games: list[pa.Table] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    damaged: dict[str, str] = field(default_factory=dict)  # shard file -> why it cannot be read
    # shard file -> why (some of) its shards are not this run's; those shards are never counted. A file
    # none of whose shards is the run's is not in `files`.
    foreign: dict[str, str] = field(default_factory=dict)

    @property
    def done(self) -> set[int]:
        return {k for k, s in self.summaries.items() if s.done}


class DamagedFile(Exception):
    """A shard file that is not a whole Parquet file of bmn's (truncated, garbled, foreign)."""


class Ownership:
    """Which shard summaries are a run's own: a shard of its plan, signed with its fingerprint (or,
    written before runs signed their shards, unsigned), computing what the plan's shard computes.
    Anything else found among its shard files (another run's, copied in) is never counted."""

    def __init__(self, plan, fingerprint: str):
        self.plan = plan
        self.fingerprint = fingerprint

    def why_not(self, summary: ShardSummary) -> str | None:
        """None for the run's own shard, else one sentence saying why it is not."""
        k = summary.shard
        if summary.run is not None and summary.run != self.fingerprint:
            return f"shard {k} there was written by another run (fingerprint {summary.run}, this run's is " \
                   f"{self.fingerprint})"
        if not 0 <= k < self.plan.count:
            return f"shard {k} there is not among this run's {self.plan.count:,} shards"
        planned = self.plan.shard(k)
        if (summary.strategy, summary.params) != (planned.strategy, planned.params):
            return f"shard {k} there computed something else than this run's shard {k} ({codec.encode(summary.params)})"
        return None


def _split_owned(rel: str, summaries: list[ShardSummary], owner: Ownership | None,
                 foreign: dict[str, str]) -> list[ShardSummary]:
    """The summaries of a file that are the run's own; the file is named in `foreign` with the first
    reason if any is not."""
    if owner is None:
        return summaries
    own = []
    for s in summaries:
        why = owner.why_not(s)
        if why is None:
            own.append(s)
        else:
            foreign.setdefault(rel, why)
    return own


def _supersedes(summary: ShardSummary, previous: ShardSummary | None) -> bool:
    """A shard is read once: from the first file that has it, unless a later one has it done."""
    return previous is None or (not previous.done and summary.done)


def shard_files(store: RunStore) -> list[str]:
    """The shard files of a run (paths relative to the run), in name order; other files are ignored."""
    return [f"{SHARDS_DIR}/{name}" for name in store.list(SHARDS_DIR, ".parquet") if SHARD_FILE.match(name)]


def _summaries_of(metadata: dict | None) -> list[ShardSummary]:
    try:
        summaries = json.loads((metadata or {})[META_KEY])
        if not isinstance(summaries, list):
            raise ValueError
        return [ShardSummary.from_json(s) for s in summaries]
    except (KeyError, ValueError, TypeError, AttributeError):
        raise DamagedFile("it holds no shard summaries") from None


def _why(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def _each_file(store: RunStore, read) -> list:
    """`read(rel)` for every shard file, in name order; many at once (an object store answers each
    request in tens of milliseconds, so reading thousands of files one by one would take minutes)."""
    files = shard_files(store)
    if len(files) < 2:
        return [(rel, read(rel)) for rel in files]
    with futures.ThreadPoolExecutor(min(READ_THREADS, len(files)), thread_name_prefix="bmn-read") as pool:
        return list(zip(files, pool.map(read, files)))


def read_summaries(store: RunStore, damaged: dict[str, str] | None = None, owner: Ownership | None = None,
                   foreign: dict[str, str] | None = None) -> dict[int, ShardSummary]:
    """The shard summaries only (Parquet footers), each shard once. A file that cannot be read is
    skipped (its shards count as not done) and, if `damaged` is given, named there with the reason.
    With an `owner`, shards that are not the run's are left out (and their files named in `foreign`)."""

    def footer(rel):
        try:
            return _summaries_of(store.parquet_metadata(rel))
        except StoreUnavailable:
            raise  # the store failed, not the file: the caller stops with that sentence
        except (DamagedFile, pa.ArrowException, OSError) as error:
            return error

    out: dict[int, ShardSummary] = {}
    for rel, summaries in _each_file(store, footer):
        if isinstance(summaries, Exception):
            if damaged is not None:
                damaged[rel] = _why(summaries)
            continue
        for s in _split_owned(rel, summaries, owner, {} if foreign is None else foreign):
            if _supersedes(s, out.get(s.shard)):
                out[s.shard] = s
    return out


def read_contents(store: RunStore, known: dict[str, tuple] | None = None,
                  owner: Ownership | None = None) -> RunContents:
    """Every shard file read in full; a file that cannot be read is named in `damaged` and skipped.
    With an `owner`, only the run's own shards are taken: the others' files are named in `foreign`.

    `known` (file name -> what reading it gave) saves reading again the files read before: the
    files it names are taken from it, and the files read now are added to it. The caller drops from
    it any file it rewrites."""

    def whole(rel):
        if known is not None and rel in known:
            return known[rel]
        try:
            table = store.read_parquet(rel)
            summaries = _summaries_of(table.schema.metadata)
            if table.num_rows:
                table = table.cast(GAMES_SCHEMA.with_metadata(table.schema.metadata))
            return table, summaries
        except StoreUnavailable:
            raise  # the store failed, not the file: the caller stops with that sentence
        except (DamagedFile, pa.ArrowException, OSError, ValueError) as error:
            return error

    contents = RunContents()
    for rel, read in _each_file(store, whole):
        if isinstance(read, Exception):
            contents.damaged[rel] = _why(read)
            continue
        if known is not None:
            known[rel] = read
        table, summaries = read
        summaries = _split_owned(rel, summaries, owner, contents.foreign)
        if not summaries and rel in contents.foreign:
            continue  # none of it is this run's
        take = []
        for s in summaries:
            if _supersedes(s, contents.summaries.get(s.shard)):
                contents.summaries[s.shard] = s
                take.append(s.shard)
        contents.files.append(rel)
        if take and table.num_rows:
            mask = pc.is_in(table["shard"], value_set=pa.array(take, pa.int64()))
            # A shard whose rows sit in two files (a compaction stopped half-way) is read from one.
            contents.games.append(table.filter(mask).replace_schema_metadata(None))
    return contents


def set_aside(store: RunStore, files, folder: str = DAMAGED_DIR) -> list[str]:
    """Move shard files into damaged/ (kept for inspection; or another folder: foreign/ for other
    runs' files); their shards are then missing and a resume recomputes them. Returns where they went."""
    moved = []
    for rel in files:
        target = f"{folder}/{rel.rsplit('/', 1)[-1]}.{int(time.time())}"
        store.move(rel, target)
        moved.append(target)
    return moved


def build_tables(contents: RunContents) -> dict[str, pa.Table]:
    games = pa.concat_tables(contents.games, promote_options="none") if contents.games else GAMES_SCHEMA.empty_table()
    games = games.cast(GAMES_SCHEMA)
    done = contents.done
    if games.num_rows:
        games = games.filter(pc.is_in(games["shard"], value_set=pa.array(sorted(done), pa.int64())))
        games = games.sort_by([("shard", "ascending"), ("index", "ascending"), ("hands", "ascending")])
    every = games  # an own table may count games as drawn (the atlas: a deal drawn twice, twice)
    games = first_per_deal(games)
    tables = {
        "games": games,
        "cycles": cycles_table(games, reported_cycles(contents.summaries)),
        "shards": manifest_table(contents.summaries),
        "histogram": histogram_table(contents.summaries),
    }
    for own in owned_tables(contents.summaries):
        tables[own.name] = own.build(contents.summaries, every)
    return tables


def owned_tables(summaries: dict[int, ShardSummary]) -> list[OwnTable]:
    """The own tables of the strategies whose shards these are (a run's: its strategy's, if it keeps one)."""
    strategies = sorted({s.strategy for s in summaries.values() if s.strategy in REGISTRY})
    return [own for name in strategies if (own := own_table(REGISTRY[name])) is not None]


def first_per_deal(games: pa.Table) -> pa.Table:
    """One row per deal: the first of its rows, in the table's order."""
    if not games.num_rows:
        return games
    _, first = np.unique(np.asarray(games["hands"].to_pylist(), dtype=object), return_index=True)
    return games.take(pa.array(np.sort(first)))


def reported_cycles(summaries: dict[int, ShardSummary]) -> list[tuple[int, CycleRow]]:
    """The cycles done shards reported finding (census, cycles), in shard order, with their shard."""
    return [(k, row) for k, s in sorted(summaries.items()) if s.done for row in s.figures.cycle_rows or ()]


# A cycles row's columns that only the shards' reports fill.
NOT_REPORTED = {"state": None, "basin": None, "complete": None, **dict.fromkeys(CLOSURE_FIELDS)}


def cycles_table(games: pa.Table, reported: Sequence[tuple[int, CycleRow]] = ()) -> pa.Table:
    """One row per cycle: from the candidate deals that enter it, and from the shards' reports
    (shard, row), where a cycle no candidate deal enters is a row with no deal.

    Reports of one cycle merge: the first shard's state, the basins summed (a census's shards
    hold disjoint states), complete if any shard listed its balanced deals completely, the
    largest closure reported (the first among equals: every complete search gives the same)."""
    rows: dict[str, dict] = {}
    for g in games.filter(pc.equal(games["outcome"], "cycle")).to_pylist() if games.num_rows else []:
        row = rows.get(g["cycle_id"])
        if row is None:
            rows[g["cycle_id"]] = {
                "cycle_id": g["cycle_id"], "period_tricks": g["period_tricks"], "period_cards": g["period_cards"],
                "hands": g["hands"], "deals": 1, "first_shard": g["shard"],
                "min_preperiod_tricks": g["preperiod_tricks"], "max_preperiod_tricks": g["preperiod_tricks"],
                "deck": g["deck"], **NOT_REPORTED,
            }
        else:
            row["deals"] += 1
            row["min_preperiod_tricks"] = min(row["min_preperiod_tricks"], g["preperiod_tricks"])
            row["max_preperiod_tricks"] = max(row["max_preperiod_tricks"], g["preperiod_tricks"])
    for shard, r in reported:
        row = rows.get(r.cycle_id)
        if row is None:
            row = rows[r.cycle_id] = {
                "cycle_id": r.cycle_id, "period_tricks": r.period_tricks, "period_cards": r.period_cards,
                "hands": None, "deals": 0, "first_shard": shard, "min_preperiod_tricks": None,
                "max_preperiod_tricks": None, "deck": r.deck, **NOT_REPORTED}
        row["first_shard"] = min(row["first_shard"], shard)
        if row["state"] is None:
            row["state"] = r.state
        if r.basin is not None:
            row["basin"] = (row["basin"] or 0) + r.basin
        if r.complete is not None:
            row["complete"] = bool(row["complete"]) or r.complete
        if r.closure is not None and (row["closure"] is None or r.closure > row["closure"]):
            # Shards that searched it found the same closure (it does not depend on where the cycle
            # was met) unless a search was truncated: the largest count is kept.
            row["closure"], row["closest"], row["imbalance"] = r.closure, r.closest, r.imbalance
        if r.balanced is not None and (row["balanced"] is None or r.balanced > row["balanced"]):
            row["balanced"] = r.balanced
    ordered = sorted(rows.values(), key=lambda r: (r["first_shard"], r["cycle_id"]))
    return labelled(pa.Table.from_pylist(ordered, schema=CYCLES_SCHEMA))


def reported_rows(cycles: pa.Table) -> list[tuple[int, CycleRow]]:
    """What a cycles table holds of the shards' reports: (first shard, row) for each cycle a shard
    reported (those with a state), so that cycles_table of them gives those rows back."""
    return [(r["first_shard"], CycleRow.from_json(r)) for r in cycles.to_pylist() if r["state"] is not None]


def histogram_table(summaries: dict[int, ShardSummary]) -> pa.Table:
    merged = RunTotals.of(summaries).histogram
    return pa.table({"cards": sorted(merged), "games": [merged[k] for k in sorted(merged)]}, schema=HISTOGRAM_SCHEMA)


def write_tables(store: RunStore, tables: dict[str, pa.Table]) -> None:
    for name, table in tables.items():
        store.write_parquet(f"{name}.parquet", table)
