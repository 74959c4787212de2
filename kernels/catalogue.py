"""The catalogue of known cycles: is a cycle a search met new, or has somebody seen it before?

A cycle's id (kernels/cycleid.py) is the same for every deal entering the cycle, from either seat,
on any machine, so a cycle met anywhere is looked up by its id (and its deck). bmn ships a
catalogue (`kernels/data/known_cycles.tsv`): every published cycle it could find, and the
project's own finds, each entry replayed by the test suite on the reference player. A user keeps
finds of their own in files of the same format (`bmn catalogue add`), which bmn reads beside the
shipped one (`--catalogue FILE`, or `BMN_CATALOGUE`). The format, column by column, and where each
entry came from: docs/catalogue.md.

The shipped catalogue also lists the complete exhaustive searches of a deck's deals of one split
(`kernels/data/exhaustive_searches.tsv`): every cycle such a search can meet is in the
catalogue, so a cycle that a deal of that deck and split enters but that the catalogue lacks
contradicts the search (`Catalogue.contradiction`), and bmn says so loudly.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path

from .decks import Deck, parse_deck
from .errors import BmnError
from .notation import format_deal, parse_deal

DATA = Path(__file__).parent / "data"
SHIPPED = DATA / "known_cycles.tsv"
EXHAUSTIVE = DATA / "exhaustive_searches.tsv"
ENV = "BMN_CATALOGUE"  # more catalogue files, separated by os.pathsep
HEADER = "# bmn known-cycles catalogue: one cycle a line, columns separated by tabs (docs/catalogue.md)\n"


@dataclass(frozen=True)
class KnownCycle:
    """One cycle of the catalogue (a line of its file)."""

    deck: str  # the deck, as bmn writes it (`parse_deck(...).spec()`: a name, or VALUE:COUNT,...)
    cycle_id: str  # 16 hex digits, as bmn computes it
    period_tricks: int
    period_cards: int
    state: str  # its canonical state, as a deal with the leader's hand first (preperiod 0)
    balanced_deals: int | None  # balanced deals entering it (None: not known)
    balanced_deal: str | None  # one of them (None: none, or not known)
    closure: int | None  # trick-boundary states entering it, counted from the leader's seat (None: not known)
    source: str  # who found it first, and when: what bmn shows as the cycle's label
    reference: str  # where: a paper, a repository, a page, or a bmn run
    confirmed: str  # how it was confirmed with bmn

    @property
    def label(self) -> str:
        return self.source

    def line(self) -> str:
        values = ["" if getattr(self, f.name) is None else str(getattr(self, f.name)) for f in fields(self)]
        return "\t".join(values) + "\n"


@dataclass(frozen=True)
class ExhaustiveSearch:
    """A complete search of every deal of a deck and split: the cycles it reported are all in the
    catalogue (with this search's `source`, or an earlier one)."""

    deck: str
    split: tuple[int, ...]
    deals: int  # the deals it played (all of the deck's with that split)
    cycles: int  # the distinct cycles it reported
    source: str
    reference: str


COLUMNS = tuple(f.name for f in fields(KnownCycle))
EXHAUSTIVE_COLUMNS = tuple(f.name for f in fields(ExhaustiveSearch))


def deck_spec(deck: str) -> str:
    """The deck's canonical text ("camicia", "0:14,1:2,2:2,3:2"): how the catalogue compares decks."""
    return parse_deck(deck).spec()


def _rows(path: Path, columns: tuple[str, ...]) -> Iterable[tuple[str, dict]]:
    """The lines of a catalogue file as (where: the file and line, for messages; {column: text}), comments
    and blank lines skipped, the first other line naming the columns; or a BmnError naming the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BmnError(f"catalogue file {path} does not exist") from None
    except UnicodeDecodeError:
        raise BmnError(f"catalogue file {path} is not UTF-8 text") from None
    except OSError as error:
        raise BmnError(f"cannot read catalogue file {path}: {error.strerror}") from None
    header = None
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip() or raw.startswith("#"):
            continue
        cells = raw.split("\t")
        if header is None:
            if tuple(cells) != columns:
                raise BmnError(f"catalogue file {path}, line {number}: the header must name the columns "
                               f"{', '.join(columns)} (tab-separated)")
            header = cells
            continue
        if len(cells) != len(columns):
            raise BmnError(f"catalogue file {path}, line {number}: {len(cells)} tab-separated fields, "
                           f"{len(columns)} expected")
        yield f"catalogue file {path}, line {number}", dict(zip(columns, cells))


def _count(text: str, what: str, where: str) -> int | None:
    if text == "":
        return None
    if not text.isdigit():
        raise BmnError(f"{where}: {what} must be a whole number or empty, got {text!r}")
    return int(text)


def read_cycles(path: str | os.PathLike) -> list[KnownCycle]:
    """The cycles of a catalogue file, each line checked for its shape (not replayed: `confirm`)."""
    out = []
    for where, row in _rows(Path(path), COLUMNS):
        try:
            deck = deck_spec(row["deck"])
            state = format_deal(parse_deal(row["state"]))
            deal = format_deal(parse_deal(row["balanced_deal"])) if row["balanced_deal"] else None
        except BmnError as error:
            raise BmnError(f"{where}: {error}") from None
        if Deck.of_deal(parse_deal(state)).spec() != deck:
            raise BmnError(f"{where}: the state {state} is a deal of the {Deck.of_deal(parse_deal(state)).spec()} "
                           f"deck, not of {deck}")
        cid = row["cycle_id"].lower()
        if len(cid) != 16 or any(c not in "0123456789abcdef" for c in cid):
            raise BmnError(f"{where}: cycle_id must be 16 hexadecimal digits, got {row['cycle_id']!r}")
        tricks, cards = (_count(row[k], k, where) for k in ("period_tricks", "period_cards"))
        if tricks is None or cards is None:
            raise BmnError(f"{where}: the period (period_tricks, period_cards) is required")
        if not row["source"].strip():
            raise BmnError(f"{where}: source is required (who found the cycle, and when)")
        out.append(KnownCycle(deck, cid, tricks, cards, state, _count(row["balanced_deals"], "balanced_deals", where),
                              deal, _count(row["closure"], "closure", where), row["source"].strip(),
                              row["reference"].strip(), row["confirmed"].strip()))
    return out


def read_exhaustive(path: str | os.PathLike = EXHAUSTIVE) -> list[ExhaustiveSearch]:
    out = []
    for where, row in _rows(Path(path), EXHAUSTIVE_COLUMNS):
        try:
            out.append(ExhaustiveSearch(deck_spec(row["deck"]), tuple(int(x) for x in row["split"].split("/")),
                                        int(row["deals"]), int(row["cycles"]), row["source"], row["reference"]))
        except (BmnError, ValueError):
            raise BmnError(f"{where}: not a deck, split, deals and cycles ({row['deck']!r}, {row['split']!r}, "
                           f"{row['deals']!r}, {row['cycles']!r})") from None
    return out


def write_cycles(path: str | os.PathLike, entries: Sequence[KnownCycle]) -> None:
    """Append entries to a catalogue file, making it (with its header) if it does not exist."""
    path = Path(path)
    new = not path.exists() or path.stat().st_size == 0
    with open(path, "a", encoding="utf-8") as handle:
        if new:
            handle.write(HEADER + "\t".join(COLUMNS) + "\n")
        for entry in entries:
            for value in (entry.source, entry.reference, entry.confirmed):
                if "\t" in value or "\n" in value:
                    raise BmnError("a catalogue field cannot hold a tab or a line break")
            handle.write(entry.line())


class Catalogue:
    """The cycles of one or more catalogue files (the shipped one first), looked up by id and deck."""

    def __init__(self, cycles: Sequence[KnownCycle], exhaustive: Sequence[ExhaustiveSearch] = (),
                 files: Sequence[str] = ()):
        self.cycles = list(cycles)
        self.exhaustive = list(exhaustive)
        self.files = tuple(files)
        self._by_id: dict[tuple[str, str], KnownCycle] = {}
        for entry in self.cycles:
            self._by_id.setdefault((entry.cycle_id, entry.deck), entry)  # the first file's entry wins
        self._ids = {cid for cid, _ in self._by_id}

    def find(self, cycle_id: str, deck: str | None = None) -> KnownCycle | None:
        """The entry of a cycle (its deck where given: ids are hashes, and decks differ)."""
        if cycle_id not in self._ids:
            return None
        if deck is not None:
            return self._by_id.get((cycle_id, deck_spec(deck)))
        return next(e for (cid, _), e in self._by_id.items() if cid == cycle_id)

    def label(self, cycle_id: str, deck: str | None = None) -> str | None:
        """Who found the cycle first (its entry's source), or None: a new cycle."""
        entry = self.find(cycle_id, deck)
        return None if entry is None else entry.label

    def exhaustive_for(self, deck: str, split: Sequence[int]) -> ExhaustiveSearch | None:
        spec = deck_spec(deck)
        return next((e for e in self.exhaustive if e.deck == spec and e.split == tuple(split)), None)

    def contradiction(self, cycle_id: str, deck: str, deal: str | None) -> str | None:
        """One sentence where a deal entering the cycle is a deal of a deck and split that a complete
        exhaustive search covered, and the catalogue does not know the cycle: that search would have
        met it. None otherwise."""
        if deal is None or self.find(cycle_id, deck) is not None:
            return None
        split = tuple(len(h) for h in parse_deal(deal))
        search = self.exhaustive_for(deck, split)
        if search is None:
            return None
        return (f"CONTRADICTION: cycle {cycle_id} is entered by the deal {deal} of the {deck_spec(deck)} deck "
                f"({'/'.join(map(str, split))}), whose every deal the exhaustive search by {search.source} played, "
                f"and that search did not report it ({search.cycles} cycles, {search.reference}); replay it "
                f"(`bmn play --engine reference {deal}`) and report it")


def catalogue_files(extra: Sequence[str] = ()) -> list[str]:
    """The users' catalogue files: those of BMN_CATALOGUE, then `extra` (each once)."""
    env = [p for p in os.environ.get(ENV, "").split(os.pathsep) if p]
    files: list[str] = []
    for path in [*env, *extra]:
        if path not in files:
            files.append(path)
    return files


_SHIPPED: tuple[list[KnownCycle], list[ExhaustiveSearch]] | None = None


def load(extra: Sequence[str] = ()) -> Catalogue:
    """The shipped catalogue with the users' files (BMN_CATALOGUE, then `extra`)."""
    global _SHIPPED
    if _SHIPPED is None:
        _SHIPPED = (read_cycles(SHIPPED), read_exhaustive(EXHAUSTIVE))
    cycles, exhaustive = list(_SHIPPED[0]), list(_SHIPPED[1])
    users = catalogue_files(extra)
    for path in users:
        cycles += read_cycles(os.path.expanduser(path))
    return Catalogue(cycles, exhaustive, (str(SHIPPED), *users))


# -- confirming an entry, and making one -------------------------------------------------------------
def confirm(entry: KnownCycle, max_states: int | None = None) -> None:
    """Replay the entry on the reference player: its state lies on a cycle of its deck with its id and
    period, and its balanced deal enters that cycle; with `max_states`, its closure (states and
    balanced deals) is counted again by backward play and must equal the entry's where that finishes.
    Raises BmnError with one sentence naming what differs."""
    from .cyclestate import cycle_state
    from .engines.reference import play_reference

    name = f"{entry.source}'s cycle {entry.cycle_id}"
    state = parse_deal(entry.state)
    if Deck.of_deal(state).spec() != entry.deck:
        raise BmnError(f"{name}: its state is a deal of the {Deck.of_deal(state).spec()} deck, not {entry.deck}")
    r = play_reference(state)
    if r.outcome != "cycle":
        raise BmnError(f"{name}: its state's game ends ({r.cards} cards) on the reference player")
    got = (r.cycle_id, r.period_tricks, r.period_cards, r.preperiod_tricks)
    if got != (entry.cycle_id, entry.period_tricks, entry.period_cards, 0):
        raise BmnError(f"{name}: its state replays as cycle {r.cycle_id}, period {r.period_tricks}/{r.period_cards} "
                       f"after {r.preperiod_tricks} tricks, on the reference player")
    if cycle_state(state) != entry.state:
        raise BmnError(f"{name}: its state is not the cycle's canonical state ({cycle_state(state)})")
    if entry.balanced_deal is not None:
        deal = parse_deal(entry.balanced_deal)
        if len({len(h) for h in deal}) != 1:
            raise BmnError(f"{name}: its balanced deal {entry.balanced_deal} has unequal hands")
        b = play_reference(deal)
        if (b.outcome, b.cycle_id) != ("cycle", entry.cycle_id):
            raise BmnError(f"{name}: its balanced deal {entry.balanced_deal} does not enter it on the reference player")
    if max_states is not None and len(state) == 2:
        counted = closure_of(entry.state, max_states)
        if counted is not None:
            closure, deals, _ = counted
            if (entry.closure is not None and closure != entry.closure) or \
                    (entry.balanced_deals is not None and deals != entry.balanced_deals):
                raise BmnError(f"{name}: backward play counts {closure:,} states and {deals:,} balanced deals "
                               f"entering it, the catalogue {entry.closure} and {entry.balanced_deals}")


def closure_of(state: str, max_states: int) -> tuple[int, int, str | None] | None:
    """(states entering the cycle, balanced deals entering it, the first of them by its hands) by backward
    play within `max_states`, every deal replayed; None where the budget did not reach the end."""
    from .backward import closure

    found = closure(parse_deal(state), max_states=max_states)
    if found.truncated:
        return None
    deals = sorted(d.hands for d in found.deals)
    return found.states, len(deals), (deals[0] if deals else None)


def entry_of(state: str, *, source: str, reference: str, max_states: int = 2_000_000,
             confirmed: str | None = None) -> KnownCycle:
    """A catalogue entry for the cycle a state enters (two players), measured here: its canonical state,
    id and period on the reference player, and its closure by backward play within `max_states` (left
    unknown where that does not finish)."""
    from .cyclestate import cycle_state
    from .engines.reference import play_reference

    deal = parse_deal(state)
    canonical = cycle_state(deal)
    if canonical is None:
        raise BmnError(f"the game of {format_deal(deal)} ends: it enters no cycle")
    r = play_reference(parse_deal(canonical))
    counted = closure_of(canonical, max_states) if len(deal) == 2 else None
    closure, deals, first = counted if counted is not None else (None, None, None)
    if confirmed is None:
        today = datetime.date.today().isoformat()
        confirmed = (f"replayed on the reference player; closure by backward play: {closure:,} states, "
                     f"{deals:,} balanced deals, each replayed (bmn, {today})" if counted is not None else
                     f"replayed on the reference player; closure not finished within {max_states:,} states "
                     f"(bmn, {today})")
    return KnownCycle(Deck.of_deal(deal).spec(), r.cycle_id, r.period_tricks, r.period_cards, canonical, deals, first,
                      closure, source, reference, confirmed)


def with_source(entry: KnownCycle, source: str, reference: str) -> KnownCycle:
    return replace(entry, source=source, reference=reference)
