"""Compile bmn's kernels into this node's Numba cache, once, before the node takes work.

Run by both cloud launchers on every worker node before its actors start (configs/cluster-aws.yaml:
worker_start_ray_commands; configs/rayjob.yaml: an init container sharing the cache volume):

    python /home/ray/bmn/configs/warm_kernels.py [DECK [SPLIT]] [--only NAME,... | --group GROUP]
                                   # default: standard, 26,26, every strategy

`--group` names one of the strategies' warm-up groups (kernels/strategies/base.py WARM_GROUPS, each
strategy's `warm_group`): `make test` warms the two that share no kernel side by side, then the
third, which uses both.

Numba keys a cached kernel by the CPU it was compiled for, so the cache is made on the node that
uses it (for its own CPU, with every instruction that CPU has) instead of in the image. Each
strategy's warm-up is what a worker runs when it starts, so afterwards the node's actors load every
kernel instead of compiling it, each on its own, all at once. A failure here costs only time: the
kernels are then compiled by the actors, as on a laptop.
"""

from __future__ import annotations

import os
import sys
import time


def _take(argv: list[str], flag: str) -> tuple[str | None, list[str]]:
    """`flag VALUE`'s value ("" where none follows; None where the flag is absent), and argv without them."""
    if flag not in argv:
        return None, argv
    at = argv.index(flag)
    return (argv[at + 1] if at + 1 < len(argv) else ""), argv[:at] + argv[at + 2:]


def main(argv: list[str]) -> int:
    from kernels.dealspace import DealSpace
    from kernels.decks import parse_deck
    from kernels.strategies import REGISTRY
    from kernels.strategies.base import WARM_GROUPS

    group, argv = _take(argv, "--group")  # --group GROUP: the strategies of one warm-up group
    names, argv = _take(argv, "--only")  # --only NAME,NAME: those strategies' kernels (a node that runs one)
    only = None
    if group is not None:
        if group not in WARM_GROUPS:
            print(f"warm_kernels: --group takes one of {', '.join(WARM_GROUPS)}, got {group or 'none'}",
                  file=sys.stderr)
            return 2
        only = [name for name, strategy in REGISTRY.items() if strategy.warm_group == group]
    elif names is not None:
        only = names.split(",") if names else []
        unknown = [name for name in only if name not in REGISTRY]
        if unknown or not only:
            print(f"warm_kernels: --only takes strategy names ({', '.join(REGISTRY)}), got {unknown or 'none'}",
                  file=sys.stderr)
            return 2
    deck = argv[0] if argv else "standard"
    space = DealSpace.of(parse_deck(deck), argv[1] if len(argv) > 1 else None)
    split = space.split
    start = time.perf_counter()
    for name, strategy in REGISTRY.items():
        if only is not None and name not in only:
            continue
        t0 = time.perf_counter()
        strategy.warm_up(space)
        print(f"warm_kernels: {name} ready in {time.perf_counter() - t0:.1f} s", flush=True)
    print(f"warm_kernels: {deck} {','.join(map(str, split))} in {time.perf_counter() - start:.1f} s "
          f"(cache {os.environ.get('NUMBA_CACHE_DIR')})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
