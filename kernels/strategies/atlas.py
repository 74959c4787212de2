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

Before anything runs the work is sized: the deals and states to play, at `rate` deals per
CPU-second (by default SIZING_RATES, by engine; set it from benchmarks/atlas_speed.py on the machines
that will run it), must fit in `cpu_hours`; a family that does not is refused with a sentence naming
its largest deck.
`bmn atlas RUN` prints the table (cluster/atlas.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple
from functools import lru_cache

from ..dealspace import DealSpace, _multinomial
from ..decks import Deck, check_deck, parse_deck
from ..engines import pick_engine
from ..errors import BmnError
from ..notation import MAX_CARDS
from .base import Param, Shard, Strategy, bounds, shards_of
from .census import play_states, splits_of
from .exhaustive import MAX_STORED_RANK
from ..tally import ShardResult

SPLITS = ("equal", "near")


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

    @property
    def cards(self) -> int:
        return sum(self.split)

    def splits(self, players: int) -> list[tuple[int, ...]]:
        """The splits played: every split with a card in each hand for a census, else the deck's own."""
        return splits_of(self.cards, players) if self.census else [self.split]

    def states(self, players: int) -> int:
        """Games to play: deals of every split played (each split has `deals` of them)."""
        return self.deals * len(self.splits(players))


def _near(total: int, players: int) -> tuple[int, ...]:
    base, extra = divmod(total, players)
    return tuple(base + (1 if i < extra else 0) for i in range(players))


# Deals per CPU-second the work is sized with when `rate` is not given, by the engine that plays the
# deck: below the slowest deck of each kind measured here (benchmarks/README.md, "The atlas": 2.1 M to
# 14 M deals/s for two players, 0.2 M for three). An assumption for sizing, not a measurement.
SIZING_RATES = {"fast": ("for two-player decks the fast engine holds", 2_000_000),
                "other": ("for other decks", 100_000)}


def sizing_rate(deck: AtlasDeck, players: int, params: dict) -> int:
    if params["rate"]:
        return params["rate"]
    parsed = parse_deck(deck.spec)
    engine = pick_engine(players, parsed.total, parsed.penalty_cards, parsed.max_value)
    return SIZING_RATES["fast" if engine == "fast" else "other"][1]


def penalty_deck(config, where: str = "config") -> Deck:
    deck = parse_deck(config.deck)
    if deck.counts[0]:
        raise BmnError(f"{where}: the atlas's deck names its penalty cards only, and its plain-card counts come "
                       f"from [atlas] plain; got {deck.counts[0]} plain cards in deck {config.deck!r}")
    return deck


@lru_cache(maxsize=64)
def _family(penalties: tuple[int, ...], players: int, first: int, last: int, split: str, census: bool,
            census_max_states: int) -> tuple[AtlasDeck, ...]:
    decks = []
    for plain in range(first, last + 1):
        counts = (plain,) + penalties[1:]
        total = sum(counts)
        if split == "equal" and total % players:
            continue
        deck = Deck(counts)
        deals = _multinomial(counts)
        censused = census and deals * len(splits_of(total, players)) <= census_max_states
        decks.append(AtlasDeck(deck.spec(), plain, (total // players,) * players if split == "equal"
                               else _near(total, players), censused, deals))
    return tuple(decks)


def family(config, params: dict, where: str = "config") -> tuple[AtlasDeck, ...]:
    """The decks of the run's family, by plain-card count."""
    deck = penalty_deck(config, where)
    if params["split"] not in SPLITS:
        raise BmnError(f"{where}: atlas.split must be one of {', '.join(SPLITS)}, got {params['split']!r}")
    if not params["plain"]:
        raise BmnError(f"{where}: the atlas needs its plain-card counts: [atlas] plain = \"A:B\"")
    first, last = parse_plain(params["plain"], where)
    if last + deck.total > MAX_CARDS:
        raise BmnError(f"{where}: atlas.plain goes up to {last} plain cards, which with the deck's {deck.total} "
                       f"penalty cards makes more than the {MAX_CARDS} cards a deck may hold")
    decks = _family(deck.counts, int(config.players), first, last, params["split"], bool(params["census"]),
                    int(params["census_max_states"]))
    if not decks:
        raise BmnError(f"{where}: no deck of this family can be dealt in equal hands to {config.players} players "
                       f"(plain = {params['plain']!r}); widen plain or use [atlas] split = \"near\"")
    return decks


def layout(config, params: dict) -> list[tuple[AtlasDeck, tuple[int, ...], int]]:
    """(deck, split, shards) for each split played of each deck, in shard order."""
    return [(deck, split, shards_of(deck.deals, config.shard_size))
            for deck in family(config, params) for split in deck.splits(config.players)]


class AtlasShard(NamedTuple):
    """What an atlas shard is: deals [lo, hi) of one split of one deck of the family, and where it
    stands in the plan. Its fields are the shard's parameters (`params`, JSON in its summary); the
    atlas table reads them back with `of`."""

    deck: str  # the deck's spec
    split: tuple[int, ...]
    lo: int
    hi: int
    balanced: bool  # the deck's own split (its deals are the deck's row); else a census split
    basins: bool  # censused: cycles reported with their basins
    deck_shards: int  # the deck's shards in the plan (every split's): its row is complete with all of them
    min_cards: int
    min_tricks: int

    def params(self) -> dict:
        return {**self._asdict(), "split": list(self.split)}

    @classmethod
    def of(cls, params: dict) -> "AtlasShard":
        return cls(**{**params, "split": tuple(params["split"])})


def run_atlas(deck: str, split, lo: int, hi: int, balanced: bool, basins: bool, *, min_cards: int,
              min_tricks: int = 0) -> ShardResult:
    """Deals [lo, hi) of one split of one deck of the family."""
    return play_states(deck, split, lo, hi, balanced, min_cards=min_cards, min_tricks=min_tricks, basins=basins)


class Atlas(Strategy):
    name = "atlas"
    own_table = "atlas"  # cluster/atlas.py builds it; `bmn atlas RUN` prints it
    summary = "every deal of each deck of a family (penalty cards, plain cards from A to B): one row per deck"
    params = (
        Param("plain", "", "plain-card counts of the family's decks, A:B (such as \"16:20\")", kind=str),
        Param("split", "equal", "equal: counts whose deck splits equally; near: every count, hands differing by "
                                "at most one card", kind=str),
        Param("census", False, "also play every trick-boundary state of the small decks (cycle basins)", kind=bool),
        Param("census_max_states", 100_000_000, "census the decks with at most this many states"),
        Param("cpu_hours", 1.0, "the CPU time the family may take, at `rate`", kind=float, minimum=0.001,
              result=False),
        Param("rate", 0, "deals per CPU-second to size the work with (0: SIZING_RATES by engine; measure "
                         "yours with benchmarks/atlas_speed.py)", minimum=0, result=False),
    )

    def deal_space(self, config) -> DealSpace:
        """The space of the family's first deck (what the actors are started with)."""
        first = family(config, config.strategy_params())[0]
        return DealSpace(parse_deck(first.spec), first.split)

    def describe(self, config, space, params):
        decks = family(config, params)
        return (f"{config.deck} with {params['plain']} plain cards: {len(decks)} decks of {decks[0].cards}-"
                f"{decks[-1].cards} cards, {config.players} players, {params['split']} hands")

    def check(self, config, space, params, where):
        if config.split is not None:
            raise BmnError(f"{where}: the atlas deals each deck in equal hands (or near-equal: [atlas] split = "
                           f"\"near\"); leave split out")
        decks = family(config, params, where)
        for deck in decks:
            check_deck(parse_deck(deck.spec))
            if deck.cards < config.players:
                raise BmnError(f"{where}: deck {deck.spec} has fewer cards than players")
            if deck.deals - 1 > MAX_STORED_RANK:
                raise BmnError(f"{where}: deck {deck.spec} has more deals than the games table can number")
        games = sum(d.states(config.players) for d in decks)
        hours = sum(d.states(config.players) / sizing_rate(d, config.players, params) for d in decks) / 3600
        if hours > params["cpu_hours"]:
            largest = max(decks, key=lambda d: d.states(config.players))
            rate = (f"rate = {params['rate']:,} deals/s" if params["rate"] else
                    "the sizing rates (" + ", ".join(f"{r:,} deals/s {what}" for what, r in SIZING_RATES.values()) + ")")
            raise BmnError(
                f"{where}: this family plays {games:,} games, about {hours:,.2f} CPU-hours at {rate}, more than "
                f"cpu_hours = {params['cpu_hours']:g}; its largest deck, {largest.spec} ({largest.cards} cards), "
                f"alone plays {largest.states(config.players):,}: narrow plain, census fewer decks, or raise "
                f"cpu_hours")

    def shard_count(self, config, space, params):
        return sum(shards for *_, shards in layout(config, params))

    def shard(self, config, space, params, k):
        j = k  # shard k is shard j of its deck and split
        for deck, split, shards in layout(config, params):
            if j < shards:
                lo = j * config.shard_size
                # Every split of a deck holds its `deals` orders, so each is cut into as many shards.
                per_deck = shards * len(deck.splits(config.players))
                return Shard(k, self.name, AtlasShard(
                    deck.spec, split, lo, min(deck.deals, lo + config.shard_size), split == deck.split,
                    deck.census, per_deck, **bounds(config)).params())
            j -= shards
        raise IndexError(k)

    describes = frozenset({"deck_shards"})
    wrapper = staticmethod(run_atlas)

    def warm_up(self, space):
        run_atlas("0:2,1:1,2:1", (2, 2), 0, 12, True, True, min_cards=0)


STRATEGY = Atlas()

__all__ = ["Atlas", "AtlasDeck", "AtlasShard", "STRATEGY", "family", "layout", "parse_plain", "run_atlas"]
