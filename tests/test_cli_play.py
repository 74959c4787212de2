"""`bmn play`, `bmn rank`, `bmn unrank`, `bmn bench` as users type them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cluster_helpers import run_main

from cluster.commands.cli import main

CASELLA = ["---K---Q-KQAJ-----AAJ--J--", "----------Q----KQ-J-----KA"]
NESSLER = "---AJ--Q---------QAKQJJ-QK/-----A----KJ-K--------A---"
BMN = Path(sys.executable).parent / "bmn"
KEYS = ["outcome", "winner", "tricks", "cards", "preperiod_tricks", "preperiod_cards",
        "period_tricks", "period_cards", "cycle_id"]


def run(*args: str, stdin: str | None = None):
    return subprocess.run([str(BMN), *args], capture_output=True, text=True, input=stdin)


def test_console_script_plays_hands_starting_with_dashes_as_typed():
    out = run("play", *CASELLA)
    assert out.returncode == 0, out.stderr
    assert "cycle" in out.stdout and "e1fabb73dac32ded" in out.stdout and "474" in out.stdout


def test_json_has_exactly_the_documented_keys(capsys):
    assert main(["play", "--json", NESSLER]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert list(obj) == KEYS
    assert obj == {"outcome": "win", "winner": 2, "tricks": 1164, "cards": 8344, "preperiod_tricks": None,
                   "preperiod_cards": None, "period_tricks": None, "period_cards": None, "cycle_id": None}


def test_json_flag_after_hands_and_joined_form(capsys):
    assert main(["play", "/".join(CASELLA), "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert (obj["outcome"], obj["preperiod_tricks"], obj["period_cards"]) == ("cycle", 4, 440)


@pytest.mark.parametrize("engine", ["reference", "fast", "percard", "general", "auto"])
def test_every_engine_from_the_cli(engine, capsys):
    assert main(["play", "--json", "--engine", engine, *CASELLA]) == 0
    assert json.loads(capsys.readouterr().out)["cycle_id"] == "e1fabb73dac32ded"


def test_trace_shows_the_hands_after_each_trick(capsys):
    assert main(["play", "--trace", "J-K-", "--Q-"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["trick", "cards", "leads"]
    assert lines[1].split() == ["0", "0", "1", "J-K-", "--Q-"]
    assert lines[2].split() == ["1", "2", "1", "-K-J-", "-Q-"]


def test_trace_of_a_cycle_stops_at_the_repeat(capsys):
    assert main(["play", "--trace", *CASELLA]) == 0
    out = capsys.readouterr().out
    assert "   66    474" in out and "   67 " not in out


@pytest.mark.parametrize("args,message", [
    (["play", "---K--X---", "--Q-"], "unknown character 'X' at position 7 of hand 1"),
    (["play", "---K--Q--"], "at least 2 hands"),
    (["play"], "give the hands"),
    (["rank", "J--", "-x-"], "unknown character 'x' at position 2 of hand 2"),
    (["unrank", "12x"], "not a whole number"),
    (["unrank", "653534134886878245000"], "outside this deal space"),
    (["unrank", "5", "--deck", "0:3"], "no penalty card"),
    (["unrank", "5", "--players", "3"], "cannot be split equally"),
])
def test_bad_input_is_one_sentence_and_exit_2(args, message):
    # main() in this process, as the console script calls it (a traceback would fail the test here)
    code, stderr = run_main(*args)
    assert code == 2
    assert message in stderr
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1


def test_bad_input_through_the_console_script():
    out = run("play", "---K--X---", "--Q-")
    assert out.returncode == 2 and "unknown character 'X' at position 7 of hand 1" in out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_file_plays_each_line_in_order_and_reports_bad_lines(tmp_path):
    path = tmp_path / "deals.txt"
    path.write_text(
        "# claims to check\n"
        + "/".join(CASELLA) + "\n\n"
        + "J-X/--\n"
        + NESSLER + "  # the record\n"
        + "-J/Q-/--K\n"
        + "JJ/--\n"
    )
    out = run("play", "--file", str(path))
    assert out.returncode == 2
    objs = [json.loads(line) for line in out.stdout.splitlines()]
    assert [o.get("outcome") for o in objs] == ["cycle", None, "win", "win", "win"]
    assert objs[1]["line"] == 4 and "unknown character 'X'" in objs[1]["error"]
    assert objs[2]["cards"] == 8344
    assert all(list(o) == KEYS for o in objs if "error" not in o)


def test_file_from_stdin_all_good_exits_0():
    out = run("play", "--file", "-", stdin="/".join(CASELLA) + "\n" + NESSLER + "\n")
    assert out.returncode == 0
    assert [json.loads(x)["tricks"] for x in out.stdout.splitlines()] == [66, 1164]


def test_rank_and_unrank_round_trip(capsys):
    assert main(["rank", *CASELLA]) == 0
    assert capsys.readouterr().out.strip() == "472460898658889399111"
    assert main(["unrank", "472460898658889399111"]) == 0
    assert capsys.readouterr().out.strip() == "/".join(CASELLA)
    assert main(["unrank", "0", "--deck", "0:3,1:2,2:1", "--split", "2,4"]) == 0
    assert capsys.readouterr().out.strip() == "QJ/J---"


def test_bench_json_fields(capsys):
    assert main(["bench", "--json", "--seconds", "0.2"]) == 0
    report = json.loads(capsys.readouterr().out)
    for key in ("games_per_s", "cards_per_s", "mean_cards"):
        assert report[key] > 0
    assert report["engine"] == "fast" and report["baseline"]["engine"] == "percard"
    assert 150 < report["mean_cards"] < 400  # random standard games average about 255 cards


def test_bench_on_the_gpu(tmp_path):
    """`bmn bench --device gpu`: one sentence where no GPU can be used; under numba-cuda's simulator,
    the GPU sweep's figures and the device's name (how fast a real GPU is: benchmarks/README.md)."""
    pytest.importorskip("numba.cuda")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    done = subprocess.run([str(BMN), "bench", "--device", "gpu"], capture_output=True, text=True, env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("bmn: error: no GPU here that CUDA can use"), done.stderr
    done = subprocess.run([str(BMN), "bench", "--device", "gpu", "--seconds", "0.3", "--json"], capture_output=True,
                          text=True, env=dict(env, NUMBA_ENABLE_CUDASIM="1"))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["engine"] == "gpu" and report["device"].startswith("numba-cuda's simulator")
    assert report["games"] >= 256 and 150 < report["mean_cards"] < 400


def test_ancestors_json(capsys):
    assert main(["ancestors", "--json", *CASELLA]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["cycle_id"] == "e1fabb73dac32ded" and obj["count"] == len(obj["deals"]) > 0
    assert all(set(d) == {"hands", "tricks", "cards"} for d in obj["deals"])
    assert "/".join(CASELLA) in {d["hands"] for d in obj["deals"]}


def test_ancestors_text_and_limit(capsys):
    assert main(["ancestors", *CASELLA, "--limit", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len([x for x in lines if "/" in x]) == 2
    assert "enter cycle e1fabb73dac32ded" in lines[2] and "period 62 tricks, 440 cards" in lines[2]


def test_ancestors_of_every_split(capsys):
    """The small deck's one cycle (census: 43 states, 7 balanced deals), from an unbalanced state of it."""
    assert main(["ancestors", "--every-split", "--json", "--J-", "Q-Q-J-"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert (obj["cycle_id"], obj["states"], obj["truncated"]) == ("207ec02eb4dcd075", 43, False)
    assert sum(obj["splits"].values()) == len(obj["deals"]) == 43 and obj["splits"]["5/5"] == 7
    assert "--J-/Q-Q-J-" in obj["deals"]
    assert main(["ancestors", "--every-split", "--J-", "Q-Q-J-"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "  5/5           7" in lines and "43 states enter cycle 207ec02eb4dcd075" in lines[-1]


@pytest.mark.parametrize("args,message", [
    (["ancestors", "--every-split", "A-", "--"], "enters no cycle"),
    (["ancestors", "J--", "--"], "cannot be split into two equal hands"),
    (["ancestors", "J-", "--", "--"], "two players"),
    (["ancestors", "J-", "--", "--limit", "0"], "at least 1"),
])
def test_ancestors_bad_input(args, message):
    code, stderr = run_main(*args)
    assert code == 2 and message in stderr and "Traceback" not in stderr


def test_a_hand_of_two_plain_cards_is_not_the_option_separator(capsys):
    assert main(["play", "J-", "--", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cards"] == 5
    assert main(["play", "--", "J-", "--"]) == 0  # a leading -- still ends the options
    assert capsys.readouterr().out.splitlines()[:2] == ["deal       J-/--", "outcome    hand 1 wins"]


def test_the_fast_kernel_refuses_what_it_cannot_hold():
    big = "J" * 20 + "-" * 20
    out = run("play", "--engine", "fast", big, big)
    assert out.returncode == 2 and "fast kernel holds two-player deals of at most 64 cards" in out.stderr
    out = run("play", "--json", big, big)  # the default picks a kernel that can
    assert out.returncode == 0 and json.loads(out.stdout)["outcome"] in ("win", "cycle")


def test_commands_other_than_a_search_do_not_import_ray():
    # Importing Ray takes seconds: `bmn play`, `bmn query` and the rest answer without it.
    code = "import sys, cluster.commands.cli; sys.exit('ray' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
