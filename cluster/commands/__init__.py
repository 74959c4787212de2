"""Subcommands of `bmn`; each module registers its own subparsers and handlers."""

from . import backward, bench, catalogue, deals, results, search

REGISTRY = [deals.register, backward.register, search.register, results.register, catalogue.register,
            bench.register]
