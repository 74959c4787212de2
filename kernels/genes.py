"""The gene search: every gene of a small-hand gadget holding a composition, at the speed of the hardware.

The gadget and its genes are kernels/construct.py's: a big hand B leads against a small hand S; a *piece* P is
B's top cards up to the trick boundary where S holds its small hand again with B to lead, its *block* Q the cards
B picked up meanwhile; with a tail T, F(P) = T + Q[:-|T|], and a gene is a piece that F brings back to itself.

The gadget played. `play_on` plays a gadget on from its state until B needs a card of its piece that is not
known yet (NEED), S holds its small hand again with B to lead (DONE: a piece), or S runs out, or the block holds
more cards than the piece can (DEAD). It is the one trick-playing step: the search, `play_piece` (a whole piece)
and `successor` (F) all play through it. A gadget's state is a row of named int16 fields (S_HEAD ... EQUAL, then
the block's room for each value); its cards are rows of one uint8 array, cards[PIECE | HAND | LOG, gadget,
position]: its piece, S's hand, and every card played in order (a pile is a run of them). The hand and the log
only grow (S's hand is read from a head that moves on), so a state is a few numbers and going back restores them:
no card is copied on the way down. The small hand stays at the start of the hand's row, where S's hand began.

The search. `gene_search` walks the pieces depth first, one card of P a choice, and keeps `k` gadgets playing
side by side: the piece P_0 and its successors P_1 .. P_{k-1} (P_j = T, then the block of P_{j-1} as far as it is
known: gadget j writes its block straight into the piece row of gadget j + 1). A choice is cut as soon as no gene
can lie below it:

  - a gadget's small hand runs out (the game ends), or a successor needs more cards than a phase holds;
  - a block holds more cards of a value than the pool (a block holds exactly its piece's cards in the end, and it
    only grows);
  - a gadget returns with another number of cards than the piece's (every phase has as many), or, for an exact
    search, with fewer than the composition's;
  - with `least`, a successor's known cards are already lexicographically below the piece's: each orbit is
    reported once, by its least phase, so a branch whose piece cannot be the least phase holds none;
  - with `bounds`, a gadget's small hand cannot give back what it holds beyond its own cards (`gives_back`), or
    its piece can no longer end as a gene's phase must (the final card, below).

The final card. A piece ends on the trick B wins with its last card: a penalty card x, which S pays with x plain
cards, so its block ends with x and x plain cards. F(P) = T + Q[:-|T|] ends with the card |T| + 1 from the end of
Q, and every phase of a gene is a piece, which ends on a penalty card: so x <= |T| (for larger x that card is one
of S's plain payments). With the tail `-`, every phase of every gene ends on a card of value 1 (a J), and since the
last pile holds it, the block holds at most the pool's J less one until then. So, with `bounds`: a gadget whose
piece has read every card that could end it (value 1 .. |T|) and needs more is cut; with |T| = 1, a block taking
the J the piece's end needs is cut; and an exact search never tries the last such card before the last place.

A piece that returns is a gene when F brings it back within `max_orbit` steps (`orbit_length`).

Three modes walk the same tree:

  FIND      every gene below `prefix` (the whole search: an empty prefix), least phases, as rows of `out`;
  FRONTIER  the prefixes of the live nodes `depth` cards below the tail, and the pieces that return above that
            depth (each a prefix of its own): every gene lies below exactly one of them, so a search cut into
            shards by runs of the frontier is the whole search (kernels/strategies/construct.py);
  PROBE     Knuth's estimate of the search tree below `prefix`: `probes` random walks from it, each trying every
            child of the nodes it passes and stepping into one live child drawn at random; est[0] sums each walk's
            estimate of the choices, est[1 + e] its estimate of the live nodes at depth e.

counters: CHOICES (cards tried), PIECES (pieces that returned with the pool's cards), GENES (found), OVERFLOW
(rows found past out's capacity: grow it and run again), TRUNCATED (stopped at max_nodes choices).

Numba: the helpers the walk inlines take the two arrays and indices, never views or tuples of arrays, and leave
their loops only at the end (no break, no early return): otherwise every call costs an atomic reference count per
array, which doubled the search's time (benchmarks/README.md, "Long genes").
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._jit import kernel

VERSION = 3  # the gene search's version (2: without the final card's cuts; the same genes, more choices)
# How a gadget's turn stands after `play_on` (PLAYING: it is still playing, inside play_on)
DEAD, NEED, DONE, PLAYING = 0, 1, 2, 3
# What a walk of the tree does (module docstring)
FIND, FRONTIER, PROBE = 0, 1, 2
# counters
CHOICES, PIECES, GENES, OVERFLOW, TRUNCATED = range(5)
N_COUNTERS = 5
MAX_CARDS = 120  # the deck's cards at most (a gadget's buffer positions are kept in 16 bits)
MAX_VALUE = 9  # a penalty card's value at most

# A gadget's state: state[depth, gadget, FIELD]
S_HEAD = 0        # S's hand: the position of its top card in the hand's row ...
S_END = 1         # ... and one past its bottom card
PILE_START = 2    # the pile: a run of the log, from here ...
PILE_END = 3      # ... to here (the next card played is written here)
BLOCK = 4         # |Q|: the cards B has picked up
TURN = 5          # who plays next: 0 B, 1 S
OWED = 6          # cards still owed to the last penalty card played (0: none)
READ = 7          # cards of the gadget's piece read
SPENT = 8         # the plays of S that the cards read allow: 1 for a plain card, v for a penalty card of value v
B_PENALTIES = 9   # penalty cards among those read
S_PENALTIES = 10  # penalty cards in S's hand
MOST = 11         # the most cards S has held at a trick boundary
RETURNED = 12     # 1 once the gadget returned (its piece is complete)
EQUAL = 13        # (a successor) how far its piece's known cards equal P_0's; -1 once they are greater
B_FINALS = 14     # cards read that could end a gene's phase: penalty cards of value at most |T| (gives_back)
ROOM = 15         # ROOM + v: the cards of value v the block may still take (the pool's, less those it holds)
N_FIELDS = ROOM + MAX_VALUE + 1

# A gadget's cards: cards[ROW, gadget, position]
PIECE, HAND, LOG = 0, 1, 2


@kernel(inline="always")
def buffer_cards(small_len, max_len):
    """Cards any buffer of a gadget's turn holds at most (S's hand, the cards played, the block): each card played
    is written once, and S plays at most one card for each card of B, v for a penalty card of value v (at most 9;
    a lead after S wins a pile is paid for by the B card S won with it), so a turn of a piece of at most max_len
    cards plays at most 10 max_len cards, and S's hand holds at most |S| more."""
    return small_len + 10 * max_len + 16


@kernel(inline="always")
def play_on(state, cards, e, j, have, ns, block_at, max_block, final):
    """Play gadget j on from its state at depth e until B needs card `have` of its piece (NEED), S holds its small
    hand (the first ns cards of its hand's row) again with B to lead (DONE), or S runs out, or the block holds more
    than max_block cards or more of a value than its room (DEAD). The block is written into the piece row of gadget
    j + 1 from block_at on; B_FINALS counts the penalty cards of value at most `final` read. Returns the outcome;
    the state is updated."""
    sh, se = state[e, j, S_HEAD], state[e, j, S_END]
    pb, pe = state[e, j, PILE_START], state[e, j, PILE_END]
    ql, turn, owed, used = state[e, j, BLOCK], state[e, j, TURN], state[e, j, OWED], state[e, j, READ]
    spent, b_pen, b_fin = state[e, j, SPENT], state[e, j, B_PENALTIES], state[e, j, B_FINALS]
    s_pen, most = state[e, j, S_PENALTIES], state[e, j, MOST]
    outcome = PLAYING
    while outcome == PLAYING:
        if turn == 0:  # B plays the next card of its piece, when it is known
            if used == have:
                outcome = NEED
                continue
            c = cards[PIECE, j, used]
            used += 1
            b_pen += c > 0
            b_fin += 0 < c <= final
            spent += c if c > 0 else 1
        else:
            if se == sh:
                outcome = DEAD
                continue
            c = cards[HAND, j, sh]
            sh += 1
            s_pen -= c > 0
        cards[LOG, j, pe] = c
        pe += 1
        if c > 0:  # a penalty card: the other player owes c cards
            owed = c
            turn = 1 - turn
        elif owed == 0:  # a plain card with nothing owed: the other plays
            turn = 1 - turn
        else:
            owed -= 1
            if owed == 0 and turn == 1:  # B played the last penalty card and S paid it all: B takes the pile
                for i in range(pb, pe):
                    y = cards[LOG, j, i]
                    cards[PIECE, j + 1, block_at + ql] = y
                    ql += 1
                    state[e, j, ROOM + y] -= 1
                    if state[e, j, ROOM + y] < 0:
                        outcome = DEAD
                pb = pe
                turn = 0
                if ql > max_block:
                    outcome = DEAD
                if outcome == PLAYING and se - sh == ns:
                    same = True
                    for i in range(ns):
                        same &= cards[HAND, j, sh + i] == cards[HAND, j, i]
                    if same:
                        outcome = DONE
                if outcome == PLAYING and final == 1 and state[e, j, ROOM + 1] < 1:
                    outcome = DEAD  # the block keeps a place for the card that ends the piece, a 1
            elif owed == 0:  # S played the last penalty card and B paid it all: S takes the pile
                for i in range(pb, pe):
                    y = cards[LOG, j, i]
                    cards[HAND, j, se] = y
                    se += 1
                    s_pen += y > 0
                pb = pe
                turn = 1
                most = max(most, se - sh)
    state[e, j, S_HEAD], state[e, j, S_END] = sh, se
    state[e, j, PILE_START], state[e, j, PILE_END] = pb, pe
    state[e, j, BLOCK], state[e, j, TURN], state[e, j, OWED], state[e, j, READ] = ql, turn, owed, used
    state[e, j, SPENT], state[e, j, B_PENALTIES], state[e, j, B_FINALS] = spent, b_pen, b_fin
    state[e, j, S_PENALTIES], state[e, j, MOST] = s_pen, most
    return outcome


@kernel
def start(state, cards, e, j, small, room):
    """Gadget j's state at depth e before its first card: S holds `small` (written at the start of its hand's row),
    and the block may take room[v] cards of each value v."""
    for f in range(N_FIELDS):
        state[e, j, f] = 0
    for y in range(room.shape[0]):
        state[e, j, ROOM + y] = room[y]
    ns = small.shape[0]
    state[e, j, S_END] = ns
    state[e, j, MOST] = ns
    for i in range(ns):
        cards[HAND, j, i] = small[i]
        state[e, j, S_PENALTIES] += small[i] > 0


# ---------------------------------------------------------------------------------------------------------------
# A whole piece played, F, orbits: one gadget, one depth, the rows of the search's arrays (its piece in
# cards[PIECE, 0], its block written into cards[PIECE, 1])

@kernel
def turn_arrays(small_len, n):
    """(state, cards) for one gadget's turn with a piece of at most n cards (buffer_cards each)."""
    return np.zeros((1, 1, N_FIELDS), np.int16), np.zeros((3, 2, buffer_cards(small_len, n)), np.uint8)


@kernel
def play_whole(state, cards, n, small):
    """B = cards[PIECE, 0, :n] (leading) played against S = small, its block into cards[PIECE, 1]: the outcome."""
    start(state, cards, 0, 0, small, np.full(MAX_VALUE + 1, cards.shape[2], np.int64))
    return play_on(state, cards, 0, 0, n, small.shape[0], 0, cards.shape[2], 0)


@kernel
def play_piece(piece, n, small, block, sizes):
    """Play B = piece[:n] (leading) against S = small. Returns (outcome, cards of B read, |block|): DONE when S
    holds its small hand again with B to lead (a piece: its block copied into `block`), NEED when B needs a card
    beyond n, DEAD when S runs out. sizes[0]: the most cards S held at a trick boundary."""
    state, cards = turn_arrays(small.shape[0], n)
    cards[PIECE, 0, :n] = piece[:n]
    outcome = play_whole(state, cards, n, small)
    ql = state[0, 0, BLOCK]
    block[:ql] = cards[PIECE, 1, :ql]
    sizes[0] = state[0, 0, MOST]
    return outcome, state[0, 0, READ], ql


@kernel
def step_f(state, cards, n, small, tail):
    """F once: cards[PIECE, 0, :n] becomes its successor, when it is a piece of n cards that starts with the tail
    and whose block ends with it (True)."""
    nt = tail.shape[0]
    ok = True
    for i in range(nt):
        ok &= cards[PIECE, 0, i] == tail[i]
    ok = ok and play_whole(state, cards, n, small) == DONE and state[0, 0, READ] == n and state[0, 0, BLOCK] == n
    if ok:
        for i in range(nt):
            ok &= cards[PIECE, 1, n - nt + i] == tail[i]
    if ok:
        for i in range(nt, n):
            cards[PIECE, 0, i] = cards[PIECE, 1, i - nt]
    return ok


@kernel
def orbit_steps(state, cards, piece, n, small, tail, max_orbit):
    """How many steps of F bring piece[:n] back to itself (0: none within max_orbit), negative (-m) when it is a
    gene but not the least phase of its orbit (lexicographically)."""
    cards[PIECE, 0, :n] = piece[:n]
    least = True
    for step in range(1, max_orbit + 1):
        if not step_f(state, cards, n, small, tail):
            return 0
        first = 0
        while first < n and cards[PIECE, 0, first] == piece[first]:
            first += 1
        if first == n:
            return step if least else -step
        if cards[PIECE, 0, first] < piece[first]:
            least = False
    return 0


@kernel
def successor(piece, n, small, tail, nxt):
    """F(piece) into nxt, when piece[:n] is a piece of exactly n cards that starts with the tail and whose block
    ends with it. Returns True when it is."""
    state, cards = turn_arrays(small.shape[0], n)
    cards[PIECE, 0, :n] = piece[:n]
    if not step_f(state, cards, n, small, tail):
        return False
    nxt[:n] = cards[PIECE, 0, :n]
    return True


@kernel
def orbit_length(piece, n, small, tail, max_orbit):
    """How many steps of F bring piece[:n] back to itself (0: it is no gene within max_orbit steps); negative
    (-m) when it is a gene but not the least of its orbit (lexicographically), so each orbit is reported once."""
    state, cards = turn_arrays(small.shape[0], n)
    return orbit_steps(state, cards, piece, n, small, tail, max_orbit)


# ---------------------------------------------------------------------------------------------------------------
# The search

class Walk(NamedTuple):
    """What one walk of the tree does (module docstring), and the pool's figures its bounds use."""

    mode: int            # FIND, FRONTIER or PROBE
    k: int               # gadgets side by side: the piece and k - 1 successors
    least: bool          # cut branches whose piece cannot be the least phase of its orbit
    bounds: bool         # cut branches whose small hand cannot give back what it holds (gives_back)
    max_len: int         # cards of a piece at most
    exact: bool          # only pieces holding every card of the pool
    depth: int           # FRONTIER: the frontier's depth past the tail
    max_orbit: int       # rounds within which a gene comes back to itself
    max_nodes: int       # FIND: stop after this many choices (0: no limit)
    probes: int          # PROBE: random walks
    seed: int            # PROBE: the seed of numba's generator
    nt: int              # cards of the tail
    ns: int              # cards of the small hand
    room: int            # the plays of S the pool's cards allow: 1 for a plain card, v for a penalty card v
    pool_penalties: int  # penalty cards in the pool
    pool_finals: int     # cards in the pool that could end a gene's phase (gives_back)
    fields: int          # the state's fields in use: ROOM + the pool's values


@kernel(inline="always")
def gives_back(w, state, cards, e, j):
    """Whether gadget j, waiting at depth e for B's next card, can still give back the cards its small hand holds
    beyond its own. A gene's phase ends on a card of value at most |T| (the final card: module docstring), so B must
    still hold one (one it has not read, within the pool); S plays at most one card
    for each plain card B has left and v for each penalty card of value v, so its hand can shrink by at most that
    (the pool's room less what the cards read spent); and each penalty card v among the cards S must still play
    (all but its last ns) that B cannot answer with a penalty card of its own gives S a pile back, v cards of B's
    with its own card, v - 1 of them letting S play none: 2v less, the cheapest such cards counted."""
    b_pen = state[e, j, B_PENALTIES]
    has_final = state[e, j, B_FINALS] < w.pool_finals
    sh, se = state[e, j, S_HEAD], state[e, j, S_END]
    excess = se - sh - w.ns
    allowed = w.room - state[e, j, SPENT]
    unanswered = state[e, j, S_PENALTIES] - (w.pool_penalties - b_pen)
    cost = 0
    if has_final and excess <= allowed and unanswered > 0 and excess > 0:
        for i in range(se - w.ns, se):
            unanswered -= cards[HAND, j, i] > 0
        for y in range(1, MAX_VALUE + 1):
            if unanswered > 0:
                held = 0
                for i in range(sh, se - w.ns):
                    held += cards[HAND, j, i] == y
                taken = min(held, unanswered)
                cost += 2 * y * taken
                unanswered -= taken
    return has_final and excess <= allowed - cost


@kernel(inline="always")
def still_least(state, cards, e, j, have, known0):
    """(least) Whether successor j's known cards at depth e are not yet below the piece's, lexicographically: EQUAL
    moves on over the cards both know, and turns -1 once the successor's are greater (no longer a constraint)."""
    eq = state[e, j, EQUAL]
    below = False
    lim = min(have, known0)
    while 0 <= eq < lim and not below:
        if cards[PIECE, j, eq] == cards[PIECE, 0, eq]:
            eq += 1
        elif cards[PIECE, j, eq] < cards[PIECE, 0, eq]:
            below = True
        else:
            eq = -1
    state[e, j, EQUAL] = eq
    return not below


@kernel(inline="always")
def descend(w, state, cards, e):
    """Play every gadget into depth e as far as its known cards allow (P_0's: the tail and e cards after it, the
    last of them the child's), each cut checked (module docstring); depth e starts from depth e - 1's state (the
    root, e = 0, from the start). Returns DEAD (no gene below), NEED (the piece needs its next card) or DONE (the
    piece returned)."""
    known0 = w.nt + e
    alive = True
    j = 0
    while alive and j < w.k:  # (a branch cut before gadget j never copies it: it is not read)
        if e > 0:
            for f in range(w.fields):
                state[e, j, f] = state[e - 1, j, f]
        have = known0 if j == 0 else min(w.nt + state[e, j - 1, BLOCK], w.max_len)
        if state[e, j, RETURNED] == 0 and state[e, j, READ] < have:
            outcome = play_on(state, cards, e, j, have, w.ns, w.nt, w.max_len, w.nt if w.bounds else 0)
            read = state[e, j, READ]
            if outcome == DEAD or (outcome == NEED and j > 0 and read >= w.max_len):
                alive = False
            elif outcome == NEED:
                if w.bounds:
                    alive = gives_back(w, state, cards, e, j)
            else:  # returned: with as many cards as the piece (and, exact, the pool's)
                state[e, j, RETURNED] = 1
                alive = not ((w.exact and read != w.max_len) or (j > 0 and read < state[e, 0, READ]))
        if alive and w.least and j > 0:
            alive = still_least(state, cards, e, j, have, known0)
        j += 1
    outcome = NEED
    if not alive:
        outcome = DEAD
    elif state[e, 0, RETURNED] == 1:
        outcome = DONE
    return outcome


@kernel
def emit(out, out_len, written, counters, cards, n):
    """Row `written` of out: the piece's first n cards (counted as OVERFLOW past out's capacity). Returns the rows
    written."""
    if written >= out.shape[0]:
        counters[OVERFLOW] += 1
        return written
    out[written, :n] = cards[PIECE, 0, :n]
    out_len[written] = n
    return written + 1


@kernel
def on_piece(w, state, cards, e, small, tail, written, out, out_len, counters):
    """A piece returned at depth e: in FRONTIER mode a prefix of its own, else a row when it is a gene in its least
    phase. Returns the rows written."""
    n = state[e, 0, READ]  # (= tail + e: the piece returns on its last card)
    counters[PIECES] += 1
    if w.mode == FRONTIER:
        return emit(out, out_len, written, counters, cards, n)
    turn_state, turn_cards = turn_arrays(w.ns, n)
    if orbit_steps(turn_state, turn_cards, cards[PIECE, 0], n, small, tail, w.max_orbit) > 0:
        counters[GENES] += 1
        return emit(out, out_len, written, counters, cards, n)
    return written


@kernel
def root(w, state, cards, left, small, tail, pool, prefix):
    """Start every gadget, play the tail alone (the root), then walk down the prefix's cards. Returns NEED when the
    walk goes on below the prefix, DONE when the prefix is itself a piece, DEAD when no piece begins with it."""
    for j in range(w.k):
        start(state, cards, 0, j, small, pool)
        cards[PIECE, j + 1, :w.nt] = tail
    for i in range(w.nt):
        cards[PIECE, 0, i] = tail[i]
        left[tail[i]] -= 1
        if left[tail[i]] < 0:
            return DEAD
    if w.nt + prefix.shape[0] > w.max_len or descend(w, state, cards, 0) != NEED:
        return DEAD  # (the tail alone returns or dies: no choice to make)
    for d in range(prefix.shape[0]):
        v = prefix[d]
        if v >= left.shape[0] or left[v] == 0:
            return DEAD  # the prefix is not drawn from the pool
        left[v] -= 1
        cards[PIECE, 0, w.nt + d] = v
        outcome = descend(w, state, cards, d + 1)
        if outcome == DEAD or (outcome == DONE and d + 1 < prefix.shape[0]):
            return DEAD
        if outcome == DONE:
            return DONE
    return NEED


@kernel
def gene_search(w, small, tail, pool, prefix, out, out_len, counters, est):
    """One walk of the tree (module docstring): the pieces of at most w.max_len cards drawn from `pool` (cards of
    each value) past the tail and the prefix, rows into out/out_len (genes, or frontier prefixes, each with the
    tail), figures into counters and est. Returns the rows written."""
    state = np.zeros((w.max_len + 2, w.k, N_FIELDS), np.int16)
    cards = np.zeros((3, w.k + 1, w.nt + buffer_cards(w.ns, w.max_len)), np.uint8)
    left = pool.copy()
    where = root(w, state, cards, left, small, tail, pool, prefix)
    floor = prefix.shape[0]  # the depth of the walk's root
    if where == DEAD or (where == DONE and w.mode == PROBE):
        return 0
    if where == DONE:  # the prefix is a piece: the only node of the walk
        counters[CHOICES] += 1
        return on_piece(w, state, cards, floor, small, tail, 0, out, out_len, counters)
    if w.mode == PROBE:
        probe(w, state, cards, left, floor, counters, est)
        return 0
    return depth_first(w, state, cards, left, floor, small, tail, out, out_len, counters)


@kernel(inline="always")
def worth_trying(w, left, v, d):
    """Whether value v is a child to try at depth d: a card of it is left, and (an exact search, with the bounds)
    it is not the last card that could end the piece while other cards are still to come (gives_back: a gene's
    phases all end on such a card)."""
    finals_left = 0
    for y in range(1, min(w.nt, left.shape[0] - 1) + 1):
        finals_left += left[y]
    ends_too_soon = w.exact and w.bounds and 0 < v <= w.nt and finals_left == 1 and w.max_len - w.nt - d > 1
    return left[v] > 0 and not ends_too_soon


@kernel(inline="always")
def next_value(w, left, v, d):
    """The least value from v on worth trying at depth d (left.shape[0]: none)."""
    while v < left.shape[0] and not worth_trying(w, left, v, d):
        v += 1
    return v


@kernel
def depth_first(w, state, cards, left, floor, small, tail, out, out_len, counters):
    """FIND and FRONTIER: every child of every live node below depth `floor`, in order. Returns the rows
    written."""
    choice = np.full(w.max_len + 2, -1, np.int64)  # the value chosen at each depth (-1: none yet)
    written = 0
    d = floor
    while True:
        if choice[d] >= 0:
            left[choice[d]] += 1  # (the sibling tried last)
        v = next_value(w, left, choice[d] + 1, d)
        if v == left.shape[0] or w.nt + d >= w.max_len:
            choice[d] = -1
            if d == floor:
                return written
            d -= 1
            continue
        choice[d] = v
        left[v] -= 1
        counters[CHOICES] += 1
        if w.max_nodes > 0 and counters[CHOICES] > w.max_nodes:
            counters[TRUNCATED] = 1
            return written
        cards[PIECE, 0, w.nt + d] = v
        outcome = descend(w, state, cards, d + 1)
        if outcome == DONE:
            written = on_piece(w, state, cards, d + 1, small, tail, written, out, out_len, counters)
        elif outcome == NEED and w.mode == FRONTIER and d + 1 >= w.depth:
            written = emit(out, out_len, written, counters, cards, w.nt + d + 1)
        elif outcome == NEED:
            d += 1


@kernel
def probe(w, state, cards, left, floor, counters, est):
    """PROBE: w.probes random walks down from depth `floor`, each node's children all tried (each a choice, weighed
    by the walk's estimate of the nodes at its depth), then one live child drawn at random from numba's generator
    (seeded with w.seed)."""
    nv = left.shape[0]
    live = np.zeros(nv, np.int64)
    choice = np.zeros(w.max_len + 2, np.int64)
    np.random.seed(w.seed)
    for _ in range(w.probes):
        d, weight = floor, 1.0
        while True:
            n_live = 0
            for v in range(nv):
                live[v] = 0
                if worth_trying(w, left, v, d) and w.nt + d < w.max_len:
                    left[v] -= 1
                    counters[CHOICES] += 1
                    est[0] += weight
                    cards[PIECE, 0, w.nt + d] = v
                    live[v] = descend(w, state, cards, d + 1) == NEED
                    n_live += live[v]
                    left[v] += 1
            if n_live == 0:
                break
            r = np.random.randint(n_live)
            v = 0
            while live[v] == 0 or r > 0:
                r -= live[v]
                v += 1
            weight *= n_live
            left[v] -= 1
            choice[d] = v
            cards[PIECE, 0, w.nt + d] = v
            descend(w, state, cards, d + 1)  # (its siblings were played into depth d + 1 after it)
            d += 1
            est[1 + d] += weight
        while d > floor:  # back to the root for the next walk
            d -= 1
            left[choice[d]] += 1


# ---------------------------------------------------------------------------------------------------------------
# The search from Python: its output grown until every row fits.

LOOKAHEAD = 3  # gadgets side by side (the piece and its next two successors): benchmarks/README.md
PROBES = 2000  # random walks of a planning estimate


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
    room = int(sum(n * max(v, 1) for v, n in enumerate(pool_a)))
    w = Walk(mode, k, least, bounds, max_len, exact, depth, max_orbit, max_nodes, probes, seed, len(tail_a),
             len(small_a), room, int(pool_a[1:].sum()), int(pool_a[1:len(tail_a) + 1].sum()), ROOM + len(pool_a))
    capacity = 256
    while True:
        out = np.zeros((capacity, max(max_len, 1)), np.uint8)
        lengths = np.zeros(capacity, np.int64)
        counters = np.zeros(N_COUNTERS, np.int64)
        est = np.zeros(max_len + 4)
        written = gene_search(w, small_a, tail_a, pool_a, _arrays(prefix), out, lengths, counters, est)
        if counters[OVERFLOW] == 0:
            return [tuple(int(c) for c in out[i, :lengths[i]]) for i in range(written)], counters, est
        capacity *= 4


def genes_of(small, tail, comp, *, prefix=(), k: int = LOOKAHEAD, max_orbit: int = 64,
             max_nodes: int = 0) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """Every gene holding exactly the cards `comp` (each orbit by its least phase), below `prefix` (the piece's
    cards after the tail), within max_nodes choices (0: no limit; counters[TRUNCATED] says it stopped): (genes,
    counters)."""
    found, counters, _ = walk(FIND, small, tail, comp, sum(comp), True, prefix=prefix, k=k, max_orbit=max_orbit,
                              max_nodes=max_nodes)
    return found, counters


def genes_upto(small, tail, pool, max_len: int, *, k: int = LOOKAHEAD, max_orbit: int = 64) -> list[tuple[int, ...]]:
    """Every gene of at most max_len cards drawn from `pool`, any composition (each orbit by its least phase)."""
    return walk(FIND, small, tail, pool, max_len, False, k=k, max_orbit=max_orbit)[0]


def frontier(small, tail, comp, depth: int, *, prefix=(), k: int = LOOKAHEAD) -> list[tuple[int, ...]]:
    """The exact search's frontier `depth` cards past the tail (below `prefix`): each live node's cards past the
    tail, and each piece returning above that depth (module docstring), in the search's order."""
    nt = len(tuple(tail))
    rows, _, _ = walk(FRONTIER, small, tail, comp, sum(comp), True, prefix=prefix, depth=depth, k=k)
    return [row[nt:] for row in rows]


def estimate(small, tail, comp, *, prefix=(), k: int = LOOKAHEAD, bounds: bool = True, probes: int = PROBES,
             seed: int = 1) -> tuple[float, list[float]]:
    """Knuth's estimate of the exact search of `comp` below `prefix` (deterministic: a fixed seed): its choices,
    and its live nodes at each depth past the tail."""
    n = sum(comp)
    _, _, est = walk(PROBE, small, tail, comp, n, True, prefix=prefix, k=k, bounds=bounds, probes=probes, seed=seed)
    return est[0] / probes, [1.0] + [x / probes for x in est[2:n + 2]]  # (the root: depth 0)


def orbit_phases(gene, small, tail) -> tuple[tuple[int, ...], ...]:
    """A gene's phases in F's order from the one given."""
    first = _arrays(gene)
    n = first.shape[0]
    small_a, tail_a = _arrays(small), _arrays(tail)
    phases = [tuple(int(v) for v in first)]
    cur = first
    while True:
        nxt = np.zeros(n, np.uint8)
        if not successor(cur, n, small_a, tail_a, nxt):
            raise ValueError(f"{phases[-1]} has no successor: not a gene")
        if (nxt == first).all():
            return tuple(phases)
        phases.append(tuple(int(v) for v in nxt))
        cur = nxt


def turn_sizes(piece, small) -> int:
    """The most cards the small hand holds during the piece's turn."""
    piece_a, small_a = _arrays(piece), _arrays(small)
    sizes = np.zeros(1, np.int64)
    play_piece(piece_a, piece_a.shape[0], small_a, np.zeros(buffer_cards(small_a.shape[0], piece_a.shape[0]),
                                                            np.uint8), sizes)
    return int(sizes[0])
