"""Which cycles are known: the catalogue (kernels/catalogue.py) as the tables and commands use it.

Every cycles table bmn builds or reads gets a `known` column: the catalogue's source for each cycle
(who found it first), or null for a cycle no catalogue knows (shown as "new"). The label is the
catalogue's, not the search's: it is computed whenever a table is built or read, so a run made
before a cycle was catalogued reads as known afterwards. The catalogue is the shipped one with the
user's files (`--catalogue FILE` on the commands that show cycles, and BMN_CATALOGUE), chosen once
per process (`use`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from kernels.catalogue import Catalogue, load
from kernels.decks import Deck
from kernels.notation import parse_deal

if TYPE_CHECKING:  # (imported where a table is labelled: `bmn play` and the actors need no pyarrow)
    import pyarrow as pa

NEW = "new"
_files: tuple[str, ...] = ()
_catalogue: Catalogue | None = None


def use(files: Sequence[str] = ()) -> None:
    """Read the users' catalogue files `files` (beside BMN_CATALOGUE's) from now on; a bad file is a
    BmnError here, before anything runs."""
    global _files, _catalogue
    catalogue = load(tuple(files))  # (a bad file leaves the catalogue in use as it was)
    _files, _catalogue = tuple(files), catalogue


def current() -> Catalogue:
    global _catalogue
    if _catalogue is None:
        _catalogue = load(_files)
    return _catalogue


def balanced_deal(row: dict) -> str | None:
    """A deal with equal hands entering the row's cycle, where the row names one: its first deal, else
    its closure's closest state when that has equal hands (a state with hand 1 leading is a deal)."""
    for key in ("hands", "closest"):
        text = row.get(key)
        if text and len({len(h) for h in parse_deal(text)}) == 1:
            return text
    return None


def deck_of(row: dict) -> str:
    """The deck of a cycles row's cycle: the cards of a deal or state on it (a `deals` run may mix decks
    under its config's one), else the row's deck."""
    for key in ("state", "hands"):
        if row.get(key):
            return Deck.of_deal(parse_deal(row[key])).spec()
    return row["deck"]


def labelled(cycles: pa.Table, catalogue: Catalogue | None = None) -> pa.Table:
    """The cycles table with its `known` column as the catalogue says now (added, or replaced: a table
    written by an earlier bmn, or with another catalogue)."""
    import pyarrow as pa

    catalogue = catalogue or current()
    rows = cycles.select([c for c in ("cycle_id", "deck", "state", "hands") if c in cycles.column_names]).to_pylist()
    labels = [catalogue.label(row["cycle_id"], deck_of(row)) for row in rows]
    column = pa.array(labels, pa.string())
    if "known" in cycles.column_names:
        return cycles.set_column(cycles.column_names.index("known"), "known", column)
    return cycles.append_column("known", column)


def contradictions(cycles: pa.Table, catalogue: Catalogue | None = None) -> list[str]:
    """A sentence for each cycle that contradicts a complete exhaustive search (Catalogue.contradiction)."""
    catalogue = catalogue or current()
    out = []
    for row in cycles.to_pylist():
        sentence = catalogue.contradiction(row["cycle_id"], deck_of(row), balanced_deal(row))
        if sentence:
            out.append(sentence)
    return out


def summary(labels: Iterable[str | None]) -> str:
    """"2 known (Casella et al. 2024; Zanotto 2017), 1 new": the labels of a run's cycles in a few words."""
    labels = list(labels)
    sources = Counter(label for label in labels if label is not None)
    new = sum(label is None for label in labels)
    parts = []
    if sources:
        named = "; ".join(f"{source}" + (f" x{n}" if n > 1 else "") for source, n in sorted(sources.items()))
        parts.append(f"{sum(sources.values())} known ({named})")
    if new:
        parts.append(f"{new} {NEW}")
    return ", ".join(parts)


def labels_of(cycle_ids: Iterable[str], deck: str | None) -> list[str | None]:
    catalogue = current()
    return [catalogue.label(cid, deck) for cid in sorted(cycle_ids)]
