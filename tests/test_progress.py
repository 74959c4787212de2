"""cluster/loop/progress.py: the progress line of a search (rich on a terminal, a plain line every 30 s
otherwise, nothing when off) and its numbers (deals/s with SI units, the ETA)."""

from __future__ import annotations

import io
import re
import time

from rich.console import Console

from cluster.loop.progress import _WARMING, ProgressView, _duration, _si


def test_si_units():
    assert [_si(x) for x in (0, 999, 1000, 2_345_678, 7.5e9)] == ["0", "999", "1.00k", "2.35M", "7.50G"]


def test_durations():
    assert _duration(0) == "0:00:00" and _duration(3725.9) == "1:02:05"
    assert _duration(86400 * 2 + 1) == "2.0 days" and _duration(3.15e7 * 200) == "2.0e+02 years"


def test_off_prints_nothing(capsys):
    view = ProgressView(enabled=False)
    view.start(10, 0)
    view.update(5, 1000, 900, 1, 0, time.time() - 1)
    view.stop()
    assert capsys.readouterr() == ("", "")


def test_without_a_terminal_plain_lines_at_most_every_30_seconds(capsys):
    view = ProgressView(console=Console(file=io.StringIO(), force_terminal=False))
    assert not view.live
    view.start(100, 20)
    assert capsys.readouterr().err == f"shards 20/100: {_WARMING}\n"
    view.update(21, 0, 0, 0, 0, None)  # still warming up: no line
    assert capsys.readouterr().err == ""
    view.update(60, 2_000_000, 1234, 2, 1, time.time() - 1.0)
    line = capsys.readouterr().err
    assert line.startswith("shards 60/100  ") and "longest 1234 cards  cycles 2  failed 1" in line
    assert "[bold]" not in line and "M deals/s" in line
    eta = line.split("ETA ")[1].split()[0]  # 40 shards in 1 s, 39 left
    assert eta in ("0:00:00", "0:00:01")
    view.update(61, 2_000_000, 1234, 2, 1, time.time() - 1.0)
    assert capsys.readouterr().err == ""  # the next plain line comes 30 s later
    view.stop()


def test_on_a_terminal_a_live_bar():
    out = io.StringIO()
    view = ProgressView(console=Console(file=out, force_terminal=True, width=150))
    assert view.live
    view.start(8, 2)
    view.update(5, 3000, 777, 0, 0, time.time() - 1.0, note="2 workers")
    view.stop()
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())  # without the terminal's escapes
    assert "shards 5/8" in text and "777" in text and "(2 workers)" in text


def test_a_run_of_states_speaks_of_states_and_shows_no_longest_game(capsys):
    view = ProgressView(console=Console(file=io.StringIO(), force_terminal=False))
    view.start(100, 0, unit="states", longest=False)
    capsys.readouterr()
    view.update(50, 3_000_000, 0, 1, 0, time.time() - 1.0)
    line = capsys.readouterr().err
    assert "M states/s" in line and "deals" not in line and "longest" not in line and "cycles 1" in line
    view.stop()
