"""Cycles built from independent pieces: the construction's genes, their multisets and hands.

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

The kernels are kernels/genes.py's (the gadget played, F, the gene search). Here, in Python: genes by
composition (`genes_of`) and for every composition at once (`library`), multisets of compositions and
the hands they make (kernels/strategies/construct.py assembles them into cycles). The plain search over
every piece, which the gene search is held to, is the tests' (tests/naive.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from itertools import permutations, product
from typing import NamedTuple

import numpy as np

from . import genes as kg

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


def order(c: Comp) -> tuple:
    """The order of compositions in a multiset: fewer cards first, then by counts."""
    return (sum(c), c)


def minus(a: Comp, b: Comp) -> Comp:
    return tuple(x - y for x, y in zip(a, b))


@lru_cache(maxsize=1 << 14)
def genes_of(small: tuple, tail: tuple, comp: Comp, lookahead: int = kg.LOOKAHEAD, max_orbit: int = 64,
             max_nodes: int = 0) -> GeneSet:
    """Every gene of the gadget (small, tail) holding exactly the cards `comp` (kernels/genes.py, exact), each
    orbit listed from its least phase, within max_nodes choices (0: no limit). Cached per process: shards that
    meet a composition again reuse it."""
    found, counters = kg.genes_of(small, tail, comp, k=lookahead, max_orbit=max_orbit, max_nodes=max_nodes)
    return GeneSet(tuple(kg.orbit_phases(piece, small, tail) for piece in found), int(counters[kg.CHOICES]),
                   bool(counters[kg.TRUNCATED]))


@lru_cache(maxsize=8)
def library(small: tuple, tail: tuple, pool: Comp, max_len: int, lookahead: int = kg.LOOKAHEAD,
            max_orbit: int = 64) -> dict[Comp, tuple]:
    """Every gene of at most max_len cards drawn from `pool`, by composition (each orbit from its least phase):
    one search over the pieces of every composition at once (not exact), so the compositions share their
    leading cards. Cached per process."""
    by_comp: dict[Comp, list] = {}
    for piece in kg.genes_upto(small, tail, pool, max_len, k=lookahead, max_orbit=max_orbit):
        by_comp.setdefault(comp_of(piece), []).append(kg.orbit_phases(piece, small, tail))
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
        key = tuple(rest[j] for j in perm)  # genes met twice in the multiset: each order of them once
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
    block = np.zeros(kg.buffer_cards(small_a.shape[0], body.shape[0]), np.uint8)
    at = 0
    while at < body.shape[0]:
        rest = body[at:].copy()
        out, used, _ = kg.play_piece(rest, rest.shape[0], small_a, block, np.zeros(1, np.int64))
        if out != kg.DONE:
            return None
        piece = rest[:used]
        if kg.orbit_length(piece, used, small_a, tail_a, 64) == 0:
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
