"""The straightforward two-player kernel: one card at a time, as the rules read.

This is the baseline `bmn bench` reports beside the fast kernel, and a second reference in the
tests. It keeps the layout of kernels/engine.py (slot 0 of a workspace), so cycle detection
reuses that module's state comparison and, once a repeat is seen, its exact replay for the
preperiod and the cycle id. It plays any two-player deck up to MAX_CARDS cards.
"""

from __future__ import annotations

from numba import prange

from ._jit import kernel
from .engine import _cycle_figures, copy_slot, load, new_workspace, same_state
from .result import F_CARDS, F_OUTCOME, F_TRICKS, F_WINNER, WIN


@kernel(inline="always")
def trick_percard2(leader, hands, head, size, pile):
    """One trick of a two-player game in slot 0. Returns (leader or winner, cards, game over)."""
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
def play_percard2(deal, split, leader0, brent_start, hands, head, size, still_in, pile, enc, out):
    """Play one two-player deal into `out` (same arguments as engine.play_general)."""
    load(deal, split, 0, hands, head, size, still_in)
    if size[0, 0] == 0 or size[0, 1] == 0:
        out[F_OUTCOME] = WIN
        out[F_WINNER] = 1 if size[0, 0] == 0 else 0
        out[F_TRICKS] = 0
        out[F_CARDS] = 0
        return
    leader = leader0
    tricks = 0
    cards = 0
    saved_leader = -1
    power = 1
    lam = 0
    while True:
        leader, c, over = trick_percard2(leader, hands, head, size, pile)
        tricks += 1
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
            _cycle_figures(deal, split, leader0, lam, hands, head, size, still_in, pile, enc, out)
            return
        if lam == power or saved_leader < 0:
            copy_slot(0, 1, hands, head, size, still_in)
            saved_leader = leader
            power *= 2
            lam = 0


@kernel(parallel=True)
def play_batch_percard2(deals, split, leader0, brent_start, out):
    n_deals = deals.shape[0]
    chunk = 64
    n_chunks = (n_deals + chunk - 1) // chunk
    for c in prange(n_chunks):
        hands, head, size, still_in, pile, enc = new_workspace(2, deals.shape[1])
        for i in range(c * chunk, min(n_deals, (c + 1) * chunk)):
            play_percard2(deals[i], split, leader0, brent_start, hands, head, size, still_in, pile, enc, out[i])
