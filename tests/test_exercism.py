"""exercism's canonical data for this game (its 28 cases, in tests/data/exercism_camicia.tsv), on
every engine: from one-card deals without a penalty card to the published records and Casella."""

from __future__ import annotations

import csv

import pytest
from helpers import DATA, play_engine

from kernels.engines.bitmask import fits
from kernels.errors import BmnError
from kernels.notation import parse_deal


def cases() -> list[dict]:
    with open(DATA / "exercism_camicia.tsv", newline="") as handle:
        lines = [line for line in handle if not line.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


def test_all_28_cases_are_there():
    assert len(cases()) == 28


@pytest.mark.parametrize("case", cases(), ids=lambda c: c["description"])
def test_exercism_case(case, engine):
    deal = parse_deal([case["hand1"], case["hand2"]])
    cards = sum(len(h) for h in deal)
    if engine == "fast" and not fits(2, cards, sum(v > 0 for h in deal for v in h),
                                     max(max(h, default=0) for h in deal)):
        with pytest.raises(BmnError, match="the fast kernel holds two-player deals of at most 64 cards"):
            play_engine(deal, engine)  # too big for the bitmask engine: refused, never mis-played
        return
    result = play_engine(deal, engine)
    assert result.outcome == {"finished": "win", "loop": "cycle"}[case["status"]]
    assert (result.cards, result.tricks) == (int(case["cards"]), int(case["tricks"]))
