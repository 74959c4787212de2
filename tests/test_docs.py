"""The documents as a reference: README.md is the manual (short, and every command in it one that `bmn`
or `make` accepts), docs/strategies.md lists every config key the code declares, every section a file
cites by name exists, and every link to a heading resolves. (tests/test_repository.py checks that
relative links reach files; tests/test_launch_configs.py holds the cloud guide, docs/cloud.md, to the
launch files; tests/test_warp_model.py holds benchmarks/README.md's GPU occupancy to the code.)"""

from __future__ import annotations

import dataclasses
import importlib
import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from helpers import reference_problems

from cluster.commands.cli import build_parser, protect_positionals
from cluster.runs.config import EXECUTION_KEYS, SearchConfig
from kernels.strategies import REGISTRY

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCUMENTS = [README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "benchmarks" / "README.md", ROOT / "CHANGELOG.md"]


def headings(doc: Path) -> list[str]:
    """The document's headings, outside code blocks."""
    found, fenced = [], False
    for line in doc.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            found.append(line.lstrip("#").strip())
    return found


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def plain(text: str) -> str:
    return re.sub(r"[`*]", "", text).lower().strip()


def shell_lines(doc: Path) -> list[str]:
    """Each command of the document's ```sh blocks, continuation lines joined, comments dropped."""
    lines, block = [], None
    for line in doc.read_text().splitlines():
        if line.startswith("```"):
            block = [] if line.strip() == "```sh" and block is None else None
            continue
        if block is not None:
            lines.append(line)
    joined = "\n".join(lines).replace("\\\n", " ")
    return [line.strip() for line in joined.splitlines() if line.strip()]


def test_readme_is_a_manual_not_a_log():
    text = README.read_text()
    assert len(text.splitlines()) <= 350, "README.md is the manual: deeper topics go to docs/*.md"
    assert not re.search(r"\bsession\b", text, re.I), "no session history in the README"
    for deeper in ("docs/rules.md", "docs/strategies.md", "docs/atlas.md", "docs/gpu.md", "docs/cloud.md",
                   "docs/failures.md", "docs/development.md", "benchmarks/README.md"):
        assert f"]({deeper})" in text, f"README.md points to {deeper}"


def test_benchmarks_are_figures_not_a_diary():
    """benchmarks/README.md is a reference: about 300 lines (two more topics, the gene search and the record's
    price, took it to 370 at most), no session's story, no table row named by a commit (the history is git's and
    CHANGELOG.md's)."""
    text = (ROOT / "benchmarks" / "README.md").read_text()
    assert not re.search(r"\bsession\b", text, re.I)
    assert len(text.splitlines()) <= 370, "benchmarks/README.md: the figures of today, the history in git log"
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    assert not [r for r in rows if re.search(r"\b[0-9a-f]{7,40}\b", r.split("|")[1]) and
                re.search(r"[a-f]", r.split("|")[1])], "a table row named by a commit"
    assert not re.search(r"\bcommit [0-9a-f]{7}", text), "figures are named by what they measure, not by a commit"


@pytest.mark.parametrize("doc", DOCUMENTS, ids=lambda d: str(d.relative_to(ROOT)))
def test_every_bmn_command_of_the_documents_is_one_bmn_accepts(doc):
    """Each `bmn` (and `make`) command of a document's shell blocks parses as written; the README runs
    nothing else (its commands were run as written: play, rank, searches, queries, a resume)."""
    parser = build_parser()
    make_targets = set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), re.M))
    commands = 0
    for line in shell_lines(doc):
        for part in line.split(" # ")[0].split(" | "):
            part = part.split(" > ")[0].strip()
            if " -- bmn " in part:  # a job's command: `ray job submit ... -- bmn resume RUN`
                part = part.split(" -- ", 1)[1]
            if not part.startswith(("bmn ", "make ")):
                assert doc != README or part.startswith("tail "), f"README.md runs {part!r}"
                continue
            argv = shlex.split(part, comments=True)
            commands += 1
            if argv[0] == "make":
                assert argv[1] in make_targets, part
                continue
            try:
                parser.parse_args(protect_positionals(parser, argv[1:]))
            except SystemExit:
                pytest.fail(f"bmn refuses a command of {doc.name}: {part}")
    assert doc != README or commands >= 20


def test_the_strategy_reference_lists_every_strategy_and_key():
    text = (ROOT / "docs" / "strategies.md").read_text()
    rows = {m.group(1): m.group(2).strip() for m in re.finditer(r"^\| `(\w+)` \*? ?\| ([^|]*)\|", text, re.M)}
    internal = {"tables", "input_sha256", "input_count", "input_deals"}
    for key in (f.name for f in dataclasses.fields(SearchConfig) if not f.name.startswith("_")):
        assert key in internal or key in rows, f"docs/strategies.md, Config keys: {key}"
    # the execution keys are those marked *, and only they
    starred = set(re.findall(r"^\| `(\w+)` \* \|", text.split("## Config keys", 1)[1].split("\n## ", 1)[0], re.M))
    assert starred == set(EXECUTION_KEYS)
    for strategy in REGISTRY.values():
        problems = reference_problems(text, strategy)
        assert not problems, f"docs/strategies.md: {problems}"


def test_the_layout_names_every_module():
    """docs/development.md's layout names every module of kernels/, its engines and sweeps, and cluster/
    (of git's files; the strategies are named as a package), each cluster module under its part's folder."""
    layout = (ROOT / "docs" / "development.md").read_text().split("## Layout", 1)[1].split("\n## ", 1)[0]
    names = subprocess.run(["git", "ls-files", "kernels", "cluster"], cwd=ROOT, capture_output=True,
                           text=True).stdout.split()
    modules = {Path(n).name for n in names if n.endswith(".py") and not n.endswith("__init__.py")
               and str(Path(n).parent) in ("kernels", "kernels/engines", "kernels/sweep")}
    missing = sorted(m for m in modules if not re.search(rf"\b{re.escape(m)}", layout))
    assert not missing, f"docs/development.md, Layout: {missing}"
    # the folder map of cluster/: each part's block names exactly its modules
    cluster = layout.split("\ncluster/", 1)[1].split("\nconfigs/", 1)[0]
    blocks = dict(re.findall(r"^  (\w+)/ .*\n((?:    .*\n|                         .*\n)*)", cluster, re.M))
    for part in ("runs", "cloud", "loop", "commands"):
        files = {Path(n).name for n in names if str(Path(n).parent) == f"cluster/{part}" and n.endswith(".py")
                 and not n.endswith("__init__.py")}
        block = blocks.get(part, "") if part != "commands" else cluster.split("  commands/", 1)[1]
        named = set(re.findall(r"\b(\w+\.py)\b", block))
        assert named == files, f"docs/development.md, Layout, cluster/{part}/: {sorted(named ^ files)}"


def test_the_path_of_a_shard_is_drawn_as_the_code_makes_it():
    """docs/development.md's drawing of a shard's path names exactly its forms, as many as its sentence says,
    each a class of the module it names as owner (the file: the function of tables.py that makes it); and
    each form is made from the one before it, by the callable the drawing names (its annotations say so)."""
    import typing

    section = (ROOT / "docs" / "development.md").read_text().split("## The path of a shard", 1)[1].split("\n## ", 1)[0]
    count = re.search(r"A shard takes (\w+) forms", section).group(1)
    drawing = section.split("```", 2)[1]
    rows = re.findall(r"^(\w+(?: file)?)\s+((?:kernels|cluster)/[\w/]+\.py)\s+([\w.]+)\(", drawing, re.M)
    assert [form for form, _, _ in rows] == ["Shard", "ShardResult", "PlayedShard", "ShardSummary", "shard file"]
    assert count == "five" and len(rows) == 5
    made = {}
    for (form, path, maker), before in zip(rows, [None] + [form for form, _, _ in rows]):
        module = importlib.import_module(path[:-3].replace("/", "."))
        if form != "shard file":
            cls = getattr(module, form, None)
            assert isinstance(cls, type) and cls.__module__ == module.__name__, f"{form} is not a class of {path}"
        # the maker: a dotted name from the package's root, or one of the owner's
        home, _, attr = maker.rpartition(".")
        call = (getattr(importlib.import_module(home), attr) if maker.startswith(("kernels.", "cluster."))
                else _resolved(module, maker))
        made[form] = call
        hints = {k: str(v) for k, v in call.__annotations__.items()}
        returned = hints.pop("return")
        assert form == "shard file" or re.search(rf"\b{form}\b", returned), (form, maker, returned)
        assert before is None or any(re.search(rf"\b{before}\b", h) for h in hints.values()), (form, maker, hints)
    assert "PlayedShard" in str(typing.get_type_hints(made["shard file"].__globals__["games_table"])["played"])
    given_up = made["PlayedShard"].__self__.given_up
    assert "Shard" in given_up.__annotations__["shard"] and "PlayedShard" in given_up.__annotations__["return"]


def _resolved(module, dotted: str):
    value = module
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


def test_the_lease_is_described_as_the_code_keeps_it():
    from cluster.runs.lease import LOCK_STALE_S, RENEWALS_PER_LEASE

    text = " ".join((ROOT / "docs" / "failures.md").read_text().split())
    assert f"renewed every {LOCK_STALE_S / RENEWALS_PER_LEASE:g} s" in text
    assert f"watches it for {LOCK_STALE_S:g} s" in text


def test_links_to_headings_resolve():
    missing = []
    for doc in DOCUMENTS:
        for target in re.findall(r"\]\(([^)\s]*#[^)\s]+)\)", doc.read_text()):
            path, anchor = target.split("#", 1)
            if path.startswith(("http:", "https:")):
                continue
            into = (doc.parent / path).resolve() if path else doc
            if not into.exists() or anchor not in {slug(h) for h in headings(into)}:
                missing.append(f"{doc.relative_to(ROOT)} -> {target}")
    assert not missing, missing


def tracked_text() -> dict[Path, str]:
    names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    if not names:  # not a git checkout (an unpacked archive): every file below the root
        names = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file() and ".venv" not in p.parts]
    texts = {}
    for name in names:
        path = ROOT / name
        if not path.is_file() or path.suffix not in {".py", ".md", ".toml", ".yaml", ".ipynb", ".sh", ".json", ""}:
            continue
        text = path.read_text(errors="replace")
        if path.suffix == ".ipynb":
            text = "\n".join("".join(cell["source"]) for cell in json.loads(text)["cells"])
        texts[path] = text
    return texts


# A document cited with a section: `docs/cloud.md, "KubeRay"`, `benchmarks/README.md ("The atlas")`.
CITATION = re.compile(r"((?:[\w.-]+/)*[\w.-]+\.md)`?,?\s+\(?\"([^\"\n]+)\"")


def test_every_section_cited_by_name_exists():
    missing = []
    for path, text in tracked_text().items():
        for cited, section in CITATION.findall(text):
            doc = next((d for d in (path.parent / cited, ROOT / cited) if d.exists()), None)
            if doc is None:
                missing.append(f"{path.relative_to(ROOT)}: {cited} does not exist")
            elif not any(plain(h).startswith(plain(section)) for h in headings(doc)):
                missing.append(f"{path.relative_to(ROOT)}: {cited} has no section \"{section}\"")
    assert not missing, missing


def test_the_field_spec_table_is_the_decoders():
    """docs/development.md, "One field spec": each annotation's kind in words is the decoder's."""
    import re

    from kernels.strategies.base import _words
    from kernels.strategies.cycles import Factory

    text = (ROOT / "docs" / "development.md").read_text().split("## One field spec", 1)[1].split("```", 2)[1]
    hints = {"bool": bool, "int": int, "float": float, "str": str, "tuple[int, ...]": tuple[int, ...],
             "tuple[str, ...]": tuple[str, ...], "a typed value": Factory}
    rows = {m.group(1).strip(): m.group(2).strip() for m in re.finditer(r"^(.{19}) (.{31}) ", text, re.M)
            if not m.group(1).startswith("annotation")}
    assert {name: rows[name] for name in hints} == {name: _words(hint) for name, hint in hints.items()}
    assert _words(int | None) == "a whole number or null" and rows["X | None"] == "(X's) or null"


def test_the_deals_the_readme_opens_with_never_end_on_the_reference_player():
    """The README's opening pastes deals that never end (the Camicia hunt's, a balanced one built from long genes):
    each cycles on the reference player, into a cycle the catalogue holds, and the balanced one is 26/26."""
    from kernels.catalogue import SHIPPED, read_cycles
    from kernels.engines.reference import play_reference
    from kernels.notation import parse_hand

    opening = (ROOT / "README.md").read_text().split("\n## ", 1)[0]
    deals = re.findall(r"`bmn play (\S+) (\S+)`", opening)
    catalogued = {c.cycle_id for c in read_cycles(SHIPPED)}
    assert len(deals) == 2
    for a, b in deals:
        deal = (parse_hand(a), parse_hand(b))
        result = play_reference(deal)
        assert result.outcome == "cycle" and result.cycle_id in catalogued, (a, b)
    assert [len(h) for h in map(parse_hand, deals[1])] == [26, 26]

