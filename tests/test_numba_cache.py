"""Numba's on-disk cache is kept per version of the kernel sources (kernels/__init__.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

KERNELS = Path(__file__).resolve().parents[1] / "kernels"


def cache_dir_of(package_parent: Path, home: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(XDG_CACHE_HOME=str(home), PYTHONPATH=str(package_parent))
    code = "import os, kernels; print(os.environ['NUMBA_CACHE_DIR'])"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                         cwd=package_parent)
    return out.stdout.strip()


def test_editing_any_kernel_source_selects_a_fresh_cache(tmp_path):
    copy = tmp_path / "src"
    shutil.copytree(KERNELS, copy / "kernels", ignore=shutil.ignore_patterns("__pycache__"))
    first = cache_dir_of(copy, tmp_path / "home")
    assert first.startswith(str(tmp_path / "home" / "bmn" / "numba")) and os.path.isdir(first)
    assert cache_dir_of(copy, tmp_path / "home") == first
    edited = copy / "kernels" / "engines" / "__init__.py"
    edited.write_text(edited.read_text() + "\n# an edit in a module other kernels inline\n")
    assert cache_dir_of(copy, tmp_path / "home") != first


def test_a_chosen_cache_dir_is_respected(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", "import os, kernels; print(os.environ['NUMBA_CACHE_DIR'])"],
                         env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(tmp_path)


def test_the_versioned_cache_is_used_even_if_numba_was_imported_first(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    code = "import numba; from numba.core import config; import kernels; print(config.CACHE_DIR)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip().startswith(str(tmp_path / "bmn" / "numba"))
