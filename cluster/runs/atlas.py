"""The atlas table: rows per deck of an atlas run (kernels/strategies/atlas.py).

Built, like the other summary tables, from the shard files alone (the same whatever the workers,
the order shards finished in, or the failures on the way): a row's counts from its shards'
summaries, a deal row's cycles from its shards' games (every deal that never ends is a row of them,
counted as drawn), a state row's from the cycles its shards reported. A deck has up to four rows, by
`method` and `unit`:

    exact deal     every deal of the deck (its balanced split) played
    exact state    censused decks: every trick-boundary state of every split played
    sampled deal   random balanced deals, the first `played` of the deck's deal stream
    sampled state  random states (each with both hands holding cards equally likely)

Columns:

    deck, cards, plain, penalty_cards, density   the composition (density: penalty cards / cards)
    players, split                                 how its deals are dealt ("13/13")
    method, unit                                   "exact" or "sampled"; "deal" or "state"
    played, cycling                                games played, and those that never end
    rate, rate_lo, rate_hi                         cycling / played, and its 95% interval (exact binomial,
                                                   Clopper-Pearson; an exact row's is the rate itself)
    deals, finite, infinite                        deal rows: deals played, those that end, those that never do
    cycles                                         distinct cycles its games enter
    periods                                        the cycles' periods ("tricks/cards"), shortest first,
                                                   with how many cycles have each ("10/70 x4")
    cycle_deals                                    how many of its games enter each cycle, most first
                                                   ("30 x2, 15 x2": two cycles with 30, two with 15; a
                                                   sampled state row of a censused deck: null)
    longest_cards, longest_tricks, longest_deal    deal rows: its longest finite game (the first met among equals)
    states, census_cycles                          exact deal rows of censused decks: states played (every
                                                   split) and the distinct cycles among them (else null)
    cpu_s, deals_per_s                             CPU time of its shards (an exact state row shares its
                                                   deal row's shards: null); games per CPU-second
    shards, complete                               its shards done, and whether all of them are
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from kernels.decks import parse_deck
from kernels.strategies import REGISTRY
from kernels.strategies.atlas import AtlasShard

from .binomial import clopper_pearson
from .owntable import OwnTable
from .summary import ShardSummary

ATLAS = "atlas"  # the table's name, which the atlas strategy declares as its own (Strategy.own_table)
CONFIDENCE = 0.95  # of a sampled row's interval on its rate

ATLAS_SCHEMA = pa.schema([
    ("deck", pa.string()),
    ("cards", pa.int64()),
    ("plain", pa.int64()),
    ("penalty_cards", pa.int64()),
    ("density", pa.float64()),
    ("players", pa.int64()),
    ("split", pa.string()),
    ("method", pa.string()),
    ("unit", pa.string()),
    ("played", pa.int64()),
    ("cycling", pa.int64()),
    ("rate", pa.float64()),
    ("rate_lo", pa.float64()),
    ("rate_hi", pa.float64()),
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

# A deck's rows in the order they are listed: (method, unit).
ROWS = (("exact", "deal"), ("exact", "state"), ("sampled", "deal"), ("sampled", "state"))


def rate_interval(cycling: int, played: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The exact binomial (Clopper-Pearson) interval on the rate of a sample: `cycling` of `played`."""
    return clopper_pearson(int(cycling), int(played), confidence)


def atlas_table(summaries: dict[int, ShardSummary], games: pa.Table) -> pa.Table:
    """The atlas rows of a run's done atlas shards (an empty table for other runs): decks in the order
    of their first shard, each deck's rows in the order of ROWS."""
    decks: dict[str, dict] = {}  # deck -> its composition's columns
    rows: dict[tuple[str, str, str], dict] = {}  # (deck, method, unit) -> what its shards add up to
    row_of_shard: dict[int, tuple[str, str, str]] = {}
    for k, s in sorted(summaries.items()):
        if not s.done or getattr(REGISTRY.get(s.strategy), "own_table", None) != ATLAS:
            continue
        shard, figures = s.params, s.figures
        if not isinstance(shard, AtlasShard):
            continue  # parameters this bmn does not read (kernels/strategies/codec.py): never a run's own shard
        if shard.deck not in decks:
            deck = parse_deck(shard.deck)
            decks[shard.deck] = {
                "deck": shard.deck, "cards": deck.total, "plain": deck.counts[0],
                "penalty_cards": deck.penalty_cards, "density": round(deck.penalty_cards / deck.total, 6),
                "players": len(shard.split)}
        method = "sampled" if shard.sample else "exact"
        unit = "state" if shard.sample == "states" else "deal"
        key = row_of_shard[k] = (shard.deck, method, unit)
        row = rows.setdefault(key, _new_row(shard))
        row["shards"] += 1
        row["cpu_s"] += figures.elapsed_s
        if shard.balanced or shard.sample:  # the games of the row itself (an exact deck's: its own split)
            row["split"] = "/".join(map(str, shard.split))
            row["played"] += figures.counts.deals
            row["cycling"] += figures.counts.cycles
            row["play_s"] += figures.elapsed_s
            if figures.longest is not None and (row["longest"] is None or
                                                figures.longest.result.cards > row["longest"].result.cards):
                row["longest"] = figures.longest
        if unit == "state":
            _report(row, figures.cycle_rows)
        if method == "exact" and shard.basins:  # a census: every state of every split, an exact state row
            states = rows.setdefault((shard.deck, "exact", "state"), _new_row(shard))
            states["shards"] += 1
            states["played"] += figures.counts.deals
            states["cycling"] += figures.counts.cycles
            _report(states, figures.cycle_rows)
    per_cycle = _cycles_by_row(games, row_of_shard)
    order = {spec: i for i, spec in enumerate(decks)}
    out = []
    for key in sorted(rows, key=lambda key: (order[key[0]], ROWS.index(key[1:]))):
        row = rows[key]
        spec, method, unit = key
        if unit == "deal":
            cycles = per_cycle.get(key, [])
        else:
            cycles = sorted(([cid, t, c, n] for cid, (t, c, n) in row["reported"].items()),
                            key=lambda e: (-e[3], e[1], e[2], e[0]))
        lo, hi = (rate_interval(row["cycling"], row["played"]) if method == "sampled" else
                  (row["cycling"] / row["played"],) * 2 if row["played"] else (None, None))
        longest = row["longest"]
        deals = unit == "deal"
        census = deals and method == "exact" and row["census"]
        out.append({
            **decks[spec], "split": row["split"] or rows[(spec, "exact", "deal")]["split"], "method": method,
            "unit": unit,
            "played": row["played"], "cycling": row["cycling"],
            "rate": row["cycling"] / row["played"] if row["played"] else None, "rate_lo": lo, "rate_hi": hi,
            "deals": row["played"] if deals else None, "finite": row["played"] - row["cycling"] if deals else None,
            "infinite": row["cycling"] if deals else None,
            "cycles": len(cycles),
            "periods": runs(f"{t}/{c}" for _, t, c, _ in sorted(cycles, key=lambda e: (e[1], e[2]))),
            "cycle_deals": runs(str(n) for *_, n in cycles) if row["basins"] or deals else None,
            "longest_cards": longest and longest.result.cards, "longest_tricks": longest and longest.result.tricks,
            "longest_deal": longest and longest.hands,
            "states": rows[(spec, "exact", "state")]["played"] if census else None,
            "census_cycles": len(rows[(spec, "exact", "state")]["reported"]) if census else None,
            "cpu_s": None if (method, unit) == ("exact", "state") else round(row["cpu_s"], 3),
            "deals_per_s": round(row["played"] / row["play_s"], 1) if row["play_s"] > 0 else None,
            "shards": row["shards"], "complete": row["shards"] == row["planned"],
        })
    return pa.Table.from_pylist(out, schema=ATLAS_SCHEMA)


def _report(row: dict, cycle_rows) -> None:
    """A state row's cycles as its shards reported them, each with the states that entered it (its
    basin; a row with a cycle reported without one counts none)."""
    for r in cycle_rows or ():
        entry = row["reported"].setdefault(r.cycle_id, [r.period_tricks, r.period_cards, 0])
        if r.basin is None:
            row["basins"] = False
        else:
            entry[2] += r.basin


def _new_row(shard: AtlasShard) -> dict:
    return {"split": None, "played": 0, "cycling": 0, "longest": None, "census": shard.basins and not shard.sample,
            "reported": {}, "basins": True, "cpu_s": 0.0, "play_s": 0.0, "shards": 0, "planned": shard.deck_shards}


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


def _cycles_by_row(games: pa.Table, row_of_shard: dict[int, tuple]) -> dict[tuple, list[tuple[str, int, int, int]]]:
    """row -> (cycle_id, period tricks, period cards, deals entering it), by deals (most first): the
    deals that never end of the deal rows' shards (a sampled state row's balanced deals are not its
    games)."""
    if not games.num_rows:
        return {}
    rows = games.filter(pc.equal(games["outcome"], "cycle")).select(
        ["shard", "cycle_id", "period_tricks", "period_cards"]).to_pylist()
    counts: dict[tuple, list] = {}
    for r in rows:
        key = row_of_shard.get(r["shard"])
        if key is None or key[2] != "deal":
            continue
        entry = counts.setdefault((key, r["cycle_id"]), [r["cycle_id"], r["period_tricks"], r["period_cards"], 0])
        entry[3] += 1
    out: dict[tuple, list] = {}
    for (key, _), entry in counts.items():
        out.setdefault(key, []).append(tuple(entry))
    for entries in out.values():
        entries.sort(key=lambda e: (-e[3], e[1], e[0]))
    return out


TABLE = OwnTable(
    name=ATLAS, schema=ATLAS_SCHEMA, build=atlas_table,
    key=("deck", "split", "method", "unit"),  # (a deck dealt to 2 or 3 players is two rows)
    timings=("cpu_s", "deals_per_s"),
    order="players, penalty_cards, cards, deck, method, unit",  # smallest deck first
    columns=("deck", "cards", "split", "method", "unit", "played", "cycling", "rate_lo", "rate_hi", "cycles",
             "periods", "cycle_deals", "longest_cards", "cpu_s", "complete"),
    help="the atlas of atlas runs: one row per deck",
    description="One row per deck of atlas runs (configs/atlas.toml): its deals, those that never end, its "
                "distinct cycles with their periods (tricks/cards) and deals, its longest game, its census "
                "(states, cycles) where one was asked, its CPU time. Every column is in the `atlas` view of "
                "bmn query.",
)
