"""One place that decides how every kernel is compiled (so no kernel repeats decorator options).

- cache=True: compiled code is kept on disk (NUMBA_CACHE_DIR, set in kernels/__init__.py), so each
  process after the first loads kernels instead of compiling them;
- nogil=True: kernels can run in threads;
- boundscheck=False and error_model="numpy": no bounds checks and no Python exceptions for
  division in hot loops (every index in the kernels is kept in range by construction, and the
  tests run the kernels against the reference on many thousands of deals).
"""

from __future__ import annotations

from numba import njit

_OPTIONS = dict(cache=True, nogil=True, boundscheck=False, error_model="numpy")


def kernel(fn=None, *, parallel: bool = False, inline: str = "never"):
    """Decorate a kernel: `@kernel` or `@kernel(parallel=True)` or `@kernel(inline="always")`."""

    def wrap(f):
        return njit(parallel=parallel, inline=inline, **_OPTIONS)(f)

    return wrap if fn is None else wrap(fn)
