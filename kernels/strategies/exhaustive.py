"""`exhaustive`: every deal of a rank range, stepping from one deal to the next.

Over a small deck's whole space this gives exact tables: how many deals end after n cards, how
many never end, how many distinct cycles. Shard k = ranks [lo + k*size, lo + (k+1)*size) of the
range (`range = "LO:HI"`, default the whole deal space). The kernel is the sweep kernel
(kernels/sweep/cpu.py); candidates carry their rank.
"""

from __future__ import annotations

from ..dealspace import DealSpace
from ..errors import BmnError
from .base import Shard, Strategy, bounds, shards_of
from ..sweep import run_exhaustive


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


class Exhaustive(Strategy):
    name = "exhaustive"
    summary = "every deal of a rank range, stepping from deal to deal; exact tables over small decks"
    keys = frozenset({"range"})

    def _range(self, config, space: DealSpace) -> tuple[int, int]:
        return parse_range(config.range) if config.range else (0, space.count)

    def check(self, config, space, params, where):
        lo, hi = self._range(config, space) if config.range is None else parse_range(config.range, where)
        space.check_range(lo, hi)
        if hi - 1 > MAX_STORED_RANK:
            raise BmnError(f"{where}: ranks of this deal space go up to {space.count - 1:,} ({len(str(space.count - 1))} "
                           f"digits), but the games table stores ranks of at most 38 digits; give a range below "
                           f"10^38 (range = \"LO:HI\")")

    def shard_count(self, config, space, params):
        lo, hi = self._range(config, space)
        return shards_of(hi - lo, config.shard_size)

    def shard(self, config, space, params, k):
        first, last = self._range(config, space)
        lo = first + k * config.shard_size
        return Shard(k, self.name, {"lo": lo, "hi": min(last, lo + config.shard_size), **bounds(config)})

    wrapper = staticmethod(run_exhaustive)
    gpu = True

    def warm_up(self, space, device="cpu"):
        run_exhaustive(space, 0, min(space.count, 16), min_cards=0, device=device)


STRATEGY = Exhaustive()
