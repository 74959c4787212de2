"""The longest game against CPU time for finished runs, as CSV (benchmarks/longest_growth.csv).

    .venv/bin/python benchmarks/longest_growth.py RUN [RUN ...] > benchmarks/longest_growth.csv

For each run: its shards in the order they finished, the CPU time of the shards done so far (the
sum of their times) and the longest game found by then, with the run's strategy and seed. The
notebook (notebooks/explore.ipynb) plots it.
"""

from __future__ import annotations

import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from cluster.commands.query import query  # noqa: E402
from cluster.runs.runmeta import read_run_config  # noqa: E402


def main() -> None:
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["strategy", "seed", "cpu_s", "longest"])
    for run in sys.argv[1:]:
        config = read_run_config(run)
        growth = query([run], """
            SELECT SUM(elapsed_s) OVER (ORDER BY finished_at, shard) AS cpu_s,
                   MAX(max_cards) OVER (ORDER BY finished_at, shard) AS longest
            FROM shards WHERE status = 'done' ORDER BY finished_at, shard
        """).to_pylist()
        for row in growth:
            out.writerow([config.strategy, config.seed, round(row["cpu_s"], 1), row["longest"]])


if __name__ == "__main__":
    main()
