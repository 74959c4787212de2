"""What a shard reports besides its games: its figures (from the worker that played it) and its
summary (the run's record of it, kept in its file), as values with a fixed shape.

A worker sends back its shard's candidates and `ShardFigures` (figures.py: a PlayedShard): the
figures of its result the summary tables need, a few hundred numbers at most. The run loop makes the
shard's one `ShardSummary` from it, whether played or given up by the pool (`ShardSummary.of`), and
writes both into the shard's file; the summary holds the figures (`figures`), written among its own
keys. A shard file keeps one summary per shard in its Parquet key-value metadata (`bmn.shards`, JSON:
`to_json` / `from_json`); the run's `shards` table holds their manifest columns (Arrow:
`manifest_table` / `manifest_summaries`). The JSON keys are those bmn has always written, so the
shard files of earlier runs read back: a summary written before results versions were recorded
has no `results_version`, one written before shards reported cycles has no `cycle_rows` (nor has
a failed shard's), one written before runs signed their shards has no `run` (the run's
fingerprint), and all come back out as they went in.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields

import pyarrow as pa

from kernels import RESULTS_VERSION
from kernels.strategies import REGISTRY, CycleRow, GeneRow, ShardParams, codec
from kernels.tally import SearchRow

from .figures import PlayedShard, ShardFigures, game_json, game_of_json

STATUSES = ("done", "failed")

SHARDS_SCHEMA = pa.schema([
    ("shard", pa.int64()),
    ("strategy", pa.string()),
    ("params", pa.string()),
    ("status", pa.string()),
    ("deals", pa.int64()),
    ("cards", pa.int64()),
    ("max_cards", pa.int64()),
    ("cycles", pa.int64()),
    ("candidates", pa.int64()),
    ("elapsed_s", pa.float64()),
    ("attempts", pa.int64()),
    ("worker", pa.string()),
    ("finished_at", pa.float64()),
    ("error", pa.string()),
])

MANIFEST_OWN = ("shard", "strategy", "status", "attempts", "error")  # the shards table's columns not of the figures


@dataclass(frozen=True)
class ShardSummary:
    """A shard's record in its file and in the shards table: which shard, its status and tries, and the
    figures its worker reported (empty for a shard given up)."""

    shard: int
    strategy: str
    # what the shard computed: its strategy's parameters (kernels/strategies/codec.py; Unread: kept as written)
    params: ShardParams | codec.Unread
    status: str  # "done", or "failed" (no games, no counts)
    figures: ShardFigures = field(default_factory=ShardFigures)  # (composed: its JSON keys are its own keys)
    attempts: int = 1
    error: str | None = None
    results_version: int | None = RESULTS_VERSION  # what computed it (None: not recorded)
    run: str | None = None  # the fingerprint of the run that wrote it (None: written before runs signed shards)
    audit: str | None = None  # a GPU shard played again on a CPU: "matched", or "mismatch" (cluster/loop/audit.py)
    # its parameters' text as its file holds them where that is an earlier form of them (a nested table, read
    # flat: codec.read), so the file and the shards table write it back as it was; None: as `params` encodes
    written: str | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, played: PlayedShard, *, run: str | None, audit: str | None = None) -> ShardSummary:
        """The summary of a shard done (the figures its worker reported) or given up (none, with the last
        try's error), signed by the run that wrote it."""
        figures = played.figures or ShardFigures(finished_at=time.time())  # (when it was given up)
        shard = played.shard
        return cls(shard=shard.id, strategy=shard.strategy, params=shard.params, status="done" if played.done
                   else "failed", figures=figures, attempts=played.attempts, error=played.error, run=run, audit=audit)

    @property
    def done(self) -> bool:
        return self.status == "done"

    def flat(self) -> dict:
        """Its values as its file and the shards table hold them, the figures among the others."""
        return {**{f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("figures", "written")},
                **self.figures.flat()}

    def params_text(self) -> str:
        """Its parameters as its file holds them (codec.encode's form, or the earlier form it was written in)."""
        return self.written if self.written is not None else codec.encode(self.params)

    def to_json(self) -> dict:
        values = self.flat()
        figures = self.figures
        values.update(params=self.params_text(), histogram={str(k): v for k, v in figures.histogram.items()},
                      wins=list(figures.wins), longest=None if figures.longest is None else game_json(figures.longest),
                      cycle_ids=list(figures.cycle_ids))
        if self.results_version is None:
            del values["results_version"]
        if self.run is None:
            del values["run"]
        if self.audit is None:
            del values["audit"]
        if figures.cycle_rows is None:
            del values["cycle_rows"]
        else:
            values["cycle_rows"] = [row.to_json() for row in figures.cycle_rows]
        for name in ("gene_rows", "search_rows"):  # (none: as every shard before genes were reported)
            if getattr(figures, name):
                values[name] = [row.to_json() for row in getattr(figures, name)]
            else:
                del values[name]
        return values

    @classmethod
    def from_json(cls, values: dict) -> ShardSummary:
        """A summary as to_json (of this bmn or an earlier one) wrote it. A value of the wrong shape
        raises ValueError (or KeyError, TypeError: a key missing, a value of the wrong type)."""
        if not isinstance(values.get("shard"), int) or values.get("status") not in STATUSES:
            raise ValueError("not a shard summary")
        known = {f.name for f in fields(cls)} - {"figures"}
        summary = dict((k, v) for k, v in values.items() if k in known)
        params = _params(values.get("strategy"), values.get("params"))
        written = values["params"] if isinstance(params, ShardParams) and codec.encode(params) != values["params"] \
            else None
        summary.update(params=params, written=written, results_version=values.get("results_version"))
        figures = {**values, "histogram": {int(k): int(v) for k, v in values.get("histogram", {}).items()},
                   "wins": tuple(values.get("wins", ())), "cycle_ids": tuple(values.get("cycle_ids", ()))}
        if values.get("cycle_rows") is not None:
            figures["cycle_rows"] = tuple(CycleRow.from_json(row) for row in values["cycle_rows"])
        figures["gene_rows"] = tuple(GeneRow.from_json(row) for row in values.get("gene_rows", ()))
        figures["search_rows"] = tuple(SearchRow.from_json(row) for row in values.get("search_rows", ()))
        if values.get("longest") is not None:
            figures["longest"] = game_of_json(values["longest"])
        return cls(**summary, figures=ShardFigures.of_flat(figures))

    def manifest_row(self) -> dict:
        """The row of the run's shards table (its parameters as the codec writes them)."""
        flat = self.flat()
        return {**{name: flat[name] for name in SHARDS_SCHEMA.names}, "params": self.params_text()}


def _params(strategy: str, text: str) -> ShardParams | codec.Unread:
    """A summary's parameters read back with the codec (kept as written where they are not, exactly, this
    bmn's parameters of that strategy)."""
    if not isinstance(text, str):
        raise ValueError("a shard summary's params are text")
    return codec.read(REGISTRY.get(strategy), text)


def manifest_table(summaries: dict[int, ShardSummary]) -> pa.Table:
    """The run's shards table: one row per shard, in shard order."""
    rows = [s.manifest_row() for _, s in sorted(summaries.items())]
    return pa.Table.from_pylist(rows, schema=SHARDS_SCHEMA)


def manifest_summaries(table: pa.Table) -> list[ShardSummary]:
    """The summaries of a shards table, as far as it holds them (its columns; no histogram, wins,
    longest game or cycles)."""
    return [ShardSummary(**{**{k: row[k] for k in MANIFEST_OWN}, "params": _params(row["strategy"], row["params"])},
                         figures=ShardFigures.of_flat(row), results_version=None)
            for row in table.select(SHARDS_SCHEMA.names).to_pylist()]
