"""The bitmask engine's game cut into segments, for lanes that play in lock-step (the GPU's sweep).

`trick2` (kernels/engines/bitmask.py) plays a whole trick, with a loop over its payments; a warp of
GPU threads each in its own game then waits, at every such loop, for its slowest lane. Here a trick
is cut where its loop was, so that a lane's whole game is one flat sequence of equal steps:

    free_play  from a trick boundary, both players alternate plain cards up to the first penalty card
               shown (its player becomes the creditor), or up to a player who must play and has no card;
    pay_round  the payer pays until the payment is complete (the creditor takes the pile: a trick
               boundary), a penalty card among the payment flips the roles, or the payer runs out.

A lane's state is the bitmask engine's words (kernels/engines/bitmask.py) of two hands, X and Y,
and of the pile:
    at a boundary (v = 0)  X leads; `who` is X's player number
    in a payment (v > 0)   X is the creditor (its player number `who`), Y owes it v more cards
    pile                   pm (penalty positions), pq (their values in order), pl cards, pc penalty cards
The small numbers (counts, lengths, players, values) are 32-bit: a GPU does a 32-bit operation in
one instruction and a 64-bit one in two or more. Numba types integer arithmetic at 64 bits, so each
result is cut back to 32 bits where it is made (`u32(...)`); LLVM then does the operation itself in
32 bits (tests/test_gpu.py reads the kernel's SASS).

Both steps return the state after them and an event: MID (the trick goes on), TRICK (a trick ended
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


@kernel(inline="always")
def free_play(mX, nX, qX, mY, nY, qY, who):
    """From a boundary where X leads: up to the first penalty card shown, or to a player out of cards.

    Returns (mX, nX, qX, mY, nY, qY, who, v, pm, pq, pl, pc, event): on MID, X is the player who
    showed the penalty card (the creditor), Y owes v cards and the pile holds the trick so far; on
    OVER, the player to act had no card and `who` is the other, the winner.
    """
    # As trick2: the leader's k-th card is step 2k, the other's 2k+1; each side's event is its next
    # penalty card or running out, whichever comes first; the sides are selected with masks.
    eX = u32(min(ctz(mX), np.uint64(nX)))
    eY = u32(min(ctz(mY), np.uint64(nY)))
    other = u32(eY < eX)  # 1: Y's event comes first, and Y is the one to act
    k = u32(min(eX, eY))
    kX = u32(k + other)  # the leader plays one more plain card when the other's event comes first
    mX >>= np.uint64(kX)
    nX = u32(nX - kX)
    mY >>= np.uint64(k)
    nY = u32(nY - k)
    pl = u32(k + kX)
    pick = np.uint64(0) - np.uint64(other)  # all ones when Y acts
    mA = (mY & pick) | (mX & ~pick)
    qA = (qY & pick) | (qX & ~pick)
    mB = (mX & pick) | (mY & ~pick)
    qB = (qX & pick) | (qY & ~pick)
    nA = nY if other else nX
    nB = nX if other else nY
    who = u32(who ^ other)
    if nA == W0:
        # The player to act has no card: the other takes the pile and wins.
        return mB, nB, qB, mA, nA, qA, u32(who ^ W1), W0, np.uint64(0), np.uint64(0), pl, W0, OVER
    # A plays its penalty card: A is the creditor, B pays.
    v = u32(qA & NIBBLE)
    return mA >> U1, u32(nA - W1), qA >> U4, mB, nB, qB, who, v, U1 << np.uint64(pl), np.uint64(v), u32(pl + W1), W1, MID


@kernel(inline="always")
def pay_round(mX, nX, qX, mY, nY, qY, who, v, pm, pq, pl, pc):
    """Y pays X up to v cards: the payment completes (X takes the pile, leads the next trick: TRICK, or
    OVER when Y has no card left), a penalty card among it flips the roles (MID), or Y runs out (OVER).
    Returns the state after it and the event, as free_play."""
    c = u32(min(ctz(mY), np.uint64(nY)))  # plain cards Y can pay before its next penalty card or the end
    if c >= v:
        # Y pays v plain cards; X picks up the pile under its hand, in the order it was played.
        mY >>= np.uint64(v)
        nY = u32(nY - v)
        pl = u32(pl + v)
        qX |= pq << (U4 * popcount(mX))
        mX |= pm << np.uint64(nX)
        nX = u32(nX + pl)
        return mX, nX, qX, mY, nY, qY, who, W0, pm, pq, pl, pc, OVER if nY == W0 else TRICK
    if c < nY:
        # A penalty card among the payment: Y becomes the creditor, X owes its value.
        mY >>= np.uint64(c + W1)
        nY = u32(nY - c - W1)
        pl = u32(pl + c)
        w = u32(qY & NIBBLE)
        qY >>= U4
        pm |= U1 << np.uint64(pl)
        pq |= np.uint64(w) << (U4 * np.uint64(pc))
        return mY, nY, qY, mX, nX, qX, u32(who ^ W1), w, pm, pq, u32(pl + W1), u32(pc + W1), MID
    # Y runs out of cards while paying: X takes the pile and wins.
    return mX, nX, qX, mY, W0, qY, who, W0, pm, pq, u32(pl + nY), pc, OVER


@kernel(inline="always")
def step(mX, nX, qX, mY, nY, qY, who, v, pm, pq, pl, pc):
    """One segment: free play at a boundary (v = 0), else one round of payment."""
    if v == W0:
        return free_play(mX, nX, qX, mY, nY, qY, who)
    return pay_round(mX, nX, qX, mY, nY, qY, who, v, pm, pq, pl, pc)


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
