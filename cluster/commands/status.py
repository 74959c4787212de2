"""`bmn status RUN`: where a running or finished run stands, read from its files alone."""

from __future__ import annotations

import json
import time
from collections import Counter

from ..runs import known
from ..runs.config import from_json
from ..runs.figures import game_json
from ..runs.lease import live_holder
from ..runs.plan import Plan
from ..runs.runmeta import existing_run, read_progress, run_json
from ..runs.tables import Ownership, read_summaries
from ..runs.totals import RunTotals


def run_status_dict(uri: str) -> dict:
    store = existing_run(uri)
    config = from_json(run_json(store)["config"])
    plan = Plan(config)
    damaged: dict[str, str] = {}
    foreign: dict[str, str] = {}
    summaries = read_summaries(store, damaged, Ownership(plan, config.fingerprint()), foreign)
    totals = RunTotals.of(summaries)
    audited = Counter(s.audit for s in summaries.values() if s.audit)
    progress = read_progress(store)
    lock = live_holder(store)
    running = lock is not None
    state = "running" if running else progress.get("state", "not started")
    if not running and state == "running":
        state = "stopped (the job died; resume it)"
    elapsed = progress.get("elapsed_s") or 0.0
    session_deals = progress.get("session_deals", 0)
    new_shards = progress.get("new_shards", 0)
    rate = session_deals / elapsed if elapsed else None
    pending = plan.count - totals.done - totals.failed
    eta = pending * elapsed / new_shards if new_shards and running else None
    labels = known.labels_of(totals.cycle_ids, None)
    return {
        "run": uri, "strategy": config.strategy, "deck": config.deck, "split": list(plan.space.split),
        "searches": plan.describe(),
        "state": state, "updated_at": progress.get("updated_at"),
        "owner": lock.describe() if running else None,
        "shards_total": plan.count, "shards_done": totals.done, "shards_failed": totals.failed,
        "shards_pending": pending, "deals": totals.counts.deals, "cards": totals.counts.cards,
        "deals_per_s": None if rate is None else round(rate, 1), "eta_s": None if eta is None else round(eta, 1),
        "longest": game_json(totals.best) if totals.best and plan.strategy.finite_games else None,
        "cycles": len(totals.cycle_ids),
        "cycles_known": {label: labels.count(label) for label in sorted({x for x in labels if x is not None})},
        "cycles_new": labels.count(None), "unit": plan.strategy.unit, "damaged": damaged, "foreign": foreign,
        "audited": audited.get("matched", 0) + audited.get("mismatch", 0), "mismatches": audited.get("mismatch", 0),
    }


def run_status(uri: str, as_json: bool = False) -> int:
    st = run_status_dict(uri)
    if as_json:
        print(json.dumps(st))
        return 0
    print(f"run       {st['run']}  ({st['strategy']}, {st['searches']})")
    state = st["state"]
    if st["owner"]:
        ago = time.time() - (st["updated_at"] or time.time())
        state += f" ({st['owner']}, updated {ago:.0f} s ago)"
    print(f"state     {state}")
    print(f"shards    {st['shards_done']:,} done, {st['shards_failed']:,} failed, {st['shards_pending']:,} pending"
          f" of {st['shards_total']:,}")
    unit = st["unit"]
    rate = f", {st['deals_per_s']:,.0f} {unit}/s" if st["deals_per_s"] else ""
    print(f"{unit:<9} {st['deals']:,} played{rate}")
    if st["eta_s"] is not None:
        print(f"ETA       {st['eta_s']:,.0f} s")
    if st["longest"]:
        g = st["longest"]
        print(f"longest   {g['cards']} cards, {g['tricks']} tricks: {g['hands']}")
    labels = [label for label, n in st["cycles_known"].items() for _ in range(n)] + [None] * st["cycles_new"]
    print(f"cycles    {st['cycles']} distinct" + (f": {known.summary(labels)}" if st["cycles"] else ""))
    if st["audited"]:
        print(f"audited   {st['audited']:,} GPU shards played again on CPUs: {st['mismatches']:,} mismatch"
              + ("es" if st["mismatches"] != 1 else "") + (" (see the search's error; their CPU results are "
                                                           "written)" if st["mismatches"] else ""))
    for rel, why in st["foreign"].items():
        print(f"foreign   {rel}: not this run's ({why}); its shards are not counted (`bmn resume {st['run']}` "
              f"moves it to foreign/)")
    for rel, why in st["damaged"].items():
        print(f"damaged   {rel}: {why} (its shards count as pending; `bmn resume {st['run']}` moves the file "
              f"to damaged/ and recomputes them)")
    return 0
