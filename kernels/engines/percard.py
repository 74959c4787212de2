"""The per-card engine: any deck of up to MAX_CARDS cards, 2 to 8 players.

It plays one card at a time from ring buffers, exactly as docs/rules.md reads. It is the engine for
every deal the bitmask engine (kernels/engines/bitmask.py) cannot hold and a second reference in
the tests; with its two-player trick (`play_trick_two`) it is the straightforward per-card
kernel that `bmn bench` reports beside the fast one, as a baseline.

A game is played in a workspace (kernels/engines/workspace.py): ring buffers per hand, in three
slots (the game, Brent's saved state, a second runner for measuring the preperiod).

Cycle detection is Brent's algorithm over trick-boundary states: exact (no card cap), with one
saved state, so memory per game is bounded. Once a repeat is seen, the period is known; the
preperiod comes from replaying the game with a second runner a period ahead.
"""

from __future__ import annotations

import numpy as np

from .._jit import kernel
from ..cycleid import SEPARATOR, bytes_less, fnv1a64_array
from ..game import (
    CYCLE,
    F_CARDS,
    F_CYCLE_ID,
    F_OUTCOME,
    F_PER_CARDS,
    F_PER_TRICKS,
    F_PRE_CARDS,
    F_PRE_TRICKS,
    F_TRICKS,
    F_WINNER,
    WIN,
)


@kernel
def load(deal, split, s, hands, head, size, still_in):
    """Put a deal (one card sequence cut by `split`) into slot s."""
    start = 0
    for p in range(split.shape[0]):
        for i in range(split[p]):
            hands[s, p, i] = deal[start + i]
        head[s, p] = 0
        size[s, p] = split[p]
        still_in[s, p] = 1
        start += split[p]


@kernel
def copy_slot(src, dst, hands, head, size, still_in):
    """Copy slot src into slot dst (re-based so every hand starts at index 0)."""
    mask = hands.shape[2] - 1
    for p in range(hands.shape[1]):
        h = head[src, p]
        for i in range(size[src, p]):
            hands[dst, p, i] = hands[src, p, (h + i) & mask]
        head[dst, p] = 0
        size[dst, p] = size[src, p]
        still_in[dst, p] = still_in[src, p]


@kernel
def same_state(a, b, leader_a, leader_b, hands, head, size, still_in):
    if leader_a != leader_b:
        return False
    n = hands.shape[1]
    for p in range(n):
        if size[a, p] != size[b, p] or still_in[a, p] != still_in[b, p]:
            return False
    mask = hands.shape[2] - 1
    for p in range(n):
        ha = head[a, p]
        hb = head[b, p]
        for i in range(size[a, p]):
            if hands[a, p, (ha + i) & mask] != hands[b, p, (hb + i) & mask]:
                return False
    return True


@kernel
def sole_holder(s, size):
    """The only player holding cards in slot s, or -1 if two or more hold cards."""
    holder = -1
    for p in range(size.shape[1]):
        if size[s, p] > 0:
            if holder >= 0:
                return -1
            holder = p
    return holder


@kernel(inline="always")
def _next_in(s, p, still_in):
    n = still_in.shape[1]
    q = p + 1
    if q == n:
        q = 0
    while still_in[s, q] == 0:
        q += 1
        if q == n:
            q = 0
    return q


@kernel(inline="always")
def _take_pile(s, w, pile, npile, hands, head, size):
    # The pile goes under the taker's hand in the order it was played (docs/rules.md): the first card
    # played ends up nearest the top of the added block.
    mask = hands.shape[2] - 1
    tail = head[s, w] + size[s, w]
    for i in range(npile):
        hands[s, w, (tail + i) & mask] = pile[i]
    size[s, w] += npile


@kernel
def play_trick(s, leader, hands, head, size, still_in, pile):
    """Play one trick in slot s from a boundary where `leader` leads and two or more hold cards.

    Returns (next leader or winner, cards played, tricks counted (0 or 1), game over).
    """
    mask = hands.shape[2] - 1
    n = hands.shape[1]
    npile = 0
    owed = 0  # cards still to pay for the last penalty card; 0 in free play
    creditor = -1
    p = leader
    while True:
        if size[s, p] == 0:
            # A player who must play and holds no card is out.
            still_in[s, p] = 0
            left = 0
            last = -1
            for q in range(n):
                if still_in[s, q] != 0:
                    left += 1
                    last = q
            if left == 1:
                # The last player in takes the pile; that pickup counts as a trick.
                _take_pile(s, last, pile, npile, hands, head, size)
                return last, npile, 1 if npile > 0 else 0, True
            if owed > 0:
                # Out while paying: the creditor takes the pile and leads.
                _take_pile(s, creditor, pile, npile, hands, head, size)
                holder = sole_holder(s, size)
                if holder >= 0:
                    return holder, npile, 1, True
                return creditor, npile, 1, False
            # Out in free play: the pile stays, the next player still in plays.
            p = _next_in(s, p, still_in)
            continue
        h = head[s, p]
        card = hands[s, p, h]
        head[s, p] = (h + 1) & mask
        size[s, p] -= 1
        pile[npile] = card
        npile += 1
        if card != 0:
            owed = card
            creditor = p
            p = _next_in(s, p, still_in)
        elif owed > 0:
            owed -= 1
            if owed == 0:
                _take_pile(s, creditor, pile, npile, hands, head, size)
                holder = sole_holder(s, size)
                if holder >= 0:
                    return holder, npile, 1, True
                return creditor, npile, 1, False
        else:
            p = _next_in(s, p, still_in)


@kernel(inline="always")
def play_trick_two(leader, hands, head, size, pile):
    """One trick of a two-player game in slot 0, the straightforward way: one card at a time,
    the next player is simply the other one. Returns (leader or winner, cards, game over)."""
    mask = hands.shape[2] - 1
    cards = hands[0]
    top = head[0]
    count = size[0]
    p = leader
    npile = 0
    owed = 0
    while True:
        if count[p] == 0:
            # p must play and holds no card: the other takes the pile (a trick) and has every card.
            return p ^ 1, npile, True
        h = top[p]
        card = cards[p, h]
        top[p] = (h + 1) & mask
        count[p] -= 1
        pile[npile] = card
        npile += 1
        if card != 0:
            owed = card
            p ^= 1
        elif owed > 0:
            owed -= 1
            if owed == 0:
                # The payer paid in full: the creditor picks up the pile, in the order played.
                w = p ^ 1
                tail = top[w] + count[w]
                for i in range(npile):
                    cards[w, (tail + i) & mask] = pile[i]
                count[w] += npile
                return w, npile, count[p] == 0
        else:
            p ^= 1


@kernel
def encode_state(s, leader, hands, head, size, out):
    """The state written from the leader's seat (kernels/cycleid.py), into `out`."""
    mask = hands.shape[2] - 1
    n = hands.shape[1]
    k = 0
    for j in range(n):
        p = (leader + j) % n
        h = head[s, p]
        for i in range(size[s, p]):
            out[k] = hands[s, p, (h + i) & mask]
            k += 1
        out[k] = SEPARATOR
        k += 1


@kernel
def _cycle_figures(deal, split, leader0, period, ws, out):
    """Given the exact period, replay to find the preperiod, the cards, and the cycle id."""
    hands, head, size, still_in, pile, enc = ws
    # Runner 2 goes `period` tricks ahead; then both step until they stand on the same state.
    load(deal, split, 1, hands, head, size, still_in)
    load(deal, split, 2, hands, head, size, still_in)
    lead1 = leader0
    lead2 = leader0
    cards1 = 0
    cards2 = 0
    for _ in range(period):
        lead2, c, t, over = play_trick(2, lead2, hands, head, size, still_in, pile)
        cards2 += c
    pre_tricks = 0
    while not same_state(1, 2, lead1, lead2, hands, head, size, still_in):
        lead1, c, t, over = play_trick(1, lead1, hands, head, size, still_in, pile)
        cards1 += c
        lead2, c, t, over = play_trick(2, lead2, hands, head, size, still_in, pile)
        cards2 += c
        pre_tricks += 1
    # Walk one period from the cycle's entry and keep the smallest encoding.
    best = enc[0]
    cur = enc[1]
    encode_state(1, lead1, hands, head, size, best)
    for _ in range(period - 1):
        lead1, c, t, over = play_trick(1, lead1, hands, head, size, still_in, pile)
        encode_state(1, lead1, hands, head, size, cur)
        if bytes_less(cur, best):
            best[:] = cur
    out[F_OUTCOME] = CYCLE
    out[F_WINNER] = -1
    out[F_PRE_TRICKS] = pre_tricks
    out[F_PRE_CARDS] = cards1
    out[F_PER_TRICKS] = period
    out[F_PER_CARDS] = cards2 - cards1
    out[F_TRICKS] = pre_tricks + period
    out[F_CARDS] = cards2
    out[F_CYCLE_ID] = np.int64(fnv1a64_array(best))


@kernel
def play_deal(deal, split, leader0, brent_start, two, ws, out):
    """Play one deal (card sequence `deal`, hand sizes `split`, `leader0` leads) in the workspace
    `ws` into `out`.

    `two`: play the tricks of a two-player deal with `play_trick_two` (the per-card baseline
    `bmn bench` reports) rather than the n-player `play_trick`.
    """
    hands, head, size, still_in, pile, _enc = ws
    load(deal, split, 0, hands, head, size, still_in)
    leader = leader0
    tricks = 0
    cards = 0
    holder = sole_holder(0, size)
    if holder >= 0:
        out[F_OUTCOME] = WIN
        out[F_WINNER] = holder
        out[F_TRICKS] = 0
        out[F_CARDS] = 0
        return
    # Brent: `saved` is the state at the last power-of-two checkpoint; the first repeat of it
    # gives the exact period.
    saved_leader = -1
    power = 1
    lam = 0
    while True:
        if two:
            leader, c, over = play_trick_two(leader, hands, head, size, pile)
            t = 1
        else:
            leader, c, t, over = play_trick(0, leader, hands, head, size, still_in, pile)
        tricks += t
        cards += c
        if over:
            out[F_OUTCOME] = WIN
            out[F_WINNER] = leader
            out[F_TRICKS] = tricks
            out[F_CARDS] = cards
            return
        if tricks < brent_start:
            continue
        lam += 1
        if saved_leader >= 0 and same_state(0, 1, leader, saved_leader, hands, head, size, still_in):
            _cycle_figures(deal, split, leader0, lam, ws, out)
            return
        if lam == power or saved_leader < 0:
            copy_slot(0, 1, hands, head, size, still_in)
            saved_leader = leader
            power *= 2
            lam = 0


# The two engines of this module, in the form every engine's one-deal kernel takes
# (kernels/engines/__init__.py): deal, hand sizes, leader, Brent's start, workspace, result row.
@kernel(inline="always")
def play_percard(deal, split, leader0, brent_start, ws, out):
    """`--engine percard`: two players, the two-player trick."""
    play_deal(deal, split, leader0, brent_start, True, ws, out)


@kernel(inline="always")
def play_general(deal, split, leader0, brent_start, ws, out):
    """`--engine general`: 2-8 players, the n-player trick."""
    play_deal(deal, split, leader0, brent_start, False, ws, out)
