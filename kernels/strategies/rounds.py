"""A shard of the random stream played in rounds, with the deals found between rounds on top.

`climb` and `longest` play the `count` deals of the stream (seed, shard) (the deals `random`
plays) in rounds, and after each round climb some of its games by backward play. `Rounds` is
that loop's bookkeeping: it plays the next round, tallies it, keeps its candidates, and tallies
the deals found by climbing; the strategy decides which games to keep and to climb.
"""

from __future__ import annotations

from ..dealspace import DealSpace
from ..game import GameResult
from ..sweep import run_random
from ..tally import Candidate, ShardResult


class Rounds:
    """Deals 0..count-1 of the random stream (seed, shard), `size` per round, and the deals found."""

    def __init__(self, space: DealSpace, seed: int, shard: int, count: int, size: int, *, min_cards: int,
                 min_tricks: int = 0, engine: str = "auto"):
        self.space = space
        self.seed = seed
        self.shard = shard
        self.count = count
        self.size = size
        self.min_cards = min_cards
        self.min_tricks = min_tricks
        self.engine = engine
        self.result = ShardResult.empty(2)
        self.candidates: dict[str, Candidate] = {}
        self.start = 0  # the first deal of the round last played
        self.deals = 0  # random deals played
        self.rounds = 0
        self.longest_forward = 0  # the longest game among the random deals

    @property
    def left(self) -> bool:
        return self.deals < self.count

    def play(self, keep: int) -> ShardResult:
        """Play the next round, keeping its games of at least `keep` cards (or min_tricks tricks)
        as the round's candidates, and tally it; the shard keeps those of at least min_cards."""
        self.start = self.deals
        n = min(self.size, self.count - self.start)
        played = run_random(self.space, self.seed, self.shard, n, start=self.start, min_cards=keep,
                            min_tricks=self.min_tricks, engine=self.engine)
        self.result.merge(played)
        self.deals += n
        self.rounds += 1
        self.longest_forward = max(self.longest_forward, played.max_cards)
        for c in played.candidates:
            if c.result.is_candidate(self.min_cards, self.min_tricks):
                self.candidates.setdefault(c.hands, c)
        return played

    def replay(self, keep: int) -> ShardResult:
        """The round last played again, keeping its games of at least `keep` cards (not tallied)."""
        return run_random(self.space, self.seed, self.shard, self.deals - self.start, start=self.start,
                          min_cards=keep, engine=self.engine)

    def add(self, result: GameResult, hands: str, index: int) -> None:
        """Tally a deal found by climbing from deal `index` (a candidate if long enough)."""
        self.result.add_game(result, hands, index)
        if result.is_candidate(self.min_cards, self.min_tricks):
            self.candidates.setdefault(hands, Candidate(hands, index, result))

    def finish(self) -> ShardResult:
        """The shard's result: its tally, and its candidates in the order of their deals."""
        self.result.candidates = sorted(self.candidates.values(), key=lambda c: (c.index, c.hands))
        return self.result
