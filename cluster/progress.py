"""The terminal progress bar of a search: shards done/total, deals/s, ETA, longest game, cycles."""

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
        self._t0 = 0.0
        self._deals0 = 0
        self._done0 = 0
        self.total = 0
        self._last_line = 0.0

    def start(self, total: int, done: int, deals: int) -> None:
        self._t0 = time.time()
        self._deals0 = deals
        self._done0 = done
        self.total = total
        if not self.enabled:
            return
        if self.live:
            self._progress = Progress(
                TextColumn("[bold]shards[/] {task.completed:,}/{task.total:,}"),
                BarColumn(),
                TextColumn("{task.fields[rate]}"),
                TextColumn("ETA {task.fields[eta]}"),
                TextColumn("longest [bold]{task.fields[longest]}[/] cards"),
                TextColumn("cycles [bold]{task.fields[cycles]}[/]"),
                TextColumn("{task.fields[failed]}"),
                TimeElapsedColumn(),
                console=self.console,
                transient=False,
            )
            self._progress.start()
            self._task = self._progress.add_task("search", total=total, completed=done, rate="", eta="?",
                                                 longest=0, cycles=0, failed="")

    def update(self, done: int, deals: int, longest: int, cycles: int, failed: int) -> None:
        if not self.enabled:
            return
        elapsed = max(1e-9, time.time() - self._t0)
        rate = (deals - self._deals0) / elapsed
        remaining = self.total - done - failed
        shards_per_s = (done - self._done0) / elapsed
        eta = _duration(remaining / shards_per_s) if shards_per_s > 0 else "?"
        text = f"{_si(rate)} deals/s"
        if self._progress is not None:
            self._progress.update(self._task, completed=done, rate=text, eta=eta, longest=longest, cycles=cycles,
                                  failed=f"[red]failed {failed}[/]" if failed else "")
        elif time.time() - self._last_line > 30:
            self._last_line = time.time()
            print(f"shards {done:,}/{self.total:,}  {text}  ETA {eta}  longest {longest} cards  cycles {cycles}"
                  + (f"  failed {failed}" if failed else ""), file=sys.stderr, flush=True)

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


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
