"""Which strategies keep a table of their own, and the table (cluster/owntable.py): the one hook, the
cluster module that a strategy's `own_table` names, found by that name (the import graph in
tests/test_repository.py holds these edges).
"""

from __future__ import annotations

import importlib

from kernels.strategies import REGISTRY, Strategy

from .owntable import OwnTable


def own_table(strategy: Strategy) -> OwnTable | None:
    """The strategy's own table (None: it keeps none): the TABLE of the cluster module its own_table names."""
    if strategy.own_table is None:
        return None
    table = importlib.import_module(f"{__package__}.{strategy.own_table}").TABLE
    if not isinstance(table, OwnTable) or table.name != strategy.own_table:
        raise TypeError(f"cluster.{strategy.own_table}.TABLE must be an OwnTable named {strategy.own_table!r}")
    return table


def own_tables() -> dict[str, OwnTable]:
    """Every strategy's own table, by name (the views a query over any runs has)."""
    return {t.name: t for s in REGISTRY.values() if (t := own_table(s)) is not None}
