"""A strategy's own summary table (the atlas's), declared as one value: a strategy whose `own_table`
names a table has a cluster module of that name (cluster/NAME.py) holding its `TABLE`, an `OwnTable`
saying how its rows are built from a run's shard files, how runs queried together keep them, and what
`bmn NAME RUN...` shows. cluster/owned.py finds it; tables.py builds and writes it for the runs of that
strategy only, query.py makes it a view, commands/results.py gives it its command: none names it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

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
