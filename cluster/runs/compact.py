"""`bmn compact RUN`: merge many small shard files into few large ones; query results unchanged.

Each merged file carries the rows and the summaries of the shards it holds. It is written (in
one atomic step) before the small files are deleted, so a compaction stopped half-way leaves some
shards in two files, which readers take once. The run's lock is held throughout: a run that is
being written is not compacted. Shard files of another run found there (their shards are never
counted) are moved to foreign/.
"""

from __future__ import annotations

import pyarrow as pa

from kernels.errors import BmnError

from .lease import Lease
from .plan import Plan
from .runmeta import existing_run, read_run_config
from .tables import (
    FOREIGN_DIR,
    GAMES_SCHEMA,
    Ownership,
    build_tables,
    compacted_file_name,
    read_contents,
    set_aside,
    shard_file_table,
    write_tables,
)

DEFAULT_SHARDS_PER_FILE = 10_000


def compact(uri: str, shards_per_file: int = DEFAULT_SHARDS_PER_FILE) -> dict:
    if shards_per_file < 1:
        raise BmnError("--shards-per-file must be at least 1")
    store = existing_run(uri)
    config = read_run_config(uri)
    lease = Lease(store).acquire()
    try:
        owner = Ownership(Plan(config), config.fingerprint())
        contents = read_contents(store, owner=owner)
        # Files holding another run's shards go to foreign/ whole (this run's shards among them are
        # in memory, and written into the merged files below); the rest is merged.
        foreign = set_aside(store, list(contents.foreign), FOREIGN_DIR)
        before = [rel for rel in contents.files if rel not in contents.foreign]
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
        write_tables(store, build_tables(read_contents(store, owner=owner)))
        return {"files_before": len(before) + len(foreign), "files_after": len(written), "shards": len(ids),
                "foreign": [(rel, target, contents.foreign[rel]) for rel, target in zip(contents.foreign, foreign)]}
    finally:
        lease.release()
