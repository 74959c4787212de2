"""What users type: `bmn` (cli.py) and its subcommands, each module registering its own subparsers and handlers;
the queries (query.py) and `bmn status` (status.py) they print. The top of the cluster: imports the run loop,
Ray's parts and the run's files, none of which imports it."""

from . import backward, bench, catalogue, deals, genes, results, search

REGISTRY = [deals.register, backward.register, search.register, results.register, genes.register,
            catalogue.register, bench.register]
