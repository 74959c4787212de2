"""The repository stands alone: nothing in it points outside it, and its documents' links resolve."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

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


def test_relative_links_in_documents_resolve():
    link = re.compile(r"\]\((?!https?:|#|mailto:)([^)#\s]+)")
    missing = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "benchmarks" / "README.md"]:
        for target in link.findall(doc.read_text()):
            if not (doc.parent / target).exists():
                missing.append(f"{doc.relative_to(ROOT)} -> {target}")
    assert not missing, missing
