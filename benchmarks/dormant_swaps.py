"""Can a long game be branched late? Value swaps of two penalty cards that change nothing for a while.

    .venv/bin/python benchmarks/dormant_swaps.py DEAL [DEAL ...]
    .venv/bin/python benchmarks/dormant_swaps.py --random DEALS TOP [SEED]

Exchanging the values of two penalty cards of a deal (a J and a K, say) leaves its game exactly as
it was until the first time one of the two cards is played where the other value would have
changed what happened: a J answered at once by a penalty card plays like a K answered at once. If
such a *dormant* swap stayed dormant for most of a long game, the swapped deal would be a new
balanced deal that repeats the long game's first thousands of cards and then goes its own way: a
branching of the game late in its course (importance splitting), which search over deals cannot
otherwise do, because any change to a deal is met within the first pass of ~50 cards.

For every deal given (or the TOP longest of DEALS random standard deals), this lists every swap of
two penalty cards of different values, the number of cards its game shares with the original
(checked by replaying both and comparing which card is played at each step), and the length of the
swapped deal's game (every length checked against the engine).
"""

from __future__ import annotations

import sys
from collections import deque

import numpy as np

from kernels.decks import parse_deck
from kernels.game import F_CARDS, F_OUTCOME, WIN
from kernels.notation import format_deal, parse_deal
from kernels.play import play, play_batch


def trace(deal):
    """Play a two-player deal with each card's identity (its place in the deal) kept.

    Returns (values, order, plays): order is the identity of each card played in turn; plays[c]
    lists, for every play of penalty card c, (card number, k, exact): the payment was cut short by
    a penalty card (or an empty hand) at its k-th card, so any value >= k plays the same, or, if
    exact, the payment was complete and only the card's own value plays the same."""
    values, hands, ident = [], [], 0
    for hand in deal:
        queue = deque()
        for v in hand:
            values.append(int(v))
            queue.append(ident)
            ident += 1
        hands.append(queue)
    plays = {c: [] for c in range(ident) if values[c] > 0}
    order, pile, leader = [], [], 0
    while hands[0] and hands[1]:
        player, owed = leader, None  # owed: (creditor card, value, card number, paid so far)
        while True:
            if not hands[player]:  # rule 3: the player who must play and cannot has lost
                if owed is not None:
                    plays[owed[0]].append((owed[2], owed[3] + 1, False))
                hands[1 - player].extend(pile)
                pile = []
                break
            c = hands[player].popleft()
            pile.append(c)
            order.append(c)
            v = values[c]
            if owed is not None:
                card, value, when, paid = owed
                paid += 1
                if v > 0:
                    plays[card].append((when, paid, False))
                    owed, player = (c, v, len(order) - 1, 0), 1 - player
                elif paid == value:
                    plays[card].append((when, value, True))
                    hands[1 - player].extend(pile)
                    pile, leader = [], 1 - player
                    break
                else:
                    owed = (card, value, when, paid)
            else:
                if v > 0:
                    owed = (c, v, len(order) - 1, 0)
                player = 1 - player
    return values, order, plays


def met_at(values, plays, card, other, total):
    """The card number of the first play of `card` that value `other` would play differently
    (total if none)."""
    for when, k, exact in plays[card]:
        if (other != values[card]) if exact else (other < k):
            return when
    return total


def dormant_for(values, plays, a, b, total):
    """Cards played before swapping the values of cards a and b changes the game (total if never)."""
    return min(met_at(values, plays, a, values[b], total), met_at(values, plays, b, values[a], total))


def permutation_bound(values, plays, total):
    """An upper bound on how long any permutation of penalty values stays dormant: it moves at least
    two cards, each to another value, so it is met by the second latest of the cards' best moves."""
    best = [max((met_at(values, plays, card, other, total) for other in set(values) - {0, values[card]}),
                default=0) for card in plays]
    return sorted(best)[-2]


def swaps(deal):
    """(tau, swapped game cards, a, b) for every swap of two penalty cards of different values."""
    values, order, plays = trace(deal)
    result = play(deal)
    assert result.outcome == "win" and result.cards == len(order), "the trace disagrees with the engine"
    flat, cut = [v for hand in deal for v in hand], len(deal[0])
    pens = sorted(plays)
    out = []
    for i, a in enumerate(pens):
        for b in pens[i + 1:]:
            if values[a] == values[b]:
                continue
            tau = dormant_for(values, plays, a, b, len(order))
            swapped = list(flat)
            swapped[a], swapped[b] = swapped[b], swapped[a]
            deal2 = [swapped[:cut], swapped[cut:]]
            r2 = play(deal2)
            if r2.outcome == "win":
                order2 = trace(deal2)[1]
                assert len(order2) == r2.cards, "the trace disagrees with the engine"
                assert order2[:tau + 1] == order[:tau + 1], "a swap changed the game before its time"
            else:
                assert r2.cards > tau
            out.append((tau, r2.cards, a, b))
    out.sort(reverse=True)
    return result.cards, out, permutation_bound(values, plays, len(order))


def report(deal) -> tuple[list, int]:
    """Print one deal's figures; returns its swaps and permutation bound."""
    cards, out, bound = swaps(deal)
    taus = np.array([o[0] for o in out])
    lengths = np.array([o[1] for o in out])
    top = out[0]
    print(f"{format_deal(deal)}: {cards} cards; {len(out)} swaps; shared cards median {int(np.median(taus))}, "
          f"max {top[0]}; swapped games mean {lengths.mean():.0f}, max {lengths.max()} "
          f"(the latest branch: {top[1]} cards); any permutation of values is met within {bound}")
    return out, bound


def main(argv: list[str]) -> None:
    if argv[:1] == ["--random"] and len(argv) in (3, 4):
        count, top, seed = int(argv[1]), int(argv[2]), int(argv[3]) if len(argv) == 4 else 1
        deck = parse_deck("standard")
        cards = np.repeat(np.arange(len(deck.counts), dtype=np.uint8), deck.counts)
        rng = np.random.default_rng(seed)
        rows = cards[rng.random((count, 52)).argsort(axis=1)]
        out = play_batch(rows, [26, 26])
        finite = np.nonzero(out[:, F_OUTCOME] == WIN)[0]
        best = finite[np.argsort(out[finite, F_CARDS])[::-1][:top]]
        every_tau, every_len, bounds = [], [], []
        for i in best:
            deal = [rows[i, :26].tolist(), rows[i, 26:].tolist()]
            res, bound = report(deal)
            bounds.append(bound)
            every_tau += [o[0] for o in res]
            every_len += [o[1] for o in res]
        print(f"all {len(every_tau)} swaps of the {top} longest of {count:,} deals: shared cards median "
              f"{int(np.median(every_tau))}, 99th percentile {int(np.percentile(every_tau, 99))}, max "
              f"{max(every_tau)}; swapped games mean {np.mean(every_len):.0f}, max {max(every_len)}; "
              f"random deals' mean {out[finite, F_CARDS].mean():.0f}; any permutation of values met within "
              f"{max(bounds)} cards")
    elif argv and argv[0] != "--random":
        for text in argv:
            report(parse_deal(text))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
