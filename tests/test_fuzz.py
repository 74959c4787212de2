"""Fuzzing the edges users touch: any config and any command line give a result or one sentence with
exit code 2, never a traceback."""

from __future__ import annotations

import pytest
from cluster_helpers import offline_run, run_main
from hypothesis import given, settings
from hypothesis import strategies as st

from cluster.runs.config import _top_level_keys, build_config, load_toml
from kernels.errors import BmnError
from kernels.strategies import REGISTRY

KEYS = sorted(_top_level_keys())
TABLE_KEYS = sorted({p.name for s in REGISTRY.values() for p in s.params} | {"junk"})

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-10**30, max_value=10**30), st.floats(allow_nan=True),
    st.text(max_size=30), st.sampled_from(["standard", "camicia", "0:10,1:3,2:1", "26,26", "18,17,17", "0:5",
                                           "J-/--", "random", "exhaustive", "climb", "atlas", "1:2", "-1", "1e9",
                                           "0:4", ""]),
)
values = st.one_of(scalars, st.lists(scalars, max_size=4),
                   st.dictionaries(st.sampled_from(TABLE_KEYS), scalars, max_size=3))
configs = st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=8)), values, max_size=6)


@settings(max_examples=400)
@given(configs)
def test_any_config_is_accepted_or_refused_with_a_sentence(values):
    try:
        config = build_config(values)
    except BmnError as error:
        assert str(error) and "\n" not in str(error)
        return
    config.fingerprint()  # an accepted config is a whole one


@settings(max_examples=100)
@given(st.binary(max_size=200))
def test_any_config_file_is_read_or_refused_with_a_sentence(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("toml") / "c.toml"
    path.write_bytes(data)
    try:
        build_config(load_toml(str(path)))
    except BmnError as error:
        assert "\n" not in str(error).strip()


WORDS = ["play", "rank", "unrank", "search", "resume", "status", "query", "top", "cycles", "atlas", "--wide",
         "compact", "ancestors",
         "bench", "--deck", "--split", "--players", "--deals", "--seed", "--engine", "--json", "--limit",
         "--range", "--strategy", "--workers", "--time-limit", "--shard-size", "--format", "-n", "--by",
         "--file", "--trace", "--max-states", "--seconds", "--deal", "--deals-file", "--min-cards",
         "J-", "--", "-", "K--/-Q-", "x", "0", "-5", "1e3", "0:10", "standard", "nowhere/run", "SELECT 1",
         "3", "26,26", "/", "ÿ"]


@settings(max_examples=300)
@given(st.lists(st.one_of(st.sampled_from(WORDS), st.text(max_size=12)), min_size=1, max_size=7))
def test_any_command_line_gives_a_result_or_one_sentence(monkeypatch_session, argv):
    check_command_line(argv)


@pytest.fixture(scope="module")
def real_places(tmp_path_factory):
    """A finished run (written without Ray), a folder that is not a run, a run folder to be, and
    addresses of no Ray cluster: the words a user types most."""
    root = tmp_path_factory.mktemp("fuzz")
    run = offline_run(root / "run", strategy="exhaustive", deck="0:4,1:2,2:2", shard_size=500, min_cards=10)
    (root / "plain").mkdir()
    (root / "plain" / "notes.txt").write_text("not a run\n")
    return [str(run), str(root / "plain"), str(root / "new"), "--out", "--address", "garbage", "127.0.0.1:1",
            "http://127.0.0.1:8265", "s3://KEY:SECRET@bucket/run", "atlas", "resume", "status", "compact", "query",
            "top", "cycles", "search", "SELECT * FROM games", "--json", "--format", "csv"]


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_any_command_line_over_real_runs_and_addresses_gives_a_result_or_one_sentence(monkeypatch_session,
                                                                                     real_places, data):
    """The same, with real run folders, `--out` and `--address` among the words (searches and resumes
    that would start are refused by the fixture; `compact` really compacts the fuzz's own run)."""
    argv = data.draw(st.lists(st.one_of(st.sampled_from(real_places), st.sampled_from(WORDS)), min_size=1, max_size=6))
    check_command_line(argv)


def test_the_command_lines_users_type_over_real_runs(monkeypatch_session, real_places):
    run, plain, new = real_places[:3]
    cases = [(["status", run], 0), (["query", run, "SELECT * FROM games"], 0), (["top", run], 0), (["cycles", run], 0),
             (["compact", run], 0), (["atlas", run], 2), (["status", plain], 2), (["query", new, "SELECT 1"], 2),
             (["resume", plain], 2), (["search", "--out", "s3://KEY:SECRET@bucket/run"], 2),
             (["search", "--address", "garbage", "--out", new], 2), (["status", run, "--json"], 0)]
    for argv, expected in cases:
        assert check_command_line(argv) == expected, argv


def check_command_line(argv: list[str]) -> int:
    code, stderr = run_main(*argv)
    assert code in (0, 1, 2), (argv, code)
    assert "Traceback" not in stderr
    if code == 2:
        lines = [line for line in stderr.splitlines() if line.strip()]
        assert lines and lines[-1].startswith("bmn") and "error" in lines[-1], (argv, stderr)
    return code


@pytest.fixture(scope="module")
def monkeypatch_session():
    """Searches, benchmarks and long backward searches that fuzzed arguments could start are
    replaced by a refusal: the fuzz is about parsing and checking, not about running them."""
    import cluster.commands.backward
    import cluster.commands.bench
    import cluster.commands.search

    mp = pytest.MonkeyPatch()

    def refuse(*args, **kwargs):
        raise BmnError("(fuzz: a valid command that would start real work)")

    mp.setattr(cluster.commands.search, "run_search", refuse)
    mp.setattr(cluster.commands.bench, "bench_engine", refuse)
    mp.setattr(cluster.commands.backward, "ancestors", refuse)
    yield mp
    mp.undo()
