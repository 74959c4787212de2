"""The repository stands alone: nothing in it points outside it, and its documents' links resolve; what it
installs keeps Ray's import lean."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def tracked_text_files() -> list[Path]:
    names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    if not names:  # not a git checkout (an unpacked archive): every file below the root
        names = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file() and ".venv" not in p.parts]
    return [ROOT / n for n in names if Path(n).suffix in {".py", ".md", ".toml", ".txt", ".yaml", ".ipynb", ".sh", ".c"}
            or Path(n).name in {"Makefile", "Dockerfile", "run"}]


def test_nothing_points_outside_the_repository():
    outside = re.compile(r"\.\./shared|\.\./\.\./|RULES\.md")
    hits = [f"{p.relative_to(ROOT)}:{n}" for p in tracked_text_files() if p.exists()
            for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1) if outside.search(line)]
    assert not hits, hits


def test_every_source_file_is_in_git():
    """A module that .gitignore hides (a package named like an ignored folder) works here and is missing from
    every clone: every .py, .toml and .tsv file below the code's folders is tracked."""
    if not subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout:
        pytest.skip("not a git checkout")
    folders = ["cluster", "kernels", "configs", "tests", "benchmarks", "notebooks"]
    ignored = subprocess.run(["git", "ls-files", "--others", "--ignored", "--exclude-standard", *folders], cwd=ROOT,
                             capture_output=True, text=True).stdout.split()
    assert not [n for n in ignored if Path(n).suffix in {".py", ".toml", ".tsv", ".ipynb"}], ignored


def test_relative_links_in_documents_resolve():
    link = re.compile(r"\]\((?!https?:|#|mailto:)([^)#\s]+)")
    missing = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "benchmarks" / "README.md"]:
        for target in link.findall(doc.read_text()):
            if not (doc.parent / target).exists():
                missing.append(f"{doc.relative_to(ROOT)} -> {target}")
    assert not missing, missing


# Modules whose specification lives in test files of other names (module -> those files), and
# modules without behaviour of their own (None). Every other module M of cluster/ and kernels/
# (a package by its folder's name) must have tests/test_M.py.
TESTED_ELSEWHERE = {
    # without behaviour: a version string, `python -m cluster`, a list of subcommands, compiler
    # options, the exception type
    "cluster": None,
    "cluster.__main__": None,
    "cluster.commands": None,
    "cluster.runs": None,  # cluster/'s parts: packages whose modules have their tests
    "cluster.cloud": None,
    "cluster.loop": None,
    "kernels._jit": None,
    "kernels.errors": None,
    # the command line, through `bmn` itself
    "cluster.commands.cli": ["test_cli_play.py", "test_config.py", "test_query.py", "test_fuzz.py"],
    "cluster.commands.backward": ["test_cli_play.py", "test_fuzz.py"],  # bmn ancestors
    "cluster.commands.bench": ["test_cli_play.py", "test_fuzz.py"],
    "cluster.commands.deals": ["test_cli_play.py", "test_fuzz.py"],  # play, rank, unrank
    "cluster.commands.results": ["test_query.py", "test_fuzz.py"],  # query, top, cycles, compact
    "cluster.commands.search": ["test_cluster.py", "test_config.py", "test_faults.py"],  # search, resume, status
    "cluster.runs.known": ["test_catalogue.py"],  # the catalogue's labels in tables, status and summaries
    "cluster.runs.harvest": ["test_genelib.py"],  # bmn genes merge: a census run merged into the library's files
    "cluster.loop.course": ["test_coordinator.py"],  # the loop's stopping rules and progress.json's owner
    # the parts of the run loop and of the pool, each held through them
    "cluster.cloud.actors": ["test_pool.py", "test_cluster_gpu.py", "test_cluster_elastic.py"],  # start, loss, GPUs
    "cluster.loop.recorder": ["test_coordinator.py", "test_cluster.py"],  # summaries, audits, the session's counters
    "cluster.loop.runfiles": ["test_coordinator.py", "test_codec.py", "test_faults.py"],  # opened, tables rebuilt
    "cluster.loop.report": ["test_coordinator.py", "test_cluster.py"],  # the RunReport
    "kernels.bench": ["test_cli_play.py"],  # bmn bench
    # the sweeps (kernels/sweep/): test_sweep.py holds the CPU to exact tables, test_gpu.py the GPU's
    # kernels (kernels/sweep/cuda.py) and host side (kernels/sweep/gpu.py) to the CPU
    "kernels.sweep.cuda": ["test_gpu.py", "test_cluster_gpu.py"],
    "kernels.sweep.modes": ["test_sweep.py", "test_gpu.py"],
    "kernels.sweep.cpu": ["test_sweep.py"],
    "kernels.sweep.streams": ["test_states.py", "test_gpu.py"],  # the states mode's states, regenerated
    # the cluster: searches on a local Ray, what they write, how they resume
    "cluster.commands.status": ["test_cluster.py", "test_faults.py", "test_query.py"],
    "cluster.runs.compact": ["test_query.py"],
    # the own table's declaration: the lookup's tests use it
    "cluster.runs.owntable": ["test_owned.py", "test_atlas.py"],
    # the kernels' package: RESULTS_VERSION and the Numba cache folder
    "kernels": ["test_results_version.py", "test_numba_cache.py"],
    # engines: every engine of the table held to the reference, through every way of calling it
    "kernels.engines.percard": ["test_engines.py", "test_property.py", "test_rules.py"],
    "kernels.engines.reference": ["test_rules.py", "test_exercism.py", "test_engines.py"],
    "kernels.engines.workspace": ["test_engines.py"],
    "kernels.game": ["test_engines.py", "test_cycle_detection.py"],
    "kernels.play": ["test_engines.py", "test_property.py", "test_cycle_detection.py"],
    "kernels.cycleid": ["test_cycle_detection.py", "test_census.py"],
    "kernels.decks": ["test_dealspace.py", "test_notation.py"],
    # strategies
    "kernels.strategies": ["test_strategy_registry.py"],
    "kernels.strategies.base": ["test_strategy_registry.py", "test_config.py"],
    "kernels.strategies.exhaustive": ["test_sweep.py"],
    "kernels.strategies.random": ["test_sweep.py"],
    "kernels.strategies.ancestors": ["test_backward.py"],
    "kernels.strategies.extend": ["test_backward.py"],
    "kernels.strategies.deals": ["test_strategy_registry.py", "test_results_version.py"],
    # the cycle factory (a package; tests/test_cycle_detection.py is about the engines instead)
    "kernels.strategies.cycles": ["test_cycle_factory.py", "test_cycles_moves.py", "test_cycles_cluster.py"],
    "kernels.strategies.cycles.beam": ["test_cycle_factory.py"],
    "kernels.strategies.cycles.found": ["test_cycle_factory.py"],
    "kernels.strategies.cycles.moves": ["test_cycles_moves.py"],
    "kernels.strategies.cycles.player": ["test_cycle_factory.py"],
    "kernels.strategies.cycles.state": ["test_cycles_moves.py", "test_cycle_factory.py"],
}


# Modules whose name's test file is about another module of the same name: tests/test_cluster.py
# tests searches (the coordinator), tests/test_backward.py tests kernels/backward.py.
NAME_CLASHES = {"cluster", "cluster.commands.backward"}


def modules() -> dict[str, str]:
    """Every module of cluster/ and kernels/ by dotted name -> the test file its name asks for."""
    found = {}
    for top in ("cluster", "kernels"):
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = f"test_{parts[-1]}.py"
    return found


def test_every_module_has_tests_of_its_name_or_says_where_they_are():
    tests = {p.name for p in (ROOT / "tests").glob("test_*.py")}
    untested = [f"{name} (tests/{test})" for name, test in modules().items()
                if test not in tests and name not in TESTED_ELSEWHERE]
    assert not untested, f"modules without tests of their name: {untested}; add them, or a line to TESTED_ELSEWHERE"


def test_the_map_of_exceptions_is_current():
    tests = {p.name for p in (ROOT / "tests").glob("test_*.py")}
    found = modules()
    assert not [name for name in TESTED_ELSEWHERE if name not in found], "TESTED_ELSEWHERE names modules that are gone"
    assert not [name for name in TESTED_ELSEWHERE if found[name] in tests and name not in NAME_CLASHES], \
        "TESTED_ELSEWHERE lists modules that now have tests of their own name"
    missing = [f"{name}: {t}" for name, files in TESTED_ELSEWHERE.items() for t in files or [] if t not in tests]
    assert not missing, missing


def imports() -> dict[str, set[str]]:
    """Every module of cluster/ and kernels/ -> the modules of theirs it imports (at its top or in a
    function: a circle through a function-level import is a circle all the same)."""
    import ast

    found = modules()
    graph: dict[str, set[str]] = {}
    for name in found:
        path = ROOT / Path(*name.split("."))
        is_package = path.is_dir()
        source = (path / "__init__.py" if is_package else path.with_suffix(".py")).read_text()
        package = name.split(".") if is_package else name.split(".")[:-1]
        graph[name] = set()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = ".".join(package[:len(package) - node.level + 1] + [node.module or ""]).strip(".") \
                    if node.level else node.module
                # `from PACKAGE import module` imports that module (the package is the importer's own, or
                # already imported); any other name is taken from the module or package `base`
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in found else base for a in node.names]
            else:
                continue
            for target in targets:
                while target and target not in found:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    # The one import by name, and its edges: the strategy registry imports every module of its package
    # (kernels/strategies/__init__.py `discover`).
    graph["kernels.strategies"] |= {m for m in found if m.count(".") == 2 and m.startswith("kernels.strategies.")}
    return graph


def test_the_import_graph_has_no_circle_and_cluster_modules_stay_short():
    graph = imports()
    # (the graph is read)
    assert graph["cluster.loop.coordinator"] >= {"cluster.loop.pool", "cluster.loop.writer", "cluster.runs.lease"}
    circles = []
    for start in graph:  # a depth-first walk from every module back to itself
        stack = [(start, [start])]
        seen = set()
        while stack:
            name, path = stack.pop()
            for target in graph[name]:
                if target == start:
                    circles.append(path + [start])
                elif target not in seen:
                    seen.add(target)
                    stack.append((target, path + [target]))
    assert not circles, f"import circles: {circles[:3]}"
    long = {p.name: n for p in (ROOT / "cluster").rglob("*.py") if (n := len(p.read_text().splitlines())) > 420}
    assert not long, f"cluster modules over about 400 lines: {long}"
    # The run loop and the pool, split by what each part does, each part well under that.
    parts = ("loop/coordinator", "loop/course", "loop/recorder", "loop/runfiles", "loop/report", "cloud/health",
             "loop/pool", "cloud/actors", "loop/writer")
    long = {name: n for name in parts if (n := len((ROOT / "cluster" / f"{name}.py").read_text().splitlines())) >= 300}
    assert not long, f"parts of the run loop at 300 lines or more: {long}"


# cluster/'s parts, lowest first: each imports its own modules and those of the parts below it, never one above
# (docs/development.md, "Layout", draws them in this order).
LAYERS = ("runs", "cloud", "loop", "commands")


def test_the_clusters_parts_import_only_downwards():
    graph = imports()
    top = [m for m in graph if m.startswith("cluster.") and m.count(".") == 1 and m != "cluster.__main__"
           and m.split(".")[1] not in LAYERS]
    assert top == [], f"modules at cluster/'s top level, in no part: {top}"
    up = []
    for name, targets in graph.items():
        if not name.startswith("cluster.") or name == "cluster.__main__":
            continue
        part = LAYERS.index(name.split(".")[1])
        for target in targets:
            if target.startswith("cluster.") and target.count(".") >= 1 and target.split(".")[1] in LAYERS:
                if LAYERS.index(target.split(".")[1]) > part:
                    up.append(f"{name} -> {target}")
    assert up == [], f"imports up the cluster's parts: {up}"
    assert {p.name for p in (ROOT / "cluster").iterdir() if p.is_dir() and p.name != "__pycache__"} == set(LAYERS)


def test_no_module_is_imported_by_name_nor_bound_by_introspection():
    """An import by name (`import_module`) would hide an edge from the import graph above (a circle
    through it went unseen once): the strategy registry's discovery is the one, and the graph holds its
    edges (the own tables are a plain mapping, cluster/runs/owned.py); a strategy's parameters are typed values
    passed by name, never fitted to a signature; and kernels/ never reads the cluster's config (it plans
    from plain values)."""
    sources = {p: p.read_text() for folder in ("kernels", "cluster") for p in sorted((ROOT / folder).rglob("*.py"))}
    by_name = [p for p, text in sources.items() if "import_module" in text or "__import__(" in text]
    assert sorted(by_name) == [ROOT / "kernels" / "strategies" / "__init__.py"]
    assert not [str(p) for p, text in sources.items() if "inspect.signature" in text]
    assert not [f"{p}:{n}" for p, text in sources.items() if p.is_relative_to(ROOT / "kernels")
                for n, line in enumerate(text.splitlines(), 1) if re.search(r"\bconfig\.", line)]


def test_importing_ray_builds_no_grammar_parsers():
    """Every driver and Ray worker imports Ray, which imports jsonschema; jsonschema 4.24 and later then
    import rfc3987-syntax where it is installed (JupyterLab's dependencies bring it), which builds 39
    parsers at import: 1.5 s of every process start here (pyproject.toml's notebook extra keeps
    jsonschema below 4.24). Neither it nor its parser library may be loaded by `import ray`."""
    import sys
    done = subprocess.run([sys.executable, "-c", "import ray, sys; print(sorted(m for m in sys.modules "
                           "if m.split('.')[0] in ('rfc3987_syntax', 'lark')))"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_a_plain_install_holds_every_package_and_the_catalogue():
    """pyproject's package discovery finds every package of kernels/ and cluster/ (a plain `pip install .`,
    as the cloud image makes, otherwise lacks the engines, sweeps, strategies and commands) and ships the
    catalogue's data files."""
    import tomllib

    from setuptools import find_packages

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = set(find_packages(where=str(ROOT), include=config["packages"]["find"]["include"]))
    packages = {str(p.parent.relative_to(ROOT)).replace("/", ".") for top in ("kernels", "cluster")
                for p in (ROOT / top).rglob("__init__.py")}
    assert found == packages and "kernels.strategies.cycles" in found
    data = [path for pattern in config["package-data"]["kernels"] for path in (ROOT / "kernels").glob(pattern)]
    assert {p.name for p in data} == {"known_cycles.tsv", "exhaustive_searches.tsv"}


SIZE_RULES = {"C901", "PLR0915"}  # a function's cyclomatic complexity, its statements


def test_the_linter_holds_every_function_to_a_size_but_the_exceptions_it_names():
    """pyproject.toml's size rule: on, at thresholds the code meets (ruff says so), every exception named there with
    its reason written above it (the GPU kernel alone), none hidden in a `noqa` without a reason."""
    import sys
    import tomllib

    text = (ROOT / "pyproject.toml").read_text()
    lint = tomllib.loads(text)["tool"]["ruff"]["lint"]
    assert SIZE_RULES <= set(lint["select"]) and not SIZE_RULES & set(lint["ignore"])
    assert lint["mccabe"]["max-complexity"] <= 18 and lint["pylint"]["max-statements"] <= 70
    exceptions = {path for path, rules in lint["per-file-ignores"].items() if SIZE_RULES & set(rules)}
    assert exceptions == {"kernels/sweep/cuda.py"}
    lines = text.splitlines()
    for path in exceptions:
        at = next(i for i, line in enumerate(lines) if line.startswith(f'"{path}" ='))
        assert lines[at - 1].startswith("# ") and len(lines[at - 1]) > 40, f"pyproject.toml: why {path} is excepted"
    noqa = re.compile(r"#\s*noqa:[^#\n]*\b(C901|PLR0915)\b(?P<rest>.*)")
    bare = [f"{p.relative_to(ROOT)}:{n}" for p in tracked_text_files() if p.suffix == ".py" and p.exists()
            for n, line in enumerate(p.read_text().splitlines(), 1)
            if (m := noqa.search(line)) and not m.group("rest").strip(" ,()")]
    assert not bare, f"a size exception without its reason: {bare}"
    ruff = Path(sys.executable).parent / "ruff"
    if not ruff.exists():
        pytest.skip("ruff is not installed beside this Python (the test extra installs it)")
    done = subprocess.run([str(ruff), "check", "--select", ",".join(sorted(SIZE_RULES)), "--quiet", "."], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:]
