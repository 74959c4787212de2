"""`bmn bench`: engine throughput on one core, the production kernel beside the per-card baseline; or on
the GPU (`--device gpu`)."""

from __future__ import annotations

import argparse
import json

from kernels.bench import bench_engine, bench_gpu
from kernels.errors import BmnError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help="measure engine throughput on one core, or on the GPU",
        description="Play uniformly random standard 26/26 deals on one core with full rules and "
        "exact cycle detection (deal generation included, compilation excluded). Reports the "
        "production kernel and, beside it, the straightforward per-card kernel; with --device gpu, "
        "the GPU sweep on this machine's GPU, and the GPU's name.",
    )
    p.add_argument("--device", choices=("cpu", "gpu"), default="cpu", help="cpu (default: one core) or gpu")
    p.add_argument("--seconds", type=float, default=3.0, help="time per kernel (default 3)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--no-baseline", action="store_true", help="measure only the production kernel")
    p.set_defaults(handler=cmd_bench)


def cmd_bench(args) -> int:
    if not args.seconds > 0:
        raise BmnError("--seconds must be positive")
    if args.device == "gpu":
        return _gpu(args)
    fast = bench_engine("fast", args.seconds)
    base = None if args.no_baseline else bench_engine("percard", args.seconds)
    report = dict(fast)
    report["deals"] = "uniform random, standard deck, 26/26"
    if base:
        report["baseline"] = base
        report["speedup_vs_baseline"] = round(fast["games_per_s"] / base["games_per_s"], 3)
    if args.json:
        print(json.dumps(report))
        return 0
    print("uniformly random standard 26/26 deals, one core, full rules and cycle detection")
    print(f"{'kernel':<22}{'games/s':>12}{'cards/s':>15}{'mean cards':>12}{'ns/card':>9}")
    rows = [("fast (production)", fast)] + ([("per-card (baseline)", base)] if base else [])
    for name, r in rows:
        print(f"{name:<22}{r['games_per_s']:>12,.0f}{r['cards_per_s']:>15,.0f}{r['mean_cards']:>12.1f}{r['ns_per_card']:>9.2f}")
    if base:
        print(f"speed-up of the production kernel over the baseline: {report['speedup_vs_baseline']:.2f}x")
    return 0


def _gpu(args) -> int:
    report = bench_gpu(args.seconds)
    report["deals"] = "uniform random, standard deck, 26/26"
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"uniformly random standard 26/26 deals on {report['device']}, full rules and cycle detection")
    print(f"{'games/s':>14}{'cards/s':>17}{'mean cards':>12}{'ns/card':>10}{'games':>16}")
    print(f"{report['games_per_s']:>14,.0f}{report['cards_per_s']:>17,.0f}{report['mean_cards']:>12.1f}"
          f"{report['ns_per_card']:>10.3f}{report['games']:>16,}")
    return 0
