"""The terminal progress bar of a search: shards done/total, deals/s (states/s for the strategies that
play states), ETA, the longest game (for those that keep finite games), cycles.

Until the first worker is ready (on a first run the workers compile the kernels, which takes
about a minute) the bar says so; rates and ETA count from the first shard handed out.
"""

from __future__ import annotations

import sys
import time

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn


class ProgressView:
    def __init__(self, enabled: bool = True, console: Console | None = None):
        self.console = console or Console(stderr=True)
        self.enabled = enabled
        self.live = enabled and self.console.is_terminal
        self._progress: Progress | None = None
        self._task = None
        self._done0 = 0
        self.total = 0
        self._last_line = 0.0
        self.unit = "deals"
        self.longest = True

    def start(self, total: int, done: int, unit: str = "deals", longest: bool = True) -> None:
        """`unit`: what the shards play ("deals" or "states"); `longest`: whether they keep finite games."""
        self._done0 = done
        self.total = total
        self.unit = unit
        self.longest = longest
        if not self.enabled:
            return
        if self.live:
            self._progress = Progress(
                TextColumn("[bold]shards[/] {task.completed:,}/{task.total:,}"),
                BarColumn(),
                TextColumn("{task.fields[status]}"),
                TimeElapsedColumn(),
                console=self.console,
                transient=False,
            )
            self._progress.start()
            self._task = self._progress.add_task("search", total=total, completed=done, status=_WARMING)
        else:
            print(f"shards {done:,}/{total:,}: {_WARMING}", file=sys.stderr, flush=True)

    def update(self, done: int, session_deals: int, longest: int, cycles: int, failed: int,
               working_since: float | None, note: str = "", work: str = "") -> None:
        """`work`: where a plan of unequal shards stands, its own rate and ETA (a strategy's WorkMeter), said in
        place of the deals a second and the ETA by shards."""
        if not self.enabled:
            return
        if note and working_since is None:
            status = note
        elif working_since is None:
            status = _WARMING
        elif work:
            status = work + f"  cycles [bold]{cycles}[/]" + (f"  [red]failed {failed}[/]" if failed else "") \
                + (f"  ({note})" if note else "")
        else:
            elapsed = max(1e-9, time.time() - working_since)
            rate = session_deals / elapsed
            shards_per_s = (done - self._done0) / elapsed
            remaining = self.total - done - failed
            eta = _duration(remaining / shards_per_s) if shards_per_s > 0 else "?"
            status = (f"{_si(rate)} {self.unit}/s  ETA {eta}  "
                      + (f"longest [bold]{longest}[/] cards  " if self.longest else "") + f"cycles [bold]{cycles}[/]"
                      + (f"  [red]failed {failed}[/]" if failed else "") + (f"  ({note})" if note else ""))
        if self._progress is not None:
            self._progress.update(self._task, completed=done, status=status)
        elif time.time() - self._last_line > 30 and (working_since is not None or note):
            self._last_line = time.time()
            plain = status.replace("[bold]", "").replace("[/]", "").replace("[red]", "")
            print(f"shards {done:,}/{self.total:,}  {plain}", file=sys.stderr, flush=True)

    def say(self, line: str) -> None:
        """A sentence for the user (a GPU that failed, say): above the bar where there is one, else
        on stderr (with or without progress display)."""
        if self._progress is not None:
            self._progress.console.print(line, markup=False, highlight=False)
        else:
            print(line, file=sys.stderr, flush=True)

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


_WARMING = "starting workers (a first run compiles the kernels: about a minute)"


def _si(x: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:.2f}{unit}"
    return f"{x:.0f}"


def _duration(seconds: float) -> str:
    if seconds > 3.15e9:
        return f"{seconds / 3.15e7:.1e} years"
    if seconds > 86400 * 2:
        return f"{seconds / 86400:.1f} days"
    h, rem = divmod(int(seconds), 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}"
