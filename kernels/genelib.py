"""The genes library: every composition of a gadget searched to its end, kept as data in the repository, and the
census of the standard deck's gadget that it supports.

The library (`kernels/data/genes/SMALL_TAIL.jsonl`, one file a gadget: `J-_-.jsonl` for the small hand `J-` and the
tail `-`) holds, for each composition (cards of each value) whose exact gene search (kernels/genes.py) ran to its
end, every gene of it: its least phase, its orbit's phases in the order the rounds turn it, and the most cards the
small hand holds in any phase's turn; and the search's choices, CPU-seconds and version. A composition absent from
the library is unknown, never empty: an entry with no genes is a search that found none. Every `construct` run
reads it (a composition it holds is built with, never searched again), `bmn genes merge RUN` adds what a run
searched to its end, and a test searches a sample of its compositions again and compares.

The census (`census`). On a deck, a gadget with a small hand S and a tail T leaves the cards `target` (the deck
less S and T) to the genes of its cycles, and with `per_gene` (J) every gene holds exactly one such card, so a
cycle has as many genes as `target` holds of them (three on the standard deck). The library is complete to
length L when it holds every composition of at most L cards (with one per_gene card) that target allows. A
composition C of more cards than that is *worth searching* when the rest target - C splits into compositions
that each hold a gene (one split is enough; they are named): a gene of C builds cycles with their genes. When no
split exists, no cycle of the gadget holds a gene of C, whatever its genes are, so C is skipped with that reason:
a proof, not a budget. (On the standard deck a composition of 27 cards or more leaves at most 22 to two genes of
at least 3 each, so at most 19 cards each: the split is decided by the complete census of 3-26 cards.)
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from itertools import product
from pathlib import Path

import numpy as np

from . import genes as kg
from .errors import BmnError
from .notation import format_hand, parse_hand

Comp = tuple[int, ...]  # cards of each value 0..9
FORMAT = 1  # the library file's format (its first line says which)
DATA = Path(__file__).parent / "data" / "genes"


def library_path(small: str, tail: str) -> Path:
    """The shipped library file of the gadget (small hand, tail)."""
    return DATA / f"{small}_{tail}.jsonl"


def comp_text(comp: Comp) -> str:
    """A composition as VALUE:COUNT,... (values with no card left out)."""
    return ",".join(f"{v}:{n}" for v, n in enumerate(comp) if n)


def parse_comp(text: str) -> Comp:
    """A composition written VALUE:COUNT,... as counts of each value 0..9 (one sentence where it is not one)."""
    counts = [0] * 10
    try:
        for part in text.split(","):
            value, count = part.split(":")
            counts[int(value)] += int(count)
    except (ValueError, IndexError):
        raise BmnError(f"{text!r} is not a composition (VALUE:COUNT,..., such as 0:23,1:1,2:4,3:3,4:1)") from None
    if min(counts) < 0:
        raise BmnError(f"{text!r} is not a composition: a count is negative")
    return tuple(counts)


def comp_of(cards) -> Comp:
    counts = [0] * 10
    for v in cards:
        counts[int(v)] += 1
    return tuple(counts)


def order(comp: Comp) -> tuple:
    """The order of compositions: fewer cards first, then by counts."""
    return (sum(comp), tuple(comp))


@dataclass(frozen=True)
class Gene:
    """A gene as the library keeps it."""

    gene: str  # its least phase, as a hand
    orbit: int  # its phases
    phases: str  # every phase in the order the rounds turn it, the least first, space-separated
    small_max: int  # the most cards the small hand holds at a trick boundary of any phase's turn

    @classmethod
    def of(cls, least: tuple[int, ...], small: tuple[int, ...], tail: tuple[int, ...]) -> Gene:
        phases = kg.orbit_phases(least, small, tail)
        return cls(format_hand(least, True), len(phases), " ".join(format_hand(p, True) for p in phases),
                   max(kg.turn_sizes(p, small) for p in phases))


@dataclass(frozen=True)
class Entry:
    """A composition searched to its end: its genes, and what the search cost."""

    composition: str
    length: int
    genes: tuple[Gene, ...]
    choices: int  # the search's choices (kernels/genes.py counters[CHOICES]), summed over its shards
    cpu_s: float  # its CPU-seconds, summed over its shards
    search: int  # the gene search's version that made it (kernels/genes.py VERSION)
    source: str = ""  # where it was searched: a run, or a script

    @property
    def comp(self) -> Comp:
        return parse_comp(self.composition)

    def to_json(self) -> dict:
        return {**asdict(self), "genes": [asdict(g) for g in self.genes]}

    @classmethod
    def from_json(cls, values: dict) -> Entry:
        return cls(**{**values, "genes": tuple(Gene(**g) for g in values["genes"])})


def entry_of(comp: Comp, genes: Iterable[tuple[int, ...]], small, tail, *, choices: int, cpu_s: float,
             search: int = kg.VERSION, source: str = "") -> Entry:
    """A library entry from a composition's genes (least phases, as cards or written as hands)."""
    found = sorted((Gene.of(parse_hand(g) if isinstance(g, str) else tuple(g), tuple(small), tuple(tail))
                    for g in genes), key=lambda g: g.gene)
    return Entry(comp_text(comp), sum(comp), tuple(found), int(choices), round(float(cpu_s), 2), int(search),
                 source)


@dataclass(eq=False)
class Library:
    """A gadget's genes library: its compositions searched to their end, by composition (hashed by identity, so
    what is computed from the shipped one can be cached)."""

    small: str
    tail: str
    max_orbit: int = 64
    entries: dict[Comp, Entry] = field(default_factory=dict)

    @classmethod
    def load(cls, path: str | os.PathLike, small: str | None = None, tail: str | None = None) -> Library:
        """A library file (one sentence where it is damaged); an absent file is an empty library of the gadget
        given."""
        path = Path(path)
        if not path.exists():
            if small is None or tail is None:
                raise BmnError(f"{path} is not a genes library (no such file)")
            return cls(small, tail)
        with open(path) as handle:
            lines = [line for line in handle if line.strip()]
        try:
            header = json.loads(lines[0]) if lines else {}
            if header.get("format") != FORMAT:
                raise ValueError(f"its first line names format {header.get('format')!r}, not {FORMAT}")
            lib = cls(header["small"], header["tail"], header.get("max_orbit", 64))
            for number, line in enumerate(lines[1:], start=2):
                try:
                    entry = Entry.from_json(json.loads(line))
                except (ValueError, TypeError, KeyError) as error:
                    raise ValueError(f"line {number} is not an entry ({error})") from None
                lib.entries[entry.comp] = entry
        except (ValueError, KeyError) as error:
            raise BmnError(f"{path} is not a genes library: {error}") from None
        if (small, tail) != (None, None) and (lib.small, lib.tail) != (small, tail):
            raise BmnError(f"{path} is the genes library of small hand {lib.small} and tail {lib.tail!r}, not of "
                           f"{small} and {tail!r}")
        return lib

    def save(self, path: str | os.PathLike) -> None:
        """The library written in one step (a temporary file renamed), its entries by length and composition."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        header = {"format": FORMAT, "small": self.small, "tail": self.tail, "max_orbit": self.max_orbit,
                  "what": "bmn's genes library: one composition a line, every gene of it (kernels/genelib.py)"}
        tmp = path.with_suffix(path.suffix + ".tmp")
        with open(tmp, "w") as handle:
            handle.write(json.dumps(header) + "\n")
            for comp in sorted(self.entries, key=order):
                handle.write(json.dumps(self.entries[comp].to_json()) + "\n")
        os.replace(tmp, path)

    def get(self, comp: Comp) -> Entry | None:
        return self.entries.get(_comp10(comp))

    def genes(self, comp: Comp) -> tuple[tuple[int, ...], ...] | None:
        """A composition's genes' least phases (as cards), None where the library does not hold it."""
        entry = self.get(comp)
        return None if entry is None else tuple(parse_hand(g.gene) for g in entry.genes)

    def orbits(self, comp: Comp) -> tuple[tuple[tuple[int, ...], ...], ...] | None:
        """A composition's genes as orbits (phases as cards, the least first), None where it is not held."""
        entry = self.get(comp)
        if entry is None:
            return None
        return tuple(tuple(parse_hand(p) for p in g.phases.split()) for g in entry.genes)

    def merge(self, entries: Iterable[Entry]) -> list[str]:
        """Add entries the library lacks: a sentence for each added. An entry that contradicts one it holds (other
        genes for the same composition) is one sentence, and nothing is added."""
        added, new = [], {}
        for entry in entries:
            comp = entry.comp
            held = self.entries.get(comp, new.get(comp))
            if held is not None:
                if {g.gene for g in held.genes} != {g.gene for g in entry.genes}:
                    raise BmnError(f"the genes library holds {len(held.genes)} gene(s) of {entry.composition} and "
                                   f"{entry.source or 'the entry'} {len(entry.genes)}: "
                                   f"{sorted(g.gene for g in held.genes)} against "
                                   f"{sorted(g.gene for g in entry.genes)}; one of the searches is wrong")
                continue
            new[comp] = entry
            added.append(f"{entry.composition} ({entry.length} cards): {len(entry.genes)} gene"
                         f"{'' if len(entry.genes) == 1 else 's'}")
        self.entries.update(new)
        return added


def _comp10(comp) -> Comp:
    comp = tuple(int(c) for c in comp)
    return comp + (0,) * (10 - len(comp))


@lru_cache(maxsize=4)
def shipped(small: str = "J-", tail: str = "-") -> Library:
    """The library shipped with bmn for the gadget (cached per process: it is read-only)."""
    return Library.load(library_path(small, tail), small, tail)


# ---------------------------------------------------------------------------------------------------------------
# The census of a deck's gadget

def compositions_of(target: Comp, length: int, per_gene: int | None) -> list[Comp]:
    """Every composition of `length` cards within `target`, with exactly one per_gene card (when given), in
    order."""
    target = _comp10(target)
    ranges = [range(0, 1 + min(t, length)) if v != per_gene else (1,) for v, t in enumerate(target)]
    if per_gene is not None and target[per_gene] < 1:
        return []
    return sorted((c for c in product(*ranges) if sum(c) == length), key=order)


def splits(rest: Comp, parts: int, per_gene: int | None, holds) -> Iterator[tuple[Comp, ...]]:
    """The ways `rest` splits into `parts` compositions, in non-decreasing order, each holding one per_gene card
    (when given) and each one that `holds` says holds a gene."""
    rest = _comp10(rest)
    if parts == 1:
        if any(rest) and (per_gene is None or rest[per_gene] == 1) and holds(rest):
            yield (rest,)
        return
    total = sum(rest)
    for length in range(1, total // parts + 1):
        for first in compositions_of(rest, length, per_gene):
            left = tuple(a - b for a, b in zip(rest, first))
            if not holds(first):
                continue
            for more in splits(left, parts - 1, per_gene, holds):
                if order(more[0]) >= order(first):
                    yield (first, *more)


@dataclass(frozen=True)
class Verdict:
    """What the census says of one long composition."""

    comp: Comp
    worth: bool
    split: tuple[Comp, ...] | None  # a split of its rest into compositions holding genes (worth), or None
    reason: str  # why it is worth searching, or why it is skipped


class Census:
    """A deck's gadget (small hand, tail, per_gene card) against its library: which lengths are complete, and,
    beyond them, which compositions are worth searching (module docstring)."""

    def __init__(self, target: Comp, library: Library, per_gene: int | None = 1):
        self.target = _comp10(target)
        self.library = library
        self.per_gene = per_gene
        self.genes_per_cycle = self.target[per_gene] if per_gene is not None else None
        self.max_length = sum(self.target)
        self._complete: int | None = None

    def lengths(self) -> range:
        return range(1, self.max_length + 1)

    def compositions(self, length: int) -> list[Comp]:
        return compositions_of(self.target, length, self.per_gene)

    def complete_to(self) -> int:
        """The most cards L such that the library holds every composition of at most L cards."""
        if self._complete is None:
            self._complete = 0
            for length in self.lengths():
                if any(self.library.get(c) is None for c in self.compositions(length)):
                    break
                self._complete = length
        return self._complete

    def needed(self, length: int) -> list[Comp]:
        """The compositions of `length` cards the census needs: every one up to the complete lengths, then the
        worth-searching ones."""
        comps = self.compositions(length)
        return comps if length <= self.complete_to() else [c for c in comps if self.verdict(c).worth]

    def holds_genes(self, comp: Comp) -> bool:
        entry = self.library.get(comp)
        return entry is not None and bool(entry.genes)

    def verdict(self, comp: Comp) -> Verdict:
        """Whether a composition longer than the complete lengths is worth searching (a split of its rest into
        compositions that hold genes, all within the complete lengths), or skipped, and why."""
        comp = _comp10(comp)
        rest = tuple(a - b for a, b in zip(self.target, comp))
        parts = (self.genes_per_cycle or 2) - 1
        complete = self.complete_to()
        text = comp_text(comp)
        if parts < 1 or not any(rest):
            return Verdict(comp, True, (), f"{text} is a cycle's only gene")
        if sum(rest) - (parts - 1) * self._shortest() > complete:
            raise BmnError(f"the census cannot decide {text}: its rest may hold a composition of more than the "
                           f"{complete} cards the library is complete to")
        found = next(splits(rest, parts, self.per_gene, self.holds_genes), None)
        if found is not None:
            return Verdict(comp, True, found, f"its rest {comp_text(rest)} splits into "
                           + " and ".join(comp_text(c) for c in found) + ", which hold genes")
        return Verdict(comp, False, None, f"its rest {comp_text(rest)} ({sum(rest)} cards) splits into no "
                       f"{parts} compositions that each hold a gene (the library is complete to {complete} cards)")

    def _shortest(self) -> int:
        """The fewest cards of a composition holding a gene."""
        for length in self.lengths():
            if any(self.holds_genes(c) for c in self.compositions(length)):
                return length
        return self.max_length

    def long_verdicts(self) -> list[Verdict]:
        """The verdict of every composition longer than the complete lengths, in order."""
        return [self.verdict(c) for length in range(self.complete_to() + 1, self.max_length + 1)
                for c in self.compositions(length)]


def one_per_gene_evidence(small, tail, pool: Comp, max_len: int, per_gene: int = 1) -> dict:
    """The genes of at most max_len cards drawn from `pool` with no per_gene rule (every composition at once):
    how many hold each number of per_gene cards. The census rests on one per gene; this is its evidence."""
    found = kg.genes_upto(tuple(small), tuple(tail), tuple(pool), max_len)
    counts: dict[int, int] = {}
    for gene in found:
        n = int(np.sum(np.asarray(gene) == per_gene))
        counts[n] = counts.get(n, 0) + 1
    return counts


# ---------------------------------------------------------------------------------------------------------------
# The census's cycles, deck by deck (kept beside the library: SMALL_TAIL.cycles.jsonl)

def cycles_path(small: str, tail: str) -> Path:
    """The shipped file of the gadget's census cycles."""
    return DATA / f"{small}_{tail}.cycles.jsonl"


@dataclass(frozen=True)
class CycleCount:
    """A composition's cycles on a deck, each counted once, by its longest gene (the last of its multiset of
    genes, in `order`, then the greater gene): for each of its genes that is, the cycles, those a balanced deal
    enters and the balanced deals entering them. Present only when every cycle it ends was built."""

    deck: str
    composition: str
    genes: dict[str, tuple[int, int, int]]  # gene -> (cycles, balanced cycles, balanced deals)
    source: str = ""

    @property
    def length(self) -> int:
        return sum(parse_comp(self.composition))

    def totals(self) -> tuple[int, int, int]:
        return tuple(sum(v[i] for v in self.genes.values()) for i in range(3))

    def to_json(self) -> dict:
        return {**asdict(self), "genes": {g: list(v) for g, v in sorted(self.genes.items())}}

    @classmethod
    def from_json(cls, values: dict) -> CycleCount:
        return cls(values["deck"], values["composition"], {g: tuple(v) for g, v in values["genes"].items()},
                   values.get("source", ""))


@dataclass(eq=False)
class CycleCounts:
    """The census's cycle counts of a gadget, by deck and composition."""

    small: str
    tail: str
    records: dict[tuple[str, Comp], CycleCount] = field(default_factory=dict)

    @classmethod
    def load(cls, path: str | os.PathLike, small: str, tail: str) -> CycleCounts:
        path = Path(path)
        out = cls(small, tail)
        if not path.exists():
            return out
        try:
            with open(path) as handle:
                lines = [line for line in handle if line.strip()]
            header = json.loads(lines[0]) if lines else {}
            if header.get("format") != FORMAT or (header.get("small"), header.get("tail")) != (small, tail):
                raise ValueError("its first line is not this gadget's header")
            for line in lines[1:]:
                record = CycleCount.from_json(json.loads(line))
                out.records[(record.deck, parse_comp(record.composition))] = record
        except (ValueError, KeyError, TypeError, IndexError) as error:
            raise BmnError(f"{path} is not a file of census cycles: {error}") from None
        return out

    def save(self, path: str | os.PathLike) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        header = {"format": FORMAT, "small": self.small, "tail": self.tail,
                  "what": "bmn's census cycles: a composition of a deck a line, its genes' cycles (kernels/genelib.py)"}
        tmp = path.with_suffix(path.suffix + ".tmp")
        with open(tmp, "w") as handle:
            handle.write(json.dumps(header) + "\n")
            for key in sorted(self.records, key=lambda k: (k[0], order(k[1]))):
                handle.write(json.dumps(self.records[key].to_json()) + "\n")
        os.replace(tmp, path)

    def get(self, deck: str, comp: Comp) -> CycleCount | None:
        return self.records.get((deck, _comp10(comp)))

    def merge(self, records: Iterable[CycleCount]) -> list[CycleCount]:
        """Add the records it lacks (those are returned); a record that differs from one it holds is one
        sentence."""
        added = []
        for record in records:
            key = (record.deck, parse_comp(record.composition))
            held = self.records.get(key)
            if held is not None:
                if held.genes != record.genes:
                    raise BmnError(f"the census cycles of {record.composition} ({record.deck}) differ from those "
                                   f"held: {held.totals()} against {record.totals()} (cycles, balanced cycles, "
                                   f"balanced deals)")
                continue
            self.records[key] = record
            added.append(record)
        return added


@lru_cache(maxsize=4)
def shipped_cycles(small: str = "J-", tail: str = "-") -> CycleCounts:
    return CycleCounts.load(cycles_path(small, tail), small, tail)


@dataclass(frozen=True)
class LengthRow:
    """One row of the census by length (`census_rows`)."""

    length: int
    compositions: int  # of this many cards, one per_gene card each
    worth: int  # those the census needs: all of them up to the complete lengths, then the worth-searching ones
    searched: int  # those of `worth` the library holds
    genes: int
    cycles: int | None  # cycles whose longest gene has this length (None: not every `worth` one's are built)
    balanced_cycles: int | None
    balanced: int | None
    cpu_s: float  # the searches' CPU-seconds, summed

    @property
    def complete(self) -> bool:
        return self.searched == self.worth and self.cycles is not None


def census_rows(census: Census, counts: CycleCounts, deck: str) -> list[LengthRow]:
    """The census of a deck's gadget by gene length: compositions, worth searching, searched, genes, cycles (by
    their longest gene), balanced ones, CPU."""
    rows = []
    for length in census.lengths():
        comps = census.compositions(length)
        if not comps:
            continue
        needed = census.needed(length)
        entries = [census.library.get(c) for c in needed]
        held = [e for e in entries if e is not None]
        # (a composition with no genes builds no cycle: its count needs no record)
        records = [counts.get(deck, c) or (CycleCount(deck, comp_text(c), {}) if e is not None and not e.genes
                                           else None) for c, e in zip(needed, entries)]
        built = all(r is not None for r in records)
        totals = [r.totals() for r in records if r is not None]
        rows.append(LengthRow(length, len(comps), len(needed), len(held), sum(len(e.genes) for e in held),
                              sum(t[0] for t in totals) if built else None,
                              sum(t[1] for t in totals) if built else None,
                              sum(t[2] for t in totals) if built else None,
                              round(sum(e.cpu_s for e in held), 1)))
    return rows


def census_statement(rows: list[LengthRow], gadget: str, deck_name: str) -> str:
    """The sentence the census supports: every cycle of the gadget on the deck whose genes have at most L cards,
    L the longest length complete with every shorter one (its genes searched, its cycles built)."""
    done = 0
    for row in rows:
        if not row.complete:
            break
        done = row.length
    upto = [r for r in rows if r.length <= done]
    cycles = sum(r.cycles for r in upto)
    balanced_cycles = sum(r.balanced_cycles for r in upto)
    balanced = sum(r.balanced for r in upto)
    last = rows[-1].length if rows else 0
    whole = " (the gadget's whole census)" if done >= last else ""
    return (f"Every `{gadget}` cycle of the {deck_name} deck whose genes have at most {done} cards{whole}: "
            f"{cycles:,} cycles, {balanced_cycles:,} entered by balanced deals, {balanced:,} balanced deals")
