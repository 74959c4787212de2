"""Search configs: files, flags on top, and one clear sentence for anything wrong (no Ray needed)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from cluster_helpers import EXECUTION_CHANGES, in_process, run_main

from cluster.runs.config import build_config, resolve
from cluster.runs.plan import Plan
from kernels.errors import BmnError

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.toml")), ids=lambda p: p.name)
def test_every_shipped_config_is_valid(path):
    from cluster.commands.cli import build_parser
    from cluster.commands.search import config_from_args

    config = config_from_args(build_parser().parse_args(["search", str(path)]))
    plan = Plan(config)
    assert plan.count >= 1
    assert isinstance(plan.shard(0).params, plan.strategy.Params)  # what the plan makes is what the worker runs


@pytest.mark.parametrize("values,message", [
    ({"stratgy": "random"}, "unknown key 'stratgy'"),
    ({"strategy": "sideways"}, "unknown strategy 'sideways'"),
    ({"deck": "0:10"}, "no penalty card"),
    ({"players": 3}, "cannot be split equally among 3 players"),
    ({"deals": 0}, "deals must be at least 1"),
    ({"shard_size": -5}, "shard_size must be at least 1"),
    ({"seed": "x"}, "seed must be a whole number"),
    ({"strategy": "exhaustive", "range": "5:3"}, "LO <= HI"),
    ({"strategy": "exhaustive", "range": "0:10000000000000000000000"}, "outside this deal space"),
    ({"strategy": "random", "range": "0:10"}, "exhaustive strategy only"),
    ({"strategy": "climb", "players": 4}, "two players with equal hands"),
    ({"strategy": "deals"}, "needs deals_file"),
    ({"strategy": "ancestors"}, "needs deal ="),
    ({"strategy": "ancestors", "deal": "J-X/--"}, "unknown character 'X'"),
    ({"climb": {"pool": 0}}, "climb.pool must be at least 1, got 0"),
    ({"climb": {"poool": 5}}, "unknown key 'poool' in [climb]"),
    ({"time_limit": -1}, "time_limit must not be negative"),
    ({"time_limit": float("nan")}, "time_limit must be a finite number"),
    ({"time_limit": float("inf")}, "time_limit must be a finite number"),
    ({"time_limit": "5"}, "time_limit must be a number"),
    ({"seed": 2**64}, "seed must be at most"),
    ({"seed": -1}, "seed must not be negative"),
    ({"split": "26,x"}, "split must be a list of whole numbers"),
    ({"split": ["26", "26"]}, "split must be a list of whole numbers"),
    ({"workers": "-2"}, "workers must not be negative"),
    ({"progress": "yes"}, "progress must be true or false"),
    ({"out": 5}, "out must be text"),
    ({"players": 0}, "players must be at least 1"),
    ({"device": "tpu"}, "device must be one of auto, cpu, gpu, got 'tpu'"),
    ({"device": 1}, "device must be text"),
    ({"strategy": "climb", "device": "gpu"}, "the climb strategy has no GPU kernels"),
    ({"device": "gpu", "deck": "0:60,1:4,2:4,3:4,4:4"}, "the GPU engine holds two-player deals of at most 64 cards"),
    ({"device": "gpu", "players": 4}, "the GPU engine holds two-player deals"),
])
def test_bad_configs(values, message):
    with pytest.raises(BmnError, match=message.replace("[", r"\[").replace("]", r"\]")):
        build_config(values)


def test_flags_override_the_file(tmp_path):
    from cluster.commands.cli import build_parser, protect_positionals
    from cluster.commands.search import config_from_args

    path = tmp_path / "c.toml"
    path.write_text('strategy = "random"\ndeals = 500\nseed = 4\nout = "x"\n')
    parser = build_parser()
    args = parser.parse_args(protect_positionals(parser, ["search", str(path), "--seed", "9", "--deals", "600"]))
    config = config_from_args(args)
    assert (config.seed, config.deals, config.out, config.strategy) == (9, 600, "x", "random")
    # each kind of key from its flag's text, as its Param reads it
    args = parser.parse_args(protect_positionals(parser, [
        "search", str(path), "--deals", "1_000", "--time-limit", "90", "--audit", "0.25", "--progress", "false",
        "--split", "20/32", "--address", "auto", "--max-attempts", "5", "--in-flight", "3"]))
    config = config_from_args(args)
    assert (config.deals, config.time_limit, config.audit, config.progress, config.split, config.players) == \
        (1000, 90, 0.25, False, (20, 32), 2)
    assert (config.address, config.max_attempts, config.in_flight, config.seed) == ("auto", 5, 3, 4)


def test_identity_ignores_execution_settings():
    a = build_config({"workers": 1, "time_limit": 5, "out": "a"})
    b = build_config({"workers": 8, "address": "auto", "out": "b", "device": "gpu"})
    c = build_config({"seed": 2})
    assert a.fingerprint() == b.fingerprint() != c.fingerprint()


def test_the_execution_keys_are_those_declared_so():
    """EXECUTION_KEYS (what a resume may change) are the keys declared `key(..., execution=True)`, and only they."""
    from cluster.runs.config import EXECUTION_KEYS, KEYS, SearchConfig
    from kernels.strategies.base import PARAM

    marked = tuple(f.name for f in dataclasses.fields(SearchConfig) if f.metadata.get(PARAM, {}).get("execution"))
    assert EXECUTION_KEYS == marked == tuple(name for name, p in KEYS.items() if p.execution)
    assert set(marked) == {"out", "workers", "max_workers", "address", "time_limit", "progress", "max_attempts",
                           "in_flight", "shard_timeout", "device", "gpu_batch", "audit"}


def test_space_and_fingerprint_are_computed_once_per_config(monkeypatch):
    from kernels.strategies import get

    config = build_config({"strategy": "atlas", "deck": "1:2,2:2", "atlas": {"plain": "4:8"}, "min_cards": 5})
    calls = []
    atlas = get("atlas")
    deal_space = atlas.deal_space
    monkeypatch.setattr(atlas, "deal_space", lambda search, table: calls.append(search) or deal_space(search, table))
    identity = type(config).identity
    monkeypatch.setattr(type(config), "identity", lambda c: calls.append("identity") or identity(c))
    first = config.space(), config.fingerprint()
    assert (config.space(), config.fingerprint()) == first and config.space() is first[0]
    assert Plan(config).space is first[0] and calls == ["identity"]  # (the space: computed when it was checked)
    assert config.table() is config.table()  # (the typed table, once too)
    # Equality, the stored form and a changed copy see the fields alone: the copy computes its own.
    changed = dataclasses.replace(config, min_cards=9)
    assert changed == build_config({"strategy": "atlas", "deck": "1:2,2:2", "atlas": {"plain": "4:8"}, "min_cards": 9})
    assert "_space" not in config.to_json() and changed.fingerprint() != first[1]


def test_deals_file_is_read_once_into_the_run(tmp_path):
    path = tmp_path / "claims.txt"
    path.write_text("# claims\n---K---Q-KQAJ-----AAJ--J-- ----------Q----KQ-J-----KA\n\nJ-/--\n")
    config = resolve(build_config({"strategy": "deals", "deals_file": str(path), "shard_size": 1}))
    assert config.input_count == 2 and config.input_deals[1] == "J-/--"
    assert Plan(config).count == 2 and Plan(config).shard(1).deals == ("J-/--",)
    path.write_text("J-/--/X\n")
    with pytest.raises(BmnError, match="line 1: unknown character 'X'"):
        resolve(build_config({"strategy": "deals", "deals_file": str(path)}))


def test_huge_plans_are_lazy():
    config = build_config({"strategy": "exhaustive", "shard_size": 1000})
    plan = Plan(config)
    assert plan.count == 653_534_134_886_878_245
    last = plan.shard(plan.count - 1)
    assert last.params.hi == 653_534_134_886_878_245_000


@pytest.mark.parametrize("args,message", [
    (["search", "--strategy", "sideways"], "unknown strategy 'sideways'"),
    (["search", "/nonexistent/config.toml"], "config file /nonexistent/config.toml does not exist"),
    (["search", "--deals", "many"], 'command line: deals must be a whole number, got "many"'),
    (["resume", "/nonexistent/run"], "is not a bmn run"),
    (["status", "/nonexistent/run"], "is not a bmn run"),
])
def test_cli_bad_input(args, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, stderr = run_main(*args)  # through main(), in this process (tests/test_cli_play.py: the console script)
    assert code == 2 and message in stderr, stderr


def test_cli_bad_toml(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("strategy = random\n")
    code, stderr = run_main("search", path)
    assert code == 2 and "is not valid TOML" in stderr, stderr


def test_option_values_that_begin_with_a_dash():
    from cluster.commands.cli import build_parser, protect_positionals

    casella = "---K---Q-KQAJ-----AAJ--J--/----------Q----KQ-J-----KA"
    parser = build_parser()
    args = parser.parse_args(protect_positionals(parser, ["search", "--strategy", "ancestors", "--deal", casella]))
    assert (args.strategy, args.deal) == ("ancestors", casella)
    args = parser.parse_args(protect_positionals(parser, ["play", "--file", "-", "--json"]))
    assert (args.file, args.json, args.hands) == ("-", True, [])


def test_help_texts_name_the_strategies_that_read_a_key():
    from cluster.commands.search import FLAGS, RESUME_FLAGS
    from cluster.runs.config import EXECUTION_KEYS, readers
    from kernels.strategies.base import OPTIONAL_KEYS

    helps = {flag.key: flag.help for flag in FLAGS}
    for key in OPTIONAL_KEYS:
        assert helps[key].split(":")[0].split(", ") == readers(key) != []
    assert {flag.key for flag in RESUME_FLAGS} == set(EXECUTION_KEYS) & set(helps) - {"out"}


# Every flag users and scripts have typed (README.md lists them): each keeps its name.
KNOWN_FLAGS = ("--out", "--strategy", "--deck", "--players", "--split", "--deals", "--range", "--seed", "--min-cards",
               "--min-tricks", "--shard-size", "--workers", "--max-workers", "--address", "--time-limit",
               "--shard-timeout", "--device", "--gpu-batch", "--audit", "--deals-file", "--deal", "--long-gene",
               "--no-progress", "--json", "--catalogue")


def test_the_flags_are_the_keys_declarations_and_help_documents_each_with_its_default():
    """A flag for every key a config sets, built from its declaration (cluster/runs/config.py's KEYS): its name,
    its help (the key's doc) and its default in `bmn search --help`; argparse takes its value as text."""
    import re

    from cluster.commands.search import FLAGS, RESUME_FLAGS
    from cluster.runs.config import EXECUTION_KEYS, FILLED, KEYS

    assert [flag.key for flag in FLAGS] == [key for key in KEYS if key not in FILLED]
    shown = {"deals": "1_000_000", "split": "none", "progress": "true", "strategy": "random", "time_limit": "0",
             "device": "auto", "out": "runs/search"}
    for flag in FLAGS:
        assert flag.option == "--" + flag.key.replace("_", "-") and KEYS[flag.key].doc in flag.help
        assert re.search(r" \(default: [^()]+\)$", flag.help), flag.help
    assert {flag.key: flag.help.rsplit("(default: ", 1)[1][:-1] for flag in FLAGS if flag.key in shown} == shown
    help_text = in_process("search", "--help")
    assert help_text.returncode == 0
    flat = "".join(help_text.stdout.split())  # (argparse wraps the help's lines)
    for flag in FLAGS:
        assert "".join(f"{flag.option} {flag.key.upper()} {flag.help}".split()) in flat, flag
    for option in KNOWN_FLAGS:
        assert option in help_text.stdout.split(), option
    readme = (CONFIGS.parent / "README.md").read_text().split("with flags on top", 1)[1].split("Unknown keys", 1)[0]
    assert set(re.findall(r"--[a-z-]+", readme)) <= set(help_text.stdout.split()) and len(readme) > 100
    resume = in_process("resume", "--help").stdout
    assert [f.key for f in RESUME_FLAGS] == [k for k in EXECUTION_KEYS if k != "out"] and "--seed" not in resume
    for flag in RESUME_FLAGS:  # (a resume keeps the run's value of a flag not given; it shows its progress)
        assert flag.help.endswith("(default: true)" if flag.key == "progress" else "(default: the run's)")
        assert "".join(f"{flag.option} {flag.key.upper()} {flag.help}".split()) in "".join(resume.split()), flag
    # argparse converts nothing: the key's Param does
    from cluster.commands.cli import build_parser

    args = build_parser().parse_args(["search", "--deals", "1_000", "--audit", "0.5", "--split", "20,20"])
    assert (args.deals, args.audit, args.split) == ("1_000", "0.5", "20,20")


# One mistake of each kind of key (every kind of a key with a flag: int, bounded ints, float, bool, text, a list,
# and each "or null"), made with a flag and in a config file (the same value, as TOML writes it).
SAME_MISTAKES = [
    (["--deals", "x"], 'deals = "x"'),  # int
    (["--shard-size", "1e3"], 'shard_size = "1e3"'),
    (["--deals", "0"], "deals = 0"),  # int, at least 1
    (["--seed", "-1"], "seed = -1"),  # int, not negative
    (["--seed", str(2**64)], f"seed = {2**64}"),  # int, at most 2^64 - 1
    (["--workers", "-2"], "workers = -2"),
    (["--in-flight", "0"], "in_flight = 0"),
    (["--time-limit", "soon"], 'time_limit = "soon"'),  # float
    (["--time-limit", "-5"], "time_limit = -5"),  # float, not negative
    (["--time-limit", "-0.5"], "time_limit = -0.5"),
    (["--shard-timeout", "nan"], "shard_timeout = nan"),  # float, finite
    (["--audit", "inf"], "audit = inf"),
    (["--audit", "1.5"], "audit = 1.5"),  # float, at most 1
    (["--progress", "yes"], 'progress = "yes"'),  # bool
    (["--progress", "1"], 'progress = "1"'),
    (["--device", "tpu"], 'device = "tpu"'),  # text
    (["--deck", "0:10"], 'deck = "0:10"'),
    (["--strategy", "sideways"], 'strategy = "sideways"'),
    (["--split", "26,x"], 'split = "26,x"'),  # a list of whole numbers or null
    (["--split", "20,20"], "split = [20, 20]"),
    (["--range", "0:10"], 'range = "0:10"'),  # text or null
    (["--deal", "J-X/--"], 'deal = "J-X/--"'),
    (["--out", "s3://token@bucket/x"], 'out = "s3://token@bucket/x"'),
]


@pytest.mark.parametrize("flags,toml", SAME_MISTAKES, ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_a_bad_flag_gets_the_sentence_the_same_value_gets_in_a_config_file(flags, toml, tmp_path, monkeypatch):
    """argparse takes a flag's value as text, and the key's Param decodes it as it decodes TOML's: one sentence
    for one mistake, exit code 2, never argparse's message nor a traceback."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "c.toml"
    path.write_text(toml + "\n")
    flag_code, by_flag = run_main("search", *flags)
    toml_code, by_toml = run_main("search", path)
    assert flag_code == toml_code == 2 and "Traceback" not in by_flag + by_toml, (by_flag, by_toml)
    # (where the value came from, then the sentence; a deck's sentence names the deck, not where it came from)
    sentence = by_toml.removeprefix(f"bmn: error: config file {path}: ").removeprefix("bmn: error: ")
    assert by_flag.removeprefix("bmn: error: command line: ").removeprefix("bmn: error: ") == sentence, \
        (by_flag, by_toml)
    assert by_flag.startswith("bmn: error: ") and sentence.count("\n") == 1 and sentence.endswith("\n")  # one line
    assert list(tmp_path.iterdir()) == [path]  # nothing started


def test_the_mistakes_cover_every_kind_of_key():
    from cluster.runs.config import KEYS, USER_KEYS

    flagged = {flag[0].removeprefix("--").replace("-", "_") for flag, _ in SAME_MISTAKES}
    assert {KEYS[key].hint for key in flagged} == {KEYS[key].hint for key in USER_KEYS}
    assert {key for key in flagged if KEYS[key].minimum is not None or KEYS[key].maximum is not None} >= \
        {"deals", "seed", "workers", "time_limit", "audit"}


def test_top_level_and_strategy_keys_are_checked_by_one_coerce():
    from cluster.runs.config import KEYS, SearchConfig
    from kernels.strategies.base import Param, Search, params_of

    assert set(KEYS) == {f for f in SearchConfig.__dataclass_fields__} - {"tables", "input_deals"}
    assert all(isinstance(p, Param) and p.default == SearchConfig.__dataclass_fields__[p.name].default
               for p in KEYS.values())
    # the search's keys declared once, in the kernels' Search: the config's are those very declarations
    assert {name: KEYS[name] for name in params_of(Search) if name != "input_deals"} == \
        {name: p for name, p in params_of(Search).items() if name != "input_deals"}
    config = build_config({"deals": "1_000", "split": "20/20", "deck": "camicia", "seed": 2**64 - 1})
    assert (config.deals, config.split, config.players, config.seed) == (1000, (20, 20), 2, 2**64 - 1)
    assert config.search() == Search(deck="camicia", players=2, split=(20, 20), seed=2**64 - 1, deals=1000)


def test_a_wrong_value_is_one_sentence_whichever_way_it_came():
    """The same Param.decode reads TOML, a shard's JSON and run.json: one sentence for one mistake."""
    from cluster.runs.config import from_json
    from kernels.strategies import codec, get

    with pytest.raises(BmnError) as toml:
        build_config({"strategy": "climb", "climb": {"pool": "5"}})
    with pytest.raises(ValueError) as shard:
        codec.decode(get("climb"), '{"seed": 1, "shard": 0, "count": 5, "min_cards": 0, "min_tricks": 0, '
                                   '"pool": "5", "top": 4, "max_states": 100, "ratio": 0.5}')
    with pytest.raises(BmnError) as stored:
        from_json({"strategy": "climb", "climb": {"pool": "5"}})
    for raised in (toml, shard, stored):
        assert str(raised.value).endswith('pool must be a whole number, got "5"'), str(raised.value)
    with pytest.raises(BmnError, match=r'split must be a list of whole numbers or null, got \["20", 20\]$'):
        from_json({"split": ["20", 20]})


def test_a_run_json_holds_its_own_strategys_table_only():
    config = build_config({"strategy": "climb", "climb": {"pool": 7}})
    stored = config.to_json()
    assert stored["climb"]["pool"] == 7 and not [k for k in stored if k in ("states", "construct", "census")]
    assert "construct" not in build_config({"strategy": "random"}).to_json()
    from cluster.runs.config import from_json

    # a run.json of an earlier bmn, with every strategy's empty table, reads back the same config
    old = {**stored, "states": {}, "construct": {}, "census": {}}
    assert from_json(old) == from_json(stored) == config


def test_a_config_is_frozen_and_changes_only_into_a_new_checked_value():

    from cluster.runs.config import with_execution

    config = build_config({"seed": 3, "out": "a"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.seed = 4
    resumed = with_execution(config, {"workers": 3, "time_limit": 60, "out": "b"}, "resume")
    assert (resumed.workers, resumed.time_limit, resumed.out) == (3, 60, "b")
    assert (config.workers, config.out) == (0, "a") and resumed.fingerprint() == config.fingerprint()
    audited = with_execution(config, {"audit": 0.02}, "resume")  # (an execution key: what runs, not what is computed)
    assert audited.audit == 0.02 and audited.fingerprint() == config.fingerprint()
    with pytest.raises(BmnError, match="audit plays GPU shards again on CPU workers, and device = \"gpu\" has none"):
        with_execution(config, {"audit": 0.02, "device": "gpu"}, "resume")
    # Every execution key (declared `execution=True`) may change, the run's identity the same; every other key a
    # config sets is refused, named.
    from cluster.runs.config import EXECUTION_KEYS, KEYS, USER_KEYS

    assert set(EXECUTION_CHANGES) == set(EXECUTION_KEYS)
    for key, value in EXECUTION_CHANGES.items():
        resumed = with_execution(config, {key: value}, "resume")
        assert getattr(resumed, key) == value != getattr(config, key) and resumed.fingerprint() == config.fingerprint()
    for key in set(USER_KEYS) - set(EXECUTION_KEYS):
        with pytest.raises(BmnError, match=f"^resume: {key} cannot change when a run is resumed$"):
            with_execution(config, {key: KEYS[key].default}, "resume")
    for values, message in [({"workers": -3}, "workers must not be negative"),
                            ({"max_workers": -1}, "max_workers must not be negative"),
                            ({"time_limit": -5.0}, "time_limit must not be negative"),
                            ({"in_flight": 0}, "in_flight must be at least 1"),
                            ({"gpu_batch": -1}, "gpu_batch must not be negative"),
                            ({"audit": 1.5}, "audit must be at most 1"),
                            ({"seed": 5}, "seed cannot change when a run is resumed")]:
        with pytest.raises(BmnError, match=message):
            with_execution(config, values, "resume")


def test_run_json_round_trips_and_a_damaged_one_is_refused():
    from cluster.runs.config import from_json

    config = resolve(build_config({"strategy": "climb", "climb": {"pool": 500}, "split": [26, 26], "seed": 7}))
    again = from_json(config.to_json())
    assert again == config and again.fingerprint() == config.fingerprint()
    for damage in ({"seed": "seven"}, {"climb": {"pool": -1}}, {"strategy": 4}):
        with pytest.raises(BmnError, match="run.json: "):
            from_json({**config.to_json(), **damage})


@pytest.mark.parametrize("flags,message", [
    (["--workers", "-3"], "workers must not be negative"),
    (["--max-workers", "-1"], "max_workers must not be negative"),
    (["--time-limit", "-5"], "time_limit must not be negative"),
    (["--time-limit", "nan"], "time_limit must be a finite number"),
    (["--device", "gpus"], "device must be one of auto, cpu, gpu"),
    (["--workers", "x"], 'bmn resume RUN: workers must be a whole number, got "x"'),
    (["--in-flight", "0"], "bmn resume RUN: in_flight must be at least 1, got 0"),
    (["--progress", "yes"], 'bmn resume RUN: progress must be true or false, got "yes"'),
    (["--audit", "2"], "bmn resume RUN: audit must be at most 1, got 2"),
])
def test_resume_flags_are_checked_like_the_config(flags, message, tmp_path):
    from cluster.runs.runmeta import open_run
    from cluster.runs.storage import RunStore

    run = tmp_path / "run"
    open_run(build_config({"out": str(run), "deals": 10, "shard_size": 5}), RunStore(str(run)), resume=False)
    code, stderr = run_main("resume", run, *flags, "--no-progress")
    assert code == 2 and message.replace("RUN", str(run)) in stderr, stderr


@pytest.mark.parametrize("out", ["s3://AKIAEXAMPLE:s3cr3t@bucket/runs/x", "s3://token@bucket/x"])
def test_credentials_in_a_uri_are_refused_and_never_repeated(out, tmp_path, monkeypatch):
    with pytest.raises(BmnError, match="must not hold credentials") as refused:
        build_config({"out": out})
    assert "s3cr3t" not in str(refused.value) and "token" not in str(refused.value)
    monkeypatch.chdir(tmp_path)
    code, stderr = run_main("search", "--out", out, "--deals", "10")
    assert code == 2 and "must not hold credentials" in stderr and "s3cr3t" not in stderr
    assert list(tmp_path.iterdir()) == []  # nothing written anywhere
