"""Backward play (docs/rules.md, "Backward play"), two players: the kernels and their wrappers.

The trick that led to a state can be un-played: the leader's last k cards were the pile of that
trick. Replaying those k cards as a trick started by either player assigns each card to the
player who played it; the replay must end exactly at the k-th card, by a completed payment,
with the current leader as creditor. Each consistent (k, starter) is one predecessor state, led
by the starter, in which each player holds the cards they played (in order) on top of what they
hold now. Both players must hold cards in a predecessor (else its game was already over).

Since every state has exactly one successor, the ancestors of a state form a tree; a cycle's
ancestors are the trees hanging off its states (each cycle state has exactly one predecessor on
the cycle, which the search is told to skip). So the search needs no visited set: it walks the
trees depth first from an explicit stack, within a budget of states.

The kernels take states as `States`, a NamedTuple of arrays (Numba takes it as one argument):
state i is rows[i], its `total` cards (hand 1, then hand 2), n0[i] cards in hand 1 and leader[i]
(0 or 1). The search writes what it finds into a NamedTuple of arrays too (`Found`).

The wrappers:

- ancestors(deal): for a cycle, every balanced deal whose game enters the same cycle (backward
  play from all states of the cycle); for a finite game, the balanced ancestors of its start.
- closure(state): every state whose game enters the cycle of a state's game.
- climb_from_states(path, cards): from each of a game's first trick-boundary states, the
  balanced ancestors off the game's own path whose games are longer than the game: the one climb
  that `extend` and the `climb` and `longest` strategies make.
- extend(deal): the climb from every trick-boundary state of a finite game, its deals replayed.

Every deal found is replayed forward with the engine, and must reach the claimed cycle (same
cycle_id) or pass through the claimed state (cards add up); a mismatch is a bug and raises.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ._jit import kernel
from .cyclestate import cycle_state, walk
from .engines import Workspace, new_workspace
from .engines.percard import load, play_trick
from .errors import BmnError
from .game import GameResult
from .notation import check_deal, format_deal, parse_deal
from .play import as_sequence, play_batch

NOBODY = -1  # the leader of no state: a skip led by NOBODY matches no predecessor


class States(NamedTuple):
    """Two-player trick-boundary states, state i at index i of every array."""

    rows: np.ndarray  # uint8 (count, total): hand 1's cards, then hand 2's, each from its top
    n0: np.ndarray  # int64 (count,): cards in hand 1
    leader: np.ndarray  # int64 (count,): who leads, 0 or 1 (NOBODY: no state)

    @classmethod
    def of(cls, states: Sequence[tuple]) -> States:
        """From (leader, (hand 1, hand 2)) pairs, as kernels/cyclestate.py lists states."""
        return cls(np.array([list(h[0]) + list(h[1]) for _, h in states], dtype=np.uint8),
                   np.array([len(h[0]) for _, h in states], dtype=np.int64),
                   np.array([leader for leader, _ in states], dtype=np.int64))

    def previous(self, cyclic: bool) -> States:
        """State i - 1 at every i: each state's predecessor when these are the consecutive states of
        a cycle (`cyclic`: the last precedes the first) or of a game (the first has none: NOBODY)."""
        leader = np.roll(self.leader, 1)
        if not cyclic:
            leader[:1] = NOBODY
        return States(np.roll(self.rows, 1, axis=0), np.roll(self.n0, 1), leader)


class Found(NamedTuple):
    """The balanced ancestors a search found, ancestor i at index i of every array."""

    rows: np.ndarray  # uint8 (count, total): the deal, hand 1 then hand 2 (hand 1 leads)
    tricks: np.ndarray  # int64 (count,): tricks un-played from its root
    cards: np.ndarray  # int64 (count,): cards un-played from its root
    root: np.ndarray  # int64 (count,): the index of its root

    @classmethod
    def room(cls, total: int, capacity: int) -> Found:
        return cls(np.zeros((capacity, total), dtype=np.uint8), np.zeros(capacity, dtype=np.int64),
                   np.zeros(capacity, dtype=np.int64), np.zeros(capacity, dtype=np.int64))


class Closest(NamedTuple):
    """The first state a search visited with the most nearly equal hands."""

    row: np.ndarray  # uint8 (total,): hand 1, then hand 2
    n0: int  # cards in hand 1
    leader: int  # 0 or 1
    gap: int  # |n0 - n1| (total + 1: no state visited)


class Searched(NamedTuple):
    """What one search returns."""

    count: int  # balanced ancestors written
    visited: int  # ancestor states visited
    truncated: bool  # a budget, or the room for balanced ancestors, stopped the search: there may be more
    closest: Closest


def _take(arrays: NamedTuple, index) -> NamedTuple:
    """The same entries (an index array or a slice) of every array of a NamedTuple of arrays."""
    return type(arrays)(*(a[index] for a in arrays))


@kernel
def predecessors(row, n0, leader, pile_owner, out, out_cards):
    """All predecessors of the state (row, n0, leader), written into States `out`, with the cards
    of the trick each one un-plays into out_cards; returns how many were written."""
    total = row.shape[0]
    lead_start = 0 if leader == 0 else n0
    n_lead = n0 if leader == 0 else total - n0
    other_start = n0 if leader == 0 else 0
    n_other = total - n0 if leader == 0 else n0
    found = 0
    for k in range(1, n_lead + 1):
        first = lead_start + n_lead - k  # the pile: the leader's last k cards, in played order
        if row[first + k - 1] != 0:
            continue  # a trick is won on a plain card that completes a payment
        for starter in range(2):
            player = starter
            owed = 0
            creditor = -1
            ok = False
            for i in range(k):
                card = row[first + i]
                pile_owner[i] = player
                if card != 0:
                    owed = card
                    creditor = player
                    player ^= 1
                elif owed > 0:
                    owed -= 1
                    if owed == 0:
                        ok = i == k - 1 and creditor == leader
                        break
                else:
                    player ^= 1
            if not ok:
                continue
            lead_played = 0
            for i in range(k):
                if pile_owner[i] == leader:
                    lead_played += 1
            other_played = k - lead_played
            new_lead_size = lead_played + n_lead - k
            new_other_size = other_played + n_other
            if new_lead_size == 0 or new_other_size == 0:
                continue  # one player would hold every card: that game was already over
            dst = out.rows[found]
            # Physical hand 1 first. Each player's trick cards go back on top, in played order.
            a = 0 if leader == 0 else new_other_size
            b = new_lead_size if leader == 0 else 0
            for i in range(k):
                if pile_owner[i] == leader:
                    dst[a] = row[first + i]
                    a += 1
                else:
                    dst[b] = row[first + i]
                    b += 1
            for i in range(n_lead - k):
                dst[a] = row[lead_start + i]
                a += 1
            for i in range(n_other):
                dst[b] = row[other_start + i]
                b += 1
            out.n0[found] = new_lead_size if leader == 0 else new_other_size
            out.leader[found] = starter
            out_cards[found] = k
            found += 1
    return found


@kernel(inline="always")
def _same(a, i, b, j):
    """Whether state i of States `a` is state j of States `b`."""
    if a.n0[i] != b.n0[j] or a.leader[i] != b.leader[j]:
        return False
    for c in range(a.rows.shape[1]):
        if a.rows[i, c] != b.rows[j, c]:
            return False
    return True


@kernel
def search_ancestors(roots, skips, max_states, per_root, out):
    """Walk the ancestor trees of every root (States); write the balanced ancestors into `out` (Found).

    From root r, the predecessor equal to state r of `skips` is not followed: that is the root's
    predecessor on its own game or cycle, searched from another root (a skip led by NOBODY matches
    none). Each root's tree is walked for at most `per_root` states, all of them for at most
    `max_states`. A balanced ancestor led by hand 2 is written as the swapped deal (hand 1 leads a
    deal). Returns a Searched.
    """
    total = roots.rows.shape[1]
    half = total // 2
    # A state has at most 2 * total predecessors (k cards, two starters).
    preds = States(np.empty((2 * total, total), dtype=np.uint8), np.empty(2 * total, dtype=np.int64),
                   np.empty(2 * total, dtype=np.int64))
    pred_cards = np.empty(2 * total, dtype=np.int64)
    # The stack of states to visit, depth first, each with the tricks and cards un-played from its
    # root. Plain arrays, not States: reading a NamedTuple's fields in this loop costs ~10% (measured).
    cap = max_states + 2 * total + 2
    stack_rows = np.empty((cap, total), dtype=np.uint8)
    stack_n0 = np.empty(cap, dtype=np.int64)
    stack_lead = np.empty(cap, dtype=np.int64)
    stack_tricks = np.empty(cap, dtype=np.int64)
    stack_cards = np.empty(cap, dtype=np.int64)
    pile_owner = np.empty(total, dtype=np.int64)
    closest_row = np.zeros(total, dtype=np.uint8)
    closest_n0, closest_leader, closest_gap = 0, 0, total + 1
    found, visited, truncated = 0, 0, False
    for r in range(roots.rows.shape[0]):
        top = 0
        root_visits = 0
        n = predecessors(roots.rows[r], roots.n0[r], roots.leader[r], pile_owner, preds, pred_cards)
        for j in range(n):
            if not _same(preds, j, skips, r):
                stack_rows[top] = preds.rows[j]
                stack_n0[top] = preds.n0[j]
                stack_lead[top] = preds.leader[j]
                stack_tricks[top] = 1
                stack_cards[top] = pred_cards[j]
                top += 1
        while top > 0:
            if visited >= max_states or root_visits >= per_root:
                truncated = True
                break
            top -= 1
            visited += 1
            root_visits += 1
            # The state on top is read before its predecessors are pushed over it.
            row = stack_rows[top]
            n0 = stack_n0[top]
            lead = stack_lead[top]
            tricks = stack_tricks[top]
            cards = stack_cards[top]
            if abs(2 * n0 - total) < closest_gap:
                closest_row[:] = row
                closest_n0, closest_leader, closest_gap = n0, lead, abs(2 * n0 - total)
            if total % 2 == 0 and n0 == half:
                if found < out.rows.shape[0]:
                    if lead == 0:
                        out.rows[found] = row
                    else:
                        out.rows[found, :half] = row[half:]
                        out.rows[found, half:] = row[:half]
                    out.tricks[found] = tricks
                    out.cards[found] = cards
                    out.root[found] = r
                    found += 1
                else:
                    truncated = True
            n = predecessors(row, n0, lead, pile_owner, preds, pred_cards)
            if top + n > cap:
                truncated = True
                break
            for j in range(n):
                stack_rows[top] = preds.rows[j]
                stack_n0[top] = preds.n0[j]
                stack_lead[top] = preds.leader[j]
                stack_tricks[top] = tricks + 1
                stack_cards[top] = cards + pred_cards[j]
                top += 1
        if visited >= max_states:
            break
    return Searched(found, visited, truncated, Closest(closest_row, closest_n0, closest_leader, closest_gap))


@kernel
def trace_states(deal, size0, max_states, ws):
    """The trick-boundary states of a two-player game played in Workspace `ws`, until it ends or
    `max_states` are listed: (States, cards played before each, count). The final state of a
    finished game is not listed (nothing can be played from it).
    """
    total = deal.shape[0]
    load(deal, np.array([size0, total - size0]), 0, ws.hands, ws.head, ws.size, ws.still_in)
    rows = np.empty((max_states, total), dtype=np.uint8)
    n0 = np.empty(max_states, dtype=np.int64)
    leader = np.empty(max_states, dtype=np.int64)
    before = np.empty(max_states, dtype=np.int64)
    mask = ws.hands.shape[2] - 1
    lead = np.int64(0)  # not 0: the engine's play_trick compiled for a leader variable (kernels/sweep/cpu.py)
    played = 0
    count = 0
    over = ws.size[0, 0] == 0 or ws.size[0, 1] == 0
    while not over and count < max_states:
        k = 0
        for p in range(2):
            h = ws.head[0, p]
            for i in range(ws.size[0, p]):
                rows[count, k] = ws.hands[0, p, (h + i) & mask]
                k += 1
        n0[count] = ws.size[0, 0]
        leader[count] = lead
        before[count] = played
        count += 1
        lead, c, t, over = play_trick(0, lead, ws.hands, ws.head, ws.size, ws.still_in, ws.pile)
        played += c
    return States(rows, n0, leader), before, count


# -- the wrappers: whole games' states in, replayed balanced deals out --------------------

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
        raise BmnError(f"backward play is defined for two players; this deal has {len(deal)} hands")
    total = sum(len(h) for h in deal)
    if total % 2:
        raise BmnError(f"the deal has {total} cards, which cannot be split into two equal hands")


# Balanced ancestors kept per search at most, unless told otherwise; a search that finds more
# says it was truncated.
MAX_FOUND = 1 << 18


class FoundBuffers:
    """Room for the balanced ancestors `search_ancestors` finds, kept from one search to the next.

    A search that fills it is run again with twice the room, up to `limit` (None: no limit);
    one that fills `limit` is truncated (the kernel says so).
    """

    def __init__(self, total: int, capacity: int = 4096, limit: int | None = None):
        self.limit = limit
        self.found = Found.room(total, capacity)

    @classmethod
    def bounded(cls, total: int, max_states: int) -> FoundBuffers:
        """Room for every balanced ancestor of a search of `max_states` states, or MAX_FOUND of them."""
        capacity = max(1, min(MAX_FOUND, max_states + 1))
        return cls(total, capacity, capacity)

    def search(self, roots: States, skips: States, max_states: int, per_root: int) -> tuple[Found, Searched]:
        """Run `search_ancestors` from these roots: the balanced ancestors found (a view of the
        buffers, valid until the next search) and what the search returned."""
        while True:
            searched = search_ancestors(roots, skips, int(max_states), int(per_root), self.found)
            total, capacity = self.found.rows.shape[1], self.found.rows.shape[0]
            if searched.count < capacity or (self.limit is not None and capacity >= self.limit):
                return _take(self.found, slice(searched.count)), searched
            self.found = Found.room(total, 2 * capacity if self.limit is None else min(2 * capacity, self.limit))


def _search(roots: States, skips: States, max_states: int) -> tuple[Found, Searched]:
    """Search from every root within `max_states` states in all, with room for what it finds."""
    return FoundBuffers.bounded(roots.rows.shape[1], max_states).search(roots, skips, max_states, max_states)


def _replayed(rows: np.ndarray, back_tricks: np.ndarray, reaches: Callable[[int, GameResult], bool],
              claim: str) -> list[FoundDeal]:
    """The deals backward play found (hand 1 then hand 2, hand 1 leading), each played forward by
    the engine and checked: `reaches(i, result)` says whether deal i's game went where backward
    play says it goes (`claim`); one that did not is a bug and raises. Each deal once, the longest
    games first."""
    if len(rows) == 0:
        return []  # none (an odd deck has no balanced deals, nor the split play_batch is given)
    half = rows.shape[1] // 2
    found: dict[str, FoundDeal] = {}
    for i, (row, played) in enumerate(zip(rows, play_batch(rows, (half, half)))):
        result = GameResult.from_row(played)
        hands = format_deal([row[:half], row[half:]])
        if not reaches(i, result):
            raise RuntimeError(f"backward play found {hands}, which does not {claim}")
        found.setdefault(hands, FoundDeal(hands, result, int(back_tricks[i])))
    return sorted(found.values(), key=lambda d: (-d.result.cards, d.hands))


class GamePath(NamedTuple):
    """A game's first trick-boundary states, in play order (each the successor of the one before)."""

    states: States
    before: np.ndarray  # int64 (count,): cards played before each state

    def __len__(self) -> int:
        return self.before.shape[0]

    def within(self, cards: int) -> GamePath:
        """The states reached after at most `cards` cards."""
        count = int(np.searchsorted(self.before, cards, side="right"))
        return GamePath(_take(self.states, slice(count)), self.before[:count])


def game_path(seq: np.ndarray, size0: int, max_states: int, workspace: Workspace | None = None) -> GamePath:
    """The first `max_states` trick-boundary states of the game of `seq` (hand 1 holds its first
    `size0` cards and leads), played in `workspace` (new_workspace(2, len(seq)); a new one if None)."""
    if workspace is None:
        workspace = new_workspace(2, seq.shape[0])
    states, before, count = trace_states(seq, int(size0), int(max_states), workspace)
    return GamePath(_take(states, slice(count)), before[:count])


class Climb(NamedTuple):
    """The balanced deals found by one climb whose games are longer than the climbed game."""

    rows: np.ndarray  # the deals, hand 1 then hand 2 (hand 1 leads), in search order
    lengths: np.ndarray  # the cards each one's game lasts, as backward play counts them
    back_tricks: np.ndarray  # tricks un-played from the state it was found from
    visited: int  # ancestor states visited
    truncated: bool  # a budget (or the buffers' limit) stopped the search: there may be more


def climb_from_states(path: GamePath, cards: int, *, max_states: int, per_root: int,
                      buffers: FoundBuffers | None = None) -> Climb:
    """The balanced deals whose games pass through one of a game's states, off the game's own path,
    and last longer than its `cards` cards.

    Each of the game's first states is a root of backward play within `per_root` ancestor states
    (`max_states` in all); root t skips state t-1, its predecessor on the game's path, which is
    searched as root t-1. `buffers` are the search's output (kept across climbs); by default, room
    for `max_states` states.
    """
    roots = path.states
    if buffers is None:
        buffers = FoundBuffers.bounded(roots.rows.shape[1], max_states)
    found, searched = buffers.search(roots, roots.previous(cyclic=False), max_states, per_root)
    # A balanced ancestor of root t plays its back cards to reach state t, then the rest of the game.
    lengths = found.cards + (cards - path.before[found.root])
    longer = lengths > cards
    return Climb(found.rows[longer], lengths[longer], found.tricks[longer], searched.visited, searched.truncated)


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
    if limit is not None and limit < 1:
        raise BmnError("--limit must be at least 1")
    seq0, split = as_sequence(deal)
    original = GameResult.from_row(play_batch(seq0[None, :], split)[0])
    in_cycle = original.outcome == "cycle"
    states = States.of(walk(deal).cycle if in_cycle else [(0, deal)])
    index = np.arange(part, len(states.n0), parts)
    if not len(index):
        return BackwardResult(original)
    roots = _take(states, index)
    found, searched = _search(roots, _take(states.previous(cyclic=in_cycle), index), max_states)
    if in_cycle:
        deals = _cycle_deals(roots, found, original.cycle_id)
    else:
        deals = _replayed(found.rows, found.tricks,
                          lambda i, r: r.outcome == "win" and r.cards == found.cards[i] + original.cards,
                          "pass through the start")
    return BackwardResult(original, deals[:limit], searched.visited, searched.truncated, len(deals))


def _cycle_deals(roots: States, found: Found, cycle_id: str) -> list[FoundDeal]:
    """The balanced deals entering a cycle: its own balanced states (among `roots`, the cycle's
    states searched from) and the balanced ancestors a search found, each replayed and checked to
    enter the cycle."""
    total = roots.rows.shape[1]
    half = total // 2
    own = (roots.n0 == half) & (total % 2 == 0)
    direct = roots.rows[own]
    swapped = roots.leader[own] == 1
    direct[swapped] = np.roll(direct[swapped], half, axis=1)  # hand 1 leads a deal: swap those hand 2 leads
    rows = np.concatenate([direct, found.rows])
    back_tricks = np.concatenate([np.zeros(len(direct), dtype=np.int64), found.tricks])
    return _replayed(rows, back_tricks, lambda i, r: r.outcome == "cycle" and r.cycle_id == cycle_id,
                     f"enter cycle {cycle_id}")


@dataclass
class Closure:
    """A cycle's backward closure: every trick-boundary state whose game enters it (the cycle's own
    states included), counted from the leader's seat as the census counts states."""

    cycle: GameResult  # the game of its canonical state (preperiod 0)
    state: str  # its canonical state written as a deal, the leader's hand first (kernels/cyclestate.py)
    states: int  # states entering it: exact, or a lower bound when `truncated`
    closest: str  # the first state met with the most nearly equal hands, as a deal, the leader's hand first
    imbalance: int  # that state's cards away from equal hands: |n0 - n1| // 2 (0: as equal as the deck allows)
    deals: list[FoundDeal]  # the balanced deals entering it (none for an odd deck), the longest games first
    truncated: bool  # the state budget stopped the search: more states (and deals) may enter it


def _mirror(state: tuple) -> tuple:
    lead, hands = state[0], state[1]
    return (1 - lead, (hands[1], hands[0]))


def _as_deal(row, n0: int, lead: int) -> list[list[int]]:
    hands = [[int(v) for v in row[:n0]], [int(v) for v in row[n0:]]]
    return hands if lead == 0 else hands[::-1]


def _cycle_of(state: Sequence[Sequence[int]]) -> tuple[str, GameResult, list]:
    """The cycle a two-player state's game enters: its canonical state (a deal, the leader's hand first), the
    game from it (preperiod 0) and its states in order from it; one sentence if the game ends."""
    check_deal(state)
    if len(state) != 2:
        raise BmnError(f"backward play is defined for two players; this state has {len(state)} hands")
    canonical = cycle_state(state)
    if canonical is None:
        raise BmnError("this state's game ends: it enters no cycle")
    seq, split = as_sequence(parse_deal(canonical))
    return canonical, GameResult.from_row(play_batch(seq[None, :], split)[0]), walk(parse_deal(canonical)).cycle


def closure(state: Sequence[Sequence[int]], *, max_states: int = DEFAULT_MAX_STATES) -> Closure:
    """The backward closure of the cycle that this two-player state's game enters (hand 1 leading).

    The roots are the cycle's states from its canonical one (so the same cycle gives the same
    closure from whichever state it was met), each skipping its predecessor on the cycle; the
    search visits at most `max_states` ancestors. The search sees both leaders' seats: a cycle
    that is its own mirror (hands swapped, the other leader) is met from both seats, so its count
    of states seen from the leader's seat is half the states visited.
    """
    canonical, result, cycle = _cycle_of(state)
    roots = States.of(cycle)
    found, searched = _search(roots, roots.previous(cyclic=True), max_states)
    # The most nearly balanced state: the cycle's own first (in order from the canonical state), then
    # the search's first.
    lead, hands = min(cycle, key=lambda s: abs(len(s[1][0]) - len(s[1][1])))
    closest = [list(hands[lead]), list(hands[1 - lead])]
    gap = abs(len(hands[0]) - len(hands[1]))
    if searched.closest.gap < gap:
        met = searched.closest
        closest, gap = _as_deal(met.row, met.n0, met.leader), met.gap
    seen = len(cycle) + searched.visited
    if _mirror(cycle[0]) in set(cycle):
        seen = -(-seen // 2)  # each state is met from both seats (rounded up: a lower bound if truncated)
    deals = _cycle_deals(roots, found, result.cycle_id)
    return Closure(result, canonical, seen, format_deal(closest), gap // 2, deals, searched.truncated)


@dataclass
class Entering:
    """Every trick-boundary state whose game enters a cycle, the cycle's own states included."""

    cycle: GameResult  # the game of its canonical state (preperiod 0)
    deals: list[str]  # each state written as a deal, its leader's hand first (a deal is led by hand 1), sorted
    truncated: bool  # the state budget stopped the search: more states may enter it

    def splits(self) -> dict[tuple[int, int], int]:
        """How many of the deals hold each split (the leader's cards, the other's), the leader's largest first."""
        out: dict[tuple[int, int], int] = {}
        for deal in self.deals:
            lead, other = deal.split("/")
            out[(len(lead), len(other))] = out.get((len(lead), len(other)), 0) + 1
        return dict(sorted(out.items(), key=lambda kv: (-kv[0][0], kv[0][1])))


def entering(state: Sequence[Sequence[int]], *, max_states: int = DEFAULT_MAX_STATES) -> Entering:
    """Every state, of every split, whose game enters the cycle of this two-player state's game (`closure`
    counts them; this lists them): each written as a deal led by its leader, played forward by the engine and
    checked to enter the cycle (a state that does not is a bug and raises)."""
    _, result, cycle = _cycle_of(state)
    roots = States.of(cycle)
    skips = roots.previous(cyclic=True)
    total = roots.rows.shape[1]
    preds = States(np.empty((2 * total, total), dtype=np.uint8), np.empty(2 * total, dtype=np.int64),
                   np.empty(2 * total, dtype=np.int64))
    pred_cards = np.empty(2 * total, dtype=np.int64)
    pile_owner = np.empty(total, dtype=np.int64)

    def led(row, n0, leader) -> str:
        hands = [row[:n0], row[n0:]]
        return format_deal(hands if leader == 0 else hands[::-1])

    deals = {led(roots.rows[r], roots.n0[r], roots.leader[r]) for r in range(len(roots.n0))}
    visited, truncated = 0, False
    for r in range(len(roots.n0)):
        n = predecessors(roots.rows[r], roots.n0[r], roots.leader[r], pile_owner, preds, pred_cards)
        stack = [(preds.rows[j].copy(), int(preds.n0[j]), int(preds.leader[j])) for j in range(n)
                 if not _same(preds, j, skips, r)]
        while stack and not truncated:
            if visited >= max_states:
                truncated = True
                break
            row, n0, leader = stack.pop()
            visited += 1
            deals.add(led(row, n0, leader))
            n = predecessors(row, n0, leader, pile_owner, preds, pred_cards)
            stack += [(preds.rows[j].copy(), int(preds.n0[j]), int(preds.leader[j])) for j in range(n)]
    listed = sorted(deals)
    by_split: dict[tuple[int, int], list[str]] = {}
    for deal in listed:
        lead, other = deal.split("/")
        by_split.setdefault((len(lead), len(other)), []).append(deal)
    for split_, group in by_split.items():
        rows = np.array([as_sequence(parse_deal(d))[0] for d in group], dtype=np.uint8)
        for deal, played in zip(group, play_batch(rows, split_)):
            got = GameResult.from_row(played)
            if got.outcome != "cycle" or got.cycle_id != result.cycle_id:
                raise RuntimeError(f"backward play found {deal}, which does not enter cycle {result.cycle_id}")
    return Entering(result, listed, truncated)


def extend(deal: Sequence[Sequence[int]], *, max_states: int = DEFAULT_MAX_STATES,
           per_root_min: int = 2000) -> BackwardResult:
    """Balanced deals whose games pass through a state of this finite game and are longer.

    Every trick-boundary state of the game is a root; from each, the search follows every
    predecessor except the game's own previous state (searched as the previous root), within
    an equal share of `max_states` (at least `per_root_min`).
    """
    _check_two_player_balanced(deal)
    seq0, split = as_sequence(deal)
    original = GameResult.from_row(play_batch(seq0[None, :], split)[0])
    if original.outcome == "cycle":
        return BackwardResult(original)
    path = game_path(seq0, split[0], original.tricks + 1)
    per_root = max(per_root_min, max_states // max(1, len(path)))
    climb = climb_from_states(path, original.cards, max_states=max_states, per_root=per_root)
    deals = _replayed(climb.rows, climb.back_tricks,
                      lambda i, r: r.outcome == "win" and r.cards == climb.lengths[i],
                      "pass through a state of the game")
    return BackwardResult(original, deals, climb.visited, climb.truncated, len(deals))
