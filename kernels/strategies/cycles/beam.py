"""One shard of the cycle factory: seeds, growth generation by generation, the target cycles found."""

from __future__ import annotations

import numpy as np

from ...decks import Deck, parse_deck
from ...game import CYCLE, F_OUTCOME
from .moves import insertions, substitutions, variations
from .player import Player
from .state import CycleState, Target, cycles_among

BARREN_DRAWS = 4  # seed decks in a row without a cycle that end a beam


class Beam:
    """One shard's factory: seeds, growth, finds."""

    def __init__(self, target: Deck, seed: int, shard: int, params, letters: bool):
        """`params`: the strategy's Factory (how the beam grows)."""
        self.p = params
        self.deck = target
        self.rng = np.random.default_rng([int(seed), int(shard), 0xC1C1E5])
        self.target = Target(target, params.slack)
        self.total = self.target.total
        self.letters = letters
        self.players: dict[int, Player] = {}
        self.finds: dict[str, CycleState] = {}  # the target cycles found, by cycle_id
        self.deaths: list[int] = []  # the size at which each beam died
        # Measured survival of each move: move -> {size of the parent: [tried, still cycling]}.
        self.moves: dict[str, dict[int, list[int]]] = {"single": {}, "pair": {}, "substitution": {}, "vary": {}}
        self.visited: set[str] = set()  # the cycles this beam has held: not grown twice
        self.largest = (0, 0)  # the largest cycle held (cards, excess over the target's counts)
        self.most_excess = 0  # the most cards over the target's counts any cycle held had

    def player(self, total: int) -> Player:
        if total not in self.players:
            self.players[total] = Player(total, self.deck, self.p.slack)
        return self.players[total]

    @property
    def games(self) -> int:
        return sum(p.games for p in self.players.values())

    def left(self) -> int:
        return self.p.tries - self.games

    def excess(self, cycle: CycleState) -> int:
        """The cycle's cards over the target deck's count of their value."""
        return self.target.excess(self.target.composition(cycle))

    def seed_deck(self) -> np.ndarray:
        if self.p.seed_deck:
            return np.array(parse_deck(self.p.seed_deck).counts, dtype=np.int64)
        # A composition near the default, drawn per restart: seed_plain or 2 more plain cards, and
        # seed_penalty or 1 more of each penalty value. Which small decks are rich in cycles
        # differs between kinds of deck (census, benchmarks/README.md), so beams try several.
        target = self.target.counts
        counts = np.minimum(target, self.p.seed_penalty + self.rng.integers(0, 2, size=len(target)))
        counts[0] = min(self.p.seed_plain + 2 * int(self.rng.integers(0, 2)), int(target[0]))
        while counts.sum() >= self.total and counts[0] > 0:
            counts[0] -= 1  # a seed deck is smaller than the target
        return counts

    def seeds(self) -> list[CycleState]:
        counts = self.seed_deck()
        n = int(counts.sum())
        count = min(self.p.seed_states, max(0, self.left()))
        if n < 2 or count == 0:
            return []
        cards = np.repeat(np.arange(len(counts), dtype=np.uint8), counts)
        rows = np.empty((count, n), dtype=np.uint8)
        for i in range(count):
            rows[i] = self.rng.permutation(cards)
        cuts = self.rng.integers(1, n, size=count)
        out = self.player(n).play(rows, cuts)
        return cycles_among(rows, cuts, out)

    def grow(self, beam: list[CycleState]) -> list[CycleState]:
        """One generation: the distinct cycles, not met before by this beam, among the insertions
        and substitutions of every cycle of the beam (empty if none); if none, `pairs` double
        insertions per cycle. The next beam is the `width` best: the largest, then the nearest to
        the target's composition (random among equals)."""
        found = self.insertions(beam) + self.substitutions(beam)
        if not found and self.p.pairs:
            found = self.insertions([c for c in beam if c.cards + 2 <= self.total], pairs=True)
        unique: dict[str, CycleState] = {}
        for cycle in found:
            if cycle.cycle_id not in self.visited:
                unique.setdefault(cycle.cycle_id, cycle)
        scored = []
        for cid, cycle in sorted(unique.items()):
            scored.append((cycle.cards - self.excess(cycle) + 0.5 * self.rng.random(), cid, cycle))
        scored.sort(key=lambda item: -item[0])
        return [cycle for _score, _cid, cycle in scored[:self.p.width]]

    def insertions(self, beam: list[CycleState], pairs: bool = False) -> list[CycleState]:
        rows, cuts = insertions(beam, self.target, self.rng, children=self.p.children,
                                pairs=self.p.pairs if pairs else 0)
        return self.play_children("pair" if pairs else "single", rows, cuts, 2 if pairs else 1)

    def substitutions(self, beam: list[CycleState]) -> list[CycleState]:
        rows, cuts = substitutions(beam, self.target, self.rng, count=self.p.substitutions,
                                   at_target=self.p.children)
        return self.play_children("substitution", rows, cuts, 0)

    def vary(self, cycle: CycleState) -> list[CycleState]:
        """Swaps and moves around a target cycle: the distinct target cycles they reach."""
        count = min(self.p.variations, max(0, self.left()))
        if count == 0:
            return []
        rows, cuts = variations(cycle, self.rng, count)
        return self.play_children("vary", [rows], [cuts], 0)

    def play_children(self, move: str, children_rows: list, children_cuts: list, added: int) -> list[CycleState]:
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
            found += cycles_among(rows, cuts, out)
        return found

    def count(self, move: str, size: int, out: np.ndarray) -> None:
        tally = self.moves[move].setdefault(size, [0, 0])
        tally[0] += out.shape[0]
        tally[1] += int((out[:, F_OUTCOME] == CYCLE).sum())

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
                self.visited.update(c.cycle_id for c in beam)
                for cycle in beam:
                    held = (cycle.cards, -self.excess(cycle))
                    self.most_excess = max(self.most_excess, -held[1])
                    if held > (self.largest[0], -self.largest[1]):
                        self.largest = (held[0], -held[1])
                fresh = [c for c in beam if self.target.holds(c) and self.keep(c)]
                while fresh and self.left() > 0:  # vary every new find, and the new finds of those
                    fresh = [near for c in fresh for near in self.vary(c) if self.keep(near)]
                rest = [c for c in beam if not self.target.holds(c)]
                if not rest:
                    break
                largest = max(c.cards for c in rest)
                beam = self.grow(rest)
                if not beam:
                    self.deaths.append(largest)

    def keep(self, cycle: CycleState) -> bool:
        """Record a target cycle; False if this beam had found it already."""
        if cycle.cycle_id in self.finds:
            return False
        self.finds[cycle.cycle_id] = cycle
        return True
