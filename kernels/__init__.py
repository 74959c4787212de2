"""Beggar-my-neighbour kernels: the game, the deal space, search strategies, backward play.

Pure functions over NumPy arrays; nothing here knows about Ray, Parquet or the command line.
"""

import os as _os
import tempfile as _tempfile


def _numba_cache_dir() -> str:
    base = _os.environ.get("XDG_CACHE_HOME") or _os.path.join(_os.path.expanduser("~"), ".cache")
    for candidate in (_os.path.join(base, "bmn", "numba"), _os.path.join(_tempfile.gettempdir(), "bmn-numba")):
        try:
            _os.makedirs(candidate, exist_ok=True)
            if _os.access(candidate, _os.W_OK):
                return candidate
        except OSError:
            continue
    return _tempfile.mkdtemp(prefix="bmn-numba-")


# Numba keeps compiled kernels on disk; give it a writable place that every process (and every
# Ray worker started from this environment) shares, unless the user chose one. This must happen
# before numba is first imported.
if "NUMBA_CACHE_DIR" not in _os.environ:
    _os.environ["NUMBA_CACHE_DIR"] = _numba_cache_dir()
