"""A strategy's own summary table (the atlas's, construct's genes), declared as one value: a strategy whose
`own_table` names a table has an `OwnTable` of that name (the `TABLE` of its cluster module: cluster/runs/atlas.py,
cluster/runs/genes.py) saying how its rows are built from a run's shard files, how runs queried together keep them,
what `bmn NAME RUN...` shows, and, for a table whose rows also live beyond the run (the genes library), what a
run reads from there when it starts and adds there when a session ends. cluster/runs/owned.py maps each name to its
table; tables.py builds and writes it for the runs of that strategy only, query.py makes it a view,
commands/results.py gives it its command: none names it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from .summary import ShardSummary


@dataclass(frozen=True)
class OwnTable:
    name: str  # the table's (its file NAME.parquet, its query view, its command `bmn NAME`)
    schema: pa.Schema
    # Its rows from a run's shard summaries (by shard id) and games rows as drawn (a deal drawn twice, twice).
    build: Callable[[dict[int, ShardSummary], pa.Table], pa.Table]
    key: tuple[str, ...]  # the columns that name a row: runs queried together keep each key's first row
    timings: tuple[str, ...]  # the columns that depend on who played its shards and when (not results)
    order: str  # how its command lists the rows (SQL ORDER BY)
    columns: tuple[str, ...]  # what its command shows (--wide: every column)
    help: str  # its command's help line, and its description
    description: str
    # What a run of its strategy reads from outside when it starts, and adds there when a session ends (the genes
    # library): the config a run plans from, given the config and the run's stored one where it exists
    # (runmeta.open_run); and, after
    # the tables are written, given its table, the shard summaries and the plan, a sentence for each thing it
    # added (runfiles.py).
    prepare: Callable[[Any, Any], Any] | None = None
    publish: Callable[[pa.Table, dict[int, ShardSummary], Any], list[str]] | None = None
