"""`python -m cluster ...` is `bmn ...` (handy under `ray job submit` without installing bmn)."""

from .commands.cli import console

console()
