"""Random trick-boundary states against random deals, per CPU-second of one core (benchmarks/README.md,
"`states`: random trick-boundary states").

    python benchmarks/states_speed.py [COUNT] [DECK ...]      # default: 2,000,000 a call; standard, camicia

Each sweep is called three times (the first compiles) and the last call's CPU time counts.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kernels.dealspace import DealSpace  # noqa: E402
from kernels.decks import parse_deck  # noqa: E402
from kernels.sweep import run_random, run_random_states  # noqa: E402


def main(argv: list[str]) -> None:
    count = int(argv[0]) if argv else 2_000_000
    for deck in argv[1:] or ["standard", "camicia"]:
        space = DealSpace.of(parse_deck(deck), players=2)
        for name, run in (("states", lambda k, space=space: run_random_states(space, 1, k, count)),
                          ("deals", lambda k, space=space: run_random(space, 1, k, count, min_cards=10**6))):
            for k in range(3):
                t = time.process_time()
                result = run(k)
                t = max(time.process_time() - t, 1e-9)
            print(f"{deck} {name}: {result.deals / t / 1e6:.2f} M per CPU s, "
                  f"{result.cards / result.deals:.0f} cards each")


if __name__ == "__main__":
    main(sys.argv[1:])
