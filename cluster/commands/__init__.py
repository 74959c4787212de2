"""Subcommands of `bmn`; each module registers its own subparsers and handlers."""

from . import bench, deals

REGISTRY = [deals.register, bench.register]
