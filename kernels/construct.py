"""Cycles built from independent pieces: the kernels of the `construct` strategy.

The gadget. A big hand B leads against a small hand S (`J-` by default). B plays its top cards; the
game goes on until, at a trick boundary, S holds exactly its small hand again and B is to lead. The
cards B played from its top are a *piece* P; the cards B picked up meanwhile, in order, are its
*block* Q, put under B's hand. Both hold the same cards (S gave back what it took), so |Q| = |P|. When
the gadget reads no card of B beyond P, what lies under P never matters: B = P X becomes B = X Q,
whatever X is.

Genes. With a tail T (a few cards, `-` by default), a piece P that starts with T and whose block ends
with T has a successor F(P) = T + Q[:-|T|]. In a hand B = P1 P2 ... Pk T the gadget turns P1 over
into the hand P2 ... Pk T Q1 = P2 ... Pk F(P1) T, so after one round every piece has moved one step
along F, in place. A piece that F brings back to itself after m steps is a *gene* (its orbit has m
phases), and every hand B = G1 ... Gk T of genes, in any order and phase, against S is a state on a
cycle of the game: the rounds permute finitely many such hands. So every multiset of genes whose
cards with S and T make the deck gives cycles, one per order and phase up to the rounds.

The kernels: `gadget` plays one piece, `successor` and `orbit_length` follow F; `pieces` walks every
piece (a DFS over B's next card, each state kept per depth so a card costs only the plays it causes)
and keeps the genes; `lookahead_genes` does the same while playing the piece's next successors beside
it, cutting a branch as soon as one of them cannot be a phase of a gene. Below them, in Python: genes by
composition (`genes_of`) and for every composition at once (`library`), multisets of compositions and
the hands they make (kernels/strategies/construct.py assembles them into cycles).
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel

RING = 128  # a ring buffer for S's hand: more than any deck's cards (MAX piece + small hand)
WIDTH = 128  # cards of a pile or a block, at most

# gadget outcomes
DONE = 0  # S holds its small hand again, B to lead
NEED = 1  # B must play a card beyond those given
DEAD = 2  # S has no card to play: the game ends (no piece)


@kernel(inline="always")
def _advance(piece, n, used, s_ring, s_head, s_len, pile, pile_len, q, q_len, turn, owed, small, ns):
    """Play on from a state until the gadget returns (DONE), needs B's card `n` (NEED) or S loses (DEAD).
    Returns (outcome, used, s_head, s_len, pile_len, q_len, turn, owed); arrays are changed in place."""
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
                            break
                    if same:
                        return DONE, used, s_head, s_len, pile_len, q_len, turn, owed
            continue
        turn = 1 - turn


@kernel
def gadget(piece, n, small, q):
    """Play B = piece[:n] (leading) against S = small. Returns (outcome, cards of B read, |block|), the
    block in q. DONE only when B read exactly its cards up to the return (any n past that is unread)."""
    s_ring = np.zeros(RING, np.uint8)
    ns = small.shape[0]
    for i in range(ns):
        s_ring[i] = small[i]
    pile = np.zeros(WIDTH, np.uint8)
    out, used, _h, _l, _p, q_len, _t, _o = _advance(piece, n, 0, s_ring, 0, ns, pile, 0, q, 0, 0, 0, small, ns)
    return out, used, q_len


@kernel
def successor(piece, n, small, tail, nxt):
    """F(piece): tail + block[:-|tail|] into nxt, when piece is a piece of exactly n cards that starts with
    the tail and whose block ends with it. Returns True when it is."""
    nt = tail.shape[0]
    for i in range(nt):
        if piece[i] != tail[i]:
            return False
    q = np.zeros(WIDTH, np.uint8)
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


@kernel
def orbit_length(piece, n, small, tail, max_orbit):
    """How many steps of F bring the piece back to itself (0: it is no gene within max_orbit steps).
    Negative (-m) when it is a gene but not the least of its orbit (lexicographically), so each orbit is
    reported once, by its least phase."""
    cur = piece[:n].copy()
    nxt = np.zeros(n, np.uint8)
    least = True
    for step in range(1, max_orbit + 1):
        if not successor(cur, n, small, tail, nxt):
            return 0
        first = 0  # the first card where the phase differs from the piece (n: none)
        while first < n and nxt[first] == piece[first]:
            first += 1
        if first == n:
            return step if least else -step
        if nxt[first] < piece[first]:
            least = False
        cur[:] = nxt
    return 0


@kernel
def _record(piece, n, small, tail, max_orbit, genes, gene_len, gene_orbit, counters, written):
    """A piece of n cards found by `pieces`: counted, and written when it is a gene in its least phase."""
    counters[0] += 1
    m = orbit_length(piece, n, small, tail, max_orbit)
    if m <= 0:
        return written
    counters[1] += 1
    if written >= genes.shape[0]:
        counters[3] += 1
        return written
    genes[written, :n] = piece[:n]
    gene_len[written] = n
    gene_orbit[written] = m
    return written + 1


@kernel
def pieces(avail, max_len, small, tail, max_orbit, genes, gene_len, gene_orbit, counters, exact=False):
    """Every piece of at most max_len cards drawn from `avail` (cards left of each value; with `exact`, only
    those holding every one of them); each gene among them (the least phase of its orbit) written to
    genes[k, :len], gene_len[k], gene_orbit[k]. The plain search the others are held to.

    counters: [pieces, genes, nodes, overflow]. Returns genes written (stops adding at capacity and
    counts the overflow). A DFS over B's next card with each depth's state kept, so a card costs only
    the plays it causes."""
    nv = avail.shape[0]
    ns = small.shape[0]
    depth_cap = max_len + 1
    s_rings = np.zeros((depth_cap, RING), np.uint8)
    piles = np.zeros((depth_cap, WIDTH), np.uint8)
    qs = np.zeros((depth_cap, WIDTH), np.uint8)
    st = np.zeros((depth_cap, 6), np.int64)  # s_head, s_len, pile_len, q_len, turn, owed
    choice = np.zeros(depth_cap, np.int64)
    piece = np.zeros(max_len + 1, np.uint8)
    left = avail.copy()
    written = 0
    for i in range(ns):
        s_rings[0, i] = small[i]
    st[0, 1] = ns  # B leads: its first card is chosen at depth 0
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
        counters[2] += 1
        # play from depth d's state with card v
        e = d + 1
        s_rings[e, :] = s_rings[d, :]
        pl = st[d, 2]
        piles[e, :pl] = piles[d, :pl]
        ql = st[d, 3]
        qs[e, :ql] = qs[d, :ql]
        out, used, h, ln, pl, ql, tu, ow = _advance(piece, e, d, s_rings[e], st[d, 0], st[d, 1], piles[e], pl, qs[e],
                                                    ql, st[d, 4], st[d, 5], small, ns)
        if out == DONE:
            if used == e and (not exact or e == max_len):
                written = _record(piece, e, small, tail, max_orbit, genes, gene_len, gene_orbit, counters, written)
            continue
        if out == DEAD:
            continue
        st[e, 0], st[e, 1], st[e, 2], st[e, 3], st[e, 4], st[e, 5] = h, ln, pl, ql, tu, ow
        d = e
        choice[d] = -1
    return written


# The state of one gadget of the lookahead search: its scalar fields, then its cards read of each value
_HEAD, _LEN, _PILE, _QLEN, _TURN, _OWED, _USED, _KNOWN, _OUT = range(9)
_COUNT = 9
_FIELDS = 9 + 10
RUNNING = 3  # (beside DONE, NEED, DEAD): not yet played


@kernel
def lookahead_genes(k, avail, max_len, small, tail, genes, gene_len, counters, exact, max_orbit, max_nodes):
    """Every gene of at most max_len cards drawn from `avail` (with `exact`, holding every one of them), its
    least phase written to genes[i, :len], gene_len[i]: a DFS over the piece's next card, like `pieces`,
    that keeps k gadgets playing side by side, the piece P_0 and its successors P_1 .. P_{k-1}
    (P_j = the tail, then the block of P_{j-1}, as far as it is known). A choice after which a successor
    cannot be a phase of a gene any more (its small hand runs out, it returns shorter than the piece, it
    holds more of a value than the pool) is cut at once instead of when the piece is done. Each piece that
    returns is a gene when F brings it back within max_orbit steps (orbit_length), whatever the orbit's
    length.

    With max_nodes > 0 the search stops after that many choices, and counters[3] says it was cut short.
    counters: [genes, choices, overflow, truncated]. Returns genes written."""
    nv = avail.shape[0]
    ns = small.shape[0]
    nt = tail.shape[0]
    depth_cap = max_len + 2
    S = np.zeros((depth_cap, k, RING), np.uint8)
    PL = np.zeros((depth_cap, k, WIDTH), np.uint8)
    Q = np.zeros((depth_cap, k, WIDTH), np.uint8)
    P = np.zeros((depth_cap, k, WIDTH), np.uint8)
    SC = np.zeros((depth_cap, k, _FIELDS), np.int64)
    AV = np.zeros((depth_cap, nv), np.int64)
    choice = np.zeros(depth_cap, np.int64)
    written = 0
    # depth 0: every phase's small hand dealt, its first cards the tail (the piece's come out of the pool)
    AV[0, :] = avail
    for j in range(k):
        for i in range(ns):
            S[0, j, i] = small[i]
        SC[0, j, _LEN] = ns
        SC[0, j, _OUT] = RUNNING
        for i in range(nt):
            P[0, j, i] = tail[i]
        SC[0, j, _KNOWN] = nt
    for i in range(nt):
        AV[0, tail[i]] -= 1
        if AV[0, tail[i]] < 0:
            return 0
    ok = _settle(k, S[0], PL[0], Q[0], P[0], SC[0], AV[0], avail, small, tail, max_len, exact)
    if ok == 2:  # the tail alone is a piece: nothing to choose
        return _keep(P[0], SC[0], AV[0], exact, small, tail, max_orbit, genes, gene_len, counters, 0)
    if ok == 0:
        return 0
    d = 0
    choice[0] = -1
    while d >= 0:
        v = choice[d] + 1
        while v < nv and AV[d, v] == 0:
            v += 1
        if v >= nv or SC[d, 0, _KNOWN] >= max_len:
            d -= 1
            continue
        choice[d] = v
        counters[1] += 1
        if max_nodes > 0 and counters[1] > max_nodes:
            counters[3] = 1
            break
        e = d + 1
        S[e] = S[d]
        PL[e] = PL[d]
        Q[e] = Q[d]
        P[e] = P[d]
        SC[e] = SC[d]
        AV[e] = AV[d]
        known = SC[e, 0, _KNOWN]
        P[e, 0, known] = v
        SC[e, 0, _KNOWN] = known + 1
        AV[e, v] -= 1
        ok = _settle(k, S[e], PL[e], Q[e], P[e], SC[e], AV[e], avail, small, tail, max_len, exact)
        if ok == 2:
            written = _keep(P[e], SC[e], AV[e], exact, small, tail, max_orbit, genes, gene_len, counters, written)
        elif ok == 1:
            d = e
            choice[d] = -1
    return written


@kernel
def _keep(P, SC, AV, exact, small, tail, max_orbit, genes, gene_len, counters, written):
    """A piece that returned (P[0], SC[0]): written as a gene when it is one, from its least phase."""
    if exact and AV.sum() != 0:
        return written
    n = SC[0, _USED]
    if orbit_length(P[0], n, small, tail, max_orbit) <= 0:
        return written
    counters[0] += 1
    if written >= genes.shape[0]:
        counters[2] += 1
        return written
    genes[written, :n] = P[0, :n]
    gene_len[written] = n
    return written + 1


@kernel
def _settle(k, S, PL, Q, P, SC, AV, pool, small, tail, max_len, exact):
    """Play every gadget as far as its known cards allow. Returns 0 when no piece of this branch can be a
    gene, 2 when the piece (the first gadget) has returned, 1 when it needs its next card chosen."""
    ns = small.shape[0]
    nt = tail.shape[0]
    progress = True
    while progress:
        progress = False
        for j in range(k):
            have = SC[j, _KNOWN]
            if j > 0:  # its cards known: the tail, then the block of the one before it
                qn = SC[j - 1, _QLEN]
                for i in range(have, nt + qn):
                    P[j, i] = Q[j - 1, i - nt]
                if nt + qn > have:
                    have = nt + qn
                    SC[j, _KNOWN] = have
            if SC[j, _OUT] == DONE or (SC[j, _OUT] == NEED and SC[j, _USED] == have):
                continue
            used0 = SC[j, _USED]
            out, used, h, ln, pl, ql, tu, ow = _advance(P[j], have, used0, S[j], SC[j, _HEAD], SC[j, _LEN], PL[j],
                                                        SC[j, _PILE], Q[j], SC[j, _QLEN], SC[j, _TURN],
                                                        SC[j, _OWED], small, ns)
            if out == DEAD or ln > RING - 8 or ql > max_len:
                return 0
            if out == DONE and (exact and used != max_len or j > 0 and used < SC[0, _USED]):
                return 0  # every phase of a gene holds as many cards (max_len, when exact)
            if j > 0:
                for i in range(max(used0, nt), used):  # every phase holds the same cards
                    v = P[j, i]
                    SC[j, _COUNT + v] += 1
                    if SC[j, _COUNT + v] > pool[v]:
                        return 0
            SC[j, _HEAD], SC[j, _LEN], SC[j, _PILE], SC[j, _QLEN] = h, ln, pl, ql
            SC[j, _TURN], SC[j, _OWED], SC[j, _USED], SC[j, _OUT] = tu, ow, used, out
            progress = True
    if SC[0, _OUT] == DONE:
        return 2
    if SC[0, _OUT] == NEED and SC[0, _USED] == SC[0, _KNOWN]:
        return 1
    return 0


# ---------------------------------------------------------------------------------------------------
# Python: genes by composition, multisets of compositions, hands.

from functools import lru_cache  # noqa: E402
from itertools import permutations, product  # noqa: E402
from typing import Iterator, NamedTuple  # noqa: E402

Comp = tuple[int, ...]  # cards of each value 0..9


class GeneSet(NamedTuple):
    """The genes holding exactly the cards of one composition: each as its orbit (phases in F's order, the
    least first); `truncated` when the search stopped at its node budget (more genes may exist)."""

    orbits: tuple[tuple[tuple[int, ...], ...], ...]
    nodes: int
    truncated: bool


def comp_of(cards) -> Comp:
    counts = [0] * 10
    for v in cards:
        counts[int(v)] += 1
    return tuple(counts)


def size(c: Comp) -> int:
    return sum(c)


def order(c: Comp) -> tuple:
    """The order of compositions in a multiset: fewer cards first, then by counts."""
    return (sum(c), c)


def minus(a: Comp, b: Comp) -> Comp:
    return tuple(x - y for x, y in zip(a, b))


def _search(small: tuple, tail: tuple, pool: Comp, max_len: int, exact: bool, lookahead: int, max_orbit: int,
            max_nodes: int) -> tuple[list[np.ndarray], np.ndarray]:
    """lookahead_genes over `pool`, its output buffer grown until every gene fits: the genes (least phases)
    and the counters."""
    top = max([v for v, k in enumerate(pool) if k] + list(small) + list(tail) + [0])
    avail = np.array(pool[:top + 1], np.int64)
    small_a, tail_a = np.array(small, np.uint8), np.array(tail, np.uint8)
    capacity = 1024
    while True:
        genes = np.zeros((capacity, max(max_len, 1)), np.uint8)
        lengths = np.zeros(capacity, np.int64)
        counters = np.zeros(4, np.int64)
        written = lookahead_genes(lookahead, avail, max_len, small_a, tail_a, genes, lengths, counters, exact,
                                  max_orbit, max_nodes)
        if counters[2] == 0:
            return [genes[k, :lengths[k]].copy() for k in range(written)], counters
        capacity *= 4


@lru_cache(maxsize=1 << 14)
def genes_of(small: tuple, tail: tuple, comp: Comp, lookahead: int = 3, max_orbit: int = 64,
             max_nodes: int = 0) -> GeneSet:
    """Every gene of the gadget (small, tail) holding exactly the cards `comp` (lookahead_genes, exact:
    each piece's next `lookahead - 1` successors must stay pieces while its cards are chosen), with each
    orbit listed from its least phase. Cached per process: shards that meet a composition again reuse it."""
    found, counters = _search(small, tail, comp, size(comp), True, lookahead, max_orbit, max_nodes)
    small_a, tail_a = np.array(small, np.uint8), np.array(tail, np.uint8)
    orbits = [orbit_of(piece, small_a, tail_a) for piece in found]
    return GeneSet(tuple(orbits), int(counters[1]), bool(counters[3]))


def orbit_of(piece, small_a, tail_a) -> tuple[tuple[int, ...], ...]:
    """A gene's phases in F's order from `piece`."""
    start = np.asarray(piece, np.uint8)
    n = start.shape[0]
    phases = [tuple(int(v) for v in start)]
    cur = start
    while True:
        nxt = np.zeros(n, np.uint8)
        if not successor(cur, n, small_a, tail_a, nxt):
            raise ValueError(f"{phases[-1]} has no successor: not a gene")
        if (nxt == start).all():
            return tuple(phases)
        phases.append(tuple(int(v) for v in nxt))
        cur = nxt


@lru_cache(maxsize=8)
def library(small: tuple, tail: tuple, pool: Comp, max_len: int, lookahead: int = 3,
            max_orbit: int = 64) -> dict[Comp, tuple]:
    """Every gene of at most max_len cards drawn from `pool`, by composition (each orbit from its least phase):
    one search over the pieces of every composition at once (lookahead_genes, not exact), so the
    compositions share their leading cards. Cached per process."""
    found, _ = _search(small, tail, pool, max_len, False, lookahead, max_orbit, 0)
    small_a, tail_a = np.array(small, np.uint8), np.array(tail, np.uint8)
    by_comp: dict[Comp, list] = {}
    for piece in found:
        by_comp.setdefault(comp_of(piece), []).append(orbit_of(piece, small_a, tail_a))
    return {c: tuple(sorted(o)) for c, o in sorted(by_comp.items(), key=lambda item: order(item[0]))}


def firsts(target: Comp, per_gene: int | None) -> list[Comp]:
    """The compositions that can be the least of a multiset summing to `target`: every part of it no larger
    (in `order`) than what it leaves, holding exactly one card of value per_gene (when given), in order."""
    out = []
    for c in product(*[range(k + 1) for k in target]):
        if not any(c) or (per_gene is not None and c[per_gene] != 1):
            continue
        rest = minus(target, c)
        if any(rest) and order(c) > order(rest):
            continue
        if per_gene is not None and any(rest) and rest[per_gene] < 1:
            continue
        out.append(c)
    return sorted(out, key=order)


def multisets(rest: Comp, lo: Comp, per_gene: int | None, parts, last_has) -> Iterator[list[Comp]]:
    """Every multiset of compositions summing to `rest`, in non-decreasing `order`, each no less than `lo`:
    all but the last from `parts` (compositions with genes, in order), the last one such that last_has(it)."""
    if not any(rest):
        yield []
        return
    if order(rest) >= order(lo) and (per_gene is None or rest[per_gene] == 1) and last_has(rest):
        yield [rest]
    if per_gene is not None and rest[per_gene] < 2:
        return
    half = sum(rest) / 2
    for c in parts:
        if sum(c) > half:
            break
        if order(c) < order(lo) or any(a > b for a, b in zip(c, rest)):
            continue
        left = minus(rest, c)
        if per_gene is not None and (c[per_gene] != 1 or left[per_gene] < 1):
            continue
        for more in multisets(left, c, per_gene, parts, last_has):
            yield [c] + more


def hands(orbits: list[tuple[tuple[int, ...], ...]], tail: tuple) -> Iterator[tuple[int, ...]]:
    """Big hands G1 .. Gk T from genes (their orbits), one per order and phase up to the rounds: the first
    gene first in its least phase, the others in every order and phase (every state of the form lies on
    the same cycle as one of these)."""
    first, rest = orbits[0], orbits[1:]
    seen = set()
    for perm in permutations(range(len(rest))):
        key = tuple(id(rest[j]) for j in perm)
        if key in seen:
            continue
        seen.add(key)
        for phases in product(*[range(len(rest[j])) for j in perm]):
            hand = list(first[0])
            for j, p in zip(perm, phases):
                hand += rest[j][p]
            yield tuple(hand) + tuple(tail)


def parse_genes(hand, small_a, tail_a, per_gene: int | None) -> list[tuple[int, ...]] | None:
    """The genes of a big hand of the construction's form G1 .. Gk T, each piece read off by the gadget
    from the top; None when the hand is not of that form (no tail, a piece that is no gene, or one that
    does not hold exactly one per_gene card)."""
    hand = np.asarray(hand, np.uint8)
    nt = tail_a.shape[0]
    if hand.shape[0] < nt or any(hand[hand.shape[0] - nt + i] != tail_a[i] for i in range(nt)):
        return None
    body = hand[:hand.shape[0] - nt]
    found = []
    q = np.zeros(WIDTH, np.uint8)
    at = 0
    while at < body.shape[0]:
        rest = body[at:].copy()
        out, used, _ = gadget(rest, rest.shape[0], small_a, q)
        if out != DONE:
            return None
        piece = rest[:used]
        if orbit_length(piece, used, small_a, tail_a, 64) == 0:
            return None
        if per_gene is not None and int((piece == per_gene).sum()) != 1:
            return None
        found.append(tuple(int(v) for v in piece))
        at += used
    return found if found else None


def covers(cycle_states, small, tail, per_gene: int | None) -> bool:
    """Whether a cycle (its trick-boundary states as kernels/cyclestate.walk lists them) is one the
    construction builds: one of its states has the small hand waiting against a leading hand of genes."""
    small_a = np.array(small, np.uint8)
    tail_a = np.array(tail, np.uint8)
    for lead, hands in cycle_states:
        if len(hands) == 2 and tuple(hands[1 - lead]) == tuple(small):
            if parse_genes(hands[lead], small_a, tail_a, per_gene) is not None:
                return True
    return False
