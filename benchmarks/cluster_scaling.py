"""Ray overhead and scaling of `bmn search` on this machine.

1. The kernel alone: the same random shards played in this process, one after another, on one
   core (the `random` strategy's kernel, exactly what an actor runs).
2. `bmn search` with 1 worker, then 2 workers, on a local Ray: deals per second from the first
   shard handed out to the last one collected (Ray start-up and kernel warm-up excluded; they
   are printed separately).

    .venv/bin/python benchmarks/cluster_scaling.py [DEALS] [SHARD_SIZE]
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time

import ray

from cluster.cloud.worker import play_shard
from cluster.loop.coordinator import run_search
from cluster.runs.config import build_config, resolve
from cluster.runs.plan import Plan


def main() -> None:
    deals = int(sys.argv[1]) if len(sys.argv) > 1 else 40_000_000
    shard_size = int(sys.argv[2]) if len(sys.argv) > 2 else 2_000_000
    values = dict(strategy="random", deals=deals, shard_size=shard_size, seed=99, min_cards=3000, progress=False)
    config = resolve(build_config(dict(values, out="unused")))
    plan = Plan(config)
    play_shard(config.deck, plan.space.split, plan.shard(0))  # warm the kernel in this process
    t0 = time.perf_counter()
    for k in range(plan.count):
        play_shard(config.deck, plan.space.split, plan.shard(k))
    kernel_rate = deals / (time.perf_counter() - t0)
    print(f"kernel alone, 1 core:  {kernel_rate:,.0f} deals/s", flush=True)
    rows = {"deals": deals, "shard_size": shard_size, "kernel_deals_per_s": round(kernel_rate)}
    for workers in (1, 2):
        out = tempfile.mkdtemp(prefix="bmn-bench-")
        try:
            t0 = time.perf_counter()
            ray.init(num_cpus=workers, include_dashboard=False, logging_level="ERROR")
            started = time.perf_counter() - t0
            report = run_search(resolve(build_config(dict(values, out=out, workers=workers))))
            ray.shutdown()
        finally:
            shutil.rmtree(out, ignore_errors=True)
        rate = report.session_deals / report.work_s
        rows[f"search_{workers}_deals_per_s"] = round(rate)
        print(f"bmn search, {workers} worker{'s' if workers > 1 else ' '}: {rate:,.0f} deals/s "
              f"({report.work_s:.1f} s of work; Ray start {started:.1f} s, whole run {report.elapsed_s:.1f} s)",
              flush=True)
    overhead = 1 - rows["search_1_deals_per_s"] / kernel_rate
    scaling = rows["search_2_deals_per_s"] / rows["search_1_deals_per_s"]
    rows.update(ray_overhead=round(overhead, 4), scaling_2_vs_1=round(scaling, 3))
    print(f"Ray overhead (1 worker vs kernel alone): {100 * overhead:.1f}%")
    print(f"scaling (2 workers vs 1): {scaling:.2f}x")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
