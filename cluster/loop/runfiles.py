"""A run's shard files as one session of it sees them: read when it opens (which shards are done and
counted; damaged files and other runs' set aside), and read again at its end, when the summary tables
are rebuilt from them (tables.py) and whatever they miss is named."""

from __future__ import annotations

import sys
from typing import NamedTuple

import pyarrow as pa

from ..runs.owned import own_table
from ..runs.plan import Plan
from ..runs.storage import RunStore
from ..runs.tables import FOREIGN_DIR, Ownership, RunContents, build_tables, read_contents, set_aside, write_tables
from ..runs.totals import RunTotals


class Rebuilt(NamedTuple):
    """What the summary tables count, rebuilt from the shard files at a session's end (the run loop sets its
    totals from them: SessionTotals.tabled), and whether they miss shards of a search that ran to its end."""

    done: int
    failed: int
    cycle_ids: set[str]
    incomplete: bool


class RunFiles:
    def __init__(self, store: RunStore, plan: Plan, owner: Ownership):
        self.store = store
        self.plan = plan
        self.owner = owner  # which shard files are this run's
        # The shard files read when the run was opened: the end of the run reads only the others.
        self.read: dict[str, tuple] = {}
        self.set_aside: list[str] = []  # damaged or foreign shard files moved aside (kept, never deleted)
        self.missing: list[int] = []  # shards in neither a done nor a failed file at the end
        self.cycles: pa.Table | None = None  # the cycles table, once the end of the run has written it
        self.finished: set[int] | None = None  # the shards done when the run was opened
        self.opened = RunTotals()  # their totals (the session starts its own from them)

    def open(self) -> set[int]:
        """The shards done (read once: their totals kept in `opened`)."""
        if self.finished is None:
            contents = read_contents(self.store, self.read, self.owner)
            self._set_aside_foreign(contents)
            if contents.damaged:
                # A truncated or garbled shard file (a full disk, a half-copied run): kept aside,
                # its shards counted as not done, so this run recomputes them.
                self.set_aside += set_aside(self.store, contents.damaged)
                for rel, why in contents.damaged.items():
                    print(f"bmn: {rel} is damaged ({why}); moved it to damaged/ and its shards will be "
                          f"recomputed", file=sys.stderr)
            done = {k: s for k, s in contents.summaries.items() if s.done}
            self.finished = set(done)
            self.opened = RunTotals.of(done)
        return self.finished

    def _set_aside_foreign(self, contents: RunContents) -> None:
        """Shard files of another run (copied in, or a wrong --out) are never counted: a file wholly
        another's is moved to foreign/, one that also holds shards of this run is left in place."""
        whole = [rel for rel in contents.foreign if rel not in contents.files]
        moved = set_aside(self.store, whole, FOREIGN_DIR)
        self.set_aside += moved
        for rel, why in contents.foreign.items():
            fate = "moved it to foreign/" if rel in whole else "its other shards are this run's and are counted"
            print(f"bmn: {rel} is not this run's ({why}); {fate}; its shards are never counted", file=sys.stderr)

    def rewritten(self, rel: str) -> None:
        """A shard recomputed now: its file is read again at the end."""
        self.read.pop(rel, None)

    def rebuild(self, complete: bool) -> Rebuilt:
        """The summary tables written from the shard files, and what they count; whether they miss shards of the
        plan where the search ran to its end (`complete`): then it is "incomplete", and the files that could not
        be read are named. An OSError where a file cannot be read or written."""
        contents = read_contents(self.store, self.read, self.owner)
        tables = build_tables(contents)
        write_tables(self.store, tables)
        own = own_table(self.plan.strategy)
        if own is not None and own.publish is not None and own.name in tables:
            for sentence in own.publish(tables[own.name], contents.summaries, self.plan):
                print(f"bmn: {sentence}", file=sys.stderr)
        self.cycles = tables["cycles"]
        self.missing = sorted(set(range(self.plan.count)) - set(contents.summaries))
        if complete and self.missing:
            for rel, why in contents.damaged.items():
                print(f"bmn: {rel} cannot be read ({why}); its shards are missing from the tables", file=sys.stderr)
        return Rebuilt(done=len(contents.done), failed=sum(1 for s in contents.summaries.values() if not s.done),
                       cycle_ids=set(tables["cycles"].column("cycle_id").to_pylist()),
                       incomplete=complete and bool(self.missing))
