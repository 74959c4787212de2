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
"""

from __future__ import annotations

import numpy as np

from .._jit import kernel
from ..backward import ancestors
from ..cyclestate import cycle_state
from ..decks import Deck, parse_deck
from ..engines import default_brent_start, engine_named, pick_engine, play_rows
from ..engines.reference import Game
from ..errors import BmnError
from ..game import CYCLE, F_CYCLE_ID, F_OUTCOME, N_FIELDS, cycle_id_hex
from ..notation import format_deal, parse_deal
from .base import Param, ShardSpec, Strategy
from .tally import Candidate, CycleRow, ShardResult

PARAMS = (
    Param("beams", 256, "shards: independent beams, each with its own random stream"),
    Param("tries", 20_000_000, "games a beam plays at most (children and seed states)"),
    Param("seed_plain", 8, "plain cards of the seed deck", minimum=0),
    Param("seed_penalty", 2, "cards of each penalty value in the seed deck (at most the deck's)", minimum=0),
    Param("seed_deck", None, "the seed deck itself, cards of the deck (instead of seed_plain and seed_penalty)",
          kind=str, optional=True),
    Param("seed_states", 20_000, "random states of the seed deck played for seeds", minimum=0),
    Param("width", 64, "cycles kept per generation"),
    Param("children", 4096, "insertions tried per cycle per generation (all of them, if fewer)"),
    Param("pairs", 4096, "double insertions tried per cycle when no single one cycles (0: none)", minimum=0),
    Param("slack", 0, "cards over the deck's count of their value a growing cycle may hold (0: only the "
          "deck's cards; substitutions take the extra ones back)", minimum=0),
    Param("substitutions", 256, "substitutions (one card given another value) tried per cycle per generation; "
          "`children` at the deck's size", minimum=0),
    Param("variations", 2_000, "swaps and moves tried around each target cycle found", minimum=0),
    Param("max_states", 2_000_000, "backward-play budget (ancestor states) per target cycle"),
)
CYCLES_DEFAULTS = {p.name: p.default for p in PARAMS}
BARREN_DRAWS = 4  # seed decks in a row without a cycle that end a beam


@kernel
def insert_cards(parent, at, values, out):
    """Child i = parent with values[i] inserted before position at[i] of the whole row."""
    n = parent.shape[0]
    for i in range(at.shape[0]):
        k = at[i]
        for j in range(k):
            out[i, j] = parent[j]
        out[i, k] = values[i]
        for j in range(k, n):
            out[i, j + 1] = parent[j]


@kernel
def insert_each(rows, cuts, slots, values, out, out_cuts):
    """Row i with values[i] put into slot slots[i] (0..n+1: the leader's hand has cuts[i] + 1
    places, the other hand the rest), its new cut in out_cuts[i]."""
    n = rows.shape[1]
    for i in range(rows.shape[0]):
        s = slots[i]
        first = s <= cuts[i]
        k = s if first else s - 1
        for j in range(k):
            out[i, j] = rows[i, j]
        out[i, k] = values[i]
        for j in range(k, n):
            out[i, j + 1] = rows[i, j]
        out_cuts[i] = cuts[i] + 1 if first else cuts[i]


class Player:
    """Plays rows of one size (any cut; at most the target deck's penalty cards and `slack` more)
    on this core."""

    def __init__(self, total: int, target: Deck, slack: int = 0):
        self.total = total
        penalty = min(total, target.penalty_cards + slack)
        self.engine = engine_named(pick_engine(2, total, penalty, target.max_value)).id
        self.brent = default_brent_start(total)
        self.games = 0
        self.cycles = 0

    def play(self, rows: np.ndarray, cuts: np.ndarray) -> np.ndarray:
        out = np.zeros((rows.shape[0], N_FIELDS), dtype=np.int64)
        if rows.shape[0]:
            splits = np.stack((cuts, self.total - cuts), axis=1).astype(np.int64)
            play_rows(self.engine, rows, splits, self.brent, out)
        self.games += rows.shape[0]
        self.cycles += int((out[:, F_OUTCOME] == CYCLE).sum())
        return out


def cycle_states(state: tuple[tuple[int, ...], tuple[int, ...]]) -> list[tuple[np.ndarray, int]]:
    """The states of the cycle through `state` (hand 1 leading), each from its leader's seat."""
    game = Game(state)
    seen, out = set(), []
    while True:
        s = game.state()
        if s in seen or game._check_boundary():
            return out
        seen.add(s)
        lead, hands = s
        first, second = (hands[0], hands[1]) if lead == 0 else (hands[1], hands[0])
        out.append((np.array(first + second, dtype=np.uint8), len(first)))
        if game.play_trick():
            return out


class Beam:
    """One shard's factory: seeds, growth, finds."""

    def __init__(self, target: Deck, seed: int, shard: int, params: dict, letters: bool):
        self.p = params
        self.deck = target
        self.rng = np.random.default_rng([int(seed), int(shard), 0xC1C1E5])
        self.target = np.array(target.counts, dtype=np.int64)
        self.total = int(self.target.sum())
        self.values = [int(v) for v in np.nonzero(self.target)[0]]  # the values the deck has
        self.letters = letters
        self.players: dict[int, Player] = {}
        self.finds: dict[str, tuple] = {}  # cycle_id -> canonical state (hands)
        # A beam's cycles are (cycle_id, canonical state as a pair of hands).
        self.deaths: list[int] = []  # the size at which each beam died
        # Measured survival of each move: move -> {size of the parent: [tried, still cycling]}.
        self.moves: dict[str, dict[int, list[int]]] = {"single": {}, "pair": {}, "substitution": {}, "vary": {}}
        self.visited: set[str] = set()  # the cycles this beam has held: not grown twice
        self.largest = (0, 0)  # the largest cycle held (cards, excess over the target's counts)
        self.most_excess = 0  # the most cards over the target's counts any cycle held had

    def player(self, total: int) -> Player:
        if total not in self.players:
            self.players[total] = Player(total, self.deck, self.p["slack"])
        return self.players[total]

    @property
    def games(self) -> int:
        return sum(p.games for p in self.players.values())

    def left(self) -> int:
        return self.p["tries"] - self.games

    def seed_deck(self) -> np.ndarray:
        if self.p["seed_deck"]:
            return np.array(parse_deck(self.p["seed_deck"]).counts, dtype=np.int64)
        # A composition near the default, drawn per restart: seed_plain or 2 more plain cards, and
        # seed_penalty or 1 more of each penalty value. Which small decks are rich in cycles
        # differs between kinds of deck (census, benchmarks/README.md), so beams try several.
        counts = np.minimum(self.target, self.p["seed_penalty"] + self.rng.integers(0, 2, size=len(self.target)))
        counts[0] = min(self.p["seed_plain"] + 2 * int(self.rng.integers(0, 2)), int(self.target[0]))
        while counts.sum() >= self.total and counts[0] > 0:
            counts[0] -= 1  # a seed deck is smaller than the target
        return counts

    def distinct(self, rows, cuts, out) -> list[tuple]:
        """The canonical states of the distinct cycles among played rows."""
        seen: dict[int, int] = {}
        for i in np.nonzero(out[:, F_OUTCOME] == CYCLE)[0]:
            seen.setdefault(int(out[i, F_CYCLE_ID]), int(i))
        states = []
        for cid, i in sorted(seen.items()):
            row, cut = rows[i], int(cuts[i])
            text = cycle_state((tuple(int(v) for v in row[:cut]), tuple(int(v) for v in row[cut:])))
            states.append((cycle_id_hex(cid), tuple(tuple(h) for h in parse_deal(text))))
        return states

    def seeds(self) -> list[tuple]:
        counts = self.seed_deck()
        n = int(counts.sum())
        count = min(self.p["seed_states"], max(0, self.left()))
        if n < 2 or count == 0:
            return []
        cards = np.repeat(np.arange(len(counts), dtype=np.uint8), counts)
        rows = np.empty((count, n), dtype=np.uint8)
        for i in range(count):
            rows[i] = self.rng.permutation(cards)
        cuts = self.rng.integers(1, n, size=count)
        out = self.player(n).play(rows, cuts)
        return self.distinct(rows, cuts, out)

    def excess(self, counts: np.ndarray) -> int:
        """Cards over the target deck's count of their value."""
        return int(np.maximum(0, counts - self.target).sum())

    def composition(self, state: tuple) -> np.ndarray:
        return np.bincount(np.array(state[0] + state[1], dtype=np.int64), minlength=len(self.target))

    def grow(self, beam: list[tuple]) -> list[tuple]:
        """One generation: the distinct cycles, not met before by this beam, among the insertions
        and substitutions of every cycle of the beam (empty if none); if none, `pairs` double
        insertions per cycle. The next beam is the `width` best: the largest, then the nearest to
        the target's composition (random among equals)."""
        found = self.insertions(beam) + self.substitutions(beam)
        if not found and self.p["pairs"]:
            found = self.insertions([item for item in beam if len(item[1][0]) + len(item[1][1]) + 2 <= self.total],
                                    pairs=True)
        unique: dict[str, tuple] = {}
        for cid, state in found:
            if cid not in self.visited:
                unique.setdefault(cid, state)
        scored = []
        for cid, state in sorted(unique.items()):
            size = len(state[0]) + len(state[1])
            scored.append((size - self.excess(self.composition(state)) + 0.5 * self.rng.random(), cid, state))
        scored.sort(key=lambda item: -item[0])
        return [(cid, state) for _score, cid, state in scored[:self.p["width"]]]

    def allowed(self, counts: np.ndarray) -> np.ndarray:
        """The values one more card may take: the deck's values, keeping the excess within `slack`."""
        values = [v for v in self.values
                  if self.excess(counts + np.eye(len(self.target), dtype=np.int64)[v]) <= self.p["slack"]]
        return np.array(values, dtype=np.uint8)

    def insertions(self, beam: list[tuple], pairs: bool = False) -> list[tuple]:
        children_rows, children_cuts = [], []
        for _cid, state in beam:
            n = len(state[0]) + len(state[1])
            if n + (2 if pairs else 1) > self.total:
                continue
            have = self.composition(state)
            values = self.allowed(have)
            if len(values) == 0:
                continue
            states = cycle_states(state)
            # Every insertion: a state of the cycle, a slot (n + 2 of them: the leader's hand has
            # cut + 1 places, the other hand n - cut + 1), a value within the slack. All of them if
            # there are at most `children`, else `children` of them drawn at random.
            combos = len(states) * (n + 2) * len(values)
            if pairs:
                picks = self.rng.integers(0, combos, size=self.p["pairs"])
            elif combos <= self.p["children"]:
                picks = np.arange(combos)
            else:
                picks = np.sort(self.rng.choice(combos, size=self.p["children"], replace=False))
            which, rest = np.divmod(picks, (n + 2) * len(values))
            slot, value = np.divmod(rest, len(values))
            for base in np.unique(which):
                row, cut = states[int(base)]
                mine = which == base
                s_slot = slot[mine]
                first = s_slot <= cut
                at = np.where(first, s_slot, s_slot - 1).astype(np.int64)
                out = np.empty((len(at), n + 1), dtype=np.uint8)
                insert_cards(row, at, values[value[mine]], out)
                out_cuts = np.where(first, cut + 1, cut).astype(np.int64)
                if pairs:  # a second card, of a value within the slack after the first, anywhere
                    second = np.array([self.rng.choice(self.allowed(have + np.eye(len(have), dtype=np.int64)[v]))
                                       for v in values[value[mine]]], dtype=np.uint8)
                    slots2 = self.rng.integers(0, n + 3, size=len(at))
                    out2 = np.empty((len(at), n + 2), dtype=np.uint8)
                    cuts2 = np.empty(len(at), dtype=np.int64)
                    insert_each(out, out_cuts, slots2, second, out2, cuts2)
                    out, out_cuts = out2, cuts2
                children_rows.append(out)
                children_cuts.append(out_cuts)
        return self.play_children("pair" if pairs else "single", children_rows, children_cuts, 2 if pairs else 1)

    def substitutions(self, beam: list[tuple]) -> list[tuple]:
        """One card of a state of the cycle given another value: `substitutions` per cycle drawn at
        random (`children` at the target size, where they are the only way to the target's
        composition; none if `substitutions` is 0), the excess kept within `slack`, and never raised
        at the target size."""
        children_rows, children_cuts = [], []
        for _cid, state in beam:
            n = len(state[0]) + len(state[1])
            counts = self.composition(state)
            now = self.excess(counts)
            changes = []
            for a in np.nonzero(counts)[0]:
                for b in self.values:
                    if b == a:
                        continue
                    after = counts.copy()
                    after[a] -= 1
                    after[b] += 1
                    e = self.excess(after)
                    if e <= self.p["slack"] and (n < self.total or e <= now):
                        changes.append((int(a), b))
            count = self.p["substitutions"] if n < self.total or not self.p["substitutions"] else self.p["children"]
            if not changes or count == 0:
                continue
            states = cycle_states(state)
            rows = np.empty((count, n), dtype=np.uint8)
            cuts = np.empty(count, dtype=np.int64)
            for i in range(count):
                row, cut = states[int(self.rng.integers(0, len(states)))]
                a, b = changes[int(self.rng.integers(0, len(changes)))]
                places = np.nonzero(row == a)[0]
                rows[i] = row
                rows[i, places[int(self.rng.integers(0, len(places)))]] = b
                cuts[i] = cut
            children_rows.append(rows)
            children_cuts.append(cuts)
        return self.play_children("substitution", children_rows, children_cuts, 0)

    def play_children(self, move: str, children_rows: list, children_cuts: list, added: int) -> list[tuple]:
        """Play children (grouped by size, within the beam's budget): the distinct cycles among them."""
        found = []
        by_size: dict[int, list[int]] = {}
        for i, rows in enumerate(children_rows):
            by_size.setdefault(rows.shape[1], []).append(i)
        for size, parts in sorted(by_size.items()):
            rows = np.concatenate([children_rows[i] for i in parts])
            cuts = np.concatenate([children_cuts[i] for i in parts]).astype(np.int64)
            budget = max(0, self.left())
            rows, cuts = rows[:budget], cuts[:budget]
            if rows.shape[0] == 0:
                continue
            out = self.player(size).play(rows, cuts)
            self.count(move, size - added, out)
            found += self.distinct(rows, cuts, out)
        return found

    def count(self, move: str, size: int, out: np.ndarray) -> None:
        tally = self.moves[move].setdefault(size, [0, 0])
        tally[0] += out.shape[0]
        tally[1] += int((out[:, F_OUTCOME] == CYCLE).sum())

    def vary(self, state: tuple) -> list[tuple]:
        """Swaps and moves around a target cycle: the distinct target cycles they reach."""
        count = min(self.p["variations"], max(0, self.left()))
        if count == 0:
            return []
        states = cycle_states(state)
        rows = np.empty((count, self.total), dtype=np.uint8)
        cuts = np.empty(count, dtype=np.int64)
        for i in range(count):
            row, cut = states[int(self.rng.integers(0, len(states)))]
            row = row.copy()
            a, b = self.rng.integers(0, self.total, size=2)
            if self.rng.integers(0, 2) == 0:
                row[a], row[b] = row[b], row[a]  # a swap
            else:
                card = row[a]  # a move: card a taken out and put back before place b
                rest = np.delete(row, a)
                row = np.insert(rest, min(int(b), self.total - 1), card)
                if a < cut and b >= cut:
                    cut -= 1
                elif a >= cut and b < cut:
                    cut += 1
                cut = min(max(cut, 1), self.total - 1)
            rows[i], cuts[i] = row, cut
        return self.play_children("vary", [rows], [cuts], 0)

    def is_target(self, state: tuple) -> bool:
        return bool((self.composition(state) == self.target).all())

    def run(self) -> None:
        barren = 0
        while self.left() > 0:
            beam = self.seeds()
            if not beam:
                # A seed deck whose states gave no cycle: draw another, but a deck in which
                # BARREN_DRAWS draws in a row give none is taken to have none to grow.
                barren += 1
                if barren >= BARREN_DRAWS:
                    return
                continue
            barren = 0
            while beam and self.left() > 0:
                self.visited.update(cid for cid, _state in beam)
                for _cid, state in beam:
                    held = (len(state[0]) + len(state[1]), -self.excess(self.composition(state)))
                    self.most_excess = max(self.most_excess, -held[1])
                    if held > (self.largest[0], -self.largest[1]):
                        self.largest = (held[0], -held[1])
                fresh = [item for item in beam if self.is_target(item[1]) and self.keep(item)]
                while fresh and self.left() > 0:  # vary every new find, and the new finds of those
                    fresh = [near for _cid, state in fresh for near in self.vary(state) if self.keep(near)]
                rest = [item for item in beam if not self.is_target(item[1])]
                if not rest:
                    break
                largest = max(len(state[0]) + len(state[1]) for _cid, state in rest)
                beam = self.grow(rest)
                if not beam:
                    self.deaths.append(largest)

    def keep(self, item: tuple) -> bool:
        """Record a target cycle; False if this beam had found it already."""
        cid, state = item
        if cid in self.finds:
            return False
        self.finds[cid] = state
        return True


def run_cycles(deck: Deck, seed: int, shard: int, params: dict | None = None,
               stats: dict | None = None) -> ShardResult:
    """One beam of the factory (module docstring): the target cycles found and their balanced deals."""
    params = {**CYCLES_DEFAULTS, **(params or {})}
    if deck.total % 2 or deck.total < 2:
        raise BmnError("the cycle factory lists balanced deals, so the deck needs an even number of cards")
    letters = deck.max_value <= 4
    beam = Beam(deck, seed, shard, params, letters)
    beam.run()
    result = ShardResult.empty(2)
    result.deals, result.cycles = beam.games, sum(p.cycles for p in beam.players.values())
    for cid, state in sorted(beam.finds.items()):
        listed = ancestors(state, max_states=params["max_states"])
        if listed.cycle_id != cid:
            raise RuntimeError(f"cycle {cid} replayed as {listed.cycle_id}")
        r = listed.original
        result.cycle_rows.append(CycleRow(cid, r.period_tricks, r.period_cards, deck.spec(),
                                          format_deal(state, letters), complete=not listed.truncated))
        for found in listed.deals:
            result.candidates.append(Candidate(found.hands, len(result.candidates), found.result))
    if stats is not None:
        stats.update(games=beam.games, finds=len(beam.finds), deaths=list(beam.deaths), moves=beam.moves,
                     largest=beam.largest[0], largest_excess=beam.largest[1], most_excess=beam.most_excess)
    return result


class Cycles(Strategy):
    name = "cycles"
    summary = "a cycle factory: cycles of small decks grown card by card into the deck's cycles"
    params = PARAMS
    keys = frozenset({"seed"})
    backward = True

    def check(self, config, space, params, where):
        if params["seed_deck"] is not None:
            seed = parse_deck(params["seed_deck"])
            if any(a > b for a, b in zip(seed.counts, space.deck.counts)) or seed.total >= space.deck.total:
                raise BmnError(f"{where}: cycles.seed_deck {seed.spec()} must be a smaller part of the deck "
                               f"{space.deck.spec()}")

    def shard_count(self, config, space, params):
        return params["beams"]

    def shard(self, config, space, params, k):
        return ShardSpec({"deck": space.deck.spec(), "seed": config.seed, "shard": k,
                          "params": {p: v for p, v in params.items() if p != "beams"}})

    wrapper = staticmethod(run_cycles)

    def run(self, space, params, deals) -> ShardResult:
        return run_cycles(parse_deck(params["deck"]), params["seed"], params["shard"], params["params"])

    def warm_up(self, space):
        run_cycles(Deck.from_table({0: 6, 1: 2, 2: 2}), 0, 0, {"tries": 400, "seed_states": 200, "max_states": 64})


STRATEGY = Cycles()
