"""`longest`: random rounds, and every game that could still become the longest climbed from its first cards.

Why this shape (measured on the standard deck; benchmarks/README.md, "longest"):

- Every trick-boundary state has one successor, so all games ending in the same final state form
  one tree, and a game's length is the depth of its deal in that tree: the longest game through
  a state is the deepest *balanced* ancestor of that state (backward play, kernels/backward.py).
- The deep balanced ancestors hang off the *first few tricks* of a game: over 1,613 games of at
  least 1,800 cards, the best one always hung off a state reached within the first 47 cards
  (median 17). The side trees of a game's first 64 cards hold ~2,000 ancestor states.
- The gain (deepest balanced ancestor minus the game's own length) is nearly always positive,
  with a long tail (>= 200 cards for a third of the games, >= 700 for 2.5%) and nearly
  independent of the game's length. So the longest game is the max over deals of (forward length
  + gain), and every game that could still win should be climbed, not only a round's longest few
  (as `climb` does).

So a shard, `count` deals of the random stream (seed, shard) (kernels/rng.py, the deals `random`
plays), runs rounds of `round_deals` deals; after each round it climbs every finite game of at
least max(`floor`, best - `delta`) cards (best: the longest game of the shard so far, climbs
included), longest first, at most `max_climbs`, stopping once a game falls more than `delta`
below the best. A climb is backward play from each of the game's trick-boundary states reached
within its first `root_cards` cards, off the game's own path, within `per_root` states per state.
Every balanced deal found that is longer than the climbed game is replayed forward and must last
exactly the length backward play claims (a mismatch is a bug and raises).

The shard's tally counts every game it played: the random deals and the replayed found deals.
Its candidates are every cycle and every finite game of at least `min_cards` cards (or
`min_tricks` tricks) among both; a found deal carries the index (deal number in the stream) of
the deal it was climbed from. Everything is budgeted by counts, so a shard is a pure function of
(seed, shard, count, parameters). It needs two players with equal hands (backward play reports
balanced deals). `benchmarks/longest_vs_random.py` compares it with `random` and `climb`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..backward import FoundBuffers, climb_from_states, game_path
from ..dealspace import DealSpace
from ..engines import default_brent_start, new_workspace
from ..engines import play_rows as replay
from ..errors import BmnError
from ..game import N_FIELDS, GameResult
from ..notation import format_deal, parse_deal
from ..sweep import engine_for
from ..tally import ShardResult
from .base import Example, StreamShard, StreamShards, Table, key, keys_of
from .rounds import Rounds


@dataclass(frozen=True, kw_only=True)
class LongestTable(Table):
    round_deals: int = key(2_000_000, "random deals per round (the games worth climbing are chosen per round)")
    delta: int = key(1200, "climb every game within this many cards of the shard's longest so far", minimum=0)
    floor: int = key(1500, "... and at least this long (bounds the first round's climbing)", minimum=0)
    max_climbs: int = key(400, "games climbed per round at most, the longest first", minimum=0)
    root_cards: int = key(64, "climb from the game's states reached within this many cards", minimum=0,
                          maximum=10_000)
    per_root: int = key(20_000, "backward-play budget (ancestor states) per root state", maximum=10_000_000)


@dataclass(frozen=True, kw_only=True)
class LongestShard(StreamShard, keys_of(LongestTable)):
    """Deals of the stream (seed, shard) in rounds of `round_deals`, every game near the shard's longest
    climbed from its first `root_cards` cards."""


LONGEST_DEFAULTS = LongestTable().values()


class Climber:
    """Climbs from the early states of games (kernels/backward.py, `climb_from_states`), with one
    workspace and one set of output buffers for all the climbs of a shard."""

    def __init__(self, total: int, root_cards: int, per_root: int, capacity: int = 4096):
        self.half = total // 2
        self.root_cards = int(root_cards)
        self.per_root = int(per_root)
        self.ws = new_workspace(2, total)
        self.buffers = FoundBuffers(total, capacity)
        self.states = 0  # ancestor states visited, all climbs together

    def climb(self, seq: np.ndarray, cards: int) -> tuple[np.ndarray, np.ndarray]:
        """(rows, lengths): the balanced deals longer than the game of `seq` (`cards` long) found
        from its states within `root_cards` cards, in search order (hand 1 leads each row)."""
        # A trick plays at least one card, so the states within root_cards cards are among the first root_cards + 1.
        states = game_path(seq, self.half, self.root_cards + 1, self.ws).within(self.root_cards)
        climb = climb_from_states(states, cards, max_states=len(states) * self.per_root, per_root=self.per_root,
                                  buffers=self.buffers)
        self.states += climb.visited
        return climb.rows, climb.lengths


def run_longest(space: DealSpace, seed: int, shard: int, count: int, *, min_cards: int, min_tricks: int = 0,
                round_deals: int = LONGEST_DEFAULTS["round_deals"], delta: int = LONGEST_DEFAULTS["delta"],
                floor: int = LONGEST_DEFAULTS["floor"], max_climbs: int = LONGEST_DEFAULTS["max_climbs"],
                root_cards: int = LONGEST_DEFAULTS["root_cards"], per_root: int = LONGEST_DEFAULTS["per_root"],
                engine: str = "auto", stats: dict | None = None) -> ShardResult:
    """Deals 0..count-1 of the random stream (seed, shard) in rounds, every game within `delta`
    of the shard's longest so far climbed by backward play from its first `root_cards` cards.

    Candidate indexes are deal numbers in the stream; a deal found by climbing carries the index
    of the deal it was climbed from. `stats`, if given, receives the shard's counters: rounds,
    random deals, climbs, ancestor states, found deals replayed, longest forward game.
    """
    if space.players != 2 or space.split[0] != space.split[1]:
        raise BmnError("longest climbs by backward play, which needs two players with equal hands")
    if round_deals < 1 or min(delta, floor, max_climbs, root_cards) < 0 or per_root < 1 or count < 0:
        raise BmnError("longest needs round_deals >= 1, per_root >= 1, count, delta, floor, max_climbs and "
                       "root_cards >= 0")
    total = space.deck.total
    half = total // 2
    letters = space.deck.max_value <= 4
    climber = Climber(total, root_cards, per_root)
    rounds = Rounds(space, seed, shard, count, round_deals, min_cards=min_cards, min_tricks=min_tricks,
                    engine=engine)
    replayed: set[bytes] = set()  # found deals already played: each is played and tallied once
    eng = engine_for(space, engine)
    split = np.array(space.split, dtype=np.int64)
    brent = default_brent_start(total)
    best = 0  # the longest finite game of the shard so far, climbs included
    climbs = found_deals = 0
    while rounds.left:
        threshold = max(floor, best - delta)  # games worth climbing this round
        round_result = rounds.play(min(min_cards, threshold) if max_climbs > 0 else min_cards)
        seedlings = sorted((c for c in round_result.candidates if c.result.outcome == "win"
                            and c.result.cards >= threshold), key=lambda c: (-c.result.cards, c.index))
        for seedling in seedlings[:max_climbs]:
            if seedling.result.cards < best - delta:
                break
            best = max(best, seedling.result.cards)
            climbs += 1
            seq = np.array([v for hand in parse_deal(seedling.hands) for v in hand], dtype=np.uint8)
            rows, lengths = climber.climb(seq, seedling.result.cards)
            fresh = []
            for i, row in enumerate(rows):
                if row.tobytes() not in replayed:
                    replayed.add(row.tobytes())
                    fresh.append(i)
            if not fresh:
                continue
            rows, lengths = rows[fresh], lengths[fresh]
            out = np.zeros((len(fresh), N_FIELDS), dtype=np.int64)
            replay(eng, rows, np.tile(split, (len(rows), 1)), brent, out)
            for row, length, result_row in zip(rows, lengths, out):
                result = GameResult.from_row(result_row)
                wrong = result.outcome != "win" or result.cards != length
                # Formatting a deal costs more than playing it: only the deals kept are written out
                # (add_game keeps the hands only of a game longer than the shard's longest).
                hands = ""
                if result.is_candidate(min_cards, min_tricks) or wrong or result.cards > rounds.result.max_cards:
                    hands = format_deal([row[:half], row[half:]], letters)
                if wrong:
                    raise RuntimeError(f"backward play found {hands} as a game of {length} cards, but it plays "
                                       f"{result}")
                found_deals += 1
                rounds.add(result, hands, seedling.index)
                best = max(best, result.cards)
    if stats is not None:
        stats.update(rounds=rounds.rounds, deals=rounds.deals, climbs=climbs, states=climber.states,
                     found=found_deals, longest_forward=rounds.longest_forward)
    return rounds.finish()


class Longest(StreamShards):
    name = "longest"
    summary = ("rounds of random deals; after each, every game within `delta` cards of the shard's longest climbed by "
               "backward play from the states of its first `root_cards` cards")
    example = Example(
        search=dict(deals=40_000, shard_size=20_000, min_cards=1200, seed=3),
        table=dict(round_deals=10_000, per_root=2000),
        pin="07776f5d7c8e6e7382f55ebf3333d7aebf195e8f073f9be5d558a10e8767b03a",
    )
    warm_group = "sweep"
    Table = LongestTable
    Params = LongestShard
    backward = True

    def run(self, space, params: LongestShard, deals=(), device="cpu"):
        return run_longest(space, params.seed, params.shard, params.count, min_cards=params.min_cards,
                           min_tricks=params.min_tricks, round_deals=params.round_deals, delta=params.delta,
                           floor=params.floor, max_climbs=params.max_climbs, root_cards=params.root_cards,
                           per_root=params.per_root)

    def warm_up(self, space, device="cpu"):
        run_longest(space, 0, 0, 64, round_deals=32, delta=10**6, floor=0, max_climbs=2, root_cards=8, per_root=64,
                    min_cards=0)
        # The replay of found deals, even if the warm-up's climbs found nothing longer.
        replay(engine_for(space), np.array([space.unrank_sequence(0)], dtype=np.uint8),
               np.array([space.split], dtype=np.int64), default_brent_start(space.deck.total),
               np.zeros((1, N_FIELDS), dtype=np.int64))


STRATEGY = Longest()
