"""Beggar-my-neighbour kernels: the game, the deal space, search strategies, backward play.

Pure functions over NumPy arrays; nothing here knows about Ray, Parquet or the command line.
"""

import hashlib as _hashlib
import os as _os
import tempfile as _tempfile

# The version of what the kernels compute: bump it with every change that makes any shard of any
# strategy give different results (the random stream, an engine's counts, a strategy's logic).
# A run records it, and resuming a run with kernels of another version is refused: its shards would
# mix two different computations. tests/test_results_version.py pins the results of a small search
# of every strategy, so a change to them fails until this number (and the pins) are updated.
RESULTS_VERSION = 1


def _source_digest() -> str:
    """A digest of every kernel source file. Numba checks a cached kernel only against its own
    file, not the files of the kernels it calls or inlines, so a cache made by other code could be
    loaded silently; keeping one cache directory per version of the sources rules that out."""
    digest = _hashlib.sha256()
    here = _os.path.dirname(_os.path.abspath(__file__))
    for folder, _dirs, files in sorted(_os.walk(here)):
        for name in sorted(files):
            if name.endswith(".py"):
                with open(_os.path.join(folder, name), "rb") as handle:
                    digest.update(name.encode() + b"\0" + handle.read())
    return digest.hexdigest()[:16]


def _numba_cache_dir() -> str:
    base = _os.environ.get("XDG_CACHE_HOME") or _os.path.join(_os.path.expanduser("~"), ".cache")
    version = _source_digest()
    for candidate in (_os.path.join(base, "bmn", "numba", version),
                      _os.path.join(_tempfile.gettempdir(), "bmn-numba", version)):
        try:
            _os.makedirs(candidate, exist_ok=True)
            if _os.access(candidate, _os.W_OK):
                return candidate
        except OSError:
            continue
    return _tempfile.mkdtemp(prefix="bmn-numba-")


# Numba keeps compiled kernels on disk; give it a writable place, one per version of the kernel
# sources, that every process (and every Ray worker started from this environment) shares, unless
# the user chose one. This must happen before numba is first imported.
if "NUMBA_CACHE_DIR" not in _os.environ:
    _os.environ["NUMBA_CACHE_DIR"] = _numba_cache_dir()
    import sys as _sys

    if "numba" in _sys.modules:  # numba was imported first and has read its settings already
        from numba.core import config as _numba_settings

        _numba_settings.CACHE_DIR = _os.environ["NUMBA_CACHE_DIR"]
