"""The genes table and the genes library of a run: construct's long genes and census (kernels/strategies/construct.py).

The genes table: one row per gene a long-gene or census run found, took from a library or built cycles with, from
its shards' reports alone (the same whatever the workers or the order shards finished in): a GeneRow's fields
(kernels/tally.py, where each column is declared and said), then the gadget ("J- / -"), the deck and the first
shard that reported it. A census's short genes are reported by every shard holding a multiset they end: their
cycles are summed.

The genes library: a folder (or s3:// URI) of one JSON file per long composition searched to its end, by gadget
(`J-_-/0:23,1:1,2:4,3:3,4:1.json`: its genes' least phases, the search's shards and their seconds). When a
long-gene run starts (`prepare`), the compositions of its `long_gene` that the library holds become its
`[construct] known` (kept in the run: a resume plans as the run began), and are not searched again; at the
end of each session (`publish`) every composition whose search shards are all done is added to it. Its place:
`[construct] library`, else `genes` beside the run's folder (runs/genes for runs/construct).
"""

from __future__ import annotations

import json
import os
import posixpath
import time
from dataclasses import replace
from typing import get_type_hints

import pyarrow as pa

from kernels.errors import BmnError
from kernels.strategies.construct import (
    SEARCH,
    ConstructShard,
    Gadget,
    census_record,
    composition_text,
    cut,
    to_search,
)
from kernels.tally import GeneRow

from .owntable import OwnTable
from .storage import RunStore
from .summary import ShardSummary

GENES = "genes"

_ARROW = {int: pa.int64(), str: pa.string()}
# The genes table's columns: a GeneRow's fields (kernels/tally.py, declared there once), then where it was reported.
GENES_SCHEMA = pa.schema([(name, _ARROW[kind]) for name, kind in get_type_hints(GeneRow).items()]
                         + [("gadget", pa.string()), ("deck", pa.string()), ("shard", pa.int64())])
SUMMED = ("cycles", "balanced_cycles", "balanced")  # what shards add up for a gene (a census counts a short gene's
# cycles over the shards of every multiset it ends)


def gadget_name(params: ConstructShard) -> str:
    return f"{params.table.small} / {params.table.tail}"


def genes_table(summaries: dict[int, ShardSummary], games: pa.Table) -> pa.Table:
    """One row per gene of the done shards' reports, longest first: the first shard's row, its cycles and
    balanced deals summed over every shard that reports the gene (a long gene is reported by one shard; a census's
    short gene by each shard holding a multiset it ends)."""
    rows: dict[tuple, dict] = {}
    for shard, summary in sorted(summaries.items()):
        if not summary.done or not isinstance(summary.params, ConstructShard):
            continue
        params = summary.params
        for g in summary.figures.gene_rows:
            key = (params.deck, gadget_name(params), g.gene)
            if key not in rows:
                rows[key] = {**g.to_json(), "gadget": gadget_name(params), "deck": params.deck, "shard": shard}
            else:
                for name in SUMMED:
                    rows[key][name] += getattr(g, name)
    ordered = sorted(rows.values(), key=lambda r: (-r["length"], r["composition"], r["gene"]))
    return pa.Table.from_pylist(ordered, schema=GENES_SCHEMA)


# -- the library ---------------------------------------------------------------------------------------------

def library_uri(out: str, library: str) -> str:
    """Where a run's genes library is: `library` where given, else `genes` beside the run's folder."""
    if library:
        return library
    trimmed = out.rstrip("/")
    if "://" in trimmed:
        return posixpath.join(posixpath.dirname(trimmed), GENES)
    return os.path.join(os.path.dirname(os.path.abspath(os.path.expanduser(trimmed))), GENES)


def _file(gadget: Gadget, comp) -> str:
    return f"{gadget.table.small}_{gadget.table.tail}/{composition_text(comp)}.json"


def read_library(store: RunStore, gadget: Gadget, comp) -> list[str] | None:
    """A composition's genes as the library holds them (least phases as hands), or None where it holds none
    searched to the end with this gadget and max_orbit (a damaged file is one sentence)."""
    rel = _file(gadget, comp)
    if not store.exists(rel):
        return None
    entry = store.read_json(rel)
    if not isinstance(entry, dict) or not isinstance(entry.get("genes"), list):
        raise BmnError(f"{store.path(rel)} is damaged (it holds no genes); delete it and its composition is searched "
                       f"again")
    if entry.get("max_orbit") != gadget.table.max_orbit:
        return None
    return [str(g) for g in entry["genes"]]


def write_entry(library: RunStore, gadget: Gadget, comp, genes, *, shards: int, run: str, seconds: float) -> bool:
    """A composition searched to its end written into the library, where it is not there yet (whether it was):
    its genes' least phases (as hands), the shards of its search, their seconds, and the run."""
    rel = _file(gadget, comp)
    if library.exists(rel):
        return False
    library.write_json(rel, {
        "small": gadget.table.small, "tail": gadget.table.tail, "composition": composition_text(comp),
        "max_orbit": gadget.table.max_orbit, "genes": sorted(genes), "shards": shards, "seconds": round(seconds, 1),
        "run": run, "written_at": time.time()})
    return True


def prepare(config, previous):
    """The config a run plans from, its plan's computed part fixed when it starts: a new long-gene run's `known`
    filled from the genes library (its compositions searched to their end there), and the layout of every long
    composition it searches (Knuth's estimates, the frontier and its cut: kernels/strategies/construct.py `cut`);
    an existing run's (`previous`: its stored config) as it began, so a resume never plans again."""
    table = config.table()
    if not (table.long_gene or table.census):
        return config
    if previous is not None:
        if previous.strategy == config.strategy:
            table = replace(table, known=previous.table().known, layout=previous.table().layout,
                            census_at=previous.table().census_at)
        return replace(config, tables={**config.tables, config.strategy: table})
    gadget = Gadget(config.space().deck.spec(), table)
    record = None
    if table.census and not table.census_at:  # the census's record: its long compositions known, its multisets
        record = census_record(gadget)
        known = tuple(f"{comp} = {' '.join(genes)}".rstrip() for comp, genes in json.loads(record["known"]).items())
        table = replace(table, known=known, census_at=(f"complete={record['complete']}",
                                                       f"multisets={record['multisets']}"))
    known = list(table.known)
    if table.long_gene and not table.known:
        library = RunStore(library_uri(config.out, table.library))
        for comp in gadget.long_compositions():
            genes = read_library(library, gadget, comp)
            if genes is not None:
                known.append(f"{composition_text(comp)} = {' '.join(genes)}".rstrip())
        if known:
            print(f"bmn: {len(known)} of the long compositions are in the genes library {library.uri}, searched to "
                  f"their end: their genes are built with, not searched again", flush=True)
    table = replace(table, known=tuple(known))
    if not table.layout:
        searched = to_search(Gadget(config.space().deck.spec(), table), record)
        if len(searched) > 1:
            print(f"bmn: planning the search of {len(searched)} long compositions (Knuth's estimates, the frontier "
                  f"of each cut into shards of equal work): written into the run, so a resume plans as it began",
                  flush=True)
        table = replace(table, layout=tuple(cut(gadget, comp).text() for comp in searched))
    return replace(config, tables={**config.tables, config.strategy: table})


def publish(genes: pa.Table, summaries: dict[int, ShardSummary], plan) -> list[str]:
    """Every long composition whose search shards are all done, added to the genes library (with its genes and
    its shards' seconds) where it is not there yet: a sentence for each."""
    config = plan.config
    table = config.table()
    if not table.long_gene:
        return []
    gadget = Gadget(config.space().deck.spec(), table)
    shards: dict[tuple, list[int]] = {}
    for k in range(plan.count):
        params = plan.shard(k).params
        if params.kind == SEARCH:
            shards.setdefault(tuple(params.first), []).append(k)
    by_comp: dict[str, list[str]] = {}
    for row in genes.to_pylist():
        if row["source"] == SEARCH:
            by_comp.setdefault(row["composition"], []).append(row["gene"])
    library = RunStore(library_uri(config.out, table.library))
    added, genes_added = 0, 0
    for comp, ids in shards.items():
        if not all(k in summaries and summaries[k].done for k in ids):
            continue
        text = composition_text(comp)
        if write_entry(library, gadget, comp, by_comp.get(text, []), shards=len(ids), run=config.out,
                       seconds=sum(summaries[k].figures.elapsed_s for k in ids)):
            added += 1
            genes_added += len(by_comp.get(text, []))
    if not added:
        return []
    return [f"{added} long composition{'' if added == 1 else 's'} searched to {'its' if added == 1 else 'their'} end "
            f"added to the genes library {library.uri}, with {genes_added} gene{'' if genes_added == 1 else 's'} "
            f"(bmn genes {config.out} lists them; bmn genes merge {config.out} adds them to bmn's own)"]


TABLE = OwnTable(
    name=GENES, schema=GENES_SCHEMA, build=genes_table,
    key=("deck", "gadget", "gene"),
    timings=("shard",),
    order="length DESC, composition, gene",
    columns=tuple(name for name in GENES_SCHEMA.names if name not in ("phases", "gadget", "deck", "shard")),
    help="the genes of construct's long-gene runs: one row per gene",
    description="One row per gene that construct's long-gene runs (--long-gene) found or took from the genes library: "
                "its least phase, composition, orbit and phases, the most cards the small hand holds in its turn, "
                "the cycles it builds and the balanced deals entering them. Every column is in the `genes` view of "
                "bmn query.",
    prepare=prepare,
    publish=publish,
)
