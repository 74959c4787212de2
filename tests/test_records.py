"""The published figures (tests/data/records.tsv) on every engine."""

from __future__ import annotations

import pytest
from helpers import CASELLA, play_engine, records

from kernels.notation import parse_deal


@pytest.mark.parametrize("row", records(), ids=lambda r: r["name"])
def test_published_record(row, engine):
    result = play_engine(parse_deal([row["hand1"], row["hand2"]]), engine)
    assert result.outcome == row["outcome"]
    assert result.tricks == int(row["tricks"])
    assert result.cards == int(row["cards"])
    if row["outcome"] == "win":
        assert result.winner == int(row["winner"])
    else:
        assert result.winner is None


def test_casella_cycle_figures(engine):
    r = play_engine(parse_deal(CASELLA), engine)
    assert (r.outcome, r.winner) == ("cycle", None)
    assert (r.preperiod_tricks, r.preperiod_cards) == (4, 34)
    assert (r.period_tricks, r.period_cards) == (62, 440)
    assert (r.tricks, r.cards) == (66, 474)
    assert len(r.cycle_id) == 16 and int(r.cycle_id, 16) >= 0
