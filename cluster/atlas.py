"""The atlas table: one row per deck of an atlas run (kernels/strategies/atlas.py).

Built, like the other summary tables, from the shard files alone (the same whatever the workers,
the order shards finished in, or the failures on the way): a deck's counts from its shards'
summaries, its cycles from the games table (every deal that never ends is a row of it), its census
columns from the cycles its shards reported. Columns:

    deck, cards, plain, penalty_cards, density   the composition (density: penalty cards / cards)
    players, split                                 how its deals are dealt ("13/13")
    deals, finite, infinite                        its deals played, those that end, those that never do
    cycles                                         distinct cycles its deals enter
    periods                                        the cycles' periods ("tricks/cards"), shortest first,
                                                   with how many cycles have each ("10/70 x4")
    cycle_deals                                    how many of its deals enter each cycle, most first
                                                   ("30 x2, 15 x2": two cycles with 30, two with 15)
    longest_cards, longest_tricks, longest_deal    its longest finite game (the first met among equals)
    states, census_cycles                          censused decks: states played (every split) and the
                                                   distinct cycles among them (null: not censused)
    cpu_s, deals_per_s                             CPU time of its shards; deals per CPU-second
    shards, complete                               its shards done, and whether all of them are
"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.compute as pc

from kernels.decks import parse_deck
from kernels.strategies import REGISTRY
from kernels.strategies.atlas import AtlasShard

from .summary import ShardSummary

ATLAS = "atlas"  # the table's name, which the atlas strategy declares as its own (Strategy.own_table)

ATLAS_SCHEMA = pa.schema([
    ("deck", pa.string()),
    ("cards", pa.int64()),
    ("plain", pa.int64()),
    ("penalty_cards", pa.int64()),
    ("density", pa.float64()),
    ("players", pa.int64()),
    ("split", pa.string()),
    ("deals", pa.int64()),
    ("finite", pa.int64()),
    ("infinite", pa.int64()),
    ("cycles", pa.int64()),
    ("periods", pa.string()),
    ("cycle_deals", pa.string()),
    ("longest_cards", pa.int64()),
    ("longest_tricks", pa.int64()),
    ("longest_deal", pa.string()),
    ("states", pa.int64()),
    ("census_cycles", pa.int64()),
    ("cpu_s", pa.float64()),
    ("deals_per_s", pa.float64()),
    ("shards", pa.int64()),
    ("complete", pa.bool_()),
])


def atlas_table(summaries: dict[int, ShardSummary], games: pa.Table) -> pa.Table:
    """The atlas rows of a run's done atlas shards (an empty table for other runs), decks in the
    order of their first shard."""
    decks: dict[str, dict] = {}
    for shard, s in sorted(summaries.items()):
        if not s.done or getattr(REGISTRY.get(s.strategy), "own_table", None) != ATLAS:
            continue
        shard = AtlasShard.of(json.loads(s.params))
        row = decks.get(shard.deck)
        if row is None:
            deck = parse_deck(shard.deck)
            row = decks[shard.deck] = {
                "deck": shard.deck, "cards": deck.total, "plain": deck.counts[0],
                "penalty_cards": deck.penalty_cards, "density": round(deck.penalty_cards / deck.total, 6),
                "players": len(shard.split), "split": None, "deals": 0, "infinite": 0,
                "longest": None, "states": 0, "census": shard.basins, "census_cycles": set(),
                "cpu_s": 0.0, "deal_s": 0.0, "shards": 0, "planned": shard.deck_shards}
        row["shards"] += 1
        row["cpu_s"] += s.elapsed_s
        row["states"] += s.deals
        row["census_cycles"].update(r.cycle_id for r in s.cycle_rows or ())
        if shard.balanced:
            row["split"] = "/".join(map(str, shard.split))
            row["deals"] += s.deals
            row["infinite"] += s.cycles
            row["deal_s"] += s.elapsed_s
            if s.longest is not None and (row["longest"] is None or s.longest["cards"] > row["longest"]["cards"]):
                row["longest"] = s.longest
    per_cycle = _cycles_by_deck(games)
    rows = []
    for spec, row in decks.items():
        cycles = per_cycle.get(spec, [])
        longest = row["longest"] or {}
        rows.append({
            **{k: row[k] for k in ("deck", "cards", "plain", "penalty_cards", "density", "players", "split",
                                   "deals", "infinite", "shards")},
            "finite": row["deals"] - row["infinite"],
            "cycles": len(cycles),
            "periods": runs(f"{t}/{c}" for _, t, c, _ in sorted(cycles, key=lambda e: (e[1], e[2]))),
            "cycle_deals": runs(str(n) for *_, n in cycles),
            "longest_cards": longest.get("cards"), "longest_tricks": longest.get("tricks"),
            "longest_deal": longest.get("hands"),
            "states": row["states"] if row["census"] else None,
            "census_cycles": len(row["census_cycles"]) if row["census"] else None,
            "cpu_s": round(row["cpu_s"], 3),
            "deals_per_s": round(row["deals"] / row["deal_s"], 1) if row["deal_s"] > 0 else None,
            "complete": row["shards"] == row["planned"],
        })
    return pa.Table.from_pylist(rows, schema=ATLAS_SCHEMA)


def runs(values) -> str:
    """Values as text, equal neighbours counted: "10/70 x4, 16/72" for four cycles of period 10/70 then
    one of 16/72 (a deck may have hundreds of cycles)."""
    out: list[list] = []
    for value in values:
        if out and out[-1][0] == value:
            out[-1][1] += 1
        else:
            out.append([value, 1])
    return ", ".join(v if n == 1 else f"{v} x{n}" for v, n in out)


def _cycles_by_deck(games: pa.Table) -> dict[str, list[tuple[str, int, int, int]]]:
    """deck -> (cycle_id, period tricks, period cards, deals entering it), by deals (most first)."""
    if not games.num_rows:
        return {}
    rows = games.filter(pc.equal(games["outcome"], "cycle")).select(
        ["deck", "cycle_id", "period_tricks", "period_cards"]).to_pylist()
    counts: dict[tuple[str, str], list] = {}
    for r in rows:
        key = (r["deck"], r["cycle_id"])
        if key not in counts:
            counts[key] = [r["cycle_id"], r["period_tricks"], r["period_cards"], 0]
        counts[key][3] += 1
    out: dict[str, list] = {}
    for (deck, _), entry in counts.items():
        out.setdefault(deck, []).append(tuple(entry))
    for entries in out.values():
        entries.sort(key=lambda e: (-e[3], e[1], e[0]))
    return out
