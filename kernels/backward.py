"""Backward play (RULES.md, "Balanced deals, backward play"), two players.

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
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel
from .engine import load, play_trick


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
                     per_root, out_rows, out_tricks, out_cards, out_root):
    """Walk the ancestor trees of every root; collect the balanced ancestors.

    For root r, a predecessor equal to skip[r] is not followed (has_skip[r] == 1): that is the
    root's predecessor on its own game or cycle, searched from another root. Each root's tree is
    walked for at most `per_root` states, all of them for at most `max_states`.
    A balanced ancestor led by hand 2 is reported as the swapped deal (hand 1 leads a deal).
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
