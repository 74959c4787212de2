"""`construct`: cycles built from independent pieces, not waited for.

A big hand B leads against a small hand S (`[construct] small`, `J-` by default). Every *gene* of
this gadget (kernels/construct.py: a piece of B's top cards that the gadget turns over into a block
which, with the tail `[construct] tail` moved in front, comes back to the piece after some rounds)
is independent of the rest of B, so any multiset of genes whose cards, with S and the tail, make the
deck gives states B = G1 ... Gk T against S that lie on cycles: one per order and phase of the genes,
up to the rounds that move them along together.

The search space is the multisets of gene compositions (cards of each value) summing to the deck
less S and T, in order (fewer cards first). The genes of at most `max_piece` cards are found once per
worker, every composition in one search (kernels/construct.py `library`); a larger composition's genes
by an exact search of it (`genes_of`, within `max_nodes` choices: the genes found by then are genes, and
a composition cut short may hold more). A shard is one *first* composition, the least of its multisets,
and one phase: the multisets whose last (largest) gene comes from the library, or those whose last gene
needs the exact search (the plan puts every shard of the quick phase first). It walks every multiset it
owns (each part with genes), builds every hand of them, plays each, and reports each distinct cycle once:
  - replayed on the reference player (kernels/engines/reference.py) from the hand built, which must lie
    on the cycle (preperiod 0) with the fast engine's cycle id, or the shard fails;
  - closed backwards (kernels/backward.py `closure`, like `states`): `closure`, `closest`,
    `imbalance`, `complete`, and its balanced deals as the shard's candidates.
With `per_gene` (J by default) every gene holds exactly one card of that value, so a cycle has as many
genes as B holds of them; every gene of the `J-` gadget met so far does (benchmarks/README.md).

Shards are disjoint (each multiset has one least composition and one largest) and pure functions of the deck and the
table: the same config gives the same tables on any number of workers. The shard's `deals` column counts
the hands built and played, `cycles` those that cycled (all of them: a hand of genes cannot end), `cards`
their period cards.

Long genes (`long_gene`: compositions, or lengths meaning every composition of that many cards with one
per_gene card). The plan is then the long compositions' own: each composition's exact gene search cut into
shards by prefix (kernels/genes.py `frontier`: the search tree's nodes some cards deep, in runs of about
`shard_choices` choices, from Knuth's estimate of the tree), each shard searching its prefixes' subtrees and
building every cycle of each gene it finds: the gene with every multiset of genes that fills the rest of the
deck (the library's, and a last one searched exactly, as above), every order and phase. A composition the
genes library already holds searched to its end (`known`, filled from the library when a run starts:
cluster/runs/genes.py) is not searched again: one shard per gene builds its cycles. A multiset holding two long
compositions' genes is built by the larger's shards. Every gene found is a row of the run's genes table.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from typing import ClassVar

import numpy as np

from .. import construct as kc
from .. import genelib as gl
from .. import genes as kg
from ..backward import DEFAULT_MAX_STATES, closure
from ..decks import parse_deck
from ..engines.reference import play_reference
from ..errors import BmnError
from ..notation import format_deal, format_hand, parse_hand
from ..play import play
from ..tally import Candidate, CycleRow, GeneRow, SearchRow, ShardResult
from .base import EverySplit, Example, Shard, ShardParams, ShardPlan, Table, WorkMeter, key, keys_of, unsaid


@dataclass(frozen=True, kw_only=True)
class ConstructTable(Table):
    small: str = key("J-", "the gadget's small hand, top card first")
    tail: str = key("-", "the cards after the genes in the big hand: each gene starts with them and its block ends "
                         "with them (empty: none)")
    per_gene: str = key("J", "a card each gene holds exactly one of (empty: genes of any cards)")
    max_piece: int = key(17, "cards of every gene of a multiset but the last at most (found once per worker, every "
                             "composition in one search; the last gene's composition is searched exactly)")
    lookahead: int = key(3, "a piece's successors (with itself) that must stay pieces while its cards are chosen")
    max_orbit: int = key(64, "rounds within which a gene must come back to itself")
    max_nodes: int = key(2_000_000, "choices the exact gene search of one last composition makes at most (0: no "
                                    "limit)", minimum=0)
    max_states: int = key(DEFAULT_MAX_STATES, "ancestor states a cycle's closure search visits at most")
    long_gene: tuple[str, ...] = key((), "long genes to search and build with: compositions (VALUE:COUNT,...) or "
                                         "lengths (every composition of that many cards with one per_gene card); "
                                         "the plan is then theirs", unsaid=True)
    shard_choices: int = key(50_000_000, "choices a shard of a long composition's gene search makes, about (from "
                                          "Knuth's estimate)", unsaid=True)
    max_choices: int = key(0, "long compositions whose search Knuth's estimate puts above this many choices are "
                                "left out of the plan (0: none)", minimum=0, unsaid=True)
    known: tuple[str, ...] = key((), "long compositions searched to their end, with their genes, not searched again: "
                                     "\"COMPOSITION = GENE GENE ...\" (filled from the genes library when a run "
                                     "starts)", unsaid=True)
    library: str = key("", "the genes library (a folder or s3:// URI) a run reads its known compositions from and "
                           "adds those it searches to the end to (empty: genes beside the run's folder)",
                       unsaid=True, result=False)
    layout: tuple[str, ...] = key((), "how each long composition's search is cut into shards, one JSON object a "
                                      "composition (its estimate, frontier depth and each shard's prefixes): written "
                                      "into the run when it starts, so a resume plans as the run began", unsaid=True)
    census_at: tuple[str, ...] = key((), "what a census plans from, written into the run when it starts (the "
                                         "library's complete lengths, whether the multisets are still to build): "
                                         "a resume plans as the run began", unsaid=True)
    census: bool = key(False, "the gadget's whole census (kernels/genelib.py): every multiset of genes of the "
                              "lengths the shipped genes library holds complete, built from it, and every longer "
                              "composition worth searching (its rest splits into compositions that hold genes), "
                              "searched or built; the others skipped with their reason", unsaid=True)


class Kind(str, Enum):
    """What a construct shard does, as its `kind` and the genes table's `source` write it."""

    MULTISETS = "multisets"  # build every multiset of gene compositions beginning with one (genes from libraries)
    SEARCH = "search"  # search part of a long composition's genes, and build the cycles of each gene found
    LIBRARY = "library"  # build the cycles of a long composition's gene that a library holds


MULTISETS, SEARCH, LIBRARY = Kind.MULTISETS.value, Kind.SEARCH.value, Kind.LIBRARY.value
# [construct] keys that only plan: no shard computes with them
PLAN_ONLY = ("known", "library", "layout", "census_at")
GENE_SEARCH = kg.VERSION  # the gene search this bmn runs (ConstructShard.search)


@dataclass(frozen=True, kw_only=True)
class ConstructShard(ShardParams, keys_of(ConstructTable, but=PLAN_ONLY)):
    """What every construct shard holds: its deck, the composition `first` it is about, its kind (Kind) and the
    gene search that finds its genes; the [construct] keys are its own (`table`: them as a table). Each kind is a
    type of its own (MultisetsShard, SearchShard, LibraryShard), told apart in a shard's JSON by `kind`."""

    flattened: ClassVar[tuple[str, ...]] = ("table",)  # (earlier runs nested the [construct] keys under "table")
    deck: str
    first: tuple[int, ...]
    exact: bool
    # Which gene search found its genes: 1, the lookahead search of earlier bmn; 2 and 3, kernels/genes.py (the same
    # genes, but max_nodes counts its choices, so a budget cuts other compositions short). A plan makes GENE_SEARCH's
    # shards: an earlier run's shard files are not the run's, and a resume computes them again.
    search: int = unsaid(1)
    kind: str = unsaid(MULTISETS)

    @property
    def table(self) -> ConstructTable:
        return ConstructTable.taken_from(self)

    @classmethod
    def from_json(cls, values: dict) -> ConstructShard:
        """The shard of its kind (a kind this bmn does not know is a ValueError of one sentence)."""
        kind = values.get("kind", MULTISETS) if isinstance(values, dict) else MULTISETS
        if kind not in KINDS:
            raise ValueError(f"kind {kind!r} is not one of {', '.join(KINDS)}")
        return ShardParams.from_json.__func__(KINDS[kind], values)

    @staticmethod
    def of(**fields) -> ConstructShard:
        """A shard of the kind its fields name."""
        return KINDS[fields.get("kind", MULTISETS)](**fields)


@dataclass(frozen=True, kw_only=True)
class MultisetsShard(ConstructShard):
    """Every multiset of gene compositions whose least is `first` (cards of each value 0..9) and whose last gene is
    found by the exact search (`exact`) or in the library of genes of at most max_piece cards."""


@dataclass(frozen=True, kw_only=True)
class SearchShard(ConstructShard):
    """The long composition `first`'s genes below its frontier nodes `prefixes` (earlier plans: part `part` of
    `parts` equal runs of the frontier `depth` cards past the tail; depth 0: the whole search), and every cycle
    they build."""

    depth: int = unsaid(0)
    part: int = unsaid(0)
    parts: int = unsaid(0)
    prefixes: tuple[str, ...] = unsaid(())  # the frontier nodes below which it searches, as hands


@dataclass(frozen=True, kw_only=True)
class LibraryShard(ConstructShard):
    """The cycles of `genes`, the long composition `first`'s, from a genes library."""

    genes: tuple[str, ...] = unsaid(())


KINDS: dict[str, type[ConstructShard]] = {MULTISETS: MultisetsShard, SEARCH: SearchShard, LIBRARY: LibraryShard}


class Gadget:
    """The gadget and the cards its genes share, from a deck and a [construct] table."""

    def __init__(self, deck: str, table: ConstructTable, where: str = "construct"):
        self.deck = parse_deck(deck)
        self.small, self.tail, per = (_cards(table, name, where) for name in ("small", "tail", "per_gene"))
        self.per_gene = per[0] if per else None
        self.table = table
        self.target = kc.minus(self.deck.counts, kc.comp_of(self.small + self.tail))
        self.letters = self.deck.max_value <= 4

    def check(self, where: str) -> None:
        t = self.table
        if not self.small:
            raise BmnError(f"{where}: construct.small must hold at least one card")
        if len(t.per_gene) > 1:
            raise BmnError(f"{where}: construct.per_gene is one card, got {t.per_gene!r}")
        if any(k < 0 for k in self.target):
            raise BmnError(f"{where}: the deck {self.deck.spec()} does not hold the small hand {t.small} and the "
                           f"tail {t.tail!r}")
        if not any(self.target):
            raise BmnError(f"{where}: the deck {self.deck.spec()} leaves no cards for genes beside the small hand "
                           f"{t.small} and the tail {t.tail!r}")
        if len(self.small) + len(self.tail) + sum(self.target) > kg.MAX_CARDS:
            raise BmnError(f"{where}: the construct strategy builds cycles of decks of at most {kg.MAX_CARDS} cards")

    def firsts(self) -> list[tuple[int, ...]]:
        return kc.firsts(self.target, self.per_gene)

    def shipped(self) -> gl.Library | None:
        """The genes library shipped with bmn for this gadget (kernels/data/genes), where it has one and its genes
        come back within the table's max_orbit."""
        t = self.table
        if not gl.library_path(t.small, t.tail).exists():
            return None
        lib = gl.shipped(t.small, t.tail)
        return lib if lib.max_orbit == t.max_orbit else None

    def complete_to(self) -> int:
        """The most cards L such that the shipped library holds every composition of at most L cards that the deck
        leaves beside the gadget (with one per_gene card where there is one; 0: no library)."""
        lib = self.shipped()
        return 0 if lib is None else _complete_to(lib, self.target, self.per_gene)

    def library(self) -> dict:
        """Every composition of at most max_piece cards that holds genes, with its genes' orbits: from the shipped
        library where it is complete that far (per_gene compositions only), else found by one search of them
        all."""
        t = self.table
        max_len = min(t.max_piece, sum(self.target))
        if self.per_gene is not None and self.complete_to() >= max_len:
            return _shipped_parts(self.shipped(), self.target, self.per_gene, max_len)
        return kc.library(self.small, self.tail, self.target, max_len, t.lookahead, t.max_orbit)

    def long_compositions(self, where: str = "construct") -> list[tuple[int, ...]]:
        """The table's long compositions (each length as every composition of it), in `order`, once each."""
        found = set()
        for spec in self.table.long_gene:
            text = spec.strip()
            if text.isdigit():
                found.update(compositions_of(self.target, int(text), self.per_gene))
                continue
            comp = parse_composition(text, f"{where}: construct.long_gene")
            if any(a > b for a, b in zip(comp, self.target)):
                raise BmnError(f"{where}: construct.long_gene {text} holds cards the deck {self.deck.spec()} does not "
                               f"leave beside the small hand and the tail")
            if self.per_gene is not None and comp[self.per_gene] != 1:
                raise BmnError(f"{where}: construct.long_gene {text} must hold exactly one "
                               f"{format_hand((self.per_gene,), True)} (construct.per_gene)")
            found.add(comp)
        return sorted(found, key=kc.order)

    def known(self, where: str = "construct") -> dict[tuple[int, ...], tuple[tuple[int, ...], ...]]:
        """The compositions the table says were searched to their end, with their genes' least phases."""
        out = {}
        for line in self.table.known:
            comp_text, _, genes_text = line.partition("=")
            if not _:
                raise BmnError(f"{where}: construct.known entries are \"COMPOSITION = GENE GENE ...\", got {line!r}")
            comp = parse_composition(comp_text.strip(), f"{where}: construct.known")
            genes = []
            for text in genes_text.split():
                try:
                    gene = parse_hand(text)
                except BmnError as error:
                    raise BmnError(f"{where}: construct.known {comp_text.strip()}: {error}") from None
                if kc.comp_of(gene) != comp or kg.orbit_length(_a(gene), len(gene), _a(self.small), _a(self.tail),
                                                               self.table.max_orbit) <= 0:
                    raise BmnError(f"{where}: construct.known: {text} is not a gene of {comp_text.strip()} in its "
                                   f"least phase")
                genes.append(gene)
            out[comp] = tuple(genes)
        return out

    def layouts(self, where: str = "construct") -> dict[tuple[int, ...], Layout]:
        """The layouts the table holds (written into the run when it started), by composition."""
        out = {}
        for text in self.table.layout:
            lay = Layout.parse(text, where)
            out[parse_composition(lay.composition, f"{where}: construct.layout")] = lay
        return out

    def built(self) -> set[tuple[int, ...]]:
        """The compositions whose census cycles on this deck the census cycles shipped with bmn hold."""
        t = self.table
        counts = gl.shipped_cycles(t.small, t.tail)
        spec = self.deck.spec()
        return {comp for deck, comp in counts.records if deck == spec}

    def census(self) -> gl.Census:
        """The census of this gadget on this deck, against the shipped library (one sentence where there is none)."""
        lib = self.shipped()
        if lib is None or self.complete_to() == 0:
            raise BmnError(f"construct.census: bmn ships no genes library of small hand {self.table.small} and tail "
                           f"{self.table.tail!r} (with max_orbit {self.table.max_orbit}) for the census to start from")
        return gl.Census(self.target, lib, self.per_gene)

    def genes(self, comp) -> kc.GeneSet:
        """The genes of one composition: from the library of short ones when it is small enough, else the shipped
        library's where it holds it, else by the exact search (within max_nodes)."""
        t = self.table
        if sum(comp) <= t.max_piece:
            return kc.GeneSet(self.library().get(tuple(comp), ()), 0, False)
        lib = self.shipped()
        orbits = None if lib is None else lib.orbits(comp)
        if orbits is not None:
            return kc.GeneSet(orbits, 0, False)
        return kc.genes_of(self.small, self.tail, tuple(comp), t.lookahead, t.max_orbit, t.max_nodes)


def _a(cards) -> np.ndarray:
    return np.asarray(tuple(cards), np.uint8)


@lru_cache(maxsize=16)
def _complete_to(lib: gl.Library, target: tuple, per_gene: int | None) -> int:
    return gl.Census(target, lib, per_gene).complete_to()


@lru_cache(maxsize=16)
def _shipped_parts(lib: gl.Library, target: tuple, per_gene: int, max_len: int) -> dict:
    """The shipped library's compositions of at most max_len cards within target that hold genes, in order, with
    their orbits (as kc.library gives them)."""
    out = {}
    for length in range(1, max_len + 1):
        for comp in gl.compositions_of(target, length, per_gene):
            orbits = lib.orbits(comp)
            if orbits:
                out[comp] = tuple(sorted(orbits))
    return out


def parse_composition(text: str, where: str) -> tuple[int, ...]:
    """A composition written VALUE:COUNT,... as counts of each value 0..9 (one sentence where it is not one)."""
    if not text or not all(part.count(":") == 1 for part in text.split(",")):
        raise BmnError(f"{where}: {text!r} is not a composition (VALUE:COUNT,..., such as 0:23,1:1,2:4,3:3,4:1) "
                       f"or a length")
    try:
        return tuple(parse_deck(text).counts) + (0,) * (10 - len(parse_deck(text).counts))
    except BmnError as error:
        raise BmnError(f"{where}: {error}") from None


def composition_text(comp) -> str:
    return ",".join(f"{v}:{n}" for v, n in enumerate(comp) if n)


def compositions_of(target, length: int, per_gene: int | None) -> list[tuple[int, ...]]:
    """Every composition of `length` cards within `target`, with exactly one per_gene card (when given)."""
    ranges = [range(0, 1 + min(t, length)) if v != per_gene else (1,) for v, t in enumerate(target)]
    out = []

    def rec(v, left, acc):
        if v == len(ranges):
            if left == 0:
                out.append(tuple(acc))
            return
        for n in ranges[v]:
            if n > left:
                break
            acc.append(n)
            rec(v + 1, left - n, acc)
            acc.pop()
    if per_gene is not None and target[per_gene] < 1:
        return []
    rec(0, length, [])
    return out


def _cards(table: ConstructTable, name: str, where: str) -> tuple[int, ...]:
    """A [construct] key that is cards, read as a hand (one sentence naming the key when it is not)."""
    try:
        return parse_hand(getattr(table, name))
    except BmnError as error:
        raise BmnError(f"{where}: construct.{name}: {error}") from None


class Built:
    """The cycles a shard builds: each hand of genes played (every one lies on a cycle), each distinct cycle kept
    with the first hand met on it; then each replayed on the reference player and closed backwards
    (`close`): its row, with its balanced deals counted, and those deals as the shard's candidates."""

    def __init__(self, g: Gadget):
        self.g = g
        self.result = ShardResult.empty(2)
        self.found: dict[str, tuple[int, tuple[int, ...]]] = {}  # cycle id -> (index, hand) of the first hand met
        self.index = 0

    def play(self, hand: tuple[int, ...]) -> str:
        """Play a hand of genes against the small hand: its cycle's id."""
        r = play([hand, self.g.small])
        self.result.deals += 1
        self.result.cards += r.period_cards
        if r.outcome != "cycle" or r.preperiod_tricks != 0:
            raise RuntimeError(f"the hand of genes {format_deal([hand, self.g.small], self.g.letters)} does not lie on "
                               f"a cycle")
        self.result.cycles += 1
        self.found.setdefault(r.cycle_id, (self.index, hand))
        self.index += 1
        return r.cycle_id

    def close(self) -> dict[str, CycleRow]:
        """Each cycle met, replayed on the reference player and closed backwards, into the shard's rows."""
        rows = {}
        for cid, (index, hand) in sorted(self.found.items(), key=lambda item: item[1][0]):
            state = [hand, self.g.small]
            ref = play_reference(state)
            if ref.outcome != "cycle" or ref.cycle_id != cid or ref.preperiod_tricks != 0:
                raise RuntimeError(f"{format_deal(state, self.g.letters)} replays on the reference player as "
                                   f"{ref.outcome} {ref.cycle_id}, not on cycle {cid}")
            closed = closure(state, max_states=self.g.table.max_states)
            rows[cid] = CycleRow(cid, ref.period_tricks, ref.period_cards, self.g.deck.spec(), closed.state,
                                 complete=not closed.truncated, closure=closed.states, closest=closed.closest,
                                 imbalance=closed.imbalance, balanced=len(closed.deals))
            self.result.cycle_rows.append(rows[cid])
            self.result.candidates += [Candidate(d.hands, index, d.result) for d in closed.deals]
        return rows


def run_construct(deck: str, first, table: ConstructTable = ConstructTable(), stats: dict | None = None,
                  exact: bool | None = None) -> ShardResult:
    """One shard: every multiset of gene compositions beginning with `first`, every hand of them played, each
    distinct cycle replayed on the reference player and closed backwards (module docstring). With `exact`
    False only the multisets whose last gene has at most max_piece cards (all from the library), True only
    the others (their last gene's composition searched exactly); None: both."""
    g = Gadget(deck, table)
    g.check("construct")
    first = tuple(first)
    parts = Parts(g)

    def in_phase(comp) -> bool:  # a multiset's last composition: in this shard's phase
        return exact is None or (sum(comp) > table.max_piece) == exact

    built = Built(g)
    last: dict[str, tuple] = {}  # cycle id -> (composition, orbit) of its multiset's last gene
    if (exact is not False or in_phase(first)) and parts.has_genes(first):  # (no library multiset holds a larger one)
        for rest in kc.multisets(kc.minus(g.target, first), first, g.per_gene, parts.library_parts(),
                                 lambda c: in_phase(c) and parts.has_genes(c)):
            if not rest and not in_phase(first):
                continue  # (the first alone is its multiset's last)
            comps = [first] + rest
            for chosen in _gene_choices([parts.genes(c).orbits for c in comps], comps):
                for hand in kc.hands(chosen, g.tail):
                    last.setdefault(built.play(hand), (comps[-1], chosen[-1]))
    rows = built.close()
    if table.census:  # each cycle counted once, by its longest gene: the multiset's last
        by_gene: dict[tuple, set] = {}
        for cid, key in last.items():
            by_gene.setdefault(key, set()).add(cid)
        for (comp, orbit), met in sorted(by_gene.items(), key=lambda item: (kc.order(item[0][0]), item[0][1])):
            built.result.gene_rows.append(gene_row(g, comp, orbit, MULTISETS, met, rows))
    if stats is not None:
        stats.update(parts.stats())
    return built.result


def gene_row(g: Gadget, comp, orbit, source: str, met, rows: dict[str, CycleRow]) -> GeneRow:
    """A gene's row of the genes table: its orbit, and the cycles `met` it builds (those of the rows given)."""
    balanced = [rows[cid].balanced for cid in met if rows[cid].balanced]
    return GeneRow(gene=format_hand(orbit[0], g.letters), composition=composition_text(comp), length=sum(comp),
                   orbit=len(orbit), phases=" ".join(format_hand(p, g.letters) for p in orbit),
                   small_max=max(kg.turn_sizes(p, g.small) for p in orbit), source=source, cycles=len(met),
                   balanced_cycles=len(balanced), balanced=sum(balanced))


class Parts:
    """The genes a shard builds with, by composition: the library's (at most max_piece cards, found once per
    worker) and, for a larger composition, its exact search (within max_nodes), each composition's once."""

    def __init__(self, g: Gadget):
        self.g = g
        self.searched: dict[tuple, kc.GeneSet] = {}

    def genes(self, comp) -> kc.GeneSet:
        comp = tuple(comp)
        if comp not in self.searched:
            self.searched[comp] = self.g.genes(comp)
        return self.searched[comp]

    def has_genes(self, comp) -> bool:
        return bool(self.genes(comp).orbits)

    def library_parts(self) -> list[tuple[int, ...]]:
        """The library's compositions that may be a part of a multiset (one per_gene card each), in order."""
        per = self.g.per_gene
        return [c for c in self.g.library() if per is None or c[per] == 1]

    def stats(self) -> dict:
        return dict(compositions=len(self.searched), genes=sum(len(s.orbits) for s in self.searched.values()),
                    library=sum(len(o) for o in self.g.library().values()),
                    nodes=sum(s.nodes for s in self.searched.values()),
                    truncated=sorted(c for c, s in self.searched.items() if s.truncated))


def run_long(deck: str, params: ConstructShard) -> ShardResult:
    """A long composition's shard: its genes (searched below the shard's frontier nodes, or the library's), and
    every cycle each builds with the multisets of genes that fill the rest of the deck (module docstring); each
    gene a row of the genes table."""
    g = Gadget(deck, params.table)
    g.check("construct")
    comp, table = tuple(params.first), params.table
    if params.kind == SEARCH:
        prefixes = [parse_hand(p) for p in params.prefixes] if params.prefixes else \
            _prefixes(g, comp, params.depth, params.part, params.parts)
        genes, choices, started = [], 0, time.process_time()
        for prefix in prefixes:
            found, counters = kg.genes_of(g.small, g.tail, comp, prefix=prefix, k=table.lookahead,
                                          max_orbit=table.max_orbit)
            genes += found
            choices += int(counters[kg.CHOICES])
        search_row = SearchRow(composition_text(comp), len(genes), choices, round(time.process_time() - started, 3))
    else:
        genes = [parse_hand(text) for text in params.genes]
    larger = {c for c in g.long_compositions() if kc.order(c) > kc.order(comp)}
    parts = Parts(g)
    built = Built(g)
    made = []
    for gene in genes:
        orbit = kg.orbit_phases(gene, g.small, g.tail)
        met = set()
        for rest in kc.multisets(kc.minus(g.target, comp), (0,) * len(comp), g.per_gene,
                                 [c for c in parts.library_parts() if c not in larger],
                                 lambda c: c not in larger and parts.has_genes(c)):
            choices = [[o for o in parts.genes(c).orbits if c != comp or o[0] <= orbit[0]] for c in rest]
            for chosen in _gene_choices(choices, rest):
                for hand in kc.hands([orbit] + chosen, g.tail):
                    met.add(built.play(hand))
        made.append((gene, orbit, met))
    rows = built.close()
    for _, orbit, met in made:
        built.result.gene_rows.append(gene_row(g, comp, orbit, params.kind, met, rows))
    if params.kind == SEARCH:
        built.result.search_rows.append(search_row)
    return built.result


def shard_keys(table: ConstructTable) -> dict:
    """The [construct] keys a shard computes with (all but PLAN_ONLY)."""
    return {k: v for k, v in table.values().items() if k not in PLAN_ONLY}


def _gene_choices(gene_sets, comps):
    """One gene of each composition, a multiset: where a composition repeats, its genes in non-decreasing order."""
    def rec(i, lo, chosen):
        if i == len(comps):
            yield list(chosen)
            return
        start = lo if i > 0 and comps[i] == comps[i - 1] else 0
        for k in range(start, len(gene_sets[i])):
            chosen.append(gene_sets[i][k])
            yield from rec(i + 1, k, chosen)
            chosen.pop()
    yield from rec(0, 0, [])


def _prefixes(g: Gadget, comp, depth: int, part: int, parts: int) -> list[tuple[int, ...]]:
    """A search shard's prefixes: part `part` of `parts` equal runs of the frontier nodes `depth` cards past the
    tail, in the search's order (depth 0: the whole search, one empty prefix)."""
    if depth == 0:
        return [()]
    nodes = kg.frontier(g.small, g.tail, comp, depth, k=g.table.lookahead)
    return nodes[part * len(nodes) // parts:(part + 1) * len(nodes) // parts]


@lru_cache(maxsize=1 << 14)
def layout(small: tuple, tail: tuple, comp: tuple, lookahead: int, shard_choices: int) -> tuple[float, int, int]:
    """How a long composition's search is cut, by the estimate alone: (its estimated choices, depth, shards). Shards
    of about shard_choices choices by Knuth's estimate of the search (deterministic: a fixed seed), from the frontier
    at the least depth where the estimate puts NODES_A_SHARD times as many live nodes as shards (depth 0, one shard:
    the whole search)."""
    choices, live = kg.estimate(small, tail, comp, k=lookahead, probes=PLAN_PROBES)
    shards = max(1, math.ceil(choices / shard_choices))
    if shards == 1:
        return choices, 0, 1
    last = sum(comp) - len(tail) - 1
    depth = next((e for e in range(1, last + 1) if live[e] >= NODES_A_SHARD * shards), last)
    return choices, depth, shards


PLAN_PROBES = 1000  # Knuth's random walks per composition of a long-gene plan
NODE_PROBES = 40  # and per frontier node, to cut the frontier into shards of equal work
NODES_A_SHARD = 16  # frontier nodes a shard holds, about
SPLITS = 4  # times a plan replaces the nodes estimated heavier than a shard by their children, at most


@dataclass(frozen=True)
class Layout:
    """How one long composition's search is cut into shards: its estimated choices, the frontier's depth, and
    each shard's frontier nodes (prefixes, as hands: one empty prefix, the whole search), runs of the frontier in
    the search's order of about equal estimated work. Computed once, when a run starts (`cut`), and kept in its
    [construct] layout: a resume reads it back."""

    composition: str
    estimate: float
    depth: int
    shards: tuple[tuple[str, ...], ...]

    def text(self) -> str:
        return json.dumps({"composition": self.composition, "estimate": self.estimate, "depth": self.depth,
                           "shards": [list(s) for s in self.shards]}, separators=(",", ":"))

    @classmethod
    def parse(cls, text: str, where: str = "construct") -> Layout:
        try:
            v = json.loads(text)
            return cls(v["composition"], float(v["estimate"]), int(v["depth"]),
                       tuple(tuple(str(p) for p in shard) for shard in v["shards"]))
        except (ValueError, KeyError, TypeError):
            raise BmnError(f"{where}: construct.layout holds {text[:60]!r}, not a composition's layout") from None


def cut(g: Gadget, comp) -> Layout:
    """A long composition's layout: the estimate's shards (`layout`), each a run of frontier nodes of about equal
    work by Knuth's estimate of each node's subtree; a node estimated at more than a shard's work is replaced by
    its children (a few times over), so that no shard is one heavy node."""
    comp = tuple(comp)
    choices, depth, shards = layout(g.small, g.tail, comp, g.table.lookahead, g.table.shard_choices)
    if shards == 1:
        return Layout(composition_text(comp), float(choices), 0, (("",),))

    def work(node) -> float:
        return 1.0 + kg.estimate(g.small, g.tail, comp, prefix=node, k=g.table.lookahead, probes=NODE_PROBES)[0]

    nodes = [(node, work(node)) for node in kg.frontier(g.small, g.tail, comp, depth, k=g.table.lookahead)]
    last = sum(comp) - len(g.tail) - 1
    for _ in range(SPLITS):
        target = sum(w for _, w in nodes) / shards
        if all(w <= target or len(node) >= last for node, w in nodes):
            break
        nodes = [child for node, w in nodes for child in (
            [(c, work(c)) for c in kg.frontier(g.small, g.tail, comp, len(node) + 1, prefix=node,
                                               k=g.table.lookahead)]
            if w > target and len(node) < last else [(node, w)])]
    total, runs, run, acc = sum(w for _, w in nodes), [], [], 0.0
    for node, w in nodes:
        run.append(format_hand(node, g.letters))
        acc += w
        if acc >= total * (len(runs) + 1) / shards and len(runs) < shards - 1:
            runs.append(tuple(run))
            run = []
    runs.append(tuple(run))
    return Layout(composition_text(comp), float(choices), depth, tuple(r for r in runs if r))


def long_plan(g: Gadget, comps=None, known=None) -> list[dict]:
    """A long-gene run's shards, as ConstructShard's fields: for each long composition that is known (the table's,
    or `known`), one shard per gene; then each other's search in the shards of its layout (the table's, else `cut`),
    the shortest first, the cheapest first of a length by its estimate (those whose estimate exceeds max_choices
    left out)."""
    comps = g.long_compositions() if comps is None else comps
    known = g.known() if known is None else known
    out = [dict(first=comp, exact=True, kind=LIBRARY, genes=(format_hand(gene, g.letters),))
           for comp in comps if comp in known for gene in known[comp]]
    layouts = g.layouts()
    searched = [layouts.get(comp) or cut(g, comp) for comp in comps if comp not in known]
    # the shortest first, and the cheapest first of a length (by the estimate): a run stopped on the way has completed
    # as many lengths as it could (a census's sentence advances length by length), and of the next the most it could
    for lay in sorted(searched, key=lambda lay: (sum(parse_composition(lay.composition, "")), lay.estimate,
                                                 kc.order(parse_composition(lay.composition, "")))):
        if g.table.max_choices and lay.estimate > g.table.max_choices:
            continue
        comp = parse_composition(lay.composition, "construct")
        out += [dict(first=comp, exact=True, kind=SEARCH, depth=lay.depth, part=k, parts=len(lay.shards),
                     prefixes=lay.shards[k]) for k in range(len(lay.shards))]
    return out


def left_out(g: Gadget) -> list[tuple[int, ...]]:
    """The long compositions a plan leaves out: their estimate exceeds max_choices (and the library lacks them)."""
    if not g.table.max_choices:
        return []
    known = g.known()
    layouts = g.layouts()
    return [c for c in g.long_compositions() if c not in known and
            (layouts[c].estimate if c in layouts else layout(g.small, g.tail, c, g.table.lookahead,
                                                            g.table.shard_choices)[0]) > g.table.max_choices]


def to_search(g: Gadget, record: dict[str, str] | None = None) -> list[tuple[int, ...]]:
    """The long compositions a long-gene or census plan searches (not known to the table or the shipped library),
    in order; a census's from its record (`census_record`, read from the shipped files where not given)."""
    if g.table.census:
        return [parse_composition(c, "census") for c in json.loads((record or census_record(g))["search"])]
    known = g.known()
    return [c for c in g.long_compositions() if c not in known]


def census_plan(g: Gadget) -> list[dict]:
    """A census's shards (ConstructTable.census), as ConstructShard's fields: every multiset of the compositions the
    library holds complete (each first composition's shard), then every worth-searching longer composition the
    library holds (a shard a gene), then the searches of those it lacks, cheapest first. What the census cycles
    already hold is not built again: the multisets when every composition they end is there, a long composition
    when it is. Where the table holds the census's own record (`census_at`, with `known` and `layout`: written into
    the run when it starts, `census_record`), the plan is that record's, whatever the files shipped with bmn hold
    since; else it is read from them."""
    at = dict(line.split("=", 1) for line in g.table.census_at) if g.table.census_at else census_record(g)
    complete = int(at["complete"])
    out = []
    if at["multisets"] == "yes":
        out = [dict(first=first, exact=False, kind=MULTISETS, max_piece=complete) for first in g.firsts()
               if sum(first) <= complete]
    known = g.known() if g.table.census_at else {parse_composition(c, "census"): tuple(parse_hand(x) for x in genes)
                                                 for c, genes in json.loads(at["known"]).items()}
    searched = [parse_composition(lay.composition, "census") for lay in g.layouts().values()] if g.table.census_at \
        else [parse_composition(c, "census") for c in json.loads(at["search"])]
    worth = sorted(set(known) | set(searched), key=kc.order)
    return out + [{**shard, "max_piece": complete} for shard in long_plan(g, worth, known)]


def census_record(g: Gadget) -> dict[str, str]:
    """What a census plans from, read from the library and the census cycles shipped with bmn: the lengths the
    library is complete to, whether the multisets are still to build, the worth-searching longer compositions it
    holds (with their genes) and those it lacks, each not built yet."""
    complete = g.complete_to()
    census = g.census()
    lib = g.shipped()
    built = g.built()
    multisets = not all(c in built for length in range(1, complete + 1) for c in census.compositions(length))
    worth = [v.comp for v in census.long_verdicts() if v.worth and v.comp not in built]
    known = {composition_text(c): [format_hand(x, g.letters) for x in lib.genes(c)] for c in worth
             if lib.get(c) is not None}
    search = [composition_text(c) for c in worth if lib.get(c) is None]
    return {"complete": str(complete), "multisets": "yes" if multisets else "no", "known": json.dumps(known),
            "search": json.dumps(search)}


class GeneMeter(WorkMeter):
    """The progress of a long-gene or census plan: its compositions searched to their end (of those it searches),
    the searches' choices a worker's CPU-second, its other shards (built from known genes) done, and an ETA from
    the remaining estimated choices and build shards at this session's rates, shared among the workers."""

    def __init__(self, shards: list[dict], estimates: dict[str, float], finished: set[int]):
        self.search: dict[int, tuple[str, float]] = {}  # search shard -> (its composition, its estimated choices)
        for k, s in enumerate(shards):
            if s["kind"] == SEARCH:
                text = composition_text(s["first"])
                self.search[k] = (text, estimates.get(text, 0.0) / max(1, s["parts"]))
        self.builds = len(shards) - len(self.search)
        self.left: dict[str, int] = {}  # a composition's search shards not done
        for k, (text, _) in self.search.items():
            self.left[text] = self.left.get(text, 0) + (k not in finished)
        self.builds_done = sum(1 for k in finished if k not in self.search)
        self.work_left = sum(w for k, (_, w) in self.search.items() if k not in finished)
        self.choices = self.search_cpu = self.build_s = 0.0
        self.session_builds = 0

    def done(self, k: int, choices: int, cpu_s: float, elapsed_s: float) -> None:
        if k in self.search:
            text, work = self.search[k]
            self.left[text] -= 1
            self.work_left -= work
            self.choices += choices
            self.search_cpu += cpu_s
        else:
            self.builds_done += 1
            self.session_builds += 1
            self.build_s += elapsed_s

    def status(self, workers: int) -> str:
        searched = sum(1 for n in self.left.values() if n == 0)
        rate = self.choices / self.search_cpu if self.search_cpu > 0 else 0.0  # a worker's choices a CPU-second
        builds_left = self.builds - self.builds_done
        seconds, known = 0.0, True  # of one worker: unknown until a shard of each kind left is done
        if builds_left:
            known = known and self.session_builds > 0
            seconds += builds_left * self.build_s / max(1, self.session_builds)
        if self.work_left > 0:
            known = known and rate > 0
            seconds += self.work_left / rate if rate else 0.0
        eta = _duration(seconds / max(1, workers)) if known else "?"
        return (f"compositions {searched:,}/{len(self.left):,} searched  {rate / 1e6:.1f}M choices/s a worker  built "
                f"{self.builds_done:,}/{self.builds:,}  ETA {eta}")


def _duration(seconds: float) -> str:
    h, rem = divmod(int(seconds), 3600)
    return f"{h}:{rem // 60:02d}:{rem % 60:02d}"


class Construct(EverySplit):
    name = "construct"
    summary = ("cycles built, not waited for: every multiset of genes of a small-hand gadget (pieces of the big hand "
               "that come back to themselves whatever lies under them) whose cards make the deck, in every order and "
               "phase; each cycle replayed on the reference player and closed backwards")
    example = Example(
        search=dict(deck="0:6,1:2,2:2,3:2,4:2"),
        table=dict(max_states=100_000),
        pin="fb666ebfd1f579ff9b28cde8aaee3a4f0be80e30a370d03b2fd7910eb9cc0d67",
    )
    warm_group = "backward"
    own_table = "genes"
    Table = ConstructTable
    Params = ConstructShard
    unit = "hands"
    finite_games = False  # every hand built lies on a cycle
    players_why = "builds two-player cycles"
    split_why = "builds states of every split"

    def describe(self, search, space, table):
        what = ""
        if table.census:
            g = Gadget(space.deck.spec(), table)
            verdicts = g.census().long_verdicts()
            worth = sum(v.worth for v in verdicts)
            what = (f"the census (every multiset of genes of at most {g.complete_to()} cards; {worth} longer "
                    f"compositions worth searching, {len(verdicts) - worth} skipped) of ")
        elif table.long_gene:
            out = left_out(Gadget(space.deck.spec(), table))
            left = f" ({len(out)} left out: max_choices)" if out else ""
            what = f"long genes {', '.join(table.long_gene)}{left} and "
        return f"{search.deck}, states of every split, {what}genes of {table.small} (tail {table.tail or 'none'})"

    def check(self, search, space, table, where):
        g = Gadget(space.deck.spec(), table, where)
        g.check(where)
        g.layouts(where)
        if table.census:
            if table.long_gene:
                raise BmnError(f"{where}: construct.census plans its own long compositions: give no long_gene")
            g.census()
        if table.long_gene:
            if not g.long_compositions(where):
                raise BmnError(f"{where}: construct.long_gene names no composition the deck leaves for genes")
            g.known(where)

    def plan(self, search, space, table):
        deck = space.deck.spec()
        g = Gadget(deck, table)
        if table.long_gene or table.census:
            shards = census_plan(g) if table.census else long_plan(g)
            estimates = {lay.composition: lay.estimate for lay in g.layouts().values()}
            return ShardPlan(len(shards), lambda k: Shard(k, self.name, ConstructShard.of(
                deck=deck, search=GENE_SEARCH, **{**shard_keys(table), **shards[k]})),
                meter=lambda finished: GeneMeter(shards, estimates, finished))
        firsts = g.firsts()
        n = len(firsts)  # the multisets of library genes first (quick), then those with an exact last gene
        return ShardPlan(2 * n, lambda k: Shard(k, self.name, MultisetsShard(
            deck=deck, first=firsts[k % n], exact=k >= n, search=GENE_SEARCH, **shard_keys(table))))

    def run(self, space, params: ConstructShard, deals=(), device="cpu"):
        if params.search != GENE_SEARCH:
            raise BmnError(f"this bmn searches genes with gene search {GENE_SEARCH}, not {params.search}")
        if params.kind == MULTISETS:
            return run_construct(params.deck, params.first, params.table, exact=params.exact)
        return run_long(params.deck, params)

    def warm_up(self, space, device="cpu"):
        run_construct(WARM_DECK, Gadget(WARM_DECK, WARM).firsts()[0], WARM)
        kc.genes_of((1, 0), (0,), kc.comp_of((0, 0, 1)), 3, 64, 64)  # the exact search
        kg.frontier((1, 0), (0,), kc.comp_of(parse_hand("-----KJ")), 2)  # a long gene's shard and its plan
        kg.estimate((1, 0), (0,), kc.comp_of(parse_hand("-----KJ")), probes=4)
        kg.turn_sizes(parse_hand("-----KJ"), (1, 0))


# A deck whose one gene multiset is quick: compiles the gene search, the engines and the backward kernels.
WARM_DECK = "0:6,1:2,2:2"
WARM = ConstructTable(max_states=64)


STRATEGY = Construct()
