"""`cycles`: a cycle factory. Cycles of small decks grown card by card into cycles of the target deck.

Random deals of a full deck almost never cycle (none in 4 million standard states), but random
states of small decks often do (2.4e-4 of the states of 8 plain cards and 2 of each penalty
value). A shard is one independent beam, with its own random stream (seed, shard):

1. **Seeds.** `seed_states` random states of a seed deck (`seed_penalty` or one more cards of
   each penalty value of the target deck and `seed_plain` or two more plain cards, drawn at each
   start, at most the deck's; or `seed_deck`; a random split, hand 1 leading) are played; every
   distinct cycle met is a seed, written as its canonical state (kernels/cyclestate.py).
2. **Growth.** Each generation, every cycle of the beam gets its insertions and substitutions.
   An insertion is one card, at any place of either hand of any state of its cycle, of a value
   the target deck still lacks, or of any value while the cards over the target's counts stay
   within `slack` (all of them when there are at most `children`, else `children` drawn at
   random). A substitution gives one card of a state of the cycle another value, within the
   same slack (`substitutions` per cycle drawn at random; `children` at the target's size, where
   they are the only way back to the target's composition). The children are played; those that
   still cycle, each distinct cycle once and none the beam held before, are ranked by size less
   excess (random among equals) and the `width` best are the next beam. When no child cycles
   (small cycles are often isolated: benchmarks/README.md), `pairs` double insertions per cycle
   are tried (two cards at once, the second anywhere in the child). A beam in which no child
   cycles dies, and the shard starts again from new seeds.
3. **Target.** A cycle with the target deck's cards is a find. It is also varied: swaps of two
   cards of different values, and moves of one card to another place, kept if they still
   cycle, to find the target cycles near it.
4. **Balanced deals.** For each cycle of the target deck found, backward play from all of its
   states (kernels/backward.py) lists every balanced deal that enters it, within `max_states`
   ancestor states (`complete` in the cycles table says whether the list is whole). Each is
   replayed forward and must enter the same cycle; each is a candidate (a row of games).

The shard stops after `tries` games (children and seed states together), so it is a pure
function of (seed, shard, parameters); the cycles table dedupes the finds of all shards by
cycle_id. The shard's `deals` counts the games it played, `cycles` those that cycled.

The package: `state` (a cycle held, `CycleState`, and the target deck), `moves` (insertions,
substitutions, swaps and moves), `player` (playing children), `beam` (seeds and growth, steps 1-3),
`found` (the declaration of the finds, step 4); here, the strategy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...decks import Deck, parse_deck
from ...errors import BmnError
from ...tally import ShardResult
from ..base import Example, Shard, ShardParams, ShardPlan, Strategy, Table, key, keys_of
from .beam import BARREN_DRAWS, Beam
from .found import declare
from .player import Player
from .state import CycleState, cycle_states

__all__ = ["BARREN_DRAWS", "FACTORY", "STRATEGY", "Beam", "CycleState", "Cycles", "CyclesShard", "CyclesTable",
           "Factory", "Player", "cycle_states", "run_cycles"]

@dataclass(frozen=True, kw_only=True)
class CyclesTable(Table):
    tries: int = key(20_000_000, "games a beam plays at most (children and seed states)")
    seed_plain: int = key(8, "plain cards of the seed deck", minimum=0)
    seed_penalty: int = key(2, "cards of each penalty value in the seed deck (at most the deck's)", minimum=0)
    seed_deck: str | None = key(None, "the seed deck itself, cards of the deck (instead of seed_plain and "
                                      "seed_penalty)")
    seed_states: int = key(20_000, "random states of the seed deck played for seeds", minimum=0)
    width: int = key(64, "cycles kept per generation")
    children: int = key(4096, "insertions tried per cycle per generation (all of them, if fewer)")
    pairs: int = key(4096, "double insertions tried per cycle when no single one cycles (0: none)", minimum=0)
    slack: int = key(0, "cards over the deck's count of their value a growing cycle may hold (0: only the "
                        "deck's cards; substitutions take the extra ones back)", minimum=0)
    substitutions: int = key(256, "substitutions (one card given another value) tried per cycle per generation; "
                                  "`children` at the deck's size", minimum=0)
    variations: int = key(2_000, "swaps and moves tried around each target cycle found", minimum=0)
    max_states: int = key(2_000_000, "backward-play budget (ancestor states) per target cycle")
    beams: int = key(256, "shards: independent beams, each with its own random stream")


PLAN_ONLY = ("beams",)  # [cycles] keys that only plan (how many beams): no beam computes with them


@dataclass(frozen=True, kw_only=True)
class Factory(Table, keys_of(CyclesTable, but=PLAN_ONLY)):
    """How a beam grows cycles: the [cycles] keys but `beams` (what one shard computes with), copied from the
    table as a table of their own (what run_cycles and the beam take)."""


@dataclass(frozen=True, kw_only=True)
class CyclesShard(ShardParams, keys_of(CyclesTable, but=PLAN_ONLY)):
    """One beam: the target deck's cycles grown from its random stream (seed, shard), with the factory's keys."""

    flattened: ClassVar[tuple[str, ...]] = ("params",)  # (earlier runs nested the factory's keys under "params")
    deck: str
    seed: int
    shard: int


FACTORY = Factory()


def run_cycles(deck: Deck, seed: int, shard: int, params: Factory = FACTORY,
               stats: dict | None = None) -> ShardResult:
    """One beam of the factory (module docstring): the target cycles found and their balanced deals."""
    if deck.total % 2 or deck.total < 2:
        raise BmnError("the cycle factory lists balanced deals, so the deck needs an even number of cards")
    letters = deck.max_value <= 4
    beam = Beam(deck, seed, shard, params, letters)
    beam.run()
    result = ShardResult.empty(2)
    result.deals, result.cycles = beam.games, sum(p.cycles for p in beam.players.values())
    for _cid, cycle in sorted(beam.finds.items()):
        declare(cycle, deck, letters, params.max_states, result)
    if stats is not None:
        stats.update(games=beam.games, finds=len(beam.finds), deaths=list(beam.deaths), moves=beam.moves,
                     largest=beam.largest[0], largest_excess=beam.largest[1], most_excess=beam.most_excess)
    return result


class Cycles(Strategy):
    name = "cycles"
    summary = ("a cycle factory: cycles of a small seed deck grown card by card into cycles of the deck, one beam per "
               "shard; every balanced deal entering each cycle found listed by backward play")
    example = Example(
        search=dict(deck="0:8,1:2,2:2,3:2,4:2", seed=3),
        table=dict(beams=2, tries=8000, seed_plain=6, seed_states=4000, variations=300),
        pin="b76b750da2e37b8d18d0ff076b8988bd81714d696f023d47fea7e2689871b52d",
    )
    warm_group = "backward"
    Table = CyclesTable
    Params = CyclesShard
    keys = frozenset({"seed"})
    backward = True

    def check(self, search, space, table: CyclesTable, where):
        if table.seed_deck is not None:
            seed = parse_deck(table.seed_deck)
            if any(a > b for a, b in zip(seed.counts, space.deck.counts)) or seed.total >= space.deck.total:
                raise BmnError(f"{where}: cycles.seed_deck {seed.spec()} must be a smaller part of the deck "
                               f"{space.deck.spec()}")

    def plan(self, search, space, table: CyclesTable):
        factory = Factory.taken_from(table).values()
        return ShardPlan(table.beams, lambda k: Shard(k, self.name, CyclesShard(
            deck=space.deck.spec(), seed=search.seed, shard=k, **factory)))

    def run(self, space, params: CyclesShard, deals=(), device="cpu"):
        return run_cycles(parse_deck(params.deck), params.seed, params.shard, Factory.taken_from(params))

    def warm_up(self, space, device="cpu"):
        run_cycles(Deck.from_table({0: 6, 1: 2, 2: 2}), 0, 0, Factory(tries=400, seed_states=200, max_states=64))


STRATEGY = Cycles()
