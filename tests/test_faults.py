"""Faults, injected for real: a dead Ray node, damaged shard files, junk files, a full disk, a store
that fails. After each one the search stops with one sentence (never a hang, never a traceback)
and resume gives tables identical to an uninterrupted run."""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from cluster_helpers import (
    assert_kernels_tables,
    assert_same_tables,
    direct_tables,
    in_process,
    make_config,
    run_main,
    tables_of,
    wait_for,
)

from cluster.commands.query import query
from cluster.commands.status import run_status_dict
from cluster.loop.coordinator import run_search
from cluster.runs.storage import RunStore
from kernels.errors import BmnError

BMN = Path(sys.executable).parent / "bmn"
SEARCH = dict(strategy="random", deals=60_000, shard_size=5_000, min_cards=700, seed=5)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The uninterrupted tables of SEARCH, from the kernels directly (no Ray)."""
    config = make_config(tmp_path_factory.mktemp("reference"), **SEARCH)
    return direct_tables(config)


def bmn(*args, **kwargs):
    return subprocess.run([str(BMN), *map(str, args)], capture_output=True, text=True, **kwargs)


def one_sentence(stderr: str) -> bool:
    lines = [line for line in stderr.strip().splitlines() if line.startswith("bmn: error:")]
    return len(lines) == 1 and "Traceback" not in stderr


# -- the Ray node dies under a running search --------------------------------------------------------

@pytest.mark.slow
def test_a_dead_local_ray_node_stops_the_search_with_a_sentence_and_resume_finishes(ray_cluster, tmp_path):
    out = tmp_path / "run"
    # Twelve shards of a fraction of a second each: the node dies while most of them are still to do.
    dead = dict(SEARCH, deals=6_000_000, shard_size=500_000, min_cards=2500)
    args = ["search", "--strategy", "random", "--deals", dead["deals"], "--shard-size", dead["shard_size"],
            "--min-cards", dead["min_cards"], "--seed", dead["seed"], "--workers", "2", "--out", out, "--no-progress"]
    # Where Ray looks for a cluster to join lies the record of a live one (as `ray start` leaves it):
    # without --address, bmn still starts a local Ray of its own (the raylet it is asked about below).
    ray_tmp = Path(tempfile.mkdtemp(prefix="bmnrt-"))  # short: Ray's socket paths must fit in 107 bytes
    (ray_tmp / "ray").mkdir()
    (ray_tmp / "ray" / "ray_current_cluster").write_text(ray_cluster)
    # Ray's control store marks a node dead after a few failed health checks (15 s and more by
    # default); here, after one of a second's wait: what bmn does then is what is tested.
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"} | {
        "RAY_TMPDIR": str(ray_tmp), "RAY_health_check_period_ms": "1000", "RAY_health_check_timeout_ms": "1000",
        "RAY_health_check_failure_threshold": "1"}
    driver = subprocess.Popen([str(BMN), *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env)
    shards = out / "shards"
    assert wait_for(lambda: shards.exists() and len(list(shards.glob("*.parquet"))) >= 3, timeout=180)
    raylets = [p for p in psutil.Process(driver.pid).children(recursive=True) if "raylet" in p.name()]
    assert raylets, "the local Ray started by bmn has a raylet"
    # The node dies: its raylet and every process it started (the actors among them) at once.
    node = raylets + [p for raylet in raylets for p in raylet.children(recursive=True)]
    for process in node:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.send_signal(signal.SIGKILL)
    t0 = time.time()
    try:
        _, stderr = driver.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        driver.kill()
        pytest.fail("bmn search did not stop within 2 minutes of its Ray node dying")
    assert time.time() - t0 < 90
    assert driver.returncode == 2 and one_sentence(stderr), stderr
    assert "died" in stderr and f"bmn resume {out}" in stderr
    done = run_status_dict(str(out))["shards_done"]
    assert 3 <= done < 12
    resumed = bmn("resume", out, "--address", ray_cluster, "--no-progress", "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["shards_done"] == 12
    assert_kernels_tables(tables_of(out), make_config(tmp_path / "whole", **dead))
    shutil.rmtree(ray_tmp, ignore_errors=True)


# -- damaged and foreign files --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def a_finished_run(ray_address, tmp_path_factory):
    """SEARCH run to the end on the session's cluster, once for the module: the tests damage copies."""
    out = tmp_path_factory.mktemp("finished") / "run"
    report = run_search(make_config(out, workers=2, **SEARCH))
    assert report.state == "finished" and report.shards_done == 12
    return out


@pytest.fixture
def finished_run(a_finished_run, tmp_path):
    """finished_run(name): a copy of the finished run in the test's folder, as a user moves a run (bmn
    reads and resumes the folder it is given, whatever folder run.json names)."""
    def copy(name: str = "run") -> Path:
        out = tmp_path / name
        shutil.copytree(a_finished_run, out)
        return out

    return copy


def test_a_truncated_shard_file_is_named_moved_aside_and_recomputed(ray_address, reference, tmp_path, finished_run):
    out = finished_run()
    victim = out / "shards" / "000000000003.parquet"
    data = victim.read_bytes()
    victim.write_bytes(data[: len(data) // 3])
    (out / "games.parquet").unlink()  # make the readers rebuild from the shard files
    st = in_process("status", out)
    assert st.returncode == 0 and "damaged" in st.stdout and "000000000003.parquet" in st.stdout
    assert run_status_dict(str(out))["shards_done"] == 11
    notes: list[str] = []
    assert query([str(out)], "SELECT count(*) AS n FROM shards", notes).to_pylist() == [{"n": 11}]
    assert any("000000000003.parquet is damaged" in n for n in notes)
    assert any("1 of 12 shards are missing (3)" in n for n in notes)
    top = in_process("top", out, "-n", "1")
    assert top.returncode == 0 and "shards are missing (3)" in top.stderr
    resumed = bmn("resume", out, "--workers", "1", "--address", ray_address, "--no-progress", "--json")
    assert resumed.returncode == 0, resumed.stderr
    report = json.loads(resumed.stdout)
    assert report["new_shards"] == 1 and len(report["set_aside"]) == 1
    kept = list((out / "damaged").iterdir())
    assert len(kept) == 1 and kept[0].read_bytes() == data[: len(data) // 3]  # kept, not deleted
    assert_same_tables(reference, tables_of(out))


def test_a_garbled_shard_file_and_junk_files(ray_address, reference, tmp_path, finished_run):
    out = finished_run()
    victim = out / "shards" / "000000000007.parquet"
    data = bytearray(victim.read_bytes())
    data[8:40] = b"\x00" * 32  # the data pages: the footer still reads
    victim.write_bytes(bytes(data))
    (out / "shards" / "notes.txt").write_text("not a shard")
    (out / "shards" / "copy of 000000000001.parquet").write_bytes(
        (out / "shards" / "000000000001.parquet").read_bytes())
    (out / "shards" / "999999999999.parquet").write_bytes(b"PAR1 junk PAR1")
    (out / "games.parquet").unlink()
    notes: list[str] = []
    n = query([str(out)], "SELECT count(*) AS n FROM shards WHERE status = 'done'", notes).to_pylist()[0]["n"]
    assert n == 11 and any("000000000007.parquet is damaged" in x for x in notes)
    report = run_search(make_config(out, workers=1, **SEARCH), resume=True)
    assert report.state == "finished" and report.shards_done == 12
    assert {Path(p).name.split(".parquet")[0] for p in report.set_aside} == {"000000000007", "999999999999"}
    assert (out / "shards" / "notes.txt").exists()  # not ours: left alone, ignored
    assert_same_tables(reference, tables_of(out))


# -- writes that fail -------------------------------------------------------------------------------------

def test_a_full_disk_stops_the_search_and_resume_finishes(ray_address, reference, tmp_path, monkeypatch):
    out = tmp_path / "run"
    real = RunStore.write_bytes
    writes = []

    def full_after_four_shards(self, rel, data):
        if rel.startswith("shards/"):
            writes.append(rel)
            if len(writes) > 4:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), self.path(rel))
        return real(self, rel, data)

    monkeypatch.setattr(RunStore, "write_bytes", full_after_four_shards)
    with pytest.raises(BmnError, match=r"No space left on device.*bmn resume") as error:
        run_search(make_config(out, workers=1, **SEARCH))
    assert "Traceback" not in str(error.value)
    monkeypatch.setattr(RunStore, "write_bytes", real)
    on_disk = sorted(p.name for p in (out / "shards").iterdir())
    assert len(on_disk) == 4 and all(not n.startswith(".") for n in on_disk)  # no half-written file
    assert run_status_dict(str(out))["shards_done"] == 4
    report = run_search(make_config(out, workers=1, **SEARCH), resume=True)
    assert report.state == "finished" and report.new_shards == 8
    assert_same_tables(reference, tables_of(out))


def test_a_write_that_fails_leaves_no_temporary_file(tmp_path, monkeypatch):
    store = RunStore(str(tmp_path))

    def no_space(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", no_space)
    with pytest.raises(OSError):
        store.write_bytes("shards/000000000000.parquet", b"x" * 1000)
    assert list((tmp_path / "shards").iterdir()) == []


def test_object_store_errors_are_retried(tmp_path, monkeypatch):
    import cluster.runs.storage
    from cluster.runs.storage import WRITE_RETRIES

    monkeypatch.setattr(cluster.runs.storage, "WRITE_BACKOFF_S", 0.0)

    class Flaky:
        """A filesystem whose first writes fail as a busy object store's do, then work."""

        def __init__(self, fs, failures):
            self.fs, self.failures = fs, failures

        def open_output_stream(self, path):
            if self.failures:
                self.failures -= 1
                raise OSError("AWS Error SLOW_DOWN during PutObject operation: Please reduce your request rate.")
            return self.fs.open_output_stream(path)

        def __getattr__(self, name):
            return getattr(self.fs, name)

    store = RunStore(str(tmp_path))
    store.local = False  # take the object-store path over the local filesystem
    store.fs = Flaky(store.fs, WRITE_RETRIES)
    store.write_bytes("a.json", b"{}")
    assert (tmp_path / "a.json").read_bytes() == b"{}"
    store.fs = Flaky(store.fs.fs, WRITE_RETRIES + 1)
    with pytest.raises(OSError, match="SLOW_DOWN"):
        store.write_bytes("b.json", b"{}")


# -- bad addresses and damaged run files: one sentence, exit 2 ---------------------------------------

@pytest.mark.parametrize("address,message", [
    ("http://127.0.0.1:8265", "is the address of a Ray dashboard and its Jobs API"),
    ("garbage", "cannot join the Ray cluster at garbage"),
])
def test_a_wrong_address_is_one_sentence(address, message, tmp_path):
    done = bmn("search", "--deals", "10", "--shard-size", "10", "--out", tmp_path / "run", "--address", address,
               "--no-progress", timeout=120)
    assert done.returncode == 2 and one_sentence(done.stderr) and message in done.stderr, done.stderr
    if address.startswith("http"):  # the same check where the address comes from RAY_ADDRESS (once)
        env = {**os.environ, "RAY_ADDRESS": address}
        done = bmn("search", "--deals", "10", "--shard-size", "10", "--out", tmp_path / "run", "--no-progress",
                   env=env, timeout=120)
        assert done.returncode == 2 and one_sentence(done.stderr) and message in done.stderr, done.stderr


def test_a_damaged_run_json_is_one_sentence_and_a_damaged_progress_json_is_ignored(ray_address, tmp_path, finished_run):
    out = finished_run()
    progress = (out / "progress.json").read_text()
    (out / "progress.json").write_text('{"state": "fini')  # a torn snapshot
    st = in_process("status", out, "--json")
    assert st.returncode == 0 and json.loads(st.stdout)["shards_done"] == 12, st.stderr
    assert in_process("top", out, "-n", "1").returncode == 0
    (out / "progress.json").write_text(progress)
    good = (out / "run.json").read_bytes()
    for k, damage in enumerate((b"\x00\xff garbage", b"[]", b'{"config": {"seed": "x"}}')):
        (out / "run.json").write_bytes(damage)
        for args in (("status", out), ("resume", out, "--address", ray_address, "--no-progress"),
                     ("query", out, "SELECT 1")):
            # each command as typed for the first damage; the same entry point in this process after
            if k == 0:
                done = bmn(*args)
                code, stderr = done.returncode, done.stderr
            else:
                code, stderr = run_main(*args)
            assert code == 2 and one_sentence(stderr) and "run.json" in stderr, (damage, args, stderr)
    (out / "run.json").write_bytes(good)
    assert len(list((out / "shards").glob("*.parquet"))) == 12  # nothing lost on the way


# -- shard files of another run ------------------------------------------------------------------------

def rewritten(source: Path, target: Path, **changes) -> None:
    """A copy of a shard file whose summaries are changed: `run=None` as bmn wrote them before runs
    signed their shards, `run="..."` as another run signs them, other keys as another plan made them."""
    import pyarrow.parquet as pq

    table = pq.read_table(source)
    summaries = json.loads(table.schema.metadata[b"bmn.shards"])
    for s in summaries:
        for key, value in changes.items():
            if value is None:
                s.pop(key, None)
            else:
                s[key] = value
    pq.write_table(table.replace_schema_metadata({b"bmn.shards": json.dumps(summaries).encode()}), target)


def test_shard_files_of_another_run_are_never_counted(ray_address, reference, tmp_path, finished_run):
    """Issue 20's finding: files of another search copied into a run made it "finished" with none of
    its own shards computed. Files of another run (signed by it), of another plan (a shard id past
    this run's 12; other parameters) and unsigned ones (as bmn wrote them before signing) are told
    apart: only the run's own shards count, the others' files go to foreign/ with a sentence."""
    own = finished_run("own")
    kept = tmp_path / "kept"
    shutil.copytree(own / "shards", kept)
    for f in (own / "shards").glob("*.parquet"):
        f.unlink()
    (own / "games.parquet").unlink()  # readers rebuild from the shard files
    shards = own / "shards"
    for k in (0, 1, 2):  # another run's files, shard for shard the same computation
        rewritten(kept / f"{k:012d}.parquet", shards / f"{k:012d}.parquet", run="0123456789abcdef")
    rewritten(kept / "000000000004.parquet", shards / "000000000015.parquet", run=None, shard=15)
    rewritten(kept / "000000000003.parquet", shards / "000000000003.parquet", run=None,
              params=json.dumps({"seed": 6}))

    st = in_process("status", own, "--json")
    status = json.loads(st.stdout)
    assert status["shards_done"] == 0 and len(status["foreign"]) == 5
    assert "written by another run (fingerprint 0123456789abcdef" in status["foreign"]["shards/000000000000.parquet"]
    assert "not among this run's 12 shards" in status["foreign"]["shards/000000000015.parquet"]
    assert "computed something else than this run's shard 3" in status["foreign"]["shards/000000000003.parquet"]
    notes: list[str] = []
    assert query([str(own)], "SELECT count(*) AS n FROM games", notes).to_pylist() == [{"n": 0}]
    assert sum("is not this run's" in n for n in notes) == 5 and any("12 of 12 shards are missing" in n for n in notes)

    done = bmn("resume", own, "--address", ray_address, "--no-progress")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("is not this run's") == 5 and "moved it to foreign/" in done.stderr
    assert "finished: 12 of 12 shards done" in done.stdout
    assert_same_tables(tables_of(own), reference)
    assert len(list((own / "foreign").iterdir())) == 5  # kept, never deleted
    assert sorted(p.name for p in shards.glob("*.parquet")) == [f"{k:012d}.parquet" for k in range(12)]
    # The run's own files, unsigned (written before runs signed their shards), still count.
    rewritten(kept / "000000000005.parquet", shards / "000000000005.parquet", run=None)
    # A compaction merges the run's own files and moves another's aside, the tables unchanged.
    rewritten(kept / "000000000000.parquet", shards / "000000000099.parquet", run="0123456789abcdef")
    merged = in_process("compact", own)
    assert merged.returncode == 0 and "shards/000000000099.parquet is not this run's" in merged.stderr, merged.stderr
    assert [p.name for p in shards.iterdir()] == ["c000000000000-000000000011.parquet"]
    assert len(list((own / "foreign").iterdir())) == 6
    assert_same_tables(tables_of(own), reference)


def test_which_shards_are_a_runs_own(tmp_path):
    """Ownership: signed by this run, or unsigned (bmn before signing) with the plan's parameters."""
    from dataclasses import replace

    from cluster.runs.figures import PlayedShard
    from cluster.runs.plan import Plan
    from cluster.runs.summary import ShardSummary
    from cluster.runs.tables import Ownership

    config = make_config(tmp_path, **SEARCH)
    plan = Plan(config)
    owner = Ownership(plan, config.fingerprint())
    mine = ShardSummary.of(PlayedShard.given_up(plan.shard(3), 1, None), run=None)
    assert owner.why_not(replace(mine, run=config.fingerprint())) is None
    assert owner.why_not(mine) is None  # unsigned, as written before runs signed their shards
    assert "written by another run" in owner.why_not(replace(mine, run="0123456789abcdef"))
    assert "not among this run's 12 shards" in owner.why_not(replace(mine, shard=12))
    assert "computed something else" in owner.why_not(replace(mine, shard=4))  # shard 3's parameters
    assert "computed something else" in owner.why_not(replace(mine, strategy="climb"))


def test_a_search_whose_tables_miss_shards_is_incomplete_and_exits_1(ray_address, reference, tmp_path):
    """A shard file that cannot be read when the tables are written (damaged after it was counted):
    the run is not "finished" and says which shards the tables miss; resume computes them."""
    out = tmp_path / "run"
    done, damaged = [], []

    def damage_the_first_file_at_the_end(coordinator):
        done.append(1)
        if len(done) == 8:  # (the last shards may be counted without this hook, as the search ends)
            victim = out / "shards" / sorted(p.name for p in (out / "shards").glob("*.parquet"))[0]
            victim.write_bytes(victim.read_bytes()[:40])
            damaged.append(int(victim.stem))

    report = run_search(make_config(out, workers=2, **SEARCH), on_shard_done=damage_the_first_file_at_the_end)
    assert (report.state, report.missing, report.shards_done) == ("incomplete", damaged, 11)
    assert json.loads((out / "progress.json").read_text())["state"] == "incomplete"
    from cluster.commands.search import print_report

    with contextlib.redirect_stderr(io.StringIO()) as err, contextlib.redirect_stdout(io.StringIO()):
        assert print_report(report, as_json=False) == 1
    assert f"1 shards are missing from the tables ({damaged[0]})" in err.getvalue()
    resumed = bmn("resume", out, "--workers", "1", "--address", ray_address, "--no-progress")
    assert resumed.returncode == 0 and "moved it to damaged/" in resumed.stderr, resumed.stderr
    assert_same_tables(tables_of(out), reference)


def test_a_wrong_token_is_one_sentence(ray_address, tmp_path):
    """The session's cluster requires its token (as every cluster bmn's configs start): a client with
    another token is refused by the cluster (Ray's core retries, printing a warning each second, then
    says only "Failed to connect"); one with no token at all stops before asking. Each
    is one sentence of bmn's, exit 2."""
    env = {k: v for k, v in os.environ.items() if k != "RAY_AUTH_TOKEN"}
    env["HOME"] = str(tmp_path)  # no ~/.ray/auth_token either
    # Ray's retries for 2 s instead of 20 (its connect timeout, and the ~1 s tries of node.py's
    # NUM_REDIS_GET_RETRIES): what bmn says is the same
    env["RAY_py_gcs_connect_timeout_s"] = "2"
    env["RAY_NUM_REDIS_GET_RETRIES"] = "2"
    for token, said in (("0" * 64, "refused this client's authentication token: give bmn the cluster's token"),
                        (None, "no authentication token was found")):
        done = bmn("search", "--deals", "10", "--shard-size", "10", "--out", tmp_path / "run", "--address",
                   ray_address, "--no-progress", env={**env, "RAY_AUTH_TOKEN": token} if token else env, timeout=120)
        assert done.returncode == 2 and one_sentence(done.stderr), done.stderr
        assert done.stderr.startswith("bmn: error: ") and ray_address in done.stderr and said in done.stderr
        assert "InvalidAuthToken" not in done.stderr  # Ray's own warnings, held back
        assert not (tmp_path / "run" / "run.lock").exists()
