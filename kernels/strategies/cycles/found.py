"""The declaration of a beam's finds: each target cycle as a cycle row, its balanced deals as candidates."""

from __future__ import annotations

from ...backward import BackwardResult, ancestors
from ...decks import Deck
from ...notation import format_deal
from ...tally import Candidate, CycleRow, ShardResult
from .state import CycleState


def declare(cycle: CycleState, deck: Deck, letters: bool, max_states: int, result: ShardResult) -> None:
    """Add a target cycle to the shard's result: its row, and every balanced deal entering it
    (backward play within `max_states` states, each replayed into the cycle) as a candidate."""
    listed = ancestors(cycle.hands, max_states=max_states)
    if listed.cycle_id != cycle.cycle_id:
        raise RuntimeError(f"cycle {cycle.cycle_id} replayed as {listed.cycle_id}")
    result.cycle_rows.append(cycle_row(cycle, listed, deck, letters))
    for found in listed.deals:
        result.candidates.append(Candidate(found.hands, len(result.candidates), found.result))


def cycle_row(cycle: CycleState, listed: BackwardResult, deck: Deck, letters: bool) -> CycleRow:
    """The cycles table's row of a target cycle, its deals listed by backward play."""
    r = listed.original
    return CycleRow(cycle.cycle_id, r.period_tricks, r.period_cards, deck.spec(), format_deal(cycle.hands, letters),
                    complete=not listed.truncated)
