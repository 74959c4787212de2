"""The naive gene search the fast one (kernels/genes.py) is held to: the gadget played one card at a time from a
ring, every piece of a pool walked depth first with each depth's state copied whole, and each piece that returns
checked for a gene by following F from scratch. No lookahead, no bounds, no symmetry: slow and plainly right."""

from __future__ import annotations

import numpy as np
from numba import njit

RING = 128  # more cards than any deck it is asked about
DONE, NEED, DEAD = 0, 1, 2


@njit(cache=True)
def _advance(piece, n, used, s_ring, s_head, s_len, pile, pile_len, q, q_len, turn, owed, small, ns):
    """Play on from a state until the gadget returns (DONE), needs B's card `n` (NEED) or S loses (DEAD)."""
    while True:
        if turn == 0:
            if used == n:
                return NEED, used, s_head, s_len, pile_len, q_len, turn, owed
            c = piece[used]
            used += 1
        else:
            if s_len == 0:
                return DEAD, used, s_head, s_len, pile_len, q_len, turn, owed
            c = s_ring[s_head]
            s_head = (s_head + 1) & (RING - 1)
            s_len -= 1
        pile[pile_len] = c
        pile_len += 1
        if c > 0:
            owed = c
            turn = 1 - turn
            continue
        if owed > 0:
            owed -= 1
            if owed == 0:
                winner = 1 - turn  # the player of the last penalty card takes the pile
                if winner == 0:
                    for i in range(pile_len):
                        q[q_len + i] = pile[i]
                    q_len += pile_len
                else:
                    for i in range(pile_len):
                        s_ring[(s_head + s_len + i) & (RING - 1)] = pile[i]
                    s_len += pile_len
                pile_len = 0
                turn = winner
                if winner == 0 and s_len == ns:
                    same = True
                    for i in range(ns):
                        if s_ring[(s_head + i) & (RING - 1)] != small[i]:
                            same = False
                    if same:
                        return DONE, used, s_head, s_len, pile_len, q_len, turn, owed
            continue
        turn = 1 - turn


@njit(cache=True)
def gadget(piece, n, small, q):
    """Play B = piece[:n] (leading) against S = small: (outcome, cards of B read, |block|), the block in q."""
    s_ring = np.zeros(RING, np.uint8)
    ns = small.shape[0]
    for i in range(ns):
        s_ring[i] = small[i]
    pile = np.zeros(RING, np.uint8)
    out, used, _h, _l, _p, q_len, _t, _o = _advance(piece, n, 0, s_ring, 0, ns, pile, 0, q, 0, 0, 0, small, ns)
    return out, used, q_len


@njit(cache=True)
def _successor(piece, n, small, tail, nxt):
    nt = tail.shape[0]
    for i in range(nt):
        if piece[i] != tail[i]:
            return False
    q = np.zeros(RING, np.uint8)
    out, used, q_len = gadget(piece, n, small, q)
    if out != DONE or used != n:
        return False
    for i in range(nt):
        if q[n - nt + i] != tail[i]:
            return False
    for i in range(nt):
        nxt[i] = tail[i]
    for i in range(n - nt):
        nxt[nt + i] = q[i]
    return True


@njit(cache=True)
def _least_gene(piece, n, small, tail, max_orbit):
    """Whether piece[:n] is a gene (F brings it back within max_orbit steps) in its least phase."""
    cur = piece[:n].copy()
    nxt = np.zeros(n, np.uint8)
    for _ in range(max_orbit):
        if not _successor(cur, n, small, tail, nxt):
            return False
        first = 0
        while first < n and nxt[first] == piece[first]:
            first += 1
        if first == n:
            return True
        if nxt[first] < piece[first]:
            return False
        cur[:] = nxt
    return False


@njit(cache=True)
def _pieces(avail, max_len, small, tail, max_orbit, exact, genes, lengths, max_choices=0):
    """Every piece of at most max_len cards from `avail` (with `exact`, holding all of them), depth first; each
    gene in its least phase written out (stopping after max_choices choices, where given). Returns (written,
    choices)."""
    nv = avail.shape[0]
    ns = small.shape[0]
    cap = max_len + 1
    s_rings = np.zeros((cap, RING), np.uint8)
    piles = np.zeros((cap, RING), np.uint8)
    qs = np.zeros((cap, RING), np.uint8)
    st = np.zeros((cap, 6), np.int64)
    choice = np.zeros(cap, np.int64)
    piece = np.zeros(cap, np.uint8)
    left = avail.copy()
    written = 0
    choices = 0
    for i in range(ns):
        s_rings[0, i] = small[i]
    st[0, 1] = ns
    d = 0
    choice[0] = -1
    while d >= 0:
        if choice[d] >= 0:
            left[choice[d]] += 1
        v = choice[d] + 1
        while v < nv and left[v] == 0:
            v += 1
        if v >= nv or d >= max_len:
            choice[d] = -1
            d -= 1
            continue
        choice[d] = v
        left[v] -= 1
        piece[d] = v
        choices += 1
        if max_choices and choices > max_choices:
            break
        e = d + 1
        s_rings[e, :] = s_rings[d, :]
        piles[e, :] = piles[d, :]
        qs[e, :] = qs[d, :]
        out, used, h, ln, pl, ql, tu, ow = _advance(piece, e, d, s_rings[e], st[d, 0], st[d, 1], piles[e], st[d, 2],
                                                    qs[e], st[d, 3], st[d, 4], st[d, 5], small, ns)
        if out == DONE:
            if used == e and (not exact or e == max_len) and _least_gene(piece, e, small, tail, max_orbit):
                genes[written, :e] = piece[:e]
                lengths[written] = e
                written += 1
            continue
        if out == DEAD:
            continue
        st[e, 0], st[e, 1], st[e, 2], st[e, 3], st[e, 4], st[e, 5] = h, ln, pl, ql, tu, ow
        d = e
        choice[d] = -1
    return written, choices


def every_gene(pool, max_len, small=(1, 0), tail=(0,), exact=False, max_orbit=64) -> set[tuple[int, ...]]:
    """The least phase of every gene of at most max_len cards from `pool` (with `exact`: holding all of it)."""
    genes = np.zeros((200_000, max_len + 1), np.uint8)
    lengths = np.zeros(200_000, np.int64)
    written, _ = _pieces(np.array(pool, np.int64), max_len, np.array(small, np.uint8), np.array(tail, np.uint8),
                         max_orbit, exact, genes, lengths)
    return {tuple(int(v) for v in genes[k, :lengths[k]]) for k in range(written)}


def gadget_of(big, small) -> tuple[int, int, tuple[int, ...]]:
    """The naive gadget on plain tuples: (outcome, cards of big read, the block)."""
    q = np.zeros(RING, np.uint8)
    out, used, q_len = gadget(np.array(big, np.uint8), len(big), np.array(small, np.uint8), q)
    return int(out), int(used), tuple(int(v) for v in q[:q_len])
