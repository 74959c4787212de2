"""`atlas`: a family of small decks searched exactly, as one run with one table row per deck.

The family: the run's `deck` names its penalty cards (`deck = "1:2,2:2,3:2,4:2"`: two each of J Q K
A) and `[atlas] plain = "16:20"` the plain-card counts, each count one deck (here 16, 18 and 20
plain cards: decks of 24, 26 and 28 cards, Paulhus's). With `split = "equal"` (the default) a count
whose deck cannot be dealt in equal hands is left out of the family (for two players and an even
number of penalty cards: the odd counts); `split = "near"` keeps every count and deals hands that
differ by at most one card, the earlier hands the larger.

For each deck, every deal of its split is played (the sweep kernel of `exhaustive`): its finite
games tallied, its longest game kept, every deal that never ends kept with its cycle. With
`census = true`, a deck with at most `census_max_states` trick-boundary states is also censused:
every state of every split played (the `census` strategy's shard), so each cycle gets its basin.
Shard k = a rank range of one split of one deck, decks in the family's order.

Sampled rows: a deck with more than `exact_max_deals` deals is sampled instead (with `sample_all`,
every deck is sampled as well as played exactly, to check the sampling against exact rows). Its
`samples` are random balanced deals (the `random` strategy's stream, dealt in the deck's split)
and random trick-boundary states (the `states` strategy's stream: every state with both hands
holding cards equally likely, each cycle met with its backward closure). The sample of one row is
the first `sample_size` games of one stream, (seed, 2 x plain + 0 for deals / 1 for states): a row
sampled with a larger size holds the smaller one's games, and no row depends on the workers. With
`sample_size = 0` the size is drawn from the budget: the CPU-hours that the exact decks leave of
`cpu_hours`, shared equally among the sampled rows at the sizing rate (so `cpu_hours` and `rate`
are then part of what the run computes).

Before anything runs the work is sized: the deals and states to play, at `rate` deals per
CPU-second (by default SIZING_RATES, by engine; set it from benchmarks/atlas_speed.py on the machines
that will run it), must fit in `cpu_hours`; a family that does not is refused with a sentence naming
its largest deck.
`bmn atlas RUN` prints the table (cluster/runs/atlas.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

from ..dealspace import DealSpace, _multinomial
from ..decks import Deck, check_deck, parse_deck
from ..engines import pick_engine
from ..errors import BmnError
from ..notation import MAX_CARDS
from ..sweep import run_random
from ..tally import ShardResult
from .base import Example, Search, Shard, ShardParams, ShardPlan, Strategy, Table, bounds, key, shards_of, unsaid
from .census import play_states, splits_of
from .exhaustive import MAX_STORED_RANK
from .states import run_states

SPLITS = ("equal", "near")
SAMPLES = ("deals", "states")  # what a sampled row plays: random balanced deals, random states
MIN_SAMPLE = 10_000  # games a sampled row plays at least (fewer: the family is too large for its budget)


def parse_plain(text: str, where: str = "config") -> tuple[int, int]:
    """`A:B` (or one count `A`) as the first and last plain-card count."""
    first, sep, last = str(text).partition(":")
    try:
        lo = int(first.replace("_", ""))
        hi = int(last.replace("_", "")) if sep else lo
    except ValueError:
        raise BmnError(f"{where}: atlas.plain must be A:B, plain-card counts from A to B (such as \"16:20\"), "
                       f"got {text!r}") from None
    if lo < 0 or lo > hi:
        raise BmnError(f"{where}: atlas.plain must be A:B with 0 <= A <= B, got {text!r}")
    return lo, hi


@dataclass(frozen=True)
class AtlasDeck:
    """One deck of the family: its composition, the split its deals are dealt in, whether it is
    censused, and how many deals (distinct orders of its cards) it has."""

    spec: str
    plain: int
    split: tuple[int, ...]
    census: bool
    deals: int
    exact: bool = True  # every deal played (else only sampled)
    sampled: bool = False  # sampled rows too

    @property
    def cards(self) -> int:
        return sum(self.split)

    def splits(self, players: int) -> list[tuple[int, ...]]:
        """The splits played exactly: every split with a card in each hand for a census, else the
        deck's own; none for a deck only sampled."""
        if not self.exact:
            return []
        return splits_of(self.cards, players) if self.census else [self.split]

    def states(self, players: int) -> int:
        """Games to play exactly: deals of every split played (each split has `deals` of them)."""
        return self.deals * len(self.splits(players))

    def stream(self, sample: str) -> int:
        """The random stream (with the run's seed) a sampled row of this deck draws from."""
        return 2 * self.plain + SAMPLES.index(sample)


def _near(total: int, players: int) -> tuple[int, ...]:
    base, extra = divmod(total, players)
    return tuple(base + (1 if i < extra else 0) for i in range(players))


# Deals per CPU-second the work is sized with when `rate` is not given, by the engine that plays the
# deck: below the slowest deck of each kind measured here (benchmarks/README.md, "The atlas": 2.1 M to
# 14 M deals/s for two players, 0.2 M for three). An assumption for sizing, not a measurement.
SIZING_RATES = {"fast": ("for two-player decks the fast engine holds", 2_000_000),
                "other": ("for other decks", 100_000)}


@dataclass(frozen=True, kw_only=True)
class AtlasTable(Table):
    plain: str = key("", "plain-card counts of the family's decks, A:B (such as \"16:20\")")
    split: str = key("equal", "equal: counts whose deck splits equally; near: every count, hands differing by at "
                              "most one card")
    census: bool = key(False, "also play every trick-boundary state of the small decks (cycle basins)")
    census_max_states: int = key(100_000_000, "census the decks with at most this many states")
    cpu_hours: float = key(1.0, "the CPU time the family may take, at `rate`", minimum=0.001, result=False)
    rate: int = key(0, "deals per CPU-second to size the work with (0: SIZING_RATES by engine; measure yours with "
                       "benchmarks/atlas_speed.py)", minimum=0, result=False)
    # The sampling keys: at their defaults an atlas samples nothing and is identified as before them.
    exact_max_deals: int = key(0, "play the decks of at most this many deals exactly and sample the larger ones "
                                  "(0: every deck exactly)", minimum=0, unsaid=True)
    samples: tuple[str, ...] = key(list(SAMPLES), "what a sampled deck plays: random balanced \"deals\", random "
                                                  "\"states\" (two players), or both", unsaid=True)
    sample_size: int = key(0, "games per sampled row (0: the CPU time the exact decks leave of cpu_hours, shared "
                              "equally among the sampled rows)", minimum=0, unsaid=True)
    sample_all: bool = key(False, "sample the decks played exactly too (to check sampled rows against exact ones)",
                           unsaid=True)

    def identity(self) -> dict:
        """The keys that are part of what the run computes, and the budget where the samples are sized
        from it."""
        ident = super().identity()
        if (self.exact_max_deals or self.sample_all) and not self.sample_size:
            ident["cpu_hours"], ident["rate"] = self.cpu_hours, self.rate
        return ident


def sizing_rate(deck: AtlasDeck, players: int, table: AtlasTable) -> int:
    if table.rate:
        return table.rate
    parsed = parse_deck(deck.spec)
    engine = pick_engine(players, parsed.total, parsed.penalty_cards, parsed.max_value)
    return SIZING_RATES["fast" if engine == "fast" else "other"][1]


def penalty_deck(search: Search, where: str = "config") -> Deck:
    deck = parse_deck(search.deck)
    if deck.counts[0]:
        raise BmnError(f"{where}: the atlas's deck names its penalty cards only, and its plain-card counts come "
                       f"from [atlas] plain; got {deck.counts[0]} plain cards in deck {search.deck!r}")
    return deck


def family(search: Search, table: AtlasTable, where: str = "config") -> tuple[AtlasDeck, ...]:
    """The decks of the run's family, by plain-card count."""
    penalties = penalty_deck(search, where).counts
    if table.split not in SPLITS:
        raise BmnError(f"{where}: atlas.split must be one of {', '.join(SPLITS)}, got {table.split!r}")
    if not table.plain:
        raise BmnError(f"{where}: the atlas needs its plain-card counts: [atlas] plain = \"A:B\"")
    first, last = parse_plain(table.plain, where)
    if last + sum(penalties) > MAX_CARDS:
        raise BmnError(f"{where}: atlas.plain goes up to {last} plain cards, which with the deck's {sum(penalties)} "
                       f"penalty cards makes more than the {MAX_CARDS} cards a deck may hold")
    players, decks = search.players, []
    for plain in range(first, last + 1):
        counts = (plain,) + penalties[1:]
        total = sum(counts)
        if table.split == "equal" and total % players:
            continue
        deals = _multinomial(counts)
        exact = not table.exact_max_deals or deals <= table.exact_max_deals
        censused = exact and table.census and deals * len(splits_of(total, players)) <= table.census_max_states
        decks.append(AtlasDeck(Deck(counts).spec(), plain, (total // players,) * players if table.split == "equal"
                               else _near(total, players), censused, deals, exact, table.sample_all or not exact))
    if not decks:
        raise BmnError(f"{where}: no deck of this family can be dealt in equal hands to {players} players "
                       f"(plain = {table.plain!r}); widen plain or use [atlas] split = \"near\"")
    return tuple(decks)


class Part(NamedTuple):
    """A run of consecutive shards of the plan: one split of a deck played exactly (`sample` ""), or
    one sampled row of a deck (`sample` "deals" or "states": `games` of its stream)."""

    deck: AtlasDeck
    split: tuple[int, ...]
    sample: str
    games: int
    shards: int  # this part's shards
    row_shards: int  # the shards of the row it belongs to (an exact deck's: every split's)


def sample_sizes(search: Search, table: AtlasTable) -> dict[str, int]:
    """Games per sampled row, by deck spec: `sample_size`, or the budget the exact decks leave,
    shared equally among the sampled rows at each deck's sizing rate (0 where nothing is left)."""
    decks = family(search, table)
    sampled = [d for d in decks if d.sampled]
    if not sampled:
        return {}
    if table.sample_size:
        return {d.spec: int(table.sample_size) for d in sampled}
    left_s = table.cpu_hours * 3600 - sum(d.states(search.players) / sizing_rate(d, search.players, table)
                                          for d in decks)
    per_row_s = max(0.0, left_s) / (len(sampled) * len(table.samples))
    return {d.spec: int(per_row_s * sizing_rate(d, search.players, table)) for d in sampled}


def layout(search: Search, table: AtlasTable) -> list[Part]:
    """The plan's parts in shard order: each deck's exact splits, then its sampled rows (the plan computes
    them once: AtlasPlan)."""
    parts = []
    sizes = sample_sizes(search, table)
    for deck in family(search, table):
        splits = deck.splits(search.players)
        per_split = shards_of(deck.deals, search.shard_size)
        parts += [Part(deck, split, "", deck.deals, per_split, per_split * len(splits)) for split in splits]
        if deck.sampled:
            games = sizes[deck.spec]
            shards = shards_of(games, search.shard_size)
            parts += [Part(deck, deck.split, sample, games, shards, shards) for sample in table.samples]
    return parts


@dataclass(frozen=True, kw_only=True)
class AtlasShard(ShardParams):
    """What an atlas shard is: deals [lo, hi) of one split of one deck of the family, and where it stands in
    the plan (the atlas table reads it back from each shard's summary)."""

    deck: str  # the deck's spec
    split: tuple[int, ...]
    lo: int
    hi: int
    balanced: bool  # the deck's own split (its deals are the deck's row); else a census split
    basins: bool  # cycles reported with their basins (a census's; a sampled deck's random states)
    deck_shards: int  # the shards of its row in the plan (an exact deck's: every split's): complete with all
    min_cards: int
    min_tricks: int
    # "": played exactly, games [lo, hi) of the split; else "deals" or "states": games [lo, hi) of the random
    # stream (seed, stream). (An exact shard's parameters are as they were before sampled rows.)
    sample: str = unsaid("")
    seed: int = unsaid(0)
    stream: int = unsaid(0)


def run_atlas(deck: str, split, lo: int, hi: int, balanced: bool, basins: bool, *, min_cards: int,
              min_tricks: int = 0, sample: str = "", seed: int = 0, stream: int = 0) -> ShardResult:
    """Deals [lo, hi) of one split of one deck of the family; or, sampled, games [lo, hi) of the random
    stream (seed, stream): balanced deals (`sample` "deals") or states ("states")."""
    if not sample:
        return play_states(deck, split, lo, hi, balanced, min_cards=min_cards, min_tricks=min_tricks, basins=basins)
    space = DealSpace.of(parse_deck(deck), list(split))
    if sample == "deals":
        result = run_random(space, seed, stream, hi - lo, start=lo, min_cards=min_cards, min_tricks=min_tricks)
    elif sample == "states":
        result = run_states(space, seed, stream, hi - lo, start=lo)
        if not basins:  # the deck's census counts its basins exactly: these random hits are not added to them
            result.cycle_rows = [replace(row, basin=None) for row in result.cycle_rows]
    else:
        raise ValueError(f"an atlas sample is one of {SAMPLES}, not {sample!r}")
    result.deck = space.deck.spec()
    return result


class Atlas(Strategy):
    name = "atlas"
    own_table = "atlas"  # cluster/runs/atlas.py builds it; `bmn atlas RUN` prints it
    summary = ("each deck of a family (the run's penalty cards with plain-card counts A to B): every deal of the decks "
               "within reach, and with `census` every state of the small ones; past `exact_max_deals`, random balanced "
               "deals and random states, each rate with its 95% interval: table rows per deck")
    example = Example(
        search=dict(deck="1:2,2:2,3:2", shard_size=20_000, min_cards=40),
        table=dict(plain="0:8", census=True, census_max_states=500_000),
        pin="22671d0e11ade5e00f7356935196dd11ece5e572b66b4f47ae40f3240677e46a",
    )
    warm_group = "sweep"
    Table = AtlasTable
    Params = AtlasShard

    def deal_space(self, search, table):
        """The space of the family's first deck (what the actors are started with)."""
        first = family(search, table)[0]
        return DealSpace(parse_deck(first.spec), first.split)

    def describe(self, search, space, table: AtlasTable):
        decks = family(search, table)
        text = (f"{search.deck} with {table.plain} plain cards: {len(decks)} decks of {decks[0].cards}-"
                f"{decks[-1].cards} cards, {search.players} players, {table.split} hands")
        sampled = [d for d in decks if d.sampled]
        if sampled:
            sizes = sample_sizes(search, table)
            exact = sum(d.exact for d in decks)
            text += (f"; {exact} exact, {len(sampled)} sampled ({' and '.join(table.samples)}, "
                     f"{min(sizes.values()):,}-{max(sizes.values()):,} games a row)")
        return text

    def check(self, search, space, table: AtlasTable, where):
        if search.split is not None:
            raise BmnError(f"{where}: the atlas deals each deck in equal hands (or near-equal: [atlas] split = "
                           f"\"near\"); leave split out")
        samples, players = table.samples, search.players
        if not samples or len(set(samples)) < len(samples) or set(samples) - set(SAMPLES):
            raise BmnError(f"{where}: atlas.samples must list \"deals\", \"states\" or both, got {list(samples)!r}")
        decks = family(search, table, where)
        for deck in decks:
            check_deck(parse_deck(deck.spec))
            if deck.cards < players:
                raise BmnError(f"{where}: deck {deck.spec} has fewer cards than players")
            if deck.exact and deck.deals - 1 > MAX_STORED_RANK:
                raise BmnError(f"{where}: deck {deck.spec} has more deals than the games table can number; "
                               f"sample it (atlas.exact_max_deals)")
        sampled = [d for d in decks if d.sampled]
        if sampled and "states" in samples and players != 2:
            raise BmnError(f"{where}: random states are two-player states; sample {players}-player decks "
                           f"with atlas.samples = [\"deals\"]")
        games = sum(d.states(players) for d in decks)
        hours = sum(d.states(players) / sizing_rate(d, players, table) for d in decks) / 3600
        rate = (f"rate = {table.rate:,} deals/s" if table.rate else
                "the sizing rates (" + ", ".join(f"{r:,} deals/s {what}" for what, r in SIZING_RATES.values()) + ")")
        if hours > table.cpu_hours:
            largest = max(decks, key=lambda d: d.states(players))
            raise BmnError(
                f"{where}: this family plays {games:,} games, about {hours:,.2f} CPU-hours at {rate}, more than "
                f"cpu_hours = {table.cpu_hours:g}; its largest deck, {largest.spec} ({largest.cards} cards), "
                f"alone plays {largest.states(players):,}: narrow plain, census fewer decks, sample the "
                f"large ones (atlas.exact_max_deals) or raise cpu_hours")
        if not sampled:
            return
        sizes = sample_sizes(search, table)
        rows = len(sampled) * len(samples)
        if table.sample_size:
            hours += sum(sizes[d.spec] * len(samples) / sizing_rate(d, players, table) for d in sampled) / 3600
            if hours > table.cpu_hours:
                raise BmnError(
                    f"{where}: this family's exact decks and {rows} sampled rows of {table.sample_size:,} games "
                    f"take about {hours:,.2f} CPU-hours at {rate}, more than cpu_hours = {table.cpu_hours:g}: "
                    f"lower sample_size (or 0, to size the samples from the budget) or raise cpu_hours")
        elif min(sizes.values()) < MIN_SAMPLE:
            raise BmnError(
                f"{where}: this family is too large for its budget: its exact decks take about {hours:,.2f} of "
                f"cpu_hours = {table.cpu_hours:g} CPU-hours at {rate}, which leaves its {rows} sampled rows "
                f"fewer than {MIN_SAMPLE:,} games each; raise cpu_hours, lower exact_max_deals or narrow plain")

    def plan(self, search, space, table: AtlasTable):
        parts = layout(search, table)  # (once per plan: the shards are made one by one from it)

        def shard(k: int) -> Shard:
            j = k  # shard k is shard j of its part
            for part in parts:
                if j < part.shards:
                    lo = j * search.shard_size
                    deck, hi = part.deck, min(part.games, lo + search.shard_size)
                    if not part.sample:
                        params = AtlasShard(deck=deck.spec, split=part.split, lo=lo, hi=hi,
                                            balanced=part.split == deck.split, basins=deck.census,
                                            deck_shards=part.row_shards, **bounds(search))
                    else:
                        params = AtlasShard(deck=deck.spec, split=part.split, lo=lo, hi=hi, balanced=True,
                                            basins=not deck.census, deck_shards=part.row_shards, **bounds(search),
                                            sample=part.sample, seed=search.seed, stream=deck.stream(part.sample))
                    return Shard(k, self.name, params)
                j -= part.shards
            raise IndexError(k)
        return ShardPlan(sum(part.shards for part in parts), shard)

    def run(self, space, params: AtlasShard, deals=(), device="cpu"):
        """(`deck_shards` says where the shard stands in the plan: the atlas table's, not the kernels')"""
        return run_atlas(params.deck, params.split, params.lo, params.hi, params.balanced, params.basins,
                         min_cards=params.min_cards, min_tricks=params.min_tricks, sample=params.sample,
                         seed=params.seed, stream=params.stream)

    def warm_up(self, space, device="cpu"):
        run_atlas("0:2,1:1,2:1", (2, 2), 0, 12, True, True, min_cards=0)


STRATEGY = Atlas()

__all__ = ["Atlas", "AtlasDeck", "AtlasShard", "AtlasTable", "Part", "SAMPLES", "STRATEGY", "family", "layout",
           "parse_plain", "run_atlas", "sample_sizes"]
