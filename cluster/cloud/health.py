"""The cluster's health as the run loop sees it, one object: its checks (raycluster.ClusterHealth: the
node the driver runs on or the head gone, the control store unreachable), made once the loop starts,
asked at most every HEALTH_S (a cheap call to the control store), and the sentence saying what is gone
once it is (`lost`), which stops the search."""

from __future__ import annotations

import time

from .raycluster import ClusterHealth

HEALTH_S = 2.0  # how often the cluster's health is checked


class Health:
    def __init__(self, checks=None):
        """`checks`: an object with problem() (None, or one sentence) and close(); by default the cluster's
        (ClusterHealth, made at `start`, on a connected Ray). A test passes plain ones."""
        self.checks = checks
        self.lost: str | None = None  # the cluster gone: why
        self._last = 0.0

    def start(self) -> None:
        if self.checks is None:
            self.checks = ClusterHealth()

    def problem(self) -> str | None:
        """Checked if HEALTH_S has passed since the last check: None while the cluster can run shards; else
        what is gone (kept in `lost`)."""
        if self.lost is None and time.time() - self._last >= HEALTH_S:
            self.lost = self.checks.problem()
            self._last = time.time()
        return self.lost

    def close(self) -> None:
        if self.checks is not None:
            self.checks.close()
