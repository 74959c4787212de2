"""`bmn compact RUN`: merge many small shard files into few large ones; query results unchanged.

Each merged file carries the rows and the summaries of the shards it holds. It is written (in
one atomic step) before the small files are deleted, so a compaction stopped half-way leaves some
shards in two files, which readers take once. The run's lock is held throughout: a run that is
being written is not compacted.
"""

from __future__ import annotations

import pyarrow as pa

from kernels.errors import BmnError

from .runmeta import existing_run
from .tables import GAMES_SCHEMA, build_tables, compacted_file_name, read_contents, shard_file_table, write_tables

DEFAULT_SHARDS_PER_FILE = 10_000


def compact(uri: str, shards_per_file: int = DEFAULT_SHARDS_PER_FILE) -> dict:
    if shards_per_file < 1:
        raise BmnError("--shards-per-file must be at least 1")
    store = existing_run(uri)
    store.acquire()
    try:
        contents = read_contents(store)
        before = list(contents.files)
        games = pa.concat_tables(contents.games) if contents.games else GAMES_SCHEMA.empty_table()
        ids = sorted(contents.summaries)
        written = []
        for start in range(0, len(ids), shards_per_file):
            group = ids[start:start + shards_per_file]
            rows = games.filter(pa.compute.is_in(games["shard"], value_set=pa.array(group, pa.int64())))
            summaries = [contents.summaries[k] for k in group]
            name = compacted_file_name(group[0], group[-1])
            store.write_parquet(name, shard_file_table(rows.cast(GAMES_SCHEMA), summaries))
            written.append(name)
        for rel in before:
            if rel not in written:
                store.delete(rel)
        # The summary tables do not change, but a run compacted before its end gets them now.
        write_tables(store, build_tables(read_contents(store)))
        return {"files_before": len(before), "files_after": len(written), "shards": len(ids)}
    finally:
        store.release()
