"""`bmn genes`: the genes of construct runs (the genes table), the genes library and census shipped with bmn
(`--library`, `--compositions`, `--census`: kernels/genelib.py), and `bmn genes merge RUN`, which adds what a run
searched and built to them."""

from __future__ import annotations

import argparse

import pyarrow as pa

from kernels import genelib as gl
from kernels.decks import parse_deck
from kernels.errors import BmnError
from kernels.strategies.construct import ConstructTable, Gadget

from ..runs import harvest
from ..runs.genes import TABLE
from .query import FORMATS, format_table, own_report
from .results import _print_with_notes

GADGET = ("J-", "-")  # the gadget whose library bmn ships


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "genes", help="the genes of construct runs; the genes library and census shipped with bmn; merge a run in",
        description="bmn genes RUN...: the genes table of construct runs with long genes (one row a gene). "
        "bmn genes --library | --compositions | --census: the genes library shipped with bmn (kernels/data/genes: "
        "every composition of the J- gadget searched to its end) and the census it supports on a deck: one row a gene, "
        "a composition, or a gene length. bmn genes merge RUN: add a run's compositions searched to their end, and a "
        "census run's cycles built to their end, to those files (commit them: compute adds up across machines).",
        epilog="examples: bmn genes --census; bmn genes --compositions --format csv; bmn genes merge runs/census")
    p.add_argument("args", nargs="*", metavar="RUN | merge RUN", help="runs, or `merge` and one run")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--library", action="store_true", help="one row a gene of the shipped library")
    what.add_argument("--compositions", action="store_true", help="one row a composition: worth searching (and "
                      "why), searched, its genes, the search's choices and CPU-seconds")
    what.add_argument("--census", action="store_true", help="one row a gene length: its compositions (all, worth "
                      "searching, searched), genes, cycles whose longest gene has that length, balanced cycles and "
                      "deals, CPU; then the sentence the census supports")
    p.add_argument("--deck", default="standard", help="the deck of the census (default standard)")
    p.add_argument("--into", metavar="DIR", help="(merge) the folder whose library and census cycles files to add "
                   "to (default: those shipped with bmn, kernels/data/genes)")
    p.add_argument("--wide", action="store_true", help="(runs) every column")
    p.add_argument("--format", default="table", choices=FORMATS)
    p.set_defaults(handler=cmd_genes)


def cmd_genes(args) -> int:
    shipped = args.library or args.compositions or args.census
    if args.args[:1] == ["merge"]:
        if len(args.args) != 2 or shipped:
            raise BmnError("bmn genes merge takes one run: bmn genes merge RUN")
        for sentence in harvest.merge(args.args[1], args.into):
            print(sentence)
        return 0
    if shipped:
        if args.args:
            raise BmnError("--library, --compositions and --census show the library shipped with bmn: give no run")
        census = census_of(args.deck)
        if args.library:
            table = library_table(census, args.deck)
        elif args.compositions:
            table = compositions_table(census)
        else:
            rows = gl.census_rows(census, gl.shipped_cycles(*GADGET), parse_deck(args.deck).spec())
            print(format_table(census_table(rows), args.format))
            if args.format == "table":
                print(gl.census_statement(rows, GADGET[0], args.deck) + ".")
            return 0
        print(format_table(table, args.format))
        return 0
    if not args.args:
        raise BmnError("give construct runs, or --library, --compositions or --census (the shipped library), or "
                       "merge RUN")
    return _print_with_notes(lambda notes: own_report(TABLE, args.args, notes, args.wide), args.format)


def census_of(deck: str) -> gl.Census:
    """The census of the shipped gadget on a deck (one sentence where the deck cannot hold it)."""
    gadget = Gadget(parse_deck(deck).spec(), ConstructTable(small=GADGET[0], tail=GADGET[1]), "bmn genes")
    gadget.check("bmn genes")
    return gadget.census()


def library_table(census: gl.Census, deck: str) -> pa.Table:
    counts = gl.shipped_cycles(*GADGET)
    spec = parse_deck(deck).spec()
    rows = []
    for comp, entry in sorted(census.library.entries.items(), key=lambda item: gl.order(item[0])):
        record = counts.get(spec, comp)
        for gene in entry.genes:
            cycles = None if record is None else record.genes.get(gene.gene, (0, 0, 0))
            rows.append(dict(gene=gene.gene, composition=entry.composition, length=entry.length, orbit=gene.orbit,
                             small_max=gene.small_max, cycles=None if cycles is None else cycles[0],
                             balanced_cycles=None if cycles is None else cycles[1],
                             balanced=None if cycles is None else cycles[2]))
    return pa.Table.from_pylist(rows, schema=pa.schema([
        ("gene", pa.string()), ("composition", pa.string()), ("length", pa.int64()), ("orbit", pa.int64()),
        ("small_max", pa.int64()), ("cycles", pa.int64()), ("balanced_cycles", pa.int64()),
        ("balanced", pa.int64())]))


def compositions_table(census: gl.Census) -> pa.Table:
    complete = census.complete_to()
    rows = []
    for length in census.lengths():
        for comp in census.compositions(length):
            verdict = None if length <= complete else census.verdict(comp)
            entry = census.library.get(comp)
            rows.append(dict(composition=gl.comp_text(comp), length=length,
                             worth=verdict is None or verdict.worth, complete=entry is not None,
                             genes=None if entry is None else len(entry.genes),
                             choices=None if entry is None else entry.choices,
                             cpu_s=None if entry is None else entry.cpu_s,
                             reason=f"the library is complete to {complete} cards" if verdict is None
                             else verdict.reason))
    return pa.Table.from_pylist(rows, schema=pa.schema([
        ("composition", pa.string()), ("length", pa.int64()), ("worth", pa.bool_()), ("complete", pa.bool_()),
        ("genes", pa.int64()), ("choices", pa.int64()), ("cpu_s", pa.float64()), ("reason", pa.string())]))


def census_table(rows: list[gl.LengthRow]) -> pa.Table:
    return pa.Table.from_pylist([dict(length=r.length, compositions=r.compositions, worth=r.worth,
                                      complete=r.searched, genes=r.genes, cycles=r.cycles,
                                      balanced_cycles=r.balanced_cycles, balanced=r.balanced, cpu_s=r.cpu_s)
                                 for r in rows], schema=pa.schema([
        ("length", pa.int64()), ("compositions", pa.int64()), ("worth", pa.int64()), ("complete", pa.int64()),
        ("genes", pa.int64()), ("cycles", pa.int64()), ("balanced_cycles", pa.int64()), ("balanced", pa.int64()),
        ("cpu_s", pa.float64())]))
