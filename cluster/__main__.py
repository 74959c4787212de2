"""`python -m cluster ...` is `bmn ...` (handy under `ray job submit` without installing bmn)."""

from .cli import console

console()
