"""The run loop (cluster/loop/coordinator.py, and the course of a search: cluster/loop/course.py) without Ray: a
pool of plain callables plays the shards in this process, and the loop is driven through each way a
search ends: finished, at its time limit (and the overtime of a session that played nothing by then),
interrupted, its lease lost, a write that failed, the cluster lost, and a shard given up. Each also
writes progress.json through its one owner."""

from __future__ import annotations

import json
import time

import pytest
from cluster_helpers import make_config, tables_of

from cluster.cloud import health as health_module
from cluster.cloud.worker import ShardRunner
from cluster.loop import coordinator as coordinator_module
from cluster.loop import course as course_module
from cluster.loop.coordinator import Coordinator
from cluster.loop.course import Course, ProgressFile, Stop
from cluster.loop.pool import PoolReport
from cluster.runs.figures import PlayedShard
from cluster.runs.lease import Lease
from cluster.runs.runmeta import open_run
from cluster.runs.storage import RunStore
from kernels.errors import BmnError

SMALL = dict(strategy="random", deck="0:8,1:2,2:2,3:2", deals=6_000, shard_size=1_000, seed=3, min_cards=30)


class PlainPool:
    """The pool's interface (cluster/loop/pool.py) over plain callables: `slots` shards in flight, each played
    in this process when the loop waits (by `play`, a worker's run without Ray), or handed to `fail` (a
    shard's last error) where it returns a sentence."""

    def __init__(self, play, slots: int = 2, fail=lambda shard: None, before_wait=lambda pool: None):
        self.play = play
        self.slots = slots
        self.fail = fail
        self.before_wait = before_wait  # what happens in the cluster while the loop waits
        self.in_flight: list = []
        self.handed = 0
        self.closed: float | None = None
        self.first = None

    def scale(self) -> int:
        return self.slots

    def dispatch(self, shards) -> bool:
        while len(self.in_flight) < self.slots:
            shard = next(shards, None)
            if shard is None:
                return True
            self.in_flight.append(shard)
            self.handed += 1
            self.first = self.first or time.time()
        return False

    def busy(self) -> bool:
        return bool(self.in_flight)

    def wait(self, timeout: float) -> list[PlayedShard]:
        self.before_wait(self)
        done, self.in_flight = self.in_flight, []
        out = []
        for shard in done:
            error = self.fail(shard)
            out.append(PlayedShard.given_up(shard, 1, error) if error else self.play(shard))
        return out

    def report(self) -> PoolReport:
        return PoolReport((), self.slots, len(self.in_flight), False, 0, self.first, time.time())

    def close(self, grace_s: float = 0.0) -> None:
        self.closed = grace_s


class Health:
    def __init__(self, problem_after: int | None = None):
        self.calls, self.problem_after, self.closed = 0, problem_after, False

    def problem(self) -> str | None:
        self.calls += 1
        return "the Ray cluster's head node died" if self.problem_after and self.calls > self.problem_after else None

    def close(self) -> None:
        self.closed = True


def coordinator(tmp_path, pool_kwargs=None, health=None, **values) -> tuple[Coordinator, PlainPool]:
    config = make_config(tmp_path / "run", **{**SMALL, **values})
    store = RunStore(config.out)
    store.make_root()
    lease = Lease(store).acquire()
    config = open_run(config, store, resume=(tmp_path / "run" / "run.json").exists())
    runner = ShardRunner(config.deck, config.space().split, config.strategy)
    pool = PlainPool(runner.run, **(pool_kwargs or {}))
    c = Coordinator(config, store, lease, local=False, pool=pool, health=health or Health())
    return c, pool


def progress(tmp_path) -> dict:
    return json.loads((tmp_path / "run" / "progress.json").read_text())


@pytest.fixture(autouse=True)
def fast_checks(monkeypatch):
    monkeypatch.setattr(health_module, "HEALTH_S", 0.0)  # the cluster's health at every turn


def test_a_search_that_plays_every_shard_is_finished(tmp_path):
    c, pool = coordinator(tmp_path)
    report = c.run()
    c.lease.release()
    assert (report.state, report.shards_done, report.deals, report.new_shards) == ("finished", 6, 6_000, 6)
    assert pool.handed == 6 and pool.closed == coordinator_module.KILL_GRACE_S
    assert progress(tmp_path)["state"] == "finished" and progress(tmp_path)["tables"] is True
    assert tables_of(tmp_path / "run")["shards"].num_rows == 6 and (tmp_path / "run" / "games.parquet").exists()
    again, _ = coordinator(tmp_path)  # nothing left: finished at once, nothing handed out
    assert again.run().state == "finished" and again.pool.handed == 0
    again.lease.release()


def test_the_time_limit_stops_a_session_that_has_played_shards(tmp_path, monkeypatch):
    def slow(pool):  # each turn's wait takes a while
        time.sleep(0.15)

    c, pool = coordinator(tmp_path, pool_kwargs=dict(slots=1, before_wait=slow), time_limit=0.4)
    report = c.run()
    c.lease.release()
    assert report.state == "time limit" and 1 <= report.shards_done < 6
    assert progress(tmp_path)["state"] == "time limit"
    resumed, _ = coordinator(tmp_path, time_limit=0)
    assert resumed.run().state == "finished" and resumed.counts.run.done == 6
    resumed.lease.release()


def test_a_session_with_nothing_played_at_its_limit_runs_over_until_its_first_shards_are_back(tmp_path):
    c, pool = coordinator(tmp_path, pool_kwargs=dict(slots=2), time_limit=1e-6)
    report = c.run()
    c.lease.release()
    # Overtime: the shards first handed out are played, no more; the plan was cut short at the limit.
    assert (report.state, report.shards_done, pool.handed) == ("time limit", 2, 2)


def test_overtime_that_reaches_the_end_of_the_plan_is_finished():
    course = Course(iter([]), deadline=time.time() - 1)
    assert not course.expired(time.time(), played=False) and course.overtime
    pool = PlainPool(lambda shard: None)
    course.hand_out(pool)
    assert course.exhausted and course.ended(pool) is Stop.FINISHED and course.wait_s(time.time()) == 0.5
    assert Course(iter([]), deadline=None).expired(time.time(), played=True) is False
    assert Course(iter([]), deadline=time.time() - 1).expired(time.time(), played=True) is True


def test_an_interrupt_ends_the_search_interrupted_with_its_shards_written(tmp_path):
    def interrupt(pool):
        if pool.handed > 2:
            raise KeyboardInterrupt
    c, pool = coordinator(tmp_path, pool_kwargs=dict(slots=1, before_wait=interrupt))
    report = c.run()
    c.lease.release()
    assert report.state == "interrupted" and report.shards_done == 2 and pool.closed == 0.0
    assert progress(tmp_path)["state"] == "interrupted" and progress(tmp_path)["tables"] is False


def test_a_lease_taken_over_stops_the_search_with_its_sentence(tmp_path):
    def steal(pool):
        if pool.handed > 2:
            c.lease.lost = "another job took over run X (someone)"
    c, pool = coordinator(tmp_path, pool_kwargs=dict(slots=1, before_wait=steal))
    with pytest.raises(BmnError, match="another job took over run X"):
        c.run()
    c.lease.release()
    assert c.counts.run.done >= 2 and pool.closed == coordinator_module.KILL_GRACE_S


def test_a_progress_file_that_cannot_be_written_stops_the_search(tmp_path, monkeypatch):
    monkeypatch.setattr(course_module, "PROGRESS_S", 0.01)
    c, pool = coordinator(tmp_path, pool_kwargs=dict(slots=1, before_wait=lambda pool: time.sleep(0.05)))
    real = c.store.write_json

    def full(rel, value):
        if rel == "progress.json":
            raise OSError(28, "No space left on device")
        return real(rel, value)
    monkeypatch.setattr(c.store, "write_json", full)
    with pytest.raises(BmnError, match=r"cannot write progress.json to .* \(No space left on device\); the search "
                                       r"stopped with \d+ shards written and kept"):
        c.run()
    c.lease.release()


def test_a_cluster_that_is_gone_stops_the_search_saying_how_to_resume(tmp_path):
    c, pool = coordinator(tmp_path, pool_kwargs=dict(slots=1), health=Health(problem_after=2))
    with pytest.raises(BmnError, match=r"head node died; the search stopped with \d of 6 shards done and written: "
                                       r"`bmn resume .*` continues it"):
        c.run()
    c.lease.release()
    assert pool.closed == 0.0 and c.health.checks.closed and progress(tmp_path)["state"] == "stopped: cluster lost"


def test_a_shard_given_up_is_written_failed_and_the_search_finishes(tmp_path):
    c, pool = coordinator(tmp_path, pool_kwargs=dict(fail=lambda shard: "worker lost" if shard.id == 4 else None))
    report = c.run()
    c.lease.release()
    assert (report.state, report.shards_done, report.shards_failed) == ("finished", 5, 1)
    shards = tables_of(tmp_path / "run")["shards"].to_pylist()
    assert [(s["shard"], s["status"], s["error"]) for s in shards if s["status"] == "failed"] == \
           [(4, "failed", "worker lost")]


def test_progress_json_has_one_owner(tmp_path, monkeypatch):
    """While the loop runs, only the owner's thread writes progress.json; at the end, `last` (after the thread
    is stopped) writes the final state."""
    monkeypatch.setattr(course_module, "PROGRESS_S", 0.01)
    store = RunStore(str(tmp_path))
    store.make_root()
    seen = []
    owner = ProgressFile(store, lambda: {"n": len(seen)})
    real = store.write_json
    monkeypatch.setattr(store, "write_json", lambda rel, value: seen.append(value["state"]) or real(rel, value))
    owner.start()
    time.sleep(0.1)
    owner.last("finished", tables=True)
    assert seen[-1] == "finished" and set(seen[:-1]) == {"running"} and len(seen) > 2
    assert json.loads((tmp_path / "progress.json").read_text())["tables"] is True
    count = len(seen)
    time.sleep(0.05)
    assert len(seen) == count  # the thread is gone


class TwoKinds(PlainPool):
    """GPU and CPU actors of plain callables: a shard is played by `gpu` (its device "gpu"), an audit
    (`audit`) by `cpu`."""

    def __init__(self, gpu, cpu, **kw):
        super().__init__(gpu, **kw)
        self.cpu = cpu
        self.audits: list = []
        self.devices = {}

    def audit(self, shard):
        self.audits.append(shard)

    def device_of(self, where):
        return "NVIDIA H200 (sm_90, 132 multiprocessors)"

    def busy(self):
        return bool(self.in_flight or self.audits)

    def wait(self, timeout):
        out = super().wait(timeout)
        audits, self.audits = self.audits, []
        return out + [self.cpu(shard)._replace(audit=True) for shard in audits]


def players(config, corrupt: int | None = None):
    """A GPU player (each result's device "gpu"; shard `corrupt`'s deals miscounted) and a CPU one."""
    import dataclasses

    runner = ShardRunner(config.deck, config.space().split, config.strategy)

    def on_gpu(shard):
        played = runner.run(shard)
        counts = dataclasses.replace(played.figures.counts, deals=played.figures.counts.deals + (shard.id == corrupt))
        return played._replace(figures=dataclasses.replace(played.figures, worker="10.0.0.7:4242", device="gpu",
                                                           counts=counts))
    return on_gpu, runner.run


def audited_run(tmp_path, corrupt=None, audit=0.5):
    config = make_config(tmp_path / "run", **SMALL, audit=audit)
    store = RunStore(config.out)
    store.make_root()
    lease = Lease(store).acquire()
    config = open_run(config, store, resume=False)
    on_gpu, on_cpu = players(config, corrupt)
    pool = TwoKinds(on_gpu, on_cpu)
    return Coordinator(config, store, lease, pool=pool, health=Health()), pool


def test_gpu_shards_audited_on_a_cpu_that_match_are_written_as_matched(tmp_path):
    from cluster.commands.status import run_status_dict
    from cluster.loop.audit import chosen
    from cluster.runs.tables import read_summaries

    c, pool = audited_run(tmp_path)
    report = c.run()
    c.lease.release()
    assert report.state == "finished" and report.shards_done == 6
    audited = [k for k in range(6) if chosen(c.config.fingerprint(), k, 0.5)]
    assert 0 < len(audited) < 6  # (a fraction, by a hash of the run and the shard)
    st = run_status_dict(str(tmp_path / "run"))
    assert (st["audited"], st["mismatches"]) == (len(audited), 0)
    marks = {k: s.audit for k, s in read_summaries(RunStore(str(tmp_path / "run"))).items()}
    assert marks == {k: ("matched" if k in audited else None) for k in range(6)}


def test_an_altered_gpu_result_is_caught_and_the_shard_redone_on_the_cpu(tmp_path):
    from cluster.loop.audit import chosen
    from cluster.runs.tables import read_summaries

    config = make_config(tmp_path / "probe", **SMALL, audit=0.5)
    victim = next(k for k in range(6) if chosen(config.fingerprint(), k, 0.5))
    c, pool = audited_run(tmp_path, corrupt=victim)
    with pytest.raises(BmnError) as caught:
        c.run()
    c.lease.release()
    message = str(caught.value)
    assert f"computed shard {victim} differently from a CPU (deals: " in message
    assert "GPU worker 10.0.0.7:4242 (NVIDIA H200" in message and "--device cpu" in message and "\n" not in message
    summary = read_summaries(RunStore(str(tmp_path / "run")))[victim]
    assert summary.audit == "mismatch" and summary.figures.counts.deals == 1000  # the CPU's result, not the GPU's 1001


def test_the_progress_thread_reads_whole_figures_while_shards_land(tmp_path, monkeypatch):
    """The loop alone changes the run's totals and leaves a snapshot of them at the end of each turn; a second
    thread reading the figures (as progress.json's does) sees only whole ones: every shard here plays 1,000
    deals, so deals are 1,000 times the shards done in every reading, however slowly a shard is added."""
    import threading

    from cluster.runs.totals import RunTotals

    added = RunTotals.add

    def slowly(totals, summary):  # a reader of the totals themselves would see the shard counted, its deals not
        totals.done += 1
        time.sleep(0.003)
        totals.done -= 1
        added(totals, summary)

    monkeypatch.setattr(RunTotals, "add", slowly)
    c, _ = coordinator(tmp_path, deals=40_000, pool_kwargs=dict(slots=1))
    readings, stop = [], threading.Event()

    def read():
        while not stop.is_set():
            figures = c._figures()
            readings.append((figures["shards_done"], figures["deals"]))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        report = c.run()
    finally:
        stop.set()
        reader.join()
        c.lease.release()
    assert report.state == "finished" and report.shards_done == 40
    assert len(readings) > 100 and {done for done, _ in readings} >= {0, 40}
    assert [r for r in readings if r[1] != 1_000 * r[0]] == []
