"""The host's work for one exhaustive GPU shard of the standard deck, against the device's modelled time.

    python benchmarks/gpu_host.py [RANKS] [MIN_CARDS] [SAMPLE]      # default: 10^9 ranks, 3000 cards, 2,000,000

No GPU is needed: what the host does for a shard is measured here, on this CPU. For a shard of RANKS
ranks from Casella's deal on: cutting its range into pieces (`exhaustive_pieces`: a few big-number
unrankings), and for each deal the device keeps, unranking it again in compiled code (`ranked_deals`:
its hands for the games table; the device gives a kept finished game's cards, tricks and winner, and
only cycles, which random deals of the standard deck do not meet, are replayed). How many deals such a
shard keeps is sampled on the CPU (SAMPLE consecutive ranks from its start, the CPU sweep). The device's
time for the shard is the warp model's (benchmarks/warp_model.py: random standard deals on one H200), a
model: the host's share is the two over it.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kernels.dealspace import DealSpace  # noqa: E402
from kernels.decks import parse_deck  # noqa: E402
from kernels.notation import parse_deal  # noqa: E402
from kernels.sweep import gpu, run_exhaustive  # noqa: E402

CASELLA = "---K---Q-KQAJ-----AAJ--J--/----------Q----KQ-J-----KA"
MODEL_DEALS_PER_S = 1.14e9  # the warp model's figure for the shipped kernel, random standard deals on one H200
# (benchmarks/README.md, "The GPU sweep": a model, uncalibrated until a GPU measures the kernel)


def measure(ranks: int, min_cards: int, sample: int) -> dict:
    space = DealSpace.of(parse_deck("standard"), players=2)
    lo = space.rank(parse_deal(CASELLA))
    t = time.perf_counter()
    pieces = gpu.exhaustive_pieces(space, [(lo, lo + ranks)])
    cut_s = time.perf_counter() - t
    sampled = run_exhaustive(space, lo, lo + sample, min_cards=min_cards)  # (compiles on a first run: untimed)
    rate = len(sampled.candidates) / sample
    kept = max(1, round(rate * ranks))
    # The kept deals: at offsets spread over the shard's pieces, unranked in compiled code, then replayed.
    deals_at = gpu.ranked_deals(space)
    offsets = np.linspace(0, pieces[0].count - 1, num=kept, dtype=np.int64)
    deals_at([pieces[0]] * 2, offsets[:2])  # (compiles)
    t = time.perf_counter()
    deals_at([pieces[0]] * kept, offsets)
    kept_s = time.perf_counter() - t
    device_s = ranks / MODEL_DEALS_PER_S
    return dict(ranks=ranks, pieces=len(pieces), cut_s=cut_s, min_cards=min_cards, sample=sample,
                sampled_kept=len(sampled.candidates), kept=kept, kept_s=kept_s, device_s=device_s,
                share=(cut_s + kept_s) / device_s)


def main(argv: list[str]) -> None:
    ranks = int(argv[0]) if argv else 10**9
    min_cards = int(argv[1]) if len(argv) > 1 else 3000
    sample = int(argv[2]) if len(argv) > 2 else 2_000_000
    m = measure(ranks, min_cards, sample)
    print(f"a shard of {m['ranks']:,} standard ranks from Casella's deal: {m['pieces']} piece(s), cut in "
          f"{m['cut_s'] * 1e3:.2f} ms; keeps about {m['kept']:,} deals of at least {m['min_cards']} cards "
          f"({m['sampled_kept']} in the first {m['sample']:,} ranks, on the CPU), unranked in "
          f"{m['kept_s'] * 1e3:.1f} ms; the device's time {m['device_s']:.2f} s "
          f"(uncalibrated model, {MODEL_DEALS_PER_S:.3g} deals/s): the host's share {m['share']:.2%}")


if __name__ == "__main__":
    main(sys.argv[1:])
