"""`exhaustive`: every deal of a rank range, stepping from one deal to the next.

Over a small deck's whole space this gives exact tables: how many deals end after n cards, how
many never end, how many distinct cycles. Shard k = ranks [lo + k*size, lo + (k+1)*size) of the
range (`range = "LO:HI"`, default the whole deal space). The kernel is the sweep kernel
(kernels/sweep/cpu.py); candidates carry their rank.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..dealspace import DealSpace
from ..errors import BmnError
from ..sweep import run_exhaustive, run_exhaustive_batch
from .base import Example, Search, Shard, ShardParams, ShardPlan, Strategy, bounds, shards_of

# The games table keeps a deal's rank as decimal128(38): ranks of at most 38 digits.
MAX_STORED_RANK = 10**38 - 1


def parse_range(text: str, where: str = "config") -> tuple[int, int]:
    """`LO:HI` (underscores allowed) as two ranks."""
    lo_text, sep, hi_text = str(text).partition(":")
    try:
        lo, hi = int(lo_text.replace("_", "")), int(hi_text.replace("_", ""))
    except ValueError:
        raise BmnError(f"{where}: range must be LO:HI with whole numbers, got {text!r}") from None
    if not sep or lo > hi:
        raise BmnError(f"{where}: range must be LO:HI with LO <= HI, got {text!r}")
    return lo, hi


@dataclass(frozen=True, kw_only=True)
class ExhaustiveShard(ShardParams):
    """Every deal of ranks [lo, hi), the finite games of at least `min_cards` cards (or `min_tricks`) kept."""

    lo: int
    hi: int
    min_cards: int
    min_tricks: int


class Exhaustive(Strategy):
    name = "exhaustive"
    summary = "every deal of a rank range, stepping from deal to deal; exact tables over small decks"
    example = Example(
        search=dict(deck="0:10,1:3,2:1", shard_size=1000, min_cards=40),
        pin="8e3a5e74d4cc74fd32cb3caf2c8c8255f94c7fbcb72d4f4ebbeb4114765b6ef4",
    )
    warm_group = "sweep"
    keys = frozenset({"range"})
    Params = ExhaustiveShard
    gpu = True

    def _range(self, search: Search, space: DealSpace, where: str = "config") -> tuple[int, int]:
        return parse_range(search.range, where) if search.range else (0, space.count)

    def check(self, search, space, table, where):
        lo, hi = self._range(search, space, where)
        space.check_range(lo, hi)
        if hi - 1 > MAX_STORED_RANK:
            raise BmnError(f"{where}: ranks of this deal space go up to {space.count - 1:,} "
                           f"({len(str(space.count - 1))} digits), but the games table stores ranks of at most 38 "
                           f"digits; give a range below 10^38 (range = \"LO:HI\")")

    def plan(self, search, space, table):
        first, last = self._range(search, space)

        def shard(k: int) -> Shard:
            lo = first + k * search.shard_size
            return Shard(k, self.name, ExhaustiveShard(lo=lo, hi=min(last, lo + search.shard_size), **bounds(search)))
        return ShardPlan(shards_of(last - first, search.shard_size), shard)

    def run(self, space, params: ExhaustiveShard, deals=(), device="cpu"):
        return run_exhaustive(space, params.lo, params.hi, min_cards=params.min_cards, min_tricks=params.min_tricks,
                              device=device)

    def run_batch(self, space, params, deals, device="cpu"):
        if len({(p.min_cards, p.min_tricks) for p in params}) != 1:
            return super().run_batch(space, params, deals, device)
        return run_exhaustive_batch(space, [(p.lo, p.hi) for p in params], min_cards=params[0].min_cards,
                                    min_tricks=params[0].min_tricks, device=device)

    def warm_up(self, space, device="cpu"):
        run_exhaustive(space, 0, min(space.count, 16), min_cards=0, device=device)


STRATEGY = Exhaustive()
