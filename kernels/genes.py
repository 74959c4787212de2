"""The gene search: every gene of a small-hand gadget holding a composition, at the speed of the hardware.

The gadget and its genes are kernels/construct.py's (a big hand B leads against a small hand S; a *piece* P is
B's top cards up to the trick boundary where S holds its small hand again, its *block* Q the cards B picked up
meanwhile; with a tail T, F(P) = T + Q[:-|T|], and a gene is a piece that F brings back to itself). One kernel,
`gene_search`, walks the pieces depth first, one card of P a choice, and keeps `k` gadgets playing side by side:
the piece P_0 and its successors P_1 .. P_{k-1} (P_j = T, then the block of P_{j-1} as far as it is known). A
choice is cut as soon as no gene can lie below it:

  - a gadget's small hand runs out (the game ends), or a successor needs more cards than a phase holds;
  - a block holds more cards of a value than the pool (a block holds exactly its piece's cards in the end, and it
    only grows);
  - a gadget returns with another number of cards than the piece's (every phase has as many), or, for an exact
    search, with fewer than the composition's;
  - with `least`, a successor's known cards are already lexicographically below the piece's: each orbit is
    reported once, by its least phase, so a branch whose piece cannot be the least phase holds none;
  - with `bounds`, a gadget's small hand cannot give back what it holds beyond its own cards. A piece ends on
    a trick B wins, so B must still hold a penalty card; S plays at most one card for each plain card B has
    left and v for each penalty card of value v, so its hand can shrink by at most that (the pool's cards less
    those the gadget's piece has read); and each penalty card w among the cards S must still play (all but its
    last |S|) that B cannot answer with a penalty card of its own gives S a pile back, w cards of B's with its
    own card, w - 1 of them letting S play none: 2w less.

A piece that returns is a gene when F brings it back within `max_orbit` steps (`orbit_length`).

Each gadget keeps S's hand, the pile and the block in buffers that only grow (S's cards are read from a head
that moves on, piles are kept where they were played), so going one card deeper saves a few numbers per gadget
and going back restores them: no card is copied on the way down.

The kernel has three modes over the same walk:

  SEARCH    every gene below `prefix` (the whole search: an empty prefix), least phases into out/out_len;
  FRONTIER  the prefixes of the live nodes `depth` cards below the tail, and the pieces that return above that
            depth (each a prefix of its own): every gene lies below exactly one of them, so a search cut into
            shards by runs of the frontier is the whole search (kernels/strategies/construct.py);
  PROBE     Knuth's estimate of the search tree below `prefix`: `probes` random walks from it, each scanning
            every child of the nodes it passes and stepping into one live child drawn at random; est[0] sums
            each walk's estimate of the choices, est[1 + e] its estimate of the live nodes at depth e.

counters: CHOICES (cards tried), PIECES (pieces that returned with the pool's cards), GENES (found), OVERFLOW
(found past out's capacity: grow it and run again), TRUNCATED (stopped at max_nodes choices).
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel

SEARCH, FRONTIER, PROBE = 0, 1, 2
CHOICES, PIECES, GENES, OVERFLOW, TRUNCATED = range(5)
N_COUNTERS = 5

NEED, DONE, DEAD = 1, 2, 0  # how a piece's turn ends: B needs a card beyond it, it returns, S runs out
MAX_CARDS = 120  # the deck's cards at most (a gadget's positions are kept in 16 bits)
# a gadget's state at a depth, one row of the walk's state array
_SH, _ST, _PB, _PE, _QL, _TW, _US, _FL, _EQ, _SP, _PR, _PS = range(12)
_NF = 12
# the walk's phases
_REPLAY, _STEP, _DRAW = 0, 1, 2


@kernel(inline="always")
def buffer_cards(small_len, max_len):
    """Cards a gadget's buffers hold at most: every card played in a turn is written once, and S plays at most
    one card for each card of B, v for a penalty card of value v (at most 9), so a turn plays fewer than
    10 max_len + |S| cards in all."""
    return small_len + 10 * max_len + 16


@kernel
def play_piece(piece, n, small, block, sizes):
    """Play B = piece[:n] (leading) against S = small. Returns (outcome, cards of B read, |block|): DONE when S
    holds its small hand again with B to lead (a piece: its block in `block`, which holds buffer_cards), NEED
    when B needs a card beyond n, DEAD when S runs out. sizes[0]: the most cards S held at a trick boundary."""
    ns = small.shape[0]
    cap = buffer_cards(ns, n)
    sb = np.zeros(cap, np.uint8)
    log = np.zeros(cap, np.uint8)
    for i in range(ns):
        sb[i] = small[i]
    sh = 0
    st = ns
    pb = 0
    pe = 0
    ql = 0
    turn = 0
    owed = 0
    used = 0
    biggest = ns
    while True:
        if turn == 0:
            if used == n:
                sizes[0] = biggest
                return NEED, used, ql
            c = piece[used]
            used += 1
        else:
            if st == sh:
                sizes[0] = biggest
                return DEAD, used, ql
            c = sb[sh]
            sh += 1
        log[pe] = c
        pe += 1
        if c > 0:
            owed = c
            turn = 1 - turn
            continue
        if owed > 0:
            owed -= 1
            if owed == 0:
                if turn == 1:  # B played the last penalty card: B takes the pile
                    for i in range(pb, pe):
                        block[ql] = log[i]
                        ql += 1
                    pb = pe
                    turn = 0
                    if st - sh == ns:
                        same = True
                        for i in range(ns):
                            if sb[sh + i] != small[i]:
                                same = False
                        if same:
                            sizes[0] = biggest
                            return DONE, used, ql
                else:
                    for i in range(pb, pe):
                        sb[st] = log[i]
                        st += 1
                    pb = pe
                    turn = 1
                    if st - sh > biggest:
                        biggest = st - sh
            continue
        turn = 1 - turn


@kernel
def _successor(piece, n, small, tail, nxt, sb, log, block):
    """F(piece) into nxt when piece[:n] is a piece of n cards that starts with the tail and whose block ends with
    it (True), with the buffers given (no allocation: the search calls it for every piece)."""
    nt = tail.shape[0]
    ns = small.shape[0]
    for i in range(nt):
        if piece[i] != tail[i]:
            return False
    for i in range(ns):
        sb[i] = small[i]
    sh = 0
    st = ns
    pb = 0
    pe = 0
    ql = 0
    turn = 0
    owed = 0
    used = 0
    while True:
        if turn == 0:
            if used == n:
                return False
            c = piece[used]
            used += 1
        else:
            if st == sh:
                return False
            c = sb[sh]
            sh += 1
        log[pe] = c
        pe += 1
        if c > 0:
            owed = c
            turn = 1 - turn
            continue
        if owed > 0:
            owed -= 1
            if owed == 0:
                if turn == 1:
                    for i in range(pb, pe):
                        block[ql] = log[i]
                        ql += 1
                    pb = pe
                    turn = 0
                    if st - sh == ns:
                        same = True
                        for i in range(ns):
                            if sb[sh + i] != small[i]:
                                same = False
                        if same:
                            break
                else:
                    for i in range(pb, pe):
                        sb[st] = log[i]
                        st += 1
                    pb = pe
                    turn = 1
            continue
        turn = 1 - turn
    if used != n or ql != n:
        return False
    for i in range(nt):
        if block[n - nt + i] != tail[i]:
            return False
    for i in range(nt):
        nxt[i] = tail[i]
    for i in range(n - nt):
        nxt[nt + i] = block[i]
    return True


@kernel
def _orbit(piece, n, small, tail, max_orbit, sb, log, block, cur, nxt):
    """How many steps of F bring piece[:n] back to itself (0: none within max_orbit), negative (-m) when it is a
    gene but not the least phase of its orbit (lexicographically)."""
    for i in range(n):
        cur[i] = piece[i]
    least = True
    for step in range(1, max_orbit + 1):
        if not _successor(cur, n, small, tail, nxt, sb, log, block):
            return 0
        first = 0
        while first < n and nxt[first] == piece[first]:
            first += 1
        if first == n:
            return step if least else -step
        if nxt[first] < piece[first]:
            least = False
        for i in range(n):
            cur[i] = nxt[i]
    return 0


@kernel
def successor(piece, n, small, tail, nxt):
    """F(piece) into nxt, when piece[:n] is a piece of exactly n cards that starts with the tail and whose block
    ends with it. Returns True when it is."""
    cap = buffer_cards(small.shape[0], n)
    return _successor(piece, n, small, tail, nxt, np.zeros(cap, np.uint8), np.zeros(cap, np.uint8),
                      np.zeros(cap, np.uint8))


@kernel
def orbit_length(piece, n, small, tail, max_orbit):
    """How many steps of F bring piece[:n] back to itself (0: it is no gene within max_orbit steps); negative
    (-m) when it is a gene but not the least of its orbit (lexicographically), so each orbit is reported once."""
    cap = buffer_cards(small.shape[0], n)
    return _orbit(piece, n, small, tail, max_orbit, np.zeros(cap, np.uint8), np.zeros(cap, np.uint8),
                  np.zeros(cap, np.uint8), np.zeros(n + 1, np.uint8), np.zeros(n + 1, np.uint8))


@kernel
def gene_search(mode, k, least, bounds, pool, max_len, exact, small, tail, prefix, depth, max_orbit, max_nodes, probes,
                seed, out, out_len, counters, est):
    """The walk over pieces of at most max_len cards drawn from `pool` (cards of each value; with `exact`, those
    holding every one of them), in the mode given, with k gadgets, the least-phase cut and the bounds as asked
    (module docstring). `prefix`: the piece's cards after the tail that every node walked starts with; `depth`
    the frontier's; PROBE's walks from numba's generator seeded with `seed`. Returns the rows written to
    out/out_len (genes, or frontier prefixes, each with the tail)."""
    nv = pool.shape[0]
    ns = small.shape[0]
    nt = tail.shape[0]
    cap = buffer_cards(ns, max_len)
    # each gadget's buffers: S's hand (SB), the cards played in order (LOG: a pile is a run of it), the block (QB)
    SB = np.zeros(k * cap, np.uint8)
    LOG = np.zeros(k * cap, np.uint8)
    QB = np.zeros(k * cap, np.uint8)
    # scratch for the orbit check
    sbw = np.zeros(cap, np.uint8)
    logw = np.zeros(cap, np.uint8)
    qbw = np.zeros(cap, np.uint8)
    cur = np.zeros(max_len + 1, np.uint8)
    nxt = np.zeros(max_len + 1, np.uint8)
    # each gadget's state at each depth: S's head and end, the pile's start and end, |Q|, turn * 16 + owed,
    # cards of its piece read, whether it returned, and how far its piece equals P_0 (-1: it is greater)
    n_depths = max_len + 2
    G = np.zeros(n_depths * k * _NF, np.int16)
    cw = k * nv
    CNT = np.zeros(n_depths * cw, np.int16)  # each block's cards of each value
    left = pool.copy()
    piece = np.zeros(max_len + 1, np.uint8)
    choice = np.zeros(n_depths, np.int64)
    live = np.zeros(nv, np.int64)
    scratch = np.zeros(nv, np.int64)
    weight = np.zeros(n_depths, np.float64)
    if mode == PROBE:
        np.random.seed(seed)
    small_penalties = 0
    for i in range(ns):
        if small[i] > 0:
            small_penalties += 1
    for j in range(k):
        for i in range(ns):
            SB[j * cap + i] = small[i]
        G[j * _NF + _ST] = ns
        G[j * _NF + _PS] = small_penalties
    for i in range(nt):
        piece[i] = tail[i]
        left[tail[i]] -= 1
        if left[tail[i]] < 0:
            return 0
    # S plays at most one card for each plain card of B and v for each penalty card of value v: the cards of the
    # pool less those a piece has read bound what S can still give back
    room = 0
    pool_penalties = 0
    for y in range(nv):
        room += pool[y] * (y if y > 1 else 1)
        if y > 0:
            pool_penalties += pool[y]
    npre = prefix.shape[0]
    if nt + npre > max_len:
        return 0
    written = 0
    floor = npre  # the depth of the walk's root
    walks = 0
    phase = _REPLAY
    d = -1  # the depth whose child is played next (-1: the root, the tail alone)
    v = -1
    while True:
        # ---- the next card: d's child v is played into depth e
        if d < 0:
            e = 0
        elif phase == _REPLAY:
            v = prefix[d]
            if left[v] == 0:
                return written  # the prefix is not drawn from the pool: nothing below it
            left[v] -= 1
            choice[d] = v
            e = d + 1
        elif phase == _DRAW:  # (PROBE) step into one live child of d, drawn at random
            n_live = 0
            for x in range(nv):
                n_live += live[x]
            if n_live == 0:  # the walk ends: back to the root for the next one
                walks += 1
                if walks >= probes:
                    break
                while d > floor:
                    d -= 1
                    left[choice[d]] += 1
                choice[d] = -1
                for x in range(nv):
                    live[x] = 0
                phase = _STEP
                continue
            r = np.random.randint(n_live)
            v = 0
            for x in range(nv):
                if live[x] == 1:
                    if r == 0:
                        v = x
                        break
                    r -= 1
            weight[d + 1] = weight[d] * n_live
            left[v] -= 1
            choice[d] = v
            e = d + 1
        else:  # _STEP: the next sibling at depth d, or back up
            if choice[d] >= 0:
                left[choice[d]] += 1
            v = choice[d] + 1
            while v < nv and left[v] == 0:
                v += 1
            if v >= nv or nt + d >= max_len:
                choice[d] = -1
                if mode == PROBE:
                    phase = _DRAW
                    continue
                if d == floor:
                    break
                d -= 1
                continue
            choice[d] = v
            left[v] -= 1
            counters[CHOICES] += 1
            if mode == PROBE:
                est[0] += weight[d]
            elif max_nodes > 0 and counters[CHOICES] > max_nodes:
                counters[TRUNCATED] = 1
                break
            e = d + 1
        known0 = nt + e
        if d >= 0:
            piece[nt + d] = v
        # ---- every gadget of depth e played as far as its known cards allow
        ok = 1  # 0: no gene below; 1: the piece needs its next card; 2: the piece returned
        for j in range(k):
            x = e * k + j
            if d >= 0:  # its state at depth e starts from depth d's (copied here: a branch cut before j never is)
                for i in range(_NF):
                    G[x * _NF + i] = G[(x - k) * _NF + i]
                for i in range(nv):
                    CNT[x * nv + i] = CNT[(x - k) * nv + i]
            if j == 0:
                have = known0
            else:
                have = nt + G[(x - 1) * _NF + _QL]
                if have > max_len:
                    have = max_len
            if G[(x) * _NF + _FL] == 0 and G[(x) * _NF + _US] < have:
                sh = G[(x) * _NF + _SH]
                st = G[(x) * _NF + _ST]
                pb = G[(x) * _NF + _PB]
                pe = G[(x) * _NF + _PE]
                ql = G[(x) * _NF + _QL]
                turn = G[(x) * _NF + _TW] >> 4
                owed = G[(x) * _NF + _TW] & 15
                used = G[(x) * _NF + _US]
                spent = G[(x) * _NF + _SP]
                read_penalties = G[(x) * _NF + _PR]
                s_penalties = G[(x) * _NF + _PS]
                base = j * cap
                source = (j - 1) * cap - nt  # P_j's cards past the tail: the block of P_{j-1}
                co = x * nv
                status = NEED
                while True:
                    if turn == 0:
                        if used == have:
                            break
                        if j == 0:
                            c = piece[used]
                        elif used < nt:
                            c = tail[used]
                        else:
                            c = QB[source + used]
                        used += 1
                        if c > 0:
                            spent += c
                            read_penalties += 1
                        else:
                            spent += 1
                    else:
                        if st == sh:
                            status = DEAD
                            break
                        c = SB[base + sh]
                        sh += 1
                        if c > 0:
                            s_penalties -= 1
                    LOG[base + pe] = c
                    pe += 1
                    if c > 0:
                        owed = c
                        turn = 1 - turn
                        continue
                    if owed > 0:
                        owed -= 1
                        if owed == 0:
                            if turn == 1:  # B played the last penalty card: B takes the pile
                                for i in range(pb, pe):
                                    y = LOG[base + i]
                                    QB[base + ql] = y
                                    ql += 1
                                    CNT[co + y] += 1
                                    if CNT[co + y] > pool[y]:
                                        status = DEAD
                                pb = pe
                                turn = 0
                                if status == DEAD or ql > max_len:
                                    status = DEAD
                                    break
                                if st - sh == ns:
                                    same = True
                                    for i in range(ns):
                                        if SB[base + sh + i] != small[i]:
                                            same = False
                                    if same:
                                        status = DONE
                                        break
                            else:
                                for i in range(pb, pe):
                                    y = LOG[base + i]
                                    SB[base + st] = y
                                    st += 1
                                    if y > 0:
                                        s_penalties += 1
                                pb = pe
                                turn = 1
                        continue
                    turn = 1 - turn
                G[(x) * _NF + _SH] = sh
                G[(x) * _NF + _ST] = st
                G[(x) * _NF + _PB] = pb
                G[(x) * _NF + _PE] = pe
                G[(x) * _NF + _QL] = ql
                G[(x) * _NF + _TW] = turn * 16 + owed
                G[(x) * _NF + _US] = used
                G[(x) * _NF + _SP] = spent
                G[(x) * _NF + _PR] = read_penalties
                G[(x) * _NF + _PS] = s_penalties
                if status == DEAD or (status == NEED and j > 0 and used >= max_len):
                    ok = 0
                    break
                if bounds and status == NEED:
                    # What S can still give back (module docstring): B must still win a trick, so it needs a
                    # penalty card; S plays at most room - spent more cards, and less by 2w for each penalty
                    # card w among those S must play (all but its last ns) that B cannot answer with one of
                    # its own (S wins that pile back, w cards of B's with it, w - 1 of them letting S play none)
                    if read_penalties == pool_penalties:
                        ok = 0
                        break
                    excess = st - sh - ns
                    if excess > room - spent:
                        ok = 0
                        break
                    unanswered = s_penalties - (pool_penalties - read_penalties)
                    if unanswered > 0 and excess > 0:
                        for i in range(st - ns, st):
                            if SB[base + i] > 0:
                                unanswered -= 1
                        if unanswered > 0:
                            for y in range(nv):
                                scratch[y] = 0
                            for i in range(sh, st - ns):
                                scratch[SB[base + i]] += 1
                            cost = 0
                            for y in range(1, nv):
                                if unanswered == 0:
                                    break
                                t = scratch[y] if scratch[y] < unanswered else unanswered
                                cost += 2 * y * t
                                unanswered -= t
                            if excess > room - spent - cost:
                                ok = 0
                                break
                if status == DONE:
                    G[(x) * _NF + _FL] = 1
                    if (exact and used != max_len) or (j > 0 and used < G[(e * k) * _NF + _US]):
                        ok = 0
                        break
            if least and j > 0 and G[(x) * _NF + _EQ] >= 0:
                eq = G[(x) * _NF + _EQ]
                lim = have if have < known0 else known0
                while eq < lim:
                    mine = tail[eq] if eq < nt else QB[(j - 1) * cap + eq - nt]
                    if mine == piece[eq]:
                        eq += 1
                    elif mine < piece[eq]:
                        ok = 0
                        break
                    else:
                        eq = -1
                        break
                G[(x) * _NF + _EQ] = eq
                if ok == 0:
                    break
        if ok == 1 and G[(e * k) * _NF + _FL] == 1:
            ok = 2
        # ---- what depth e's state means
        if d < 0:  # the root
            if ok != 1:
                return 0  # the tail alone returns or dies: no choice to make
            d = 0
            if npre == 0:
                phase = _STEP
                choice[0] = -1
                weight[0] = 1.0
            continue
        if phase == _REPLAY:
            if ok == 0 or (ok == 2 and e < npre):
                return written  # no piece begins with the prefix
            if e < npre:
                d = e
                continue
            if ok == 2:  # the prefix is a piece: the only node of the walk
                if mode == PROBE:
                    break
                counters[CHOICES] += 1
                phase = _STEP
            else:
                d = e
                phase = _STEP
                choice[d] = -1
                weight[d] = 1.0
                continue
        if mode == PROBE:
            if phase == _DRAW:
                d = e
                choice[d] = -1
                for x in range(nv):
                    live[x] = 0
                est[1 + e] += weight[e]
                phase = _STEP
            else:
                live[v] = 1 if ok == 1 else 0
            continue
        if ok == 2:
            n = G[(e * k) * _NF + _US]  # (= known0: the piece returns on its last card)
            counters[PIECES] += 1
            if mode == FRONTIER:  # a piece above the frontier's depth: a prefix of its own
                if written >= out.shape[0]:
                    counters[OVERFLOW] += 1
                else:
                    out[written, :n] = piece[:n]
                    out_len[written] = n
                    written += 1
            elif _orbit(piece, n, small, tail, max_orbit, sbw, logw, qbw, cur, nxt) > 0:
                counters[GENES] += 1
                if written >= out.shape[0]:
                    counters[OVERFLOW] += 1
                else:
                    out[written, :n] = piece[:n]
                    out_len[written] = n
                    written += 1
            if e == floor:
                break
        elif ok == 1:
            if mode == FRONTIER and e >= depth:
                if written >= out.shape[0]:
                    counters[OVERFLOW] += 1
                else:
                    out[written, :known0] = piece[:known0]
                    out_len[written] = known0
                    written += 1
                continue
            d = e
            choice[d] = -1
    return written


# ---------------------------------------------------------------------------------------------------------------
# The search from Python: its output grown until every row fits.

LOOKAHEAD = 3  # gadgets side by side (the piece and its next two successors): benchmarks/README.md
PROBES = 2000  # random walks of a planning estimate
_NONE = np.zeros(0, np.uint8)


def _arrays(cards) -> np.ndarray:
    return np.asarray(tuple(cards), np.uint8)


def _pool(pool) -> np.ndarray:
    """A pool of cards of each value, without trailing zeros (so the walk tries no value it cannot draw)."""
    counts = list(pool)
    while counts and counts[-1] == 0:
        counts.pop()
    return np.array(counts or [0], np.int64)


def walk(mode: int, small, tail, pool, max_len: int, exact: bool, *, prefix=(), depth: int = 0, k: int = LOOKAHEAD,
         least: bool = True, bounds: bool = True, max_orbit: int = 64, max_nodes: int = 0,
         probes: int = 0, seed: int = 0) -> tuple[list[tuple[int, ...]], np.ndarray, np.ndarray]:
    """gene_search in one mode, its rows grown until every one fits: (rows, counters, est)."""
    small_a, tail_a = _arrays(small), _arrays(tail)
    pool_a = _pool(pool)
    nv = max([pool_a.shape[0]] + [int(c) + 1 for c in tuple(small) + tuple(tail)])
    pool_a = np.concatenate([pool_a, np.zeros(nv - pool_a.shape[0], np.int64)])
    capacity = 256
    while True:
        out = np.zeros((capacity, max(max_len, 1)), np.uint8)
        lengths = np.zeros(capacity, np.int64)
        counters = np.zeros(N_COUNTERS, np.int64)
        est = np.zeros(max_len + 4)
        written = gene_search(mode, k, least, bounds, pool_a, max_len, exact, small_a, tail_a, _arrays(prefix), depth,
                              max_orbit, max_nodes, probes, seed, out, lengths, counters, est)
        if counters[OVERFLOW] == 0:
            return [tuple(int(c) for c in out[i, :lengths[i]]) for i in range(written)], counters, est
        capacity *= 4


def genes_of(small, tail, comp, *, prefix=(), k: int = LOOKAHEAD, max_orbit: int = 64,
             max_nodes: int = 0) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """Every gene holding exactly the cards `comp` (each orbit by its least phase), below `prefix` (the piece's
    cards after the tail), within max_nodes choices (0: no limit; counters[TRUNCATED] says it stopped): (genes,
    counters)."""
    found, counters, _ = walk(SEARCH, small, tail, comp, sum(comp), True, prefix=prefix, k=k, max_orbit=max_orbit,
                              max_nodes=max_nodes)
    return found, counters


def genes_upto(small, tail, pool, max_len: int, *, k: int = LOOKAHEAD, max_orbit: int = 64) -> list[tuple[int, ...]]:
    """Every gene of at most max_len cards drawn from `pool`, any composition (each orbit by its least phase)."""
    return walk(SEARCH, small, tail, pool, max_len, False, k=k, max_orbit=max_orbit)[0]


def frontier(small, tail, comp, depth: int, *, k: int = LOOKAHEAD) -> list[tuple[int, ...]]:
    """The exact search's frontier `depth` cards past the tail: each live node's cards past the tail, and each
    piece returning above that depth (module docstring), in the search's order."""
    nt = len(tuple(tail))
    rows, _, _ = walk(FRONTIER, small, tail, comp, sum(comp), True, depth=depth, k=k)
    return [row[nt:] for row in rows]


def estimate(small, tail, comp, *, k: int = LOOKAHEAD, bounds: bool = True, probes: int = PROBES,
             seed: int = 1) -> tuple[float, list[float]]:
    """Knuth's estimate of the exact search of `comp` (deterministic: a fixed seed): its choices, and its live
    nodes at each depth past the tail."""
    n = sum(comp)
    _, _, est = walk(PROBE, small, tail, comp, n, True, k=k, bounds=bounds, probes=probes, seed=seed)
    return est[0] / probes, [1.0] + [x / probes for x in est[2:n + 2]]  # (the root: depth 0)


def orbit_phases(gene, small, tail) -> tuple[tuple[int, ...], ...]:
    """A gene's phases in F's order from the one given."""
    start = _arrays(gene)
    n = start.shape[0]
    small_a, tail_a = _arrays(small), _arrays(tail)
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


def turn_sizes(piece, small) -> int:
    """The most cards the small hand holds during the piece's turn."""
    piece_a = _arrays(piece)
    sizes = np.zeros(1, np.int64)
    play_piece(piece_a, piece_a.shape[0], _arrays(small), np.zeros(piece_a.shape[0] * 6 + 16, np.uint8), sizes)
    return int(sizes[0])
