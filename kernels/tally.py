"""What a shard returns (ShardResult) and the fixed-size tally arrays the compiled loops fill (Tally).

A shard's tally is a few fixed-size arrays, so tallies of different shards merge by addition
(and max for the longest game):
    stats[DEALS, CARDS, CYCLES, N_CAND, LONGEST_CARDS, LONGEST_INDEX]
    wins[p]        finite games won by hand p+1
    histogram[c]   finite games that lasted exactly c cards (the last bin: HIST_BINS-1 or more)
    longest_deal, longest_row   the longest finite game (first met among equals) and its result
Candidates (long finite games and every cycle) go into preallocated buffers; when they fill up
the kernel stops and says where, and the Python wrapper grows them (`Tally.grown`) and carries on.
A compiled loop takes the tally's arrays as its last arguments, in the Tally's order (`*tally`). The tallying
itself is written out in the sweep kernel's loop (kernels/sweep/cpu.py); strategies that
play games one by one from Python tally them with `add_game` / `tally_games`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import NamedTuple

import numpy as np

from .dealspace import DealSpace
from .game import N_FIELDS, GameResult
from .notation import format_deal

HIST_BINS = 16384
DEALS, CARDS, CYCLES, N_CAND, LONGEST_CARDS, LONGEST_INDEX = range(6)
N_STATS = 6


@dataclass
class Candidate:
    """A deal worth keeping: a long finite game or a cycle."""

    hands: str  # HAND/HAND[/...]
    index: int  # where the shard met it: offset in the rank range, or deal number in the stream
    result: GameResult


CLOSURE_FIELDS = ("closure", "closest", "imbalance", "balanced")


@dataclass(frozen=True)
class CycleRow:
    """A cycle a shard found, reported once whether or not a candidate deal enters it (census, cycles, states).

    The cluster keeps these in the shard's summary (to_json) and merges them into the cycles table."""

    cycle_id: str
    period_tricks: int
    period_cards: int
    deck: str  # the deck it is a cycle of (VALUE:COUNT,... or a name)
    state: str  # its canonical state written as a deal, the leader's hand first (kernels/cyclestate.py)
    basin: int | None = None  # trick-boundary states of the shard that enter it (census; states: the random
    # states met that enter it; None: not counted)
    complete: bool | None = None  # every balanced deal entering it is among the shard's candidates (None: not listed)
    # Its backward closure (states; None: not searched): the states entering it (exact when `complete`,
    # else a lower bound), the first with the most nearly equal hands (a deal, the leader's hand first)
    # and its cards away from equal hands.
    closure: int | None = None
    closest: str | None = None
    imbalance: int | None = None
    balanced: int | None = None  # the balanced deals entering it (exact when `complete`; construct)

    def to_json(self) -> dict:
        """Its fields; the closure's only where it was searched, and its balanced deals only where counted (so
        that rows written before them write back byte for byte)."""
        values = asdict(self)
        if all(values[name] is None for name in CLOSURE_FIELDS[:3]):
            for name in CLOSURE_FIELDS[:3]:
                del values[name]
        if self.balanced is None:
            del values["balanced"]
        return values

    @classmethod
    def from_json(cls, values: dict) -> CycleRow:
        """A row as to_json wrote it (keys it does not know are ignored; a missing key is a TypeError)."""
        return cls(**{f.name: values[f.name] for f in fields(cls) if f.name in values})


@dataclass(frozen=True)
class GeneRow:
    """A gene a shard found or built with (construct's long genes): a row of the run's genes table."""

    gene: str  # its least phase, written as a hand
    composition: str  # its cards, VALUE:COUNT,...
    length: int
    orbit: int  # its phases
    phases: str  # every phase in the order the rounds turn it, the least first, space-separated
    small_max: int  # the most cards the small hand holds at a trick boundary of any phase's turn
    cycles: int  # distinct cycles it builds with the genes that fill the rest of the deck
    balanced_cycles: int  # those that a balanced deal enters
    balanced: int  # the balanced deals entering them
    source: str  # "search" (found by this run), "library" (the genes library's) or "multisets" (a census's short
    #              genes, each counting the cycles whose longest gene it is)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, values: dict) -> GeneRow:
        return cls(**{f.name: values[f.name] for f in fields(cls)})


@dataclass(frozen=True)
class SearchRow:
    """A shard's part of a long composition's gene search (construct): what it found and what it cost."""

    composition: str  # VALUE:COUNT,...
    genes: int  # genes found below the shard's prefixes
    choices: int  # the search's choices (kernels/genes.py counters[CHOICES])
    cpu_s: float  # its CPU-seconds

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, values: dict) -> SearchRow:
        return cls(**{f.name: values[f.name] for f in fields(cls)})


@dataclass
class Counts:
    """What a shard counts and a run sums, declared once: deals played, cards played, deals that cycle (a
    ShardResult's, a shard's figures', a run's totals)."""

    deals: int = 0
    cards: int = 0
    cycles: int = 0

    def add(self, other: Counts) -> None:
        for f in fields(Counts):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def counts(self) -> Counts:
        """These counts alone (of a ShardResult: a copy of its counts)."""
        return Counts(*(getattr(self, f.name) for f in fields(Counts)))


@dataclass(kw_only=True)
class ShardResult(Counts):
    """A shard's statistics (mergeable by addition: its Counts and the rest) and its candidate games."""

    players: int
    wins: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    histogram: np.ndarray = field(default_factory=lambda: np.zeros(HIST_BINS, dtype=np.int64))
    longest: Candidate | None = None
    candidates: list[Candidate] = field(default_factory=list)
    rank_base: int | None = None  # exhaustive: a candidate's rank is rank_base + its index
    # Cycles the shard found, each once, whether or not a candidate deal enters them (census, cycles).
    cycle_rows: list[CycleRow] = field(default_factory=list)
    gene_rows: list[GeneRow] = field(default_factory=list)  # construct's long genes: each gene it found or built with
    search_rows: list[SearchRow] = field(default_factory=list)  # construct's long genes: its part of a gene search
    deck: str | None = None  # the deck of its games where it is not the run's (a census of several)

    @classmethod
    def empty(cls, players: int) -> ShardResult:
        return cls(players=players, wins=np.zeros(players, dtype=np.int64))

    @property
    def max_cards(self) -> int:
        return self.longest.result.cards if self.longest else 0

    @classmethod
    def from_tally(cls, tally: Tally, space: DealSpace) -> ShardResult:
        stats = tally.stats
        n_cand = int(stats[N_CAND])
        letters = space.deck.max_value <= 4
        candidates = [
            Candidate(format_deal(space.cut(tally.cand_deals[k]), letters), int(tally.cand_index[k]),
                      GameResult.from_row(tally.cand_rows[k]))
            for k in range(n_cand)
        ]
        longest = None
        if stats[LONGEST_INDEX] >= 0:
            longest = Candidate(format_deal(space.cut(tally.longest_deal), letters), int(stats[LONGEST_INDEX]),
                                GameResult.from_row(tally.longest_row))
        return cls(players=space.players, deals=int(stats[DEALS]), cards=int(stats[CARDS]),
                   cycles=int(stats[CYCLES]), wins=tally.wins.copy(), histogram=tally.histogram.copy(),
                   longest=longest, candidates=candidates)

    def merge(self, part: ShardResult) -> None:
        """Add another result's statistics to this one (candidates are the caller's business)."""
        self.add(part)
        self.wins = self.wins + part.wins
        self.histogram = self.histogram + part.histogram
        if part.longest is not None and (self.longest is None or part.longest.result.cards > self.longest.result.cards):
            self.longest = part.longest

    def add_game(self, result: GameResult, hands: str, index: int) -> None:
        """Tally one more game played from Python (a deal found by backward play, say)."""
        self.deals += 1
        self.cards += result.cards
        if result.outcome == "cycle":
            self.cycles += 1
            return
        self.wins[result.winner - 1] += 1
        self.histogram[min(result.cards, len(self.histogram) - 1)] += 1
        if self.longest is None or result.cards > self.longest.result.cards:
            self.longest = Candidate(hands, index, result)


def tally_games(results, hands, indexes, min_cards: int, min_tricks: int, players: int) -> ShardResult:
    """A ShardResult from games played one by one: each tallied, the candidates kept."""
    shard = ShardResult.empty(players)
    for h, r, index in zip(hands, results, indexes):
        shard.add_game(r, h, index)
        if r.is_candidate(min_cards, min_tricks):
            shard.candidates.append(Candidate(h, index, r))
    return shard


class Tally(NamedTuple):
    """The arrays a compiled loop fills (see above), in the order it takes them: `kernel(..., *tally)`."""

    stats: np.ndarray  # [DEALS, CARDS, CYCLES, N_CAND, LONGEST_CARDS, LONGEST_INDEX]
    wins: np.ndarray
    histogram: np.ndarray
    cand_deals: np.ndarray  # the candidates' deals, rows (GameResult's fields) and indexes: the first
    cand_rows: np.ndarray  # stats[N_CAND] rows are filled
    cand_index: np.ndarray
    longest_deal: np.ndarray
    longest_row: np.ndarray

    @classmethod
    def new(cls, total: int, players: int, capacity: int = 1024) -> Tally:
        """An empty tally for deals of `total` cards, with room for `capacity` candidates."""
        stats = np.zeros(N_STATS, dtype=np.int64)
        stats[LONGEST_INDEX] = -1
        return cls(
            stats=stats,
            wins=np.zeros(players, dtype=np.int64),
            histogram=np.zeros(HIST_BINS, dtype=np.int64),
            cand_deals=np.zeros((capacity, total), dtype=np.uint8),
            cand_rows=np.zeros((capacity, N_FIELDS), dtype=np.int64),
            cand_index=np.zeros(capacity, dtype=np.int64),
            longest_deal=np.zeros(total, dtype=np.uint8),
            longest_row=np.zeros(N_FIELDS, dtype=np.int64),
        )

    def grown(self) -> Tally:
        """The same tally with its candidate buffers doubled (the kernel stopped because they were full)."""
        return self._replace(cand_deals=_doubled(self.cand_deals), cand_rows=_doubled(self.cand_rows),
                             cand_index=_doubled(self.cand_index))


def _doubled(old: np.ndarray) -> np.ndarray:
    new = np.zeros((old.shape[0] * 2,) + old.shape[1:], dtype=old.dtype)
    new[: old.shape[0]] = old
    return new
