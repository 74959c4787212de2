"""What a construct run adds to the genes library and the census cycles shipped with bmn (`bmn genes merge RUN`):
its compositions searched to their end, and, for a census run, the cycles of every composition whose cycles it
built to the end (kernels/genelib.py). Only done shards count, each the run's own (its plan's, signed with its
fingerprint); a composition or a class of cycles some of whose shards are missing adds nothing yet."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from kernels import genelib as gl
from kernels.errors import BmnError
from kernels.strategies.construct import (
    MULTISETS,
    SEARCH,
    ConstructShard,
    ConstructTable,
    Gadget,
    composition_text,
)

from .plan import Plan
from .runmeta import existing_run, stored_config
from .tables import Ownership, read_summaries


def harvest(uri: str) -> tuple[list[gl.Entry], list[gl.CycleCount]]:
    """A construct run's library entries (its long compositions searched to their end) and, for a census run, its
    census cycle records (every composition whose cycles, counted by their longest gene, it built to the end)."""
    store = existing_run(uri)
    config = stored_config(store)
    table = config.table()
    if not isinstance(table, ConstructTable) or not (table.long_gene or table.census):
        raise BmnError(f"{uri} is a run of {config.strategy}, with no long genes nor a census; bmn genes merge reads "
                       f"construct runs with long genes or a census (configs/gene-census.toml)")
    plan = Plan(config)
    done = {k: s for k, s in read_summaries(store, owner=Ownership(plan, config.fingerprint())).items() if s.done}
    deck = config.space().deck.spec()
    gadget = Gadget(deck, table)
    by_comp: dict[tuple, list[int]] = defaultdict(list)  # a long composition's shards
    multisets: list[int] = []
    for k in range(plan.count):
        params: ConstructShard = plan.shard(k).params
        if params.kind == MULTISETS:
            multisets.append(k)
        else:
            by_comp[tuple(params.first)].append(k)
    entries, records = [], []
    for comp, shards in by_comp.items():
        if not all(k in done for k in shards):
            continue
        rows = [row for k in shards for row in done[k].figures.gene_rows]
        if plan.shard(shards[0]).params.kind == SEARCH:
            searches = [row for k in shards for row in done[k].figures.search_rows]
            entries.append(gl.entry_of(comp, [row.gene for row in rows], gadget.small, gadget.tail,
                                       choices=sum(r.choices for r in searches), cpu_s=sum(r.cpu_s for r in searches),
                                       search=plan.shard(shards[0]).params.search, source=f"bmn run {config.out}"))
        if table.census:
            records.append(_record(deck, comp, rows, config.out))
    if table.census and multisets and all(k in done for k in multisets):
        rows = defaultdict(list)
        for k in multisets:
            for row in done[k].figures.gene_rows:
                rows[row.composition].append(row)
        complete = plan.shard(multisets[0]).params.max_piece
        for length in range(1, complete + 1):
            for comp in gl.compositions_of(gadget.target, length, gadget.per_gene):
                records.append(_record(deck, comp, rows.get(composition_text(comp), []), config.out))
    return entries, records


def _record(deck: str, comp, rows, out: str) -> gl.CycleCount:
    """A composition's census cycles from its genes' rows (summed over the shards reporting each)."""
    genes: dict[str, list[int]] = {}
    for row in rows:
        counts = genes.setdefault(row.gene, [0, 0, 0])
        counts[0] += row.cycles
        counts[1] += row.balanced_cycles
        counts[2] += row.balanced
    return gl.CycleCount(deck, composition_text(comp), {g: tuple(v) for g, v in genes.items() if v[0]},
                         f"bmn run {out}")


def merge(uri: str, into: str | None = None) -> list[str]:
    """Add a run's harvest to the genes library and the census cycles of its gadget (the files shipped with bmn, or
    those of the folder `into`): a sentence for each thing added, and where it was written."""
    entries, records = harvest(uri)
    table = stored_config(existing_run(uri)).table()
    small, tail = table.small, table.tail
    library_file, cycles_file = gl.library_path(small, tail), gl.cycles_path(small, tail)
    if into is not None:
        library_file, cycles_file = (Path(into) / path.name for path in (library_file, cycles_file))
    library = gl.Library.load(library_file, small, tail)
    said = library.merge(entries)
    if said:
        library.save(library_file)
    counts = gl.CycleCounts.load(cycles_file, small, tail)
    added = counts.merge(records)
    if added:
        counts.save(cycles_file)
    out = [f"library {library_file}: {text}" for text in said]
    for record in added:
        cycles, balanced_cycles, balanced = record.totals()
        if cycles:
            out.append(f"census cycles {cycles_file}: {record.composition} on {record.deck}: {cycles:,} cycles "
                       f"({balanced_cycles:,} entered by balanced deals, {balanced:,} balanced deals)")
    out.append(f"{uri}: {len(entries)} composition(s) searched to their end ({len(said)} new to the library), "
               f"{len(records)} whose census cycles are all built ({len(added)} new to the census cycles)")
    return out
