"""The factory's moves: the children of a cycle, as rows to play (hand 1 holding a row's first `cut`
cards, and leading).

- insertions: one card more (or two: `pairs`), anywhere in either hand of any state of the cycle;
- substitutions: one card of a state of the cycle given another value;
- variations: around a cycle of the target deck, a swap of two cards or a move of one card.

Each returns (rows, cuts) and draws from the beam's random generator in a fixed order, so a beam
is a function of its seed.
"""

from __future__ import annotations

import numpy as np

from ..._jit import kernel
from .state import CycleState, Target


@kernel
def insert_cards(parent, at, values, out):
    """Child i = parent with values[i] inserted before position at[i] of the whole row."""
    n = parent.shape[0]
    for i in range(at.shape[0]):
        k = at[i]
        for j in range(k):
            out[i, j] = parent[j]
        out[i, k] = values[i]
        for j in range(k, n):
            out[i, j + 1] = parent[j]


@kernel
def insert_each(rows, cuts, slots, values, out, out_cuts):
    """Row i with values[i] put into slot slots[i] (0..n+1: the leader's hand has cuts[i] + 1
    places, the other hand the rest), its new cut in out_cuts[i]."""
    n = rows.shape[1]
    for i in range(rows.shape[0]):
        s = slots[i]
        first = s <= cuts[i]
        k = s if first else s - 1
        for j in range(k):
            out[i, j] = rows[i, j]
        out[i, k] = values[i]
        for j in range(k, n):
            out[i, j + 1] = rows[i, j]
        out_cuts[i] = cuts[i] + 1 if first else cuts[i]


def insertions(cycles: list[CycleState], target: Target, rng: np.random.Generator, *, children: int,
               pairs: int = 0) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Every insertion of one card into each cycle: a state of the cycle, a slot (n + 2 of them: the
    leader's hand has cut + 1 places, the other hand n - cut + 1), a value within the slack. All
    of them if there are at most `children`, else `children` drawn at random. With `pairs`, that
    many double insertions per cycle instead: a random insertion, then a second card anywhere."""
    children_rows, children_cuts = [], []
    for cycle in cycles:
        n = cycle.cards
        if n + (2 if pairs else 1) > target.total:
            continue
        have = target.composition(cycle)
        values = target.allowed(have)
        if len(values) == 0:
            continue
        states = cycle.states()
        combos = len(states) * (n + 2) * len(values)
        if pairs:
            picks = rng.integers(0, combos, size=pairs)
        elif combos <= children:
            picks = np.arange(combos)
        else:
            picks = np.sort(rng.choice(combos, size=children, replace=False))
        which, rest = np.divmod(picks, (n + 2) * len(values))
        slot, value = np.divmod(rest, len(values))
        for base in np.unique(which):
            row, cut = states[int(base)]
            mine = which == base
            s_slot = slot[mine]
            first = s_slot <= cut
            at = np.where(first, s_slot, s_slot - 1).astype(np.int64)
            out = np.empty((len(at), n + 1), dtype=np.uint8)
            insert_cards(row, at, values[value[mine]], out)
            out_cuts = np.where(first, cut + 1, cut).astype(np.int64)
            if pairs:  # a second card, of a value within the slack after the first, anywhere
                second = np.array([rng.choice(target.allowed(have + np.eye(len(have), dtype=np.int64)[v]))
                                   for v in values[value[mine]]], dtype=np.uint8)
                slots2 = rng.integers(0, n + 3, size=len(at))
                out2 = np.empty((len(at), n + 2), dtype=np.uint8)
                cuts2 = np.empty(len(at), dtype=np.int64)
                insert_each(out, out_cuts, slots2, second, out2, cuts2)
                out, out_cuts = out2, cuts2
            children_rows.append(out)
            children_cuts.append(out_cuts)
    return children_rows, children_cuts


def substitutions(cycles: list[CycleState], target: Target, rng: np.random.Generator, *, count: int,
                  at_target: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """One card of a state of each cycle given another value: `count` per cycle drawn at random
    (`at_target` at the target's size, where they are the only way to the target's composition;
    none if `count` is 0), the excess kept within the slack, and never raised at the target size."""
    children_rows, children_cuts = [], []
    for cycle in cycles:
        n = cycle.cards
        counts = target.composition(cycle)
        now = target.excess(counts)
        changes = []
        for a in np.nonzero(counts)[0]:
            for b in target.values:
                if b == a:
                    continue
                after = counts.copy()
                after[a] -= 1
                after[b] += 1
                e = target.excess(after)
                if e <= target.slack and (n < target.total or e <= now):
                    changes.append((int(a), b))
        tries = count if n < target.total or not count else at_target
        if not changes or tries == 0:
            continue
        states = cycle.states()
        rows = np.empty((tries, n), dtype=np.uint8)
        cuts = np.empty(tries, dtype=np.int64)
        for i in range(tries):
            row, cut = states[int(rng.integers(0, len(states)))]
            a, b = changes[int(rng.integers(0, len(changes)))]
            places = np.nonzero(row == a)[0]
            rows[i] = row
            rows[i, places[int(rng.integers(0, len(places)))]] = b
            cuts[i] = cut
        children_rows.append(rows)
        children_cuts.append(cuts)
    return children_rows, children_cuts


def variations(cycle: CycleState, rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray]:
    """`count` swaps of two cards or moves of one card to another place, each in a random state of
    the cycle."""
    total = cycle.cards
    states = cycle.states()
    rows = np.empty((count, total), dtype=np.uint8)
    cuts = np.empty(count, dtype=np.int64)
    for i in range(count):
        row, cut = states[int(rng.integers(0, len(states)))]
        row = row.copy()
        a, b = rng.integers(0, total, size=2)
        if rng.integers(0, 2) == 0:
            row[a], row[b] = row[b], row[a]  # a swap
        else:
            card = row[a]  # a move: card a taken out and put back before place b
            rest = np.delete(row, a)
            row = np.insert(rest, min(int(b), total - 1), card)
            if a < cut and b >= cut:
                cut -= 1
            elif a >= cut and b < cut:
                cut += 1
            cut = min(max(cut, 1), total - 1)
        rows[i], cuts[i] = row, cut
    return rows, cuts
