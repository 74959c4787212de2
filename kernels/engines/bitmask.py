"""The bitmask engine (`--engine fast`), two players: a trick costs a few register operations per penalty card.

Only penalty cards change the course of a game, so a hand is kept as three 64-bit words:
    m  bit i set <=> the card at depth i (0 = top) is a penalty card
    n  the number of cards
    q  the penalty values in hand order, four bits each, first in the lowest bits
Playing k plain cards is `m >>= k`; "where is my next penalty card?" is a count of trailing
zeros. In free play the players alternate, so the first penalty card to show is found at once
from both hands' next penalty positions; while paying v cards, the payer's next penalty position
says whether the payment completes, flips, or runs the payer out. The pile keeps the same three
words (its penalty positions, length and values), and picking it up is two shifts and two ORs.

It holds deals of two players with at most 64 cards, at most 16 penalty cards and values up to
15 (`fits`); kernels/engines/percard.py plays every other deal. Everything is uint64 on purpose: Numba
turns mixed signed/unsigned arithmetic into floating point.

A trick-boundary state is (leader, leader's hand, other hand), six words; Brent's algorithm
compares it against one saved state, starting only once a game has lasted `brent_start` tricks.
"""

from __future__ import annotations

import numpy as np

from .._jit import kernel
from ..bits import ctz, popcount
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

MAX_TOTAL = 64
MAX_PENALTY = 16
MAX_FAST_VALUE = 15

U0 = np.uint64(0)
U1 = np.uint64(1)
U4 = np.uint64(4)
NIBBLE = np.uint64(15)


def fits(players: int, total: int, penalty_cards: int, max_value: int) -> bool:
    return players == 2 and total <= MAX_TOTAL and penalty_cards <= MAX_PENALTY and max_value <= MAX_FAST_VALUE


@kernel(inline="always")
def hand_words(deal, start, size):
    """(m, n, q) of the hand deal[start:start+size], without a branch per card (a plain card
    ORs nothing into q; the shift is masked so that it stays defined after the 16th penalty)."""
    m = U0
    q = U0
    count = U0
    for i in range(size):
        v = np.uint64(deal[start + i])
        nz = np.uint64(v != U0)
        m |= nz << np.uint64(i)
        q |= v << ((U4 * count) & np.uint64(63))
        count += nz
    return m, np.uint64(size), q


@kernel(inline="always")
def queue_of(deal, start, m):
    """The value queue of a hand whose penalty positions (relative to `start`) are the bits of m."""
    q = U0
    shift = U0
    while m != U0:
        i = ctz(m)
        q |= np.uint64(deal[start + np.int64(i)]) << shift
        shift += U4
        m &= m - U1
    return q


@kernel(inline="always")
def words_from_positions(deal, positions, n_penalty, size0):
    """Both hands' words from the positions of the penalty cards (as `random_deal` leaves them):
    no pass over the plain cards at all."""
    m0 = U0
    m1 = U0
    s0 = np.int64(size0)
    for t in range(n_penalty):
        # Branch-free: which hand a random position falls in is a coin toss for the predictor.
        p = np.uint64(positions[t])
        second = np.uint64(p >= np.uint64(s0))
        bit = U1 << (p - second * np.uint64(s0))
        m1 |= bit * second
        m0 |= bit * (U1 - second)
    q0 = queue_of(deal, 0, m0)
    q1 = queue_of(deal, s0, m1)
    return m0, np.uint64(s0), q0, m1, np.uint64(deal.shape[0] - s0), q1


@kernel(inline="always")
def penalty_words(positions, penalties, size0):
    """Both hands' words (m0, q0, m1, q1) of a deal given by its penalty cards' positions (penalty card
    t, of value penalties[t], at positions[t]; hand 1 holds positions below size0): no pass over the
    plain cards, and no deal written. A card's place in its hand's value queue is the number of
    penalty cards before it in that hand."""
    m0 = U0
    m1 = U0
    s0 = np.uint64(size0)
    for t in range(penalties.shape[0]):
        # Branch-free (which hand a random position falls in is a coin toss): `second` all ones or none.
        p = np.uint64(positions[t])
        second = U0 - np.uint64(p >= s0)
        bit = U1 << (p - (s0 & second))
        m1 |= bit & second
        m0 |= bit & ~second
    q0 = U0
    q1 = U0
    for t in range(penalties.shape[0]):
        p = np.uint64(positions[t])
        second = U0 - np.uint64(p >= s0)
        below = (U1 << (p - (s0 & second))) - U1
        rank = popcount(((m1 & second) | (m0 & ~second)) & below)
        value = np.uint64(penalties[t]) << (U4 * rank)
        q1 |= value & second
        q0 |= value & ~second
    return m0, q0, m1, q1


@kernel(inline="always")
def rescan_from(deal, start, size, m, q, first):
    """A hand's words after its cards from depth `first` on changed (the rest is unchanged)."""
    keep = (U1 << np.uint64(first)) - U1
    m &= keep
    count = popcount(m)
    q &= (U1 << ((U4 * count) & np.uint64(63))) - U1 if count < np.uint64(16) else q
    for i in range(first, size):
        v = np.uint64(deal[start + i])
        nz = np.uint64(v != U0)
        m |= nz << np.uint64(i)
        q |= v << ((U4 * count) & np.uint64(63))
        count += nz
    return m, q


@kernel(inline="always")
def trick2(lead, mL, nL, qL, mO, nO, qO):
    """Play one trick from a boundary (both hands non-empty; `lead` = leader's player number).

    Returns (lead, mL, nL, qL, mO, nO, qO, cards, over): the next boundary seen from its leader,
    the cards played, and whether the game is over (then `lead` is the winner).
    """
    # Free play: the leader's k-th card is step 2k, the other's is step 2k+1. Each side's "event"
    # is its next penalty card or, if it comes first, running out of cards. Who meets it first
    # is a coin toss for the branch predictor, so the two sides are selected with masks instead.
    eL = min(ctz(mL), nL)
    eO = min(ctz(mO), nO)
    other = np.uint64(eO < eL)  # 1: the other player's event comes first
    k = min(eL, eO)
    kL = k + other  # the leader plays one more plain card when the other's event comes first
    mL >>= kL
    nL -= kL
    mO >>= k
    nO -= k
    pl = k + kL
    pick = U0 - other  # all ones when the other player is the one to act
    mX = (mO & pick) | (mL & ~pick)
    nX = (nO & pick) | (nL & ~pick)
    qX = (qO & pick) | (qL & ~pick)
    mY = (mL & pick) | (mO & ~pick)
    nY = (nL & pick) | (nO & ~pick)
    qY = (qL & pick) | (qO & ~pick)
    cid = lead ^ other
    if nX == U0:
        # The player to act must play and holds no card: the other takes the pile (a trick) and wins.
        return cid ^ U1, mY, nY, qY, mX, nX, qX, pl, True
    # X plays its penalty card: X is the creditor, Y pays.
    v = qX & NIBBLE
    mC = mX >> U1
    nC = nX - U1
    qC = qX >> U4
    mP, nP, qP = mY, nY, qY
    pm = U1 << pl
    pl += U1
    pq = v
    pc = U1
    while True:
        c = ctz(mP)
        if min(c, nP) >= v:
            # The payer pays v plain cards: the creditor wins the trick and picks up the pile,
            # which goes under the creditor's hand in the order it was played.
            mP >>= v
            nP -= v
            pl += v
            qC |= pq << (U4 * popcount(mC))
            mC |= pm << nC
            nC += pl
            return cid, mC, nC, qC, mP, nP, qP, pl, nP == U0
        if c < nP:
            # A penalty card among the payment: the roles flip.
            mP >>= c + U1
            nP -= c + U1
            pl += c
            w = qP & NIBBLE
            qP >>= U4
            pm |= U1 << pl
            pq |= w << (U4 * pc)
            pc += U1
            pl += U1
            v = w
            cid ^= U1
            mC, nC, qC, mP, nP, qP = mP, nP, qP, mC, nC, qC
        else:
            # The payer runs out of cards while paying: the creditor takes the pile and wins.
            pl += nP
            return cid, mC, nC, qC, mP, U0, qP, pl, True


@kernel(inline="always")
def _encode_hand(m, n, q, out, k):
    for i in range(n):
        if (m >> np.uint64(i)) & U1:
            out[k] = np.uint8(q & NIBBLE)
            q >>= U4
        else:
            out[k] = 0
        k += 1
    out[k] = SEPARATOR
    return k + 1


@kernel
def cycle_figures2(deal, size0, lead0, period, out):
    """The period is known exactly; find the preperiod, the cards, and the cycle id."""
    m0, n0, q0 = hand_words(deal, 0, size0)
    m1, n1, q1 = hand_words(deal, size0, deal.shape[0] - size0)
    if lead0 == 0:
        a = (U0, m0, n0, q0, m1, n1, q1)
    else:
        a = (U1, m1, n1, q1, m0, n0, q0)
    b = a
    cards_a = U0
    cards_b = U0
    for _ in range(period):
        lead, mL, nL, qL, mO, nO, qO, c, over = trick2(b[0], b[1], b[2], b[3], b[4], b[5], b[6])
        b = (lead, mL, nL, qL, mO, nO, qO)
        cards_b += c
    pre = 0
    while a != b:
        lead, mL, nL, qL, mO, nO, qO, c, over = trick2(a[0], a[1], a[2], a[3], a[4], a[5], a[6])
        a = (lead, mL, nL, qL, mO, nO, qO)
        cards_a += c
        lead, mL, nL, qL, mO, nO, qO, c, over = trick2(b[0], b[1], b[2], b[3], b[4], b[5], b[6])
        b = (lead, mL, nL, qL, mO, nO, qO)
        cards_b += c
        pre += 1
    # Smallest encoding over one period, written from the leader's seat (kernels/cycleid.py).
    width = deal.shape[0] + 2
    best = np.empty(width, dtype=np.uint8)
    cur = np.empty(width, dtype=np.uint8)
    k = _encode_hand(a[1], a[2], a[3], best, 0)
    _encode_hand(a[4], a[5], a[6], best, k)
    for _ in range(period - 1):
        lead, mL, nL, qL, mO, nO, qO, c, over = trick2(a[0], a[1], a[2], a[3], a[4], a[5], a[6])
        a = (lead, mL, nL, qL, mO, nO, qO)
        k = _encode_hand(a[1], a[2], a[3], cur, 0)
        _encode_hand(a[4], a[5], a[6], cur, k)
        if bytes_less(cur, best):
            best[:] = cur
    out[F_OUTCOME] = CYCLE
    out[F_WINNER] = -1
    out[F_PRE_TRICKS] = pre
    out[F_PRE_CARDS] = np.int64(cards_a)
    out[F_PER_TRICKS] = period
    out[F_PER_CARDS] = np.int64(cards_b - cards_a)
    out[F_TRICKS] = pre + period
    out[F_CARDS] = np.int64(cards_b)
    out[F_CYCLE_ID] = np.int64(fnv1a64_array(best))


@kernel(inline="always")
def _win(out, winner, tricks, cards):
    out[F_OUTCOME] = WIN
    out[F_WINNER] = np.int64(winner)
    out[F_TRICKS] = tricks
    out[F_CARDS] = np.int64(cards)


@kernel
def play2(deal, size0, lead0, brent_start, out):
    """Play one two-player deal (card sequence, hand 1 holds the first size0 cards) into `out`."""
    m0, n0, q0 = hand_words(deal, 0, size0)
    m1, n1, q1 = hand_words(deal, size0, deal.shape[0] - size0)
    play2_words(m0, n0, q0, m1, n1, q1, deal, size0, lead0, brent_start, out)


@kernel(inline="always")
def play2_words(m0, n0, q0, m1, n1, q1, deal, size0, lead0, brent_start, out):
    """Play a deal given as its hands' words (`deal` is needed only if the game is a cycle)."""
    period, winner, tricks, cards = game2(m0, n0, q0, m1, n1, q1, lead0, brent_start)
    if period:
        cycle_figures2(deal, size0, lead0, period, out)
    else:
        _win(out, winner, tricks, cards)


@kernel(inline="always")
def game2(m0, n0, q0, m1, n1, q1, lead0, brent_start):
    """Play a deal given as its hands' words, on scalars alone (no array crosses this call).

    Returns (period, winner, tricks, cards): period 0 for a finished game (winner 0 or 1); for a
    cycle, its exact period in tricks (`cycle_figures2` then measures the rest).
    """
    if n0 == U0 or n1 == U0:
        return 0, np.uint64(n0 == U0), 0, U0
    if lead0 == 0:
        lead, mL, nL, qL, mO, nO, qO = U0, m0, n0, q0, m1, n1, q1
    else:
        lead, mL, nL, qL, mO, nO, qO = U1, m1, n1, q1, m0, n0, q0
    tricks = 0
    cards = U0
    # Nearly every game ends here, with no cycle bookkeeping at all.
    while tricks < brent_start:
        lead, mL, nL, qL, mO, nO, qO, c, over = trick2(lead, mL, nL, qL, mO, nO, qO)
        tricks += 1
        cards += c
        if over:
            return 0, lead, tricks, cards
    # A long game: Brent's algorithm finds the exact period of any cycle it is in.
    s_lead, s_mL, s_nL, s_qL, s_mO, s_qO = lead, mL, nL, qL, mO, qO
    power = 1
    lam = 0
    while True:
        lead, mL, nL, qL, mO, nO, qO, c, over = trick2(lead, mL, nL, qL, mO, nO, qO)
        tricks += 1
        cards += c
        if over:
            return 0, lead, tricks, cards
        lam += 1
        if ((lead ^ s_lead) | (mL ^ s_mL) | (nL ^ s_nL) | (qL ^ s_qL) | (mO ^ s_mO) | (qO ^ s_qO)) == U0:
            return lam, U0, tricks, cards
        if lam == power:
            s_lead, s_mL, s_nL, s_qL, s_mO, s_qO = lead, mL, nL, qL, mO, qO
            power *= 2
            lam = 0


@kernel(inline="always")
def play_fast(deal, split, leader0, brent_start, ws, out):
    """`--engine fast`, in the form every engine's one-deal kernel takes (kernels/engines/__init__.py);
    the game lives in registers, so the workspace `ws` goes unused."""
    play2(deal, split[0], leader0, brent_start, out)
