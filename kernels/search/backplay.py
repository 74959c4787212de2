"""`ancestors` and `extend`: backward play from a game's states to balanced starting deals.

- ancestors(deal): for a cycle, every balanced deal whose game enters the same cycle (backward
  play from all states of the cycle); for a finite game, the balanced ancestors of its start.
- extend(deal): from every trick-boundary state of a finite game, the balanced ancestors off the
  game's own path; those whose games are longer than the original are reported.

Every deal found is replayed forward with the engine, and must reach the claimed cycle (same
cycle_id) or pass through the claimed state (cards add up); a mismatch is a bug and raises.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..backward import search_ancestors, trace_states
from ..engine import new_workspace
from ..errors import BmnError
from ..notation import check_deal, format_deal
from ..play import as_sequence, play_batch
from ..reference import Game, trace_reference
from ..result import GameResult

DEFAULT_MAX_STATES = 2_000_000


@dataclass
class FoundDeal:
    hands: str
    result: GameResult
    back_tricks: int  # tricks un-played from the state it was found from


@dataclass
class BackwardResult:
    original: GameResult
    deals: list[FoundDeal] = field(default_factory=list)
    states: int = 0  # ancestor states visited
    truncated: bool = False  # the state budget stopped the search: there may be more deals
    count: int = 0  # deals found (`deals` holds at most `limit` of them, the longest games first)

    @property
    def cycle_id(self) -> str | None:
        return self.original.cycle_id


def _check_two_player_balanced(deal: Sequence[Sequence[int]]) -> None:
    check_deal(deal)
    if len(deal) != 2:
        raise BmnError("backward play is defined for two players; this deal has %d hands" % len(deal))
    total = sum(len(h) for h in deal)
    if total % 2:
        raise BmnError(f"the deal has {total} cards, which cannot be split into two equal hands")


def game_states(deal: Sequence[Sequence[int]]) -> tuple[list[tuple[int, tuple]], list[int], bool]:
    """The trick-boundary states (leader, hands) of a game up to its end or first repeat.

    Returns (states, cards played before each state, whether the last state repeats an earlier
    one). For a finite game the final (game over) state is not included.
    """
    game = Game(deal)
    states = [(0, tuple(tuple(h) for h in game.hands))]
    cards = [0]
    for rec in trace_reference(deal):
        states.append((rec.leader, rec.hands))
        cards.append(rec.cards)
    if len(states) > 1 and states[-1] in states[:-1]:
        return states, cards, True
    return states[:-1], cards[:-1], False


def _rows(states) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rows = np.array([list(h[0]) + list(h[1]) for _, h in states], dtype=np.uint8)
    n0 = np.array([len(h[0]) for _, h in states], dtype=np.int64)
    lead = np.array([leader for leader, _ in states], dtype=np.int64)
    return rows, n0, lead


def _search(roots, skips, max_states: int):
    """Run the kernel; skips[r] is the state not to follow from root r (or None)."""
    rows, n0, lead = _rows(roots)
    has_skip = np.array([0 if s is None else 1 for s in skips], dtype=np.int64)
    filler = roots[0]
    s_rows, s_n0, s_lead = _rows([s if s is not None else filler for s in skips])
    return _search_rows(rows, n0, lead, s_rows, s_n0, s_lead, has_skip, max_states, max_states)


# Balanced ancestors kept per search at most; a search that finds more says it was truncated.
MAX_FOUND = 1 << 18


def _search_rows(rows, n0, lead, s_rows, s_n0, s_lead, has_skip, max_states, per_root):
    total = rows.shape[1]
    capacity = max(1, min(MAX_FOUND, max_states + 1))
    out_rows = np.zeros((capacity, total), dtype=np.uint8)
    out_tricks = np.zeros(capacity, dtype=np.int64)
    out_cards = np.zeros(capacity, dtype=np.int64)
    out_root = np.zeros(capacity, dtype=np.int64)
    found, visited, truncated = search_ancestors(
        rows, n0, lead, s_rows, s_n0, s_lead, has_skip, int(max_states), int(per_root),
        out_rows, out_tricks, out_cards, out_root,
    )
    return out_rows[:found], out_tricks[:found], out_cards[:found], out_root[:found], int(visited), bool(truncated)


def _replay(seqs: np.ndarray, half: int) -> list[GameResult]:
    if len(seqs) == 0:
        return []
    return [GameResult.from_row(r) for r in play_batch(seqs, (half, half))]


def ancestors(deal: Sequence[Sequence[int]], *, limit: int | None = None,
              max_states: int = DEFAULT_MAX_STATES, part: int = 0, parts: int = 1) -> BackwardResult:
    """Balanced deals whose games enter this deal's cycle, or reach this finite deal's start.

    For a cycle, the roots are the cycle's states (each skipping its predecessor on the cycle),
    and a balanced state of the cycle itself counts too. `part` of `parts` restricts the search
    to the roots r with r % parts == part, so the work can be cut into disjoint shards.
    """
    _check_two_player_balanced(deal)
    if not 0 <= part < parts:
        raise BmnError(f"part {part} is not between 0 and {parts - 1}")
    total = sum(len(h) for h in deal)
    half = total // 2
    if limit is not None and limit < 1:
        raise BmnError("--limit must be at least 1")
    seq0, split = as_sequence(deal)
    original = GameResult.from_row(play_batch(seq0[None, :], split)[0])
    if original.outcome == "cycle":
        states, _cards, _repeats = game_states(deal)
        first = states.index(states[-1])
        cycle = states[first:-1]
        pairs = [(cycle[i], cycle[i - 1]) for i in range(len(cycle))]  # (root, its predecessor on the cycle)
    else:
        pairs = [((0, tuple(tuple(h) for h in deal)), None)]
    pairs = pairs[part::parts]
    result = BackwardResult(original)
    if not pairs:
        return result
    roots = [root for root, _ in pairs]
    direct = [s for s in roots if original.outcome == "cycle" and len(s[1][0]) == half]
    rows, tricks, back_cards, _, visited, truncated = _search(roots, [skip for _, skip in pairs], max_states)
    seqs = [list(h[0]) + list(h[1]) if lead == 0 else list(h[1]) + list(h[0]) for lead, h in direct]
    all_rows = np.concatenate([np.array(seqs, dtype=np.uint8).reshape(-1, total), rows])
    back = [0] * len(direct) + [int(t) for t in tricks]
    back_c = [0] * len(direct) + [int(c) for c in back_cards]
    found: dict[str, FoundDeal] = {}
    for seq, res, b, c in zip(all_rows, _replay(all_rows, half), back, back_c):
        if original.outcome == "cycle":
            if res.outcome != "cycle" or res.cycle_id != original.cycle_id:
                raise RuntimeError(f"backward play found {format_deal([seq[:half], seq[half:]])}, "
                                   f"which does not enter cycle {original.cycle_id}")
        elif res.outcome != "win" or res.cards != c + original.cards:
            raise RuntimeError("backward play found a deal that does not pass through the start")
        hands = format_deal([seq[:half], seq[half:]])
        found.setdefault(hands, FoundDeal(hands, res, b))
    result.deals = sorted(found.values(), key=lambda d: (-d.result.cards, d.hands))[:limit]
    result.count = len(found)
    result.states = visited
    result.truncated = truncated
    return result


def extend(deal: Sequence[Sequence[int]], *, max_states: int = DEFAULT_MAX_STATES,
           per_root_min: int = 2000) -> BackwardResult:
    """Balanced deals whose games pass through a state of this finite game and are longer.

    Every trick-boundary state of the game is a root; from each, the search follows every
    predecessor except the game's own previous state (searched as the previous root), within
    an equal share of `max_states` (at least `per_root_min`).
    """
    _check_two_player_balanced(deal)
    total = sum(len(h) for h in deal)
    half = total // 2
    seq0, split = as_sequence(deal)
    original = GameResult.from_row(play_batch(seq0[None, :], split)[0])
    if original.outcome == "cycle":
        return BackwardResult(original)
    hands, head, size, still_in, pile, enc = new_workspace(2, total)
    rows, n0, lead, cards, count, _over = trace_states(seq0, int(split[0]), original.tricks + 1,
                                                       hands, head, size, still_in, pile)
    rows, n0, lead, cards = rows[:count], n0[:count], lead[:count], cards[:count]
    # Root t skips state t-1, its predecessor on this game's own path.
    s_rows = np.roll(rows, 1, axis=0)
    s_n0 = np.roll(n0, 1)
    s_lead = np.roll(lead, 1)
    has_skip = np.ones(count, dtype=np.int64)
    has_skip[0] = 0
    per_root = max(per_root_min, max_states // max(1, count))
    found_rows, _tricks, back_cards, root, visited, truncated = _search_rows(
        rows, n0, lead, s_rows, s_n0, s_lead, has_skip, max_states, per_root)
    # A balanced ancestor of root t plays back_cards to reach state t, then the rest of this game.
    lengths = back_cards + (original.cards - cards[root])
    longer = lengths > original.cards
    found: dict[str, FoundDeal] = {}
    for seq, result, b, want in zip(found_rows[longer], _replay(found_rows[longer], half), _tricks[longer],
                                    lengths[longer]):
        if result.outcome != "win" or result.cards != int(want):
            raise RuntimeError("backward play found a deal that does not pass through the game's state")
        hands_text = format_deal([seq[:half], seq[half:]])
        found.setdefault(hands_text, FoundDeal(hands_text, result, int(b)))
    deals = sorted(found.values(), key=lambda d: (-d.result.cards, d.hands))
    return BackwardResult(original, deals, visited, truncated, len(deals))
