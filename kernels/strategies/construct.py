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
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import construct as kc
from ..backward import DEFAULT_MAX_STATES, closure
from ..decks import parse_deck
from ..engines.reference import play_reference
from ..errors import BmnError
from ..notation import format_deal, parse_hand
from ..play import play
from .base import EverySplit, Example, Shard, ShardParams, ShardPlan, Table, key
from ..tally import Candidate, CycleRow, ShardResult


@dataclass(frozen=True, kw_only=True)
class ConstructTable(Table):
    small: str = key("J-", "the gadget's small hand, top card first", kind=str)
    tail: str = key("-", "the cards after the genes in the big hand: each gene starts with them and its block ends "
                         "with them (empty: none)", kind=str)
    per_gene: str = key("J", "a card each gene holds exactly one of (empty: genes of any cards)", kind=str)
    max_piece: int = key(17, "cards of every gene of a multiset but the last at most (found once per worker, every "
                             "composition in one search; the last gene's composition is searched exactly)")
    lookahead: int = key(3, "a piece's successors (with itself) that must stay pieces while its cards are chosen")
    max_orbit: int = key(64, "rounds within which a gene must come back to itself")
    max_nodes: int = key(2_000_000, "choices the exact gene search of one last composition makes at most (0: no "
                                    "limit)", minimum=0)
    max_states: int = key(DEFAULT_MAX_STATES, "ancestor states a cycle's closure search visits at most")


@dataclass(frozen=True, kw_only=True)
class ConstructShard(ShardParams):
    """Every multiset of gene compositions whose least is `first` (cards of each value 0..9) and whose last
    gene is found by the exact search (`exact`) or in the library of genes of at most max_piece cards."""

    deck: str
    first: tuple[int, ...]
    exact: bool
    table: ConstructTable


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
        if len(self.small) + len(self.tail) + sum(self.target) > kc.RING - 8:
            raise BmnError(f"{where}: the construct strategy builds cycles of decks of at most {kc.RING - 8} cards")

    def firsts(self) -> list[tuple[int, ...]]:
        return kc.firsts(self.target, self.per_gene)

    def library(self) -> dict:
        t = self.table
        return kc.library(self.small, self.tail, self.target, min(t.max_piece, sum(self.target)), t.lookahead,
                          t.max_orbit)

    def genes(self, comp) -> kc.GeneSet:
        """The genes of one composition: from the library when it is small enough, else by the exact search."""
        t = self.table
        if sum(comp) <= t.max_piece:
            return kc.GeneSet(self.library().get(tuple(comp), ()), 0, False)
        return kc.genes_of(self.small, self.tail, tuple(comp), t.lookahead, t.max_orbit, t.max_nodes)


def _cards(table: ConstructTable, name: str, where: str) -> tuple[int, ...]:
    """A [construct] key that is cards, read as a hand (one sentence naming the key when it is not)."""
    try:
        return parse_hand(getattr(table, name))
    except BmnError as error:
        raise BmnError(f"{where}: construct.{name}: {error}") from None


def run_construct(deck: str, first, table: ConstructTable = ConstructTable(), stats: dict | None = None,
                  exact: bool | None = None) -> ShardResult:
    """One shard: every multiset of gene compositions beginning with `first`, every hand of them played, each
    distinct cycle replayed on the reference player and closed backwards (module docstring). With `exact`
    False only the multisets whose last gene has at most max_piece cards (all from the library), True only
    the others (their last gene's composition searched exactly); None: both."""
    g = Gadget(deck, table)
    g.check("construct")
    first = tuple(first)
    result = ShardResult.empty(2)
    searched: dict[tuple, kc.GeneSet] = {}

    def gene_set(comp) -> kc.GeneSet:
        if comp not in searched:
            searched[comp] = g.genes(comp)
        return searched[comp]

    def has_genes(comp) -> bool:
        return bool(gene_set(comp).orbits)

    def in_phase(comp) -> bool:  # a multiset's last composition: in this shard's phase
        return exact is None or (sum(comp) > table.max_piece) == exact

    def last_has(comp) -> bool:
        return in_phase(comp) and has_genes(comp)

    found: dict[str, tuple[int, tuple[int, ...]]] = {}  # cycle id -> (index, hand) of the first hand met
    index = 0
    if (exact is not False or in_phase(first)) and has_genes(first):  # (no library multiset holds a larger one)
        parts = [c for c in g.library() if not (g.per_gene is not None and c[g.per_gene] != 1)]
        for rest in kc.multisets(kc.minus(g.target, first), first, g.per_gene, parts, last_has):
            comps = [first] + rest
            if not rest and not in_phase(first):
                continue  # (the first alone is its multiset's last)
            for chosen in _gene_choices([gene_set(c).orbits for c in comps], comps):
                for hand in kc.hands(chosen, g.tail):
                    r = play([hand, g.small])
                    result.deals += 1
                    result.cards += r.period_cards
                    if r.outcome != "cycle" or r.preperiod_tricks != 0:
                        raise RuntimeError(f"the hand of genes {format_deal([hand, g.small], g.letters)} does not lie on "
                                           f"a cycle")
                    result.cycles += 1
                    found.setdefault(r.cycle_id, (index, hand))
                    index += 1
    for cid, (index, hand) in sorted(found.items(), key=lambda item: item[1][0]):
        state = [hand, g.small]
        ref = play_reference(state)
        if ref.outcome != "cycle" or ref.cycle_id != cid or ref.preperiod_tricks != 0:
            raise RuntimeError(f"{format_deal(state, g.letters)} replays on the reference player as "
                               f"{ref.outcome} {ref.cycle_id}, not on cycle {cid}")
        closed = closure(state, max_states=table.max_states)
        result.cycle_rows.append(CycleRow(
            cid, ref.period_tricks, ref.period_cards, g.deck.spec(), closed.state, complete=not closed.truncated,
            closure=closed.states, closest=closed.closest, imbalance=closed.imbalance))
        result.candidates += [Candidate(d.hands, index, d.result) for d in closed.deals]
    if stats is not None:
        stats.update(compositions=len(searched), genes=sum(len(s.orbits) for s in searched.values()),
                     library=sum(len(o) for o in g.library().values()),
                     nodes=sum(s.nodes for s in searched.values()),
                     truncated=sorted(c for c, s in searched.items() if s.truncated))
    return result


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


class Construct(EverySplit):
    name = "construct"
    summary = ("cycles built, not waited for: every multiset of genes of a small-hand gadget (pieces of the big hand "
               "that come back to themselves whatever lies under them) whose cards make the deck, in every order and "
               "phase; each cycle replayed on the reference player and closed backwards")
    example = Example(
        search=dict(deck="0:6,1:2,2:2,3:2,4:2"),
        table=dict(max_states=100_000),
        pin="539cd8c959ec0fea512bddbbdfce75f0c3683d4214f8b40f0c0a44bb9ffcbfbe",
    )
    warm_group = "backward"
    Table = ConstructTable
    Params = ConstructShard
    unit = "hands"
    finite_games = False  # every hand built lies on a cycle
    players_why = "builds two-player cycles"
    split_why = "builds states of every split"

    def describe(self, search, space, table):
        return f"{search.deck}, states of every split, genes of {table.small} (tail {table.tail or 'none'})"

    def check(self, search, space, table, where):
        Gadget(space.deck.spec(), table, where).check(where)

    def plan(self, search, space, table):
        deck = space.deck.spec()
        firsts = Gadget(deck, table).firsts()
        n = len(firsts)  # the multisets of library genes first (quick), then those with an exact last gene
        return ShardPlan(2 * n, lambda k: Shard(k, self.name, ConstructShard(deck=deck, first=firsts[k % n],
                                                                              exact=k >= n, table=table)))

    def run(self, space, params: ConstructShard, deals=(), device="cpu"):
        return run_construct(params.deck, params.first, params.table, exact=params.exact)

    def warm_up(self, space, device="cpu"):
        run_construct(WARM_DECK, Gadget(WARM_DECK, WARM).firsts()[0], WARM)
        kc.genes_of((1, 0), (0,), kc.comp_of((0, 0, 1)), 3, 64, 64)  # the exact search


# A deck whose one gene multiset is quick: compiles the gene search, the engines and the backward kernels.
WARM_DECK = "0:6,1:2,2:2"
WARM = ConstructTable(max_states=64)


STRATEGY = Construct()
