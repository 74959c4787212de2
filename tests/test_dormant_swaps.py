"""The dormant-swap probe of benchmarks/README.md ("Branching a long game late"): its traced games agree
with the reference player, and the number of cards a value swap leaves unchanged is exact (the
swapped game repeats the original for exactly that long, then differs)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from kernels.engines.reference import play_reference, trace_reference

spec = importlib.util.spec_from_file_location(
    "dormant_swaps", Path(__file__).resolve().parents[1] / "benchmarks" / "dormant_swaps.py")
dormant_swaps = importlib.util.module_from_spec(spec)
spec.loader.exec_module(dormant_swaps)

CARDS = np.repeat(np.arange(5, dtype=np.uint8), [36, 4, 4, 4, 4])


def random_deal(rng, cut=26):
    row = rng.permutation(CARDS).tolist()
    return [row[:cut], row[cut:]]


def test_the_trace_plays_like_the_reference():
    rng = np.random.default_rng(5)
    finite = 0
    for _ in range(150):
        deal = random_deal(rng, cut=int(rng.integers(10, 43)))
        r = play_reference(deal)
        if r.outcome != "win":
            continue
        finite += 1
        values, order, plays = dormant_swaps.trace(deal)
        played = [v for record in trace_reference(deal) for v in record.pile]
        assert [values[c] for c in order] == played and len(order) == r.cards
        # every play of a penalty card is recorded, once
        assert sum(len(p) for p in plays.values()) == sum(1 for c in order if values[c] > 0)
    assert finite > 100


@pytest.mark.parametrize("seed", [1, 2])
def test_a_swap_changes_nothing_for_exactly_its_dormancy(seed):
    rng = np.random.default_rng(seed)
    deal = random_deal(rng)
    while play_reference(deal).outcome != "win":
        deal = random_deal(rng)
    values, order, plays = dormant_swaps.trace(deal)
    flat = deal[0] + deal[1]
    pens = [c for c in range(52) if values[c] > 0]
    checked = 0
    for i, a in enumerate(pens):
        for b in pens[i + 1:]:
            if values[a] == values[b]:
                continue
            tau = dormant_swaps.dormant_for(values, plays, a, b, len(order))
            swapped = list(flat)
            swapped[a], swapped[b] = swapped[b], swapped[a]
            deal2 = [swapped[:26], swapped[26:]]
            if play_reference(deal2).outcome != "win":
                continue
            order2 = dormant_swaps.trace(deal2)[1]
            assert order2[:tau + 1] == order[:tau + 1]
            if tau < len(order):
                # card tau is a play of one of the two cards, one that the other value plays
                # differently: the games part within that payment
                assert order[tau] in (a, b)
                assert order2 != order
                assert order2[:tau + 1 + values[a] + values[b] + 1] != order[:tau + 1 + values[a] + values[b] + 1]
            checked += 1
    assert checked >= 80
    _, out, bound = dormant_swaps.swaps(deal)
    assert bound >= max(o[0] for o in out)  # a swap is a permutation: the bound holds for it
