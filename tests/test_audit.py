"""cluster/loop/audit.py: which GPU shards a run plays again on a CPU, and how two results of a shard are compared.
The audits inside a run (held outcomes, matched and mismatch summaries, the stop) are in test_coordinator.py
and, on real Ray with the simulated GPU, test_cluster_gpu.py."""

from __future__ import annotations

from cluster.loop.audit import Audits, chosen, difference
from cluster.runs.figures import PlayedShard, ShardFigures
from kernels.game import GameResult
from kernels.strategies.base import Shard
from kernels.tally import Candidate, Counts

RUN = "0123456789abcdef"


def test_which_shards_are_audited_is_a_fraction_fixed_by_the_run():
    picked = [k for k in range(10_000) if chosen(RUN, k, 0.02)]
    assert 150 < len(picked) < 250 and picked == [k for k in range(10_000) if chosen(RUN, k, 0.02)]
    assert not any(chosen(RUN, k, 0) for k in range(1000))
    assert all(chosen(RUN, k, 1) for k in range(1000))
    assert picked != [k for k in range(10_000) if chosen("fedcba9876543210", k, 0.02)]  # another run, others


SHARD = Shard(4, "random", None)


def played(worker="10.0.0.7:4242", device="gpu", candidates=None, deals=100, attempts=1, audit=False,
           **figures) -> PlayedShard:
    games = candidates if candidates is not None else [
        Candidate("A-K-/Q-J-", 3, GameResult("win", 1, 12, 40)), Candidate("--AK/-QJ-", 8, GameResult("win", 2, 9, 31))]
    values = dict(counts=Counts(deals, 2500), max_cards=40, candidates=len(games), elapsed_s=1.5, worker=worker,
                  device=device, finished_at=1e9, histogram={31: 1, 40: 1}, wins=(60, 40))
    return PlayedShard(SHARD, games, "0:4,1:1,2:1,3:1,4:1", None, ShardFigures(**{**values, **figures}), attempts,
                       audit=audit)


def test_equal_results_have_no_difference_whoever_played_them_and_when():
    assert difference(played(), played(worker="10.0.0.8:1", device="cpu", elapsed_s=20.0, finished_at=2e9)) is None


def test_the_first_difference_is_named():
    assert difference(played(deals=101), played()) == "deals: 101 against 100"
    assert difference(played(histogram={31: 2}), played()).startswith("histogram: {31: 2} against {31: 1, 40: 1}")
    assert difference(played(wins=(61, 39)), played()) == "wins: (61, 39) against (60, 40)"
    one = played().candidates[:1]
    assert difference(played(candidates=one), played()) == "1 kept deals against 2"
    other = [played().candidates[0], Candidate("--AK/-QJ-", 8, GameResult("win", 2, 9, 32))]
    assert difference(played(candidates=other), played()).startswith("kept deal 1: ")
    moved = played()._replace(rank_base=10)
    assert difference(moved, played()) == "the deck or the first rank"


def test_a_run_audits_the_chosen_gpu_shards_once():
    audits = Audits(1.0, RUN)
    gpu = played()
    assert audits.wants(gpu)
    assert not audits.wants(played(worker="10.0.0.8:1", device="cpu"))  # played on a CPU already
    assert not audits.wants(gpu._replace(audit=True))  # the audit's own result
    assert not audits.wants(PlayedShard.given_up(SHARD, 3, "lost"))  # given up: nothing to audit
    audits.held[4] = gpu
    assert not audits.wants(gpu)  # its audit is running
    assert not Audits(0.0, RUN).wants(gpu)


def test_an_audit_back_says_what_to_write():
    gpu = played(attempts=2)
    cases = [(played(worker="cpu", device="cpu", audit=True), (gpu, "matched", None)),
             (played(worker="cpu", device="cpu", deals=99, audit=True), "mismatch"),
             (PlayedShard.given_up(SHARD, 3, "lost", audit=True), (gpu, None, None))]
    for cpu, expected in cases:
        audits = Audits(1.0, RUN)
        audits.held[4] = gpu
        got = audits.back(cpu)
        assert not audits.held
        if expected == "mismatch":  # the CPU's result is written, with the GPU's attempts
            assert got == (cpu._replace(attempts=2), "mismatch", "deals: 100 against 99")
        else:
            assert got == expected
