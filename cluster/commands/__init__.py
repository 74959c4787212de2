"""Subcommands of `bmn`; each module registers its own subparsers and handlers."""

from . import backward, bench, deals

REGISTRY = [deals.register, backward.register, bench.register]
