"""Which strategies keep a table of their own, and the table (cluster/runs/owntable.py): the one hook, a plain mapping
from the name a strategy's `own_table` gives to its `OwnTable`, each table imported here by name."""

from __future__ import annotations

from kernels.strategies import REGISTRY, Strategy

from .atlas import TABLE as ATLAS
from .genes import TABLE as GENES
from .owntable import OwnTable

OWN_TABLES: dict[str, OwnTable] = {ATLAS.name: ATLAS, GENES.name: GENES}


def own_table(strategy: Strategy) -> OwnTable | None:
    """The strategy's own table (None: it keeps none): OWN_TABLES's entry of the name its own_table gives."""
    if strategy.own_table is None:
        return None
    if strategy.own_table not in OWN_TABLES:
        raise TypeError(f"the {strategy.name} strategy keeps a table {strategy.own_table!r} that "
                        f"cluster/runs/owned.py's OWN_TABLES does not hold")
    return OWN_TABLES[strategy.own_table]


def own_tables() -> dict[str, OwnTable]:
    """Every strategy's own table, by name (the views a query over any runs has)."""
    return {t.name: t for s in REGISTRY.values() if (t := own_table(s)) is not None}
