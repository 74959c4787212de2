"""Probes of the two known cycles and of a shape-recurrence search (benchmarks/README.md, "Cycles by construction").

    .venv/bin/python benchmarks/cycle_probes.py isolation DEAL       # deletions, substitutions, moves
    .venv/bin/python benchmarks/cycle_probes.py near DEAL [SAMPLES]  # game lengths of swapped deals
    .venv/bin/python benchmarks/cycle_probes.py shapes DECK SECONDS [SEED]
    .venv/bin/python benchmarks/cycle_probes.py states DECK CPU_SECONDS [SEED]  # random states

`isolation` plays every deletion of one and of two plain cards, every substitution of one card by
another value of the deck, and 200,000 random swaps and moves, from every state of the deal's
cycle, and counts the children that still cycle and the distinct cycles they give.

`near` plays every single swap of two cards of different values in DEAL and SAMPLES random double
swaps, and reports the lengths of the finite games (are games near a cycle long?).

`shapes` plays random balanced deals of DECK with a small engine of its own that notes each game's
first *shape recurrence*: a trick-boundary state whose leader's seat, hand sizes and places of the
penalty cards are those of an earlier state of the same game, with other penalty values (both
known cycles come back to the same shape within their period). Each such state's shape class
(every assignment of its penalty values to its penalty places) is then played in full.

`states` plays random trick-boundary states of DECK (a random order of the deck cut at a random
place, one cut per batch of 500,000, hand 1 leading) for CPU_SECONDS of this process's CPU time and
prints every distinct cycle met (run it with NUMBA_NUM_THREADS=1 for one core).
"""

from __future__ import annotations

import itertools
import sys
import time

import numba as nb
import numpy as np

from kernels.cyclestate import cycle_state
from kernels.decks import Deck, parse_deck
from kernels.engines.reference import Game
from kernels.game import CYCLE, F_CARDS, F_CYCLE_ID, F_OUTCOME, cycle_id_hex
from kernels.notation import format_deal, parse_deal
from kernels.play import play_batch
from kernels.strategies.cycles import Player, cycle_states


def tally(name: str, rows: list, cuts: list, deck: Deck) -> None:
    """Play children of a cycle of `deck` (any cut; at most one penalty card more than the deck)."""
    rows, cuts = np.array(rows, dtype=np.uint8), np.array(cuts, dtype=np.int64)
    ok = (cuts >= 1) & (cuts < rows.shape[1])
    out = Player(rows.shape[1], deck, slack=1).play(rows[ok], cuts[ok])
    cycling = out[:, F_OUTCOME] == CYCLE
    ids = {cycle_id_hex(int(c)) for c in out[cycling, F_CYCLE_ID]}
    print(f"{name}: {int(ok.sum()):,} children, {int(cycling.sum()):,} still cycle "
          f"({cycling.mean():.2%}), {len(ids)} distinct cycles {sorted(ids)[:4]}")


def isolation(deal_text: str) -> None:
    canonical = parse_deal(cycle_state(parse_deal(deal_text)))
    deck = Deck.of_deal(canonical)
    states = cycle_states(tuple(tuple(h) for h in canonical))
    top = max(v for h in canonical for v in h)
    print(f"cycle of {len(states)} tricks, {sum(len(h) for h in canonical)} cards")
    for k in (1, 2):
        rows, cuts = [], []
        for row, cut in states:
            plain = np.nonzero(row == 0)[0]
            for drop in itertools.combinations(plain, k):
                keep = np.ones(len(row), bool)
                keep[list(drop)] = False
                rows.append(row[keep])
                cuts.append(cut - sum(1 for d in drop if d < cut))
        tally(f"delete {k} plain card{'s' if k > 1 else ''}", rows, cuts, deck)
    rows, cuts = [], []
    for row, cut in states:
        for i in range(len(row)):
            for v in range(top + 1):
                if v != row[i]:
                    child = row.copy()
                    child[i] = v
                    rows.append(child)
                    cuts.append(cut)
    tally("substitute one card", rows, cuts, deck)
    rng = np.random.default_rng(1)
    rows, cuts = [], []
    for _ in range(200_000):
        row, cut = states[int(rng.integers(len(states)))]
        row = row.copy()
        a, b = (int(x) for x in rng.integers(0, len(row), size=2))
        if row[a] == row[b]:
            continue  # two cards of one value: the same state
        if rng.integers(2):
            row[a], row[b] = row[b], row[a]
        else:
            card, rest = row[a], np.delete(row, a)
            row = np.insert(rest, b, card)
            if a < cut <= b:
                cut -= 1
            elif b < cut <= a:
                cut += 1
        rows.append(row)
        cuts.append(cut)
    tally("swap or move (different values)", rows, cuts, deck)


def near(deal_text: str, samples: int) -> None:
    deal = parse_deal(deal_text)
    seq = np.array(deal[0] + deal[1], dtype=np.uint8)
    cut = len(deal[0])
    pairs = [(i, j) for i in range(len(seq)) for j in range(i + 1, len(seq)) if seq[i] != seq[j]]
    rng = np.random.default_rng(1)
    for name, swaps in (("single swaps", [[p] for p in pairs]),
                        ("double swaps", [[pairs[i], pairs[j]] for i, j in rng.integers(0, len(pairs), (samples, 2))])):
        rows = np.repeat(seq[None, :], len(swaps), 0)
        for k, chosen in enumerate(swaps):
            for i, j in chosen:
                rows[k, i], rows[k, j] = rows[k, j], rows[k, i]
        out = play_batch(rows, [cut, len(seq) - cut])
        finite = out[out[:, F_OUTCOME] != CYCLE, F_CARDS]
        print(f"{name}: {len(rows):,} deals, {len(rows) - len(finite):,} cycle, finite games: mean "
              f"{finite.mean():.0f} cards, longest {finite.max()}")


SLOTS = 64  # ring buffer per hand (a power of two, at least the deck)


@nb.njit(cache=True)
def _hashes(hands, head, size, lead):
    """(shape, state) hashes of a trick-boundary state seen from the leader's seat."""
    prime = np.uint64(1099511628211)
    shape = state = np.uint64(1469598103934665603)
    for k in range(2):
        p = (lead + k) % 2
        shape = (shape ^ np.uint64(size[p] + 100)) * prime
        state = (state ^ np.uint64(size[p] + 100)) * prime
        for j in range(size[p]):
            v = hands[p, (head[p] + j) & (SLOTS - 1)]
            shape = (shape ^ np.uint64(1 if v > 0 else 0)) * prime
            state = (state ^ np.uint64(v)) * prime
    return shape, state


@nb.njit(cache=True)
def shape_recurrences(rows, cut, max_tricks, hits):
    """hits[i] = (t1, t2, cycled): the first trick t2 whose state has the shape of the state at
    trick t1 < t2 with other values (-1, -1 if none), and 1 if the game repeated a state exactly."""
    n = rows.shape[1]
    shapes = np.zeros(max_tricks, np.uint64)
    states = np.zeros(max_tricks, np.uint64)
    hands = np.zeros((2, SLOTS), np.uint8)
    head = np.zeros(2, np.int64)
    size = np.zeros(2, np.int64)
    pile = np.zeros(n + 1, np.uint8)
    for i in range(rows.shape[0]):
        hits[i, 0] = hits[i, 1] = -1
        hits[i, 2] = 0
        head[0] = head[1] = 0
        size[0], size[1] = cut, n - cut
        for j in range(cut):
            hands[0, j] = rows[i, j]
        for j in range(n - cut):
            hands[1, j] = rows[i, cut + j]
        lead = 0
        for t in range(max_tricks):
            if size[0] == 0 or size[1] == 0:
                break
            shape, state = _hashes(hands, head, size, lead)
            repeated = False
            for s in range(t):
                if shapes[s] == shape:
                    if states[s] == state:
                        hits[i, 2] = 1
                        repeated = True
                        break
                    if hits[i, 0] < 0:
                        hits[i, 0], hits[i, 1] = s, t
            if repeated:
                break
            shapes[t], states[t] = shape, state
            count, player, owed, creditor, out = 0, lead, 0, -1, False
            while True:  # one trick (docs/rules.md, two players)
                if size[player] == 0:
                    out = True
                    break
                card = hands[player, head[player]]
                head[player] = (head[player] + 1) & (SLOTS - 1)
                size[player] -= 1
                pile[count] = card
                count += 1
                if card > 0:
                    owed, creditor, player = card, player, 1 - player
                elif owed > 0:
                    owed -= 1
                    if owed == 0:
                        for j in range(count):
                            hands[creditor, (head[creditor] + size[creditor]) & (SLOTS - 1)] = pile[j]
                            size[creditor] += 1
                        lead = creditor
                        break
                else:
                    player = 1 - player
            if out:
                break


def assignments(values: list[int]) -> np.ndarray:
    """Every distinct ordering of a multiset of values."""
    out: list[tuple] = []

    def rec(prefix: list[int], left: dict[int, int], k: int) -> None:
        if k == 0:
            out.append(tuple(prefix))
            return
        for v in sorted(left):
            if left[v]:
                left[v] -= 1
                prefix.append(v)
                rec(prefix, left, k - 1)
                prefix.pop()
                left[v] += 1

    counts: dict[int, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    rec([], counts, len(values))
    return np.array(out, dtype=np.uint8)


def shapes(deck_text: str, seconds: float, seed: int) -> None:
    deck = parse_deck(deck_text)
    cards = np.repeat(np.arange(len(deck.counts), dtype=np.uint8), deck.counts)
    n, half, batch = len(cards), len(cards) // 2, 20_000
    rng = np.random.default_rng(seed)
    games = recurrences = exact = class_games = with_cycle = 0
    classes, cycles, direct = set(), {}, set()
    t0 = time.time()
    while time.time() - t0 < seconds:
        rows = np.array([rng.permutation(cards) for _ in range(batch)])
        hits = np.zeros((batch, 3), np.int64)
        shape_recurrences(rows, half, 3000, hits)
        games += batch
        exact += int(hits[:, 2].sum())
        for i in np.nonzero(hits[:, 2])[0]:
            r = play_batch(rows[i][None, :], [half, n - half])[0]
            direct.add(cycle_id_hex(int(r[F_CYCLE_ID])))
        for i in np.nonzero(hits[:, 0] >= 0)[0]:
            recurrences += 1
            game = Game((tuple(int(v) for v in rows[i, :half]), tuple(int(v) for v in rows[i, half:])))
            for _ in range(int(hits[i, 0])):
                game.play_trick()
            lead, hands = game.state()
            row = np.array(hands[lead] + hands[1 - lead], dtype=np.uint8)
            cut = len(hands[lead])
            key = (cut, tuple(row > 0))
            if key in classes:
                continue
            classes.add(key)
            places = np.nonzero(row)[0]
            values = assignments(sorted(int(v) for v in row[places]))
            members = np.repeat(row[None, :], len(values), 0)
            members[:, places] = values
            out = play_batch(members, [cut, n - cut])
            class_games += len(members)
            cycling = out[:, F_OUTCOME] == CYCLE
            with_cycle += bool(cycling.any())
            for k in np.nonzero(cycling)[0]:
                cycles.setdefault(cycle_id_hex(int(out[k, F_CYCLE_ID])),
                                  format_deal([members[k, :cut].tolist(), members[k, cut:].tolist()]))
    print(f"{deck.spec()}: {games:,} balanced deals in {time.time() - t0:.0f} s; {exact:,} cycle "
          f"({len(direct)} distinct cycles); {recurrences:,} shape recurrences, {len(classes):,} shape classes "
          f"({class_games:,} games), {with_cycle} of them holding a cycle, {len(cycles)} distinct cycles "
          f"({len(set(cycles) - direct)} not met by the deals themselves)")


def states(deck_text: str, seconds: float, seed: int) -> None:
    deck = parse_deck(deck_text)
    cards = np.repeat(np.arange(len(deck.counts), dtype=np.uint8), deck.counts)
    n, batch = len(cards), 500_000
    rng = np.random.default_rng(seed)
    games, found = 0, {}
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        rows = cards[rng.random((batch, n)).argsort(axis=1)]
        cut = int(rng.integers(1, n))
        out = play_batch(rows, [cut, n - cut])
        games += batch
        for k in np.nonzero(out[:, F_OUTCOME] == CYCLE)[0]:
            cid = cycle_id_hex(int(out[k, F_CYCLE_ID]))
            if cid not in found:
                found[cid] = format_deal([rows[k, :cut].tolist(), rows[k, cut:].tolist()])
                print(f"cycle {cid} after {games:,} states: {found[cid]}", flush=True)
    print(f"{deck.spec()}: {games:,} random states in {time.process_time() - t0:.0f} CPU s, "
          f"{len(found)} distinct cycles")


def main(argv: list[str]) -> None:
    if argv[:1] == ["isolation"] and len(argv) == 2:
        isolation(argv[1])
    elif argv[:1] == ["near"] and len(argv) in (2, 3):
        near(argv[1], int(argv[2]) if len(argv) == 3 else 200_000)
    elif argv[:1] == ["shapes"] and len(argv) in (3, 4):
        shapes(argv[1], float(argv[2]), int(argv[3]) if len(argv) == 4 else 1)
    elif argv[:1] == ["states"] and len(argv) in (3, 4):
        states(argv[1], float(argv[2]), int(argv[3]) if len(argv) == 4 else 1)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
