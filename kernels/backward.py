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

A state is stored as one row of `total` cards (hand 1, then hand 2) plus the size of hand 1 and
the leader (0 or 1).

The wrappers:

- ancestors(deal): for a cycle, every balanced deal whose game enters the same cycle (backward
  play from all states of the cycle); for a finite game, the balanced ancestors of its start.
- climb_from_states(states, cards): from each of a game's first trick-boundary states, the
  balanced ancestors off the game's own path whose games are longer than the game: the one climb
  that `extend` and the `climb` and `longest` strategies make.
- extend(deal): the climb from every trick-boundary state of a finite game, its deals replayed.

Every deal found is replayed forward with the engine, and must reach the claimed cycle (same
cycle_id) or pass through the claimed state (cards add up); a mismatch is a bug and raises.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, Sequence

import numpy as np

from ._jit import kernel
from .cyclestate import cycle_state, walk
from .engines import new_workspace
from .engines.percard import load, play_trick
from .errors import BmnError
from .game import GameResult
from .notation import check_deal, format_deal, parse_deal
from .play import as_sequence, play_batch


@kernel
def predecessors(row, n0, leader, pile_owner, out_rows, out_n0, out_leader, out_cards):
    """All predecessors of the state (row, n0, leader); returns how many were written."""
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
            dst = out_rows[found]
            # Physical hand 1 first. Each player's trick cards go back on top, in played order.
            lead_pos = 0 if leader == 0 else new_other_size
            other_pos = new_lead_size if leader == 0 else 0
            a = lead_pos
            b = other_pos
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
            out_n0[found] = new_lead_size if leader == 0 else new_other_size
            out_leader[found] = starter
            out_cards[found] = k
            found += 1
    return found


@kernel
def _same(row_a, n0_a, lead_a, row_b, n0_b, lead_b):
    if n0_a != n0_b or lead_a != lead_b:
        return False
    for i in range(row_a.shape[0]):
        if row_a[i] != row_b[i]:
            return False
    return True


@kernel
def search_ancestors(roots, root_n0, root_leader, skip, skip_n0, skip_leader, has_skip, max_states,
                     per_root, out_rows, out_tricks, out_cards, out_root, closest_row, closest):
    """Walk the ancestor trees of every root; collect the balanced ancestors.

    For root r, a predecessor equal to skip[r] is not followed (has_skip[r] == 1): that is the
    root's predecessor on its own game or cycle, searched from another root. Each root's tree is
    walked for at most `per_root` states, all of them for at most `max_states`.
    A balanced ancestor led by hand 2 is reported as the swapped deal (hand 1 leads a deal).
    The first visited state with the most nearly equal hands goes into closest_row, with
    closest = [cards in hand 1, leader, |n0 - n1|] (closest[2] > total: none visited).
    Returns (balanced ancestors written, states visited, truncated).
    """
    total = roots.shape[1]
    half = total // 2
    cap = max_states + 2 * total + 2
    stack = np.empty((cap, total), dtype=np.uint8)
    st_n0 = np.empty(cap, dtype=np.int64)
    st_lead = np.empty(cap, dtype=np.int64)
    st_tricks = np.empty(cap, dtype=np.int64)
    st_cards = np.empty(cap, dtype=np.int64)
    pred_rows = np.empty((2 * total, total), dtype=np.uint8)
    pred_n0 = np.empty(2 * total, dtype=np.int64)
    pred_lead = np.empty(2 * total, dtype=np.int64)
    pred_cards = np.empty(2 * total, dtype=np.int64)
    pile_owner = np.empty(total, dtype=np.int64)
    row = np.empty(total, dtype=np.uint8)
    found = 0
    visited = 0
    truncated = False
    closest[2] = total + 1
    for r in range(roots.shape[0]):
        top = 0
        root_visits = 0
        n = predecessors(roots[r], root_n0[r], root_leader[r], pile_owner, pred_rows, pred_n0, pred_lead, pred_cards)
        for j in range(n):
            if has_skip[r] == 1 and _same(pred_rows[j], pred_n0[j], pred_lead[j], skip[r], skip_n0[r], skip_leader[r]):
                continue
            stack[top] = pred_rows[j]
            st_n0[top] = pred_n0[j]
            st_lead[top] = pred_lead[j]
            st_tricks[top] = 1
            st_cards[top] = pred_cards[j]
            top += 1
        while top > 0:
            if visited >= max_states or root_visits >= per_root:
                truncated = True
                break
            top -= 1
            visited += 1
            root_visits += 1
            row[:] = stack[top]
            n0 = st_n0[top]
            lead = st_lead[top]
            tricks = st_tricks[top]
            cards = st_cards[top]
            if abs(2 * n0 - total) < closest[2]:
                closest_row[:] = row
                closest[0] = n0
                closest[1] = lead
                closest[2] = abs(2 * n0 - total)
            if total % 2 == 0 and n0 == half:
                if found < out_rows.shape[0]:
                    if lead == 0:
                        out_rows[found] = row
                    else:
                        out_rows[found, :half] = row[half:]
                        out_rows[found, half:] = row[:half]
                    out_tricks[found] = tricks
                    out_cards[found] = cards
                    out_root[found] = r
                    found += 1
                else:
                    truncated = True
            n = predecessors(row, n0, lead, pile_owner, pred_rows, pred_n0, pred_lead, pred_cards)
            if top + n > cap:
                truncated = True
                break
            for j in range(n):
                stack[top] = pred_rows[j]
                st_n0[top] = pred_n0[j]
                st_lead[top] = pred_lead[j]
                st_tricks[top] = tricks + 1
                st_cards[top] = cards + pred_cards[j]
                top += 1
        if visited >= max_states:
            break
    return found, visited, truncated


@kernel
def trace_states(deal, size0, max_states, hands, head, size, still_in, pile):
    """The trick-boundary states of a two-player game, until it ends or `max_states` are listed.

    Returns (rows, n0, leader, cards before each state, count, game over). The final state of a
    finished game is not listed (nothing can be played from it).
    """
    total = deal.shape[0]
    split = np.empty(2, dtype=np.int64)
    split[0] = size0
    split[1] = total - size0
    load(deal, split, 0, hands, head, size, still_in)
    rows = np.empty((max_states, total), dtype=np.uint8)
    n0 = np.empty(max_states, dtype=np.int64)
    leader = np.empty(max_states, dtype=np.int64)
    cards = np.empty(max_states, dtype=np.int64)
    mask = hands.shape[2] - 1
    lead = 0
    played = 0
    count = 0
    over = size[0, 0] == 0 or size[0, 1] == 0
    while not over and count < max_states:
        k = 0
        for p in range(2):
            h = head[0, p]
            for i in range(size[0, p]):
                rows[count, k] = hands[0, p, (h + i) & mask]
                k += 1
        n0[count] = size[0, 0]
        leader[count] = lead
        cards[count] = played
        count += 1
        lead, c, t, over = play_trick(0, lead, hands, head, size, still_in, pile)
        played += c
    return rows, n0, leader, cards, count, over


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
        raise BmnError("backward play is defined for two players; this deal has %d hands" % len(deal))
    total = sum(len(h) for h in deal)
    if total % 2:
        raise BmnError(f"the deal has {total} cards, which cannot be split into two equal hands")


def _rows(states) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rows = np.array([list(h[0]) + list(h[1]) for _, h in states], dtype=np.uint8)
    n0 = np.array([len(h[0]) for _, h in states], dtype=np.int64)
    lead = np.array([leader for leader, _ in states], dtype=np.int64)
    return rows, n0, lead


# Balanced ancestors kept per search at most, unless told otherwise; a search that finds more
# says it was truncated.
MAX_FOUND = 1 << 18


class FoundBuffers:
    """Where `search_ancestors` writes the balanced ancestors it finds, kept from one search to the next.

    A search that fills them is run again with twice the room, up to `limit` (None: no limit);
    one that fills `limit` is truncated (the kernel says so).
    """

    def __init__(self, total: int, capacity: int = 4096, limit: int | None = None):
        self.total = total
        self.limit = limit
        self._allocate(capacity)

    @classmethod
    def bounded(cls, total: int, max_states: int) -> "FoundBuffers":
        """Room for every balanced ancestor of a search of `max_states` states, or MAX_FOUND of them."""
        capacity = max(1, min(MAX_FOUND, max_states + 1))
        return cls(total, capacity, capacity)

    def _allocate(self, capacity: int) -> None:
        self.rows = np.zeros((capacity, self.total), dtype=np.uint8)
        self.tricks = np.zeros(capacity, dtype=np.int64)
        self.cards = np.zeros(capacity, dtype=np.int64)
        self.root = np.zeros(capacity, dtype=np.int64)
        # The search's most nearly balanced state (search_ancestors' closest_row, closest).
        self.closest_row = np.zeros(self.total, dtype=np.uint8)
        self.closest = np.zeros(3, dtype=np.int64)

    def search(self, rows, n0, lead, s_rows, s_n0, s_lead, has_skip, max_states: int,
               per_root: int) -> tuple[int, int, bool]:
        """Run `search_ancestors` from these roots into the buffers: (found, states visited, truncated)."""
        while True:
            found, visited, truncated = search_ancestors(
                rows, n0, lead, s_rows, s_n0, s_lead, has_skip, int(max_states), int(per_root),
                self.rows, self.tricks, self.cards, self.root, self.closest_row, self.closest,
            )
            capacity = self.rows.shape[0]
            if found < capacity or (self.limit is not None and capacity >= self.limit):
                return int(found), int(visited), bool(truncated)
            self._allocate(2 * capacity if self.limit is None else min(2 * capacity, self.limit))


def _search(roots, skips, max_states: int):
    """Run the kernel; skips[r] is the state not to follow from root r (or None)."""
    rows, n0, lead = _rows(roots)
    has_skip = np.array([0 if s is None else 1 for s in skips], dtype=np.int64)
    filler = roots[0]
    s_rows, s_n0, s_lead = _rows([s if s is not None else filler for s in skips])
    out = FoundBuffers.bounded(rows.shape[1], max_states)
    found, visited, truncated = out.search(rows, n0, lead, s_rows, s_n0, s_lead, has_skip, max_states, max_states)
    return out.rows[:found], out.tricks[:found], out.cards[:found], visited, truncated, out


class GameStates(NamedTuple):
    """A game's first trick-boundary states, in play order, as the kernels hold them."""

    rows: np.ndarray  # one row per state: hand 1, then hand 2
    n0: np.ndarray  # cards in hand 1
    leader: np.ndarray  # 0 or 1
    before: np.ndarray  # cards played before the state

    def __len__(self) -> int:
        return self.rows.shape[0]

    def within(self, cards: int) -> "GameStates":
        """The states reached after at most `cards` cards."""
        count = int(np.searchsorted(self.before, cards, side="right"))
        return GameStates(self.rows[:count], self.n0[:count], self.leader[:count], self.before[:count])


def game_path(seq: np.ndarray, size0: int, max_states: int, workspace=None) -> GameStates:
    """The first `max_states` trick-boundary states of the game of `seq` (hand 1 holds its first
    `size0` cards and leads), played in `workspace` (new_workspace(2, len(seq)); a new one if None)."""
    if workspace is None:
        workspace = new_workspace(2, seq.shape[0])
    hands, head, size, still_in, pile, _enc = workspace
    rows, n0, lead, before, count, _over = trace_states(seq, int(size0), int(max_states), hands, head, size,
                                                        still_in, pile)
    return GameStates(rows[:count], n0[:count], lead[:count], before[:count])


class Climb(NamedTuple):
    """The balanced deals found by one climb whose games are longer than the climbed game."""

    rows: np.ndarray  # the deals, hand 1 then hand 2 (hand 1 leads), in search order
    lengths: np.ndarray  # the cards each one's game lasts, as backward play counts them
    back_tricks: np.ndarray  # tricks un-played from the state it was found from
    visited: int  # ancestor states visited
    truncated: bool  # a budget (or the buffers' limit) stopped the search: there may be more


def climb_from_states(states: GameStates, cards: int, *, max_states: int, per_root: int,
                      buffers: FoundBuffers | None = None) -> Climb:
    """The balanced deals whose games pass through one of a game's states, off the game's own path,
    and last longer than its `cards` cards.

    `states` are the game's first states in play order (each the successor of the one before),
    each a root of backward play within `per_root` ancestor states (`max_states` in all); root t
    skips state t-1, its predecessor on the game's path, which is searched as root t-1. `buffers`
    are the search's output (kept across climbs); by default, room for `max_states` states.
    """
    if len(states) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Climb(np.zeros((0, states.rows.shape[1]), dtype=np.uint8), empty, empty, 0, False)
    rows, n0, lead, before = states
    if buffers is None:
        buffers = FoundBuffers.bounded(rows.shape[1], max_states)
    s_rows, s_n0, s_lead = np.roll(rows, 1, axis=0), np.roll(n0, 1), np.roll(lead, 1)
    has_skip = np.ones(len(states), dtype=np.int64)
    has_skip[0] = 0
    found, visited, truncated = buffers.search(rows, n0, lead, s_rows, s_n0, s_lead, has_skip, max_states, per_root)
    # A balanced ancestor of root t plays its back cards to reach state t, then the rest of the game.
    root = buffers.root[:found]
    lengths = buffers.cards[:found] + (cards - before[root])
    longer = lengths > cards
    return Climb(buffers.rows[:found][longer], lengths[longer], buffers.tricks[:found][longer], visited, truncated)


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
        cycle = walk(deal).cycle
        pairs = [(cycle[i], cycle[i - 1]) for i in range(len(cycle))]  # (root, its predecessor on the cycle)
    else:
        pairs = [((0, tuple(tuple(h) for h in deal)), None)]
    pairs = pairs[part::parts]
    result = BackwardResult(original)
    if not pairs:
        return result
    roots = [root for root, _ in pairs]
    rows, tricks, back_cards, visited, truncated, _ = _search(roots, [skip for _, skip in pairs], max_states)
    if original.outcome == "cycle":
        found = _cycle_deals(roots, rows, tricks, original.cycle_id)
    else:
        found = {}
        for seq, res, b, c in zip(rows, _replay(rows, half), tricks, back_cards):
            if res.outcome != "win" or res.cards != c + original.cards:
                raise RuntimeError("backward play found a deal that does not pass through the start")
            hands = format_deal([seq[:half], seq[half:]])
            found.setdefault(hands, FoundDeal(hands, res, int(b)))
    result.deals = sorted(found.values(), key=lambda d: (-d.result.cards, d.hands))[:limit]
    result.count = len(found)
    result.states = visited
    result.truncated = truncated
    return result


def _cycle_deals(roots, rows, tricks, cycle_id: str) -> dict[str, FoundDeal]:
    """The balanced deals entering a cycle, by their hands: its own balanced states (among `roots`,
    the cycle's states) and the balanced ancestors a search found (`rows`, `tricks` un-played), each
    replayed and checked to enter the cycle."""
    if not len(roots):
        return {}
    total = sum(len(h) for h in roots[0][1])
    half = total // 2
    direct = [list(h[0]) + list(h[1]) if lead == 0 else list(h[1]) + list(h[0])
              for lead, h in roots if total % 2 == 0 and len(h[0]) == half]
    all_rows = np.concatenate([np.array(direct, dtype=np.uint8).reshape(-1, total), rows])
    back = [0] * len(direct) + [int(t) for t in tricks]
    found: dict[str, FoundDeal] = {}
    for seq, res, b in zip(all_rows, _replay(all_rows, half), back):
        if res.outcome != "cycle" or res.cycle_id != cycle_id:
            raise RuntimeError(f"backward play found {format_deal([seq[:half], seq[half:]])}, "
                               f"which does not enter cycle {cycle_id}")
        hands = format_deal([seq[:half], seq[half:]])
        found.setdefault(hands, FoundDeal(hands, res, b))
    return found


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


def closure(state: Sequence[Sequence[int]], *, max_states: int = DEFAULT_MAX_STATES) -> Closure:
    """The backward closure of the cycle that this two-player state's game enters (hand 1 leading).

    The roots are the cycle's states from its canonical one (so the same cycle gives the same
    closure from whichever state it was met), each skipping its predecessor on the cycle; the
    search visits at most `max_states` ancestors. The search sees both leaders' seats: a cycle
    that is its own mirror (hands swapped, the other leader) is met from both seats, so its count
    of states seen from the leader's seat is half the states visited.
    """
    check_deal(state)
    if len(state) != 2:
        raise BmnError("backward play is defined for two players; this state has %d hands" % len(state))
    canonical = cycle_state(state)
    if canonical is None:
        raise BmnError("this state's game ends: it enters no cycle")
    cycle = walk(parse_deal(canonical)).cycle  # from the canonical state
    seq, split = as_sequence(parse_deal(canonical))
    result = GameResult.from_row(play_batch(seq[None, :], split)[0])
    pairs = [(cycle[i], cycle[i - 1]) for i in range(len(cycle))]
    rows, tricks, _, visited, truncated, out = _search(cycle, [skip for _, skip in pairs], max_states)
    # The most nearly balanced state: the cycle's own first (in order from the canonical state), then
    # the search's first.
    lead, hands = min(cycle, key=lambda s: abs(len(s[1][0]) - len(s[1][1])))
    closest = [list(hands[lead]), list(hands[1 - lead])]
    gap = abs(len(hands[0]) - len(hands[1]))
    if out.closest[2] < gap:
        closest, gap = _as_deal(out.closest_row, int(out.closest[0]), int(out.closest[1])), int(out.closest[2])
    seen = len(cycle) + visited
    if _mirror(cycle[0]) in set(cycle):
        seen = -(-seen // 2)  # each state is met from both seats (rounded up: a lower bound if truncated)
    deals = sorted(_cycle_deals(cycle, rows, tricks, result.cycle_id).values(),
                   key=lambda d: (-d.result.cards, d.hands))
    return Closure(result, canonical, seen, format_deal(closest), gap // 2, deals, truncated)


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
    states = game_path(seq0, split[0], original.tricks + 1)
    per_root = max(per_root_min, max_states // max(1, len(states)))
    climb = climb_from_states(states, original.cards, max_states=max_states, per_root=per_root)
    found: dict[str, FoundDeal] = {}
    for seq, result, b, want in zip(climb.rows, _replay(climb.rows, half), climb.back_tricks, climb.lengths):
        if result.outcome != "win" or result.cards != int(want):
            raise RuntimeError("backward play found a deal that does not pass through the game's state")
        hands_text = format_deal([seq[:half], seq[half:]])
        found.setdefault(hands_text, FoundDeal(hands_text, result, int(b)))
    deals = sorted(found.values(), key=lambda d: (-d.result.cards, d.hands))
    return BackwardResult(original, deals, climb.visited, climb.truncated, len(deals))
