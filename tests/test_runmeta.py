"""A run's identity on disk (cluster/runs/runmeta.py): run.json and inputs.txt written once, a new run only in
a new or empty folder, a resume that takes the run's own search, and run files that are damaged or of
another bmn refused with one sentence. (Searches resuming on a Ray cluster: tests/test_cluster.py.)"""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
from cluster_helpers import EXECUTION_CHANGES

import cluster.runs.config
import cluster.runs.runmeta
from cluster.runs.config import build_config, resolve, with_execution
from cluster.runs.runmeta import (
    INPUTS,
    check_new_run_folder,
    code_version,
    open_run,
    read_progress,
    read_run_config,
    run_json,
)
from cluster.runs.storage import RunStore
from kernels import RESULTS_VERSION
from kernels.errors import BmnError


def new_run(tmp_path, **values):
    run = str(tmp_path / "run")
    return run, RunStore(run), open_run(resolve(build_config({"out": run, **values})), RunStore(run), resume=False)


def test_a_new_run_writes_its_config_versions_and_inputs_once(tmp_path):
    (tmp_path / "deals.txt").write_text("J-/--\nQ-/--\n")
    run, store, config = new_run(tmp_path, strategy="deals", deals_file=str(tmp_path / "deals.txt"))
    stored = run_json(store)
    assert stored["fingerprint"] == config.fingerprint() and stored["results_version"] == RESULTS_VERSION
    assert stored["config"] == config.to_json() and "input_deals" not in stored["config"]
    assert store.read_bytes(INPUTS).decode() == "J-/--\nQ-/--\n"
    assert read_run_config(run) == config and read_run_config(run).input_deals == ("J-/--", "Q-/--")
    # The same search again (`bmn search` run twice) opens the run as it is; another search is refused.
    assert open_run(config, store, resume=False) == config
    with pytest.raises(BmnError, match="holds a different search .*min_cards: 1000 in the run, 5 now"):
        open_run(dataclasses.replace(config, min_cards=5), store, resume=False)
    # An execution key changed (any of them: declared `execution=True`) is the same search, run otherwise: by
    # `bmn search` again, and by `bmn resume RUN --KEY VALUE` (tests/test_config.py: every other key refused).
    for key, value in EXECUTION_CHANGES.items():
        assert getattr(open_run(dataclasses.replace(config, **{key: value}), store, resume=False), key) == value
        resumed = with_execution(read_run_config(run), {key: value}, "bmn resume")
        assert getattr(open_run(resumed, store, resume=True), key) == value


def test_a_new_run_only_in_a_new_or_empty_folder(tmp_path):
    store = RunStore(str(tmp_path / "run"))
    check_new_run_folder(store)  # not there yet
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "run.lock").write_text("")  # a lock left by a job that died while creating the run
    check_new_run_folder(store)
    (tmp_path / "run" / "notes.txt").write_text("mine")
    with pytest.raises(BmnError, match=r"already holds files \(notes.txt\) and is not a bmn run; choose a new"):
        check_new_run_folder(store)
    with pytest.raises(BmnError, match="is not a bmn run \\(no run.json\\); start one with `bmn search --out"):
        open_run(build_config({"out": store.uri}), store, resume=True)


def test_a_resume_parses_and_checks_the_runs_config_once(tmp_path, monkeypatch):
    (tmp_path / "deals.txt").write_text("J-/--\nQ-/--\n")
    run, store, created = new_run(tmp_path, strategy="deals", deals_file=str(tmp_path / "deals.txt"))
    calls = []
    for module, name in ((cluster.runs.runmeta, "from_json"), (cluster.runs.config, "check")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, real=real, name=name: calls.append(name) or real(*a))
    # What `bmn resume RUN --workers 3` does: read the run's config, change an execution key, open the run.
    config = with_execution(read_run_config(run), {"workers": 3}, "bmn resume")
    opened = open_run(config, store, resume=True)
    assert calls == ["from_json", "check"]
    assert opened.workers == 3 and opened.input_deals == created.input_deals == ("J-/--", "Q-/--")
    # Given another config (the same search built anew, or none: a default one), a resume takes the
    # run's search, parsed from run.json, with the given config's execution keys.
    for given in (resolve(build_config({"strategy": "deals", "deals_file": str(tmp_path / "deals.txt"), "out": run,
                                        "workers": 5})),
                  build_config({"out": run, "workers": 5})):
        again = open_run(given, store, resume=True)
        assert again == dataclasses.replace(opened, workers=5) and again.input_deals == created.input_deals


@pytest.mark.parametrize("changes,message", [
    ({"schema_version": 99}, "written with table schema 99, this bmn writes schema 1"),
    ({"results_version": 0, "code_version": "0.0.1+gold"},
     r"computed with results version 0 \(bmn 0.0.1\+gold\); this bmn .* computes results version"),
    ({"config": None}, r"run.json is damaged \(it holds no config\); the shard files are intact"),
    ({"config": {"seed": "seven"}}, "run.json: seed must be a whole number"),
])
def test_run_files_of_another_bmn_or_damaged_are_refused_with_a_sentence(tmp_path, changes, message):
    run, store, config = new_run(tmp_path, deals=10, shard_size=5)
    store.write_json("run.json", {**run_json(store), **changes})
    with pytest.raises(BmnError, match=message):  # as `bmn resume RUN` does
        open_run(read_run_config(run), store, resume=True)


def test_a_damaged_run_json_or_progress_json(tmp_path):
    run, store, _ = new_run(tmp_path, deals=10, shard_size=5)
    assert read_progress(store) == {}  # none yet
    store.write_bytes("progress.json", b"{\"state\": ")  # a snapshot cut short: nothing is lost with it
    assert read_progress(store) == {}
    store.write_json("progress.json", {"state": "running"})
    assert read_progress(store) == {"state": "running"}
    store.write_bytes("run.json", b"\x00garbage")
    with pytest.raises(BmnError, match="run.json is damaged \\(not JSON"):
        read_run_config(run)


def test_the_code_version_names_the_commit_of_a_checkout():
    assert re.fullmatch(rf"{re.escape(cluster.__version__)}(\+g[0-9a-f]{{10}})?", code_version())
    assert json.dumps(code_version())
