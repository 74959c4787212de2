"""`census`: every trick-boundary state of small decks played, and every cycle counted exactly.

A trick-boundary state is the hands, top card first, and who leads. Seen from the leader's seat
(the leader's hand first, then the next player's clockwise) it is a deal in which hand 1 leads,
so the states of a deck are the deals of every split in which each hand holds a card: for two
players and N cards, the N-1 splits 1/N-1 ... N-1/1 of every ordering of the deck. (A state with
hand 2 leading is the same game as its mirror with hand 1 leading: counted once, from the
leader's seat, as cycle identity counts it. With 3+ players, states in which some hand is empty
are left out: they are the states of a game with fewer players still holding cards.)

A census run plays each of those states to its end or its cycle (the sweep kernel of the
`exhaustive` strategy, split by split; shard k = a rank range of one split of one deck) and:
  - reports every cycle met, once per shard, with its canonical state (kernels/cyclestate.py)
    and its basin there: the states of the shard whose game enters it (the cycle's own states
    included). The cycles table adds the shards' basins up: exact, since shards are disjoint.
  - keeps as candidates the *balanced deals* (the deck's default split: 26/26, 20/20, ...) that
    enter a cycle: the games table gets one row each, and the cycles table's `deals` counts them.
Finite games are tallied (histogram, wins, longest) for the balanced split only: a state of
another split is not a deal. The shards' `deals` column counts states played.

`[census] decks = ["0:8,1:2,2:2,3:2", ...]` adds compositions to the run's `deck`; each is
censused whole. A census is for small decks: a deck with more than MAX_STATES states is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from ..cyclestate import cycle_state
from ..dealspace import DealSpace, _multinomial
from ..decks import parse_deck, parse_split
from ..errors import BmnError
from ..notation import parse_deal
from ..sweep import NO_FINITE, run_exhaustive
from ..tally import Candidate, CycleRow, ShardResult
from .base import Example, Search, Shard, ShardParams, ShardPlan, Strategy, Table, key, shards_of

MAX_STATES = 10**12  # states per census run at most (10^12 states: days of a large cluster)


def splits_of(total: int, players: int) -> list[tuple[int, ...]]:
    """Every split of `total` cards into `players` non-empty hands, in lexicographic order."""
    # Stars and bars: the cut points between hands.
    return [tuple(b - a for a, b in zip((0,) + cuts, cuts + (total,)))
            for cuts in combinations(range(1, total), players - 1)]


@dataclass(frozen=True, kw_only=True)
class CensusTable(Table):
    decks: tuple[str, ...] = key([], "more compositions censused in the same run (deck specs)")


@dataclass(frozen=True, kw_only=True)
class CensusShard(ShardParams):
    """States [lo, hi) of one split of a deck (`balanced`: the deck's own split, whose deals are kept)."""

    deck: str
    split: tuple[int, ...]
    lo: int
    hi: int
    balanced: bool


def census_decks(search: Search, table: CensusTable) -> list[str]:
    """The run's compositions: its deck, then the table's, each once (canonical specs)."""
    specs = []
    for text in [search.deck, *table.decks]:
        spec = parse_deck(text).spec()
        if spec not in specs:
            specs.append(spec)
    return specs


def census_layout(search: Search, table: CensusTable) -> list[tuple[str, tuple[int, ...], int, int]]:
    """(deck, split, states, shards) for each split of each composition, in shard order."""
    layout = []
    for spec in census_decks(search, table):
        deck = parse_deck(spec)
        states = _multinomial(deck.counts)
        for split in splits_of(deck.total, search.players):
            layout.append((spec, split, states, shards_of(states, search.shard_size)))
    return layout


def play_states(deck: str, split, lo: int, hi: int, balanced: bool, *, min_cards: int = NO_FINITE,
                min_tricks: int = 0, basins: bool = True) -> ShardResult:
    """States [lo, hi) of one split of a deck played to their end or cycle (the census's shard, and
    the atlas's): the counts of states, cards and cycles; for the deck's balanced split (`balanced`)
    also the finite games' tally and the candidates (min_cards, min_tricks; every cycle deal);
    and one CycleRow per cycle met, with its basin in these states where `basins` is set."""
    space = DealSpace.of(parse_deck(deck), list(split))
    played = run_exhaustive(space, lo, hi, min_cards=min_cards if balanced else NO_FINITE,
                            min_tricks=min_tricks if balanced else 0)
    result = ShardResult.empty(space.players)
    result.deals, result.cards, result.cycles = played.deals, played.cards, played.cycles
    result.rank_base = played.rank_base
    result.deck = space.deck.spec()
    if balanced:
        result.wins, result.histogram, result.longest = played.wins, played.histogram, played.longest
        result.candidates = played.candidates
    first: dict[str, Candidate] = {}  # each cycle's first state met, and how many states enter it
    basin: dict[str, int] = {}
    for c in played.candidates:
        if c.result.outcome != "cycle":
            continue
        first.setdefault(c.result.cycle_id, c)
        basin[c.result.cycle_id] = basin.get(c.result.cycle_id, 0) + 1
    result.cycle_rows = [
        CycleRow(cid, c.result.period_tricks, c.result.period_cards, space.deck.spec(),
                 cycle_state(parse_deal(c.hands)), basin=basin[cid] if basins else None)
        for cid, c in sorted(first.items())
    ]
    return result


def run_census(deck: str, split, lo: int, hi: int, balanced: bool) -> ShardResult:
    """States [lo, hi) of one split of a deck, as one census shard."""
    return play_states(deck, split, lo, hi, balanced)


class Census(Strategy):
    name = "census"
    summary = ("every trick-boundary state of small decks (every split, a rank range of one split per shard): every "
               "cycle with its basin and its balanced deals")
    example = Example(
        search=dict(deck="0:6,1:2,2:2", shard_size=5000),
        table=dict(decks=["0:4,1:2,2:2"]),
        pin="f9b70b32af4259ab3ba8917b2d251bf709d5d683eb3917cac1e5eae1b32a1a13",
    )
    warm_group = "sweep"
    unit = "states"  # (its finite games are tallied for the balanced split only)
    Table = CensusTable
    Params = CensusShard

    def check(self, search, space, table: CensusTable, where):
        if search.split is not None:
            raise BmnError(f"{where}: a census plays every split; leave split out (balanced deals use the "
                           f"deck's equal split)")
        for text in table.decks:
            try:
                DealSpace.of(parse_deck(text), None, search.players)
            except BmnError as error:
                raise BmnError(f"{where}: census.decks: {text!r}: {error}") from None
        total = sum(states * len(splits_of(parse_deck(spec).total, search.players))
                    for spec, states in ((s, _multinomial(parse_deck(s).counts)) for s in census_decks(search, table)))
        if total > MAX_STATES:
            raise BmnError(f"{where}: a census of this deck plays {total:.3g} states, more than {MAX_STATES:.0e}; "
                           f"a census is for small decks (use the cycles strategy for large ones)")
        for spec in census_decks(search, table):
            if parse_deck(spec).total < search.players:
                raise BmnError(f"{where}: census.decks: {spec} has fewer cards than players")

    def plan(self, search, space, table: CensusTable):
        layout = census_layout(search, table)

        def shard(k: int) -> Shard:
            j = k  # shard k is shard j of its deck and split
            for spec, split, states, shards in layout:
                if j < shards:
                    lo = j * search.shard_size
                    balanced = tuple(split) == parse_split(None, parse_deck(spec), search.players)
                    return Shard(k, self.name, CensusShard(deck=spec, split=tuple(split), lo=lo,
                                                           hi=min(states, lo + search.shard_size), balanced=balanced))
                j -= shards
            raise IndexError(k)
        return ShardPlan(sum(shards for *_, shards in layout), shard)

    def run(self, space, params: CensusShard, deals=(), device="cpu"):
        return run_census(params.deck, params.split, params.lo, params.hi, params.balanced)

    def warm_up(self, space, device="cpu"):
        run_census("0:2,1:1,2:1", (2, 2), 0, 12, True)


STRATEGY = Census()


def census_counts(deck: str, players: int = 2) -> dict[str, dict]:
    """The whole census of one deck in this process (for tests and notebooks): cycle_id -> row
    with the basin summed and `deals`, the balanced deals entering it."""
    spec = parse_deck(deck).spec()
    states = _multinomial(parse_deck(spec).counts)
    try:
        balanced = parse_split(None, parse_deck(spec), players)
    except BmnError:
        balanced = None  # an odd deck has no balanced deals
    out: dict[str, dict] = {}
    for split in splits_of(parse_deck(spec).total, players):
        part = run_census(spec, split, 0, states, tuple(split) == balanced)
        for row in part.cycle_rows:
            mine = out.setdefault(row.cycle_id, {**row.to_json(), "basin": 0, "deals": 0})
            mine["basin"] += row.basin
        for c in part.candidates:
            out[c.result.cycle_id]["deals"] += 1
    return out


__all__ = ["Census", "STRATEGY", "census_counts", "play_states", "run_census", "splits_of"]
