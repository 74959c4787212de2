"""The bitmask engine's game cut into segments, for lanes that play in lock-step (the GPU's sweep).

`trick2` (kernels/engines/bitmask.py) plays a whole trick, with a loop over its payments; a warp of
GPU threads each in its own game then waits, at every such loop, for its slowest lane. Here a trick
is cut where its loop was, so that a lane's whole game is one flat sequence of equal steps (`step`):

    free play      from a trick boundary, both players alternate plain cards up to the first penalty
                   card shown (its player becomes the creditor), or to a player who must play and has
                   no card;
    payment round  the payer pays until the payment is complete (the creditor takes the pile: a trick
                   boundary), a penalty card among the payment flips the roles, or the payer runs out.

A lane's state is the bitmask engine's words (kernels/engines/bitmask.py) of two hands, X and Y,
and of the pile:
    at a boundary (v = 0)  X leads; `who` is X's player number
    in a payment (v > 0)   X is the creditor (its player number `who`), Y owes it v more cards
    pile                   pm (penalty positions), pq (their values in order), pl cards, pc penalty cards
The small numbers (counts, lengths, players, values) are 32-bit: a GPU does a 32-bit operation in
one instruction and a 64-bit one in two or more. Numba types integer arithmetic at 64 bits, so each
result is cut back to 32 bits where it is made (`u32(...)`); LLVM then does the operation itself in
32 bits (benchmarks/sass.py reads the kernel's SASS).

A step returns the state after it and an event: MID (the trick goes on), TRICK (a trick ended
at a boundary, X leads the next; pl is the trick's cards) or OVER (the game ended in that trick; `who`
is the winner, pl the trick's cards). tests/test_segments.py plays every game both ways, trick by
trick against `trick2` and game by game against `game2`.
"""

from __future__ import annotations

import numpy as np

from .._jit import kernel
from ..bits import ctz, popcount

u32 = np.uint32

MID = np.uint32(0)
TRICK = np.uint32(1)
OVER = np.uint32(2)

W0 = np.uint32(0)
W1 = np.uint32(1)
U1 = np.uint64(1)
U4 = np.uint64(4)
NIBBLE = np.uint64(15)
TOP = np.uint64(1 << 63)


NONE = np.uint32(255)  # "no event": X plays no card while Y pays


@kernel(inline="always")
def step(mX, nX, qX, mY, nY, qY, who, v, pm, pq, pl, pc):
    """One segment: free play from a boundary (v = 0), or one round of payment (v > 0).

    Both are one computation, so that lanes in lock-step, some in free play and some paying, run one
    path: Y plays pY plain cards and X pX (in a payment X plays none: its event is NONE); then either
    the payment is complete (X picks up the pile: TRICK, or OVER when Y has no card left), or the
    player to act (the first to meet its event) has no card (OVER, the other wins), or it plays its
    penalty card and becomes the creditor (MID).
    """
    free = v == W0
    if free:
        pl = W0  # a boundary: the last trick's cards (the pile's other words were emptied at its end)
    # Each side's event: its next penalty card or running out; in free play the leader's k-th card is
    # step 2k and the other's 2k+1, so Y acts first when its event comes strictly first. A hand's word has
    # bits only below its count, and a count is below 64 (the other hand holds a card, or the game is
    # over), so its event is min(ctz(m | 2^63), n): a count of a word known not to be 0 (no test for 0).
    eY = u32(min(u32(ctz(mY | TOP)), nY))
    eX = u32(min(u32(ctz(mX | TOP)), nX)) if free else NONE
    first = u32(min(eX, eY))
    yfirst = u32(eY < eX)  # always 1 in a payment
    pY = first if free else u32(min(eY, v))
    pX = u32(first + yfirst) if free else W0  # the leader plays one more plain card when Y acts first
    mX >>= np.uint64(pX)
    nX = u32(nX - pX)
    mY >>= np.uint64(pY)
    nY = u32(nY - pY)
    pl = u32(pl + pX + pY)
    if not free and eY >= v:
        # Y paid v plain cards: X picks up the pile under its hand, in the order it was played.
        qX |= pq << (U4 * popcount(mX))
        mX |= pm << np.uint64(nX)
        nX = u32(nX + pl)
        # The pile is empty again; pl stays the trick's cards, for the caller (free play clears it).
        return mX, nX, qX, mY, nY, qY, who, W0, np.uint64(0), np.uint64(0), pl, W0, OVER if nY == W0 else TRICK
    # The player to act, A (Y when yfirst), and the other, B; the sides are selected with masks.
    pick = np.uint64(0) - np.uint64(yfirst)
    mA = (mY & pick) | (mX & ~pick)
    qA = (qY & pick) | (qX & ~pick)
    mB = (mX & pick) | (mY & ~pick)
    qB = (qX & pick) | (qY & ~pick)
    nA = nY if yfirst else nX
    nB = nX if yfirst else nY
    who = u32(who ^ yfirst)
    if nA == W0:
        # A must play and has no card: B takes the pile and wins (the game is over: only the winner and the
        # trick's cards count, so the hands' words are returned as they are, without the roles' swap).
        return mX, nX, qX, mY, nY, qY, u32(who ^ W1), W0, pm, pq, pl, pc, OVER
    # A plays its penalty card: A is the creditor, B owes its value.
    w = u32(qA & NIBBLE)
    pm |= U1 << np.uint64(pl)
    pq |= np.uint64(w) << (U4 * np.uint64(pc))
    return mA >> U1, u32(nA - W1), qA >> U4, mB, nB, qB, who, w, pm, pq, u32(pl + W1), u32(pc + W1), MID


@kernel
def play_segments(m0, n0, q0, m1, n1, q1, brent_start, out):
    """A whole game by segments, with Brent's detection at trick boundaries as `game2` does it (the
    reference for the lock-step sweeps' loop; tests hold it to game2). out[:] = (period, winner,
    tricks, cards, segments): period 0 for a finished game."""
    mX, nX, qX, mY, nY, qY = m0, u32(n0), q0, m1, u32(n1), q1
    who = W0
    v = W0
    pm = pq = np.uint64(0)
    pl = pc = W0
    tricks = 0
    cards = 0
    segments = 0
    s_who, s_mX, s_nX, s_qX, s_mY, s_qY = who, mX, nX, qX, mY, qY
    power = 1
    lam = 0
    if nX == W0 or nY == W0:
        out[0], out[1], out[2], out[3], out[4] = 0, np.int64(nX == W0), 0, 0, 0
        return
    while True:
        mX, nX, qX, mY, nY, qY, who, v, pm, pq, pl, pc, event = step(mX, nX, qX, mY, nY, qY, who, v, pm, pq, pl, pc)
        segments += 1
        if event == MID:
            continue
        tricks += 1
        cards += np.int64(pl)
        if event == OVER:
            out[0], out[1], out[2], out[3], out[4] = 0, np.int64(who), tricks, cards, segments
            return
        if tricks > brent_start:
            lam += 1
            if ((who ^ s_who) | (nX ^ s_nX)) == W0 and ((mX ^ s_mX) | (qX ^ s_qX) | (mY ^ s_mY) | (qY ^ s_qY)) == 0:
                out[0], out[1], out[2], out[3], out[4] = lam, 0, tricks, cards, segments
                return
            if lam == power:
                s_who, s_mX, s_nX, s_qX, s_mY, s_qY = who, mX, nX, qX, mY, qY
                power *= 2
                lam = 0
        elif tricks == brent_start:
            s_who, s_mX, s_nX, s_qX, s_mY, s_qY = who, mX, nX, qX, mY, qY
