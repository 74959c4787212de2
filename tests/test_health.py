"""The cluster's health as the run loop sees it (cluster/cloud/health.py), over plain checks: asked at most every
HEALTH_S, and once something is gone, gone (the search stops with that sentence). The checks on a real
cluster (ClusterHealth: a node or the head gone) are test_faults.py's."""

from __future__ import annotations

import cluster.cloud.health
from cluster.cloud.health import Health


class Checks:
    def __init__(self, answers):
        self.answers, self.calls, self.closed = list(answers), 0, False

    def problem(self):
        self.calls += 1
        return self.answers.pop(0) if self.answers else None

    def close(self):
        self.closed = True


def test_the_checks_are_asked_at_most_every_period_and_a_loss_is_kept(monkeypatch):
    checks = Checks([None, "the Ray cluster's head node died"])
    health = Health(checks)
    health.start()  # (plain checks given: none made)
    assert health.checks is checks
    monkeypatch.setattr(cluster.cloud.health, "HEALTH_S", 3600.0)
    assert health.problem() is None and health.problem() is None and checks.calls == 1  # once in the period
    monkeypatch.setattr(cluster.cloud.health, "HEALTH_S", 0.0)
    assert health.problem() == "the Ray cluster's head node died" == health.lost
    assert health.problem() == health.lost and checks.calls == 2  # gone: not asked again
    health.close()
    assert checks.closed


def test_health_closed_before_it_started_closes_nothing():
    Health().close()
