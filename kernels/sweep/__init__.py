"""The sweeps: play a run of deals one after another and tally them, on a CPU core or on a GPU.

    modes.py   what every sweep shares: its modes (a rank range, a random stream, random states)
    cpu.py     the CPU's sweep kernel (any engine; the bitmask engine's words kept across deals)
    gpu.py     the GPU's host side: launch, sum the threads' tallies, replay the kept deals on the CPU
    cuda.py    the GPU's kernels (numba-cuda; imported only when a GPU is asked for)

    streams.py the random stream's states as the states mode cuts them (both host sides regenerate them)

The three entry points below check a shard, pick the device's module (`on`) and return the same
ShardResult on either: which deals a shard holds and which it keeps do not depend on the device.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ..dealspace import DealSpace
from ..errors import BmnError
from ..game import GameResult
from ..notation import format_deal
from ..rng import stream_key
from ..tally import CARDS, CYCLES, DEALS, N_CAND, Candidate, ShardResult
from . import cpu
from .cpu import engine_for
from .modes import EXHAUSTIVE, NO_FINITE, RANDOM, STATES
from .streams import states_at

DEVICES = ("cpu", "gpu")  # where sweeps play: cpu.py, or gpu.py (which imports numba-cuda: only when asked for)

__all__ = ["DEVICES", "EXHAUSTIVE", "NO_FINITE", "RANDOM", "STATES", "engine_for", "near_cuts", "run_exhaustive",
           "run_exhaustive_batch", "run_random", "run_random_batch", "run_random_states", "run_random_states_batch",
           "states_at"]


def on(device: str):
    """The module that plays sweeps on `device` (one of DEVICES)."""
    if device == "cpu":
        return cpu
    if device == "gpu":
        from . import gpu  # (numba-cuda is imported only where a GPU is asked for)
        return gpu
    raise BmnError(f"unknown device {device!r}; choose one of {', '.join(DEVICES)}")


def _engine(device: str, engine: str) -> dict:
    # The CPU plays any engine; the GPU plays the bitmask engine's game only (gpu.check_space).
    return {"engine": engine} if device == "cpu" else {}


def run_exhaustive(space: DealSpace, lo: int, hi: int, *, min_cards: int, min_tricks: int = 0,
                   engine: str = "auto", device: str = "cpu") -> ShardResult:
    """Every deal of ranks [lo, hi), stepping from one deal to the next (no per-deal unranking).

    Candidate indexes are offsets from `lo` (rank = lo + index)."""
    lo, hi = int(lo), int(hi)
    space.check_range(lo, hi)
    if hi - lo >= 2**62:
        raise BmnError(f"a shard of {hi - lo} deals is too large; cut the range into shards")
    return on(device).run_exhaustive(space, lo, hi, min_cards=int(min_cards), min_tricks=int(min_tricks),
                                     **_engine(device, engine))


def _penalties(space: DealSpace) -> np.ndarray:
    return np.array([v for v in space.deck.cards() if v], dtype=np.uint8)


def run_random(space: DealSpace, seed: int, shard: int, count: int, *, start: int = 0, min_cards: int,
               min_tricks: int = 0, engine: str = "auto", device: str = "cpu") -> ShardResult:
    """Deals start..start+count-1 of the uniform random stream of (seed, shard).

    Candidate indexes are deal numbers in the stream, so any candidate can be regenerated."""
    key = stream_key(int(seed), int(shard))
    return on(device).run_random(space, key, _penalties(space), int(start), int(count), min_cards=int(min_cards),
                                 min_tricks=int(min_tricks), **_engine(device, engine))


def near_cuts(total: int, max_imbalance: int) -> list[int]:
    """The cuts (hand 1's cards) whose hands are at most `max_imbalance` cards from equal hands, as the
    backward closure counts imbalance (|hand 1 - hand 2| // 2), each hand holding a card."""
    return [c for c in range(1, total) if abs(2 * c - total) // 2 <= max_imbalance]


def run_random_states(space: DealSpace, seed: int, shard: int, count: int, *, start: int = 0, engine: str = "auto",
                      device: str = "cpu", max_imbalance: int | None = None) -> ShardResult:
    """Random trick-boundary states start..start+count-1 of the stream (seed, shard), two players:
    deal j of the stream, hand 1 holding its first `random_cut` cards and leading.

    With `max_imbalance`, only the states whose hands are that near equal (`near_cuts`, W of them):
    state j is cut at the (j mod W)-th of them and its cards are deal j // W of that cut's own stream,
    so the states are uniform over the near-equal ones and each is a random deal of one split.

    The result counts the states played, their cards and the states that cycle; every state that
    cycles is a candidate (its hands cut where it was; its index is j). Finished games are not
    tallied (a state is not a deal)."""
    return run_random_states_batch(space, [(seed, shard, count, start)], engine=engine, device=device,
                                   max_imbalance=max_imbalance)[0]


def run_random_states_batch(space: DealSpace, shards: Sequence[tuple[int, int, int, int]], *, engine: str = "auto",
                            device: str = "cpu", max_imbalance: int | None = None) -> list[ShardResult]:
    """`run_random_states` of several shards, (seed, shard, count, start) each: on a GPU, in one batch."""
    if space.players != 2:
        raise BmnError("random states are two-player states")
    if max_imbalance is not None:
        return _near_states(space, shards, near_cuts(space.deck.total, int(max_imbalance)), engine, device)
    penalties = _penalties(space)
    keys = [stream_key(int(seed), int(shard)) for seed, shard, _, _ in shards]
    if device == "gpu":
        from . import gpu
        tallies = gpu.states_tallies(space, [(int(key), int(start), int(count)) for key, (_, _, count, start)
                                             in zip(keys, shards)], penalties)
    else:
        tallies = [on(device).states_tally(space, key, penalties, int(start), int(count), **_engine(device, engine))
                   for key, (_, _, count, start) in zip(keys, shards)]
    return [_states_result(space, key, penalties, tally) for key, tally in zip(keys, tallies)]


def _states_result(space: DealSpace, key, penalties: np.ndarray, tally) -> ShardResult:
    """A states shard's result from its sweep's tally: its kept states regenerated, cut where they were."""
    stats = tally.stats
    result = ShardResult.empty(space.players)
    result.deals, result.cards, result.cycles = int(stats[DEALS]), int(stats[CARDS]), int(stats[CYCLES])
    kept = int(stats[N_CAND])
    index = tally.cand_index[:kept].copy()
    cuts = np.zeros(kept, dtype=np.int64)
    rows = np.zeros((kept, space.deck.total), dtype=np.uint8)
    states_at(key, penalties, index, rows, cuts)
    letters = space.deck.max_value <= 4
    result.candidates = [Candidate(format_deal([rows[k, :cuts[k]], rows[k, cuts[k]:]], letters), int(index[k]),
                                   GameResult.from_row(tally.cand_rows[k])) for k in range(kept)]
    return result


def _near_states(space: DealSpace, shards: Sequence[tuple[int, int, int, int]], cuts: list[int], engine: str,
                 device: str) -> list[ShardResult]:
    """Each shard's states near equal hands: for each cut, a run of random deals of its split from the cut's
    own stream (all of them one GPU batch), their candidates numbered back into the shard's states."""
    width = len(cuts)
    parts = []  # (the shard's position, the cut's place i, the cut's space, its stream key, first deal, count)
    for n, (seed, shard, count, start) in enumerate(shards):
        key = int(stream_key(int(seed), int(shard)))  # each cut's stream is keyed from the shard's
        stop = start + count
        for i, cut in enumerate(cuts):
            first = max(0, -(-(start - i) // width))  # the deals m of this cut with start <= m * width + i < stop
            last = (stop - 1 - i) // width
            if last >= first:
                parts.append((n, i, DealSpace(space.deck, (cut, space.deck.total - cut)), stream_key(key, cut), first,
                              last - first + 1))
    penalties = _penalties(space)
    if device == "gpu":
        from . import gpu
        tallies = gpu.random_tallies(space, [(int(key), first, count, part.split[0]) for _, _, part, key, first, count
                                             in parts], penalties, min_cards=NO_FINITE)
        played = [ShardResult.from_tally(t, part) for t, (_, _, part, _, _, _) in zip(tallies, parts)]
    else:
        played = [on(device).run_random(part, key, penalties, first, count, min_cards=NO_FINITE,
                                        **_engine(device, engine)) for _, _, part, key, first, count in parts]
    results = [ShardResult.empty(space.players) for _ in shards]
    for (n, i, _, _, _, _), part in zip(parts, played):
        result = results[n]
        result.deals += part.deals
        result.cards += part.cards
        result.cycles += part.cycles
        result.candidates += [replace(c, index=c.index * width + i) for c in part.candidates]
    for result in results:
        result.candidates.sort(key=lambda c: c.index)
    return results


def run_random_batch(space: DealSpace, shards: Sequence[tuple[int, int, int, int]], *, min_cards: int,
                     min_tricks: int = 0, engine: str = "auto", device: str = "cpu") -> list[ShardResult]:
    """`run_random` of several shards, (seed, shard, count, start) each: on a GPU, in one batch."""
    if device != "gpu":
        return [run_random(space, seed, shard, count, start=start, min_cards=min_cards, min_tricks=min_tricks,
                           engine=engine, device=device) for seed, shard, count, start in shards]
    from . import gpu
    jobs = [(int(stream_key(int(seed), int(shard))), int(start), int(count)) for seed, shard, count, start in shards]
    return gpu.run_random_batch(space, jobs, _penalties(space), min_cards=int(min_cards), min_tricks=int(min_tricks))


def run_exhaustive_batch(space: DealSpace, ranges: Sequence[tuple[int, int]], *, min_cards: int, min_tricks: int = 0,
                         engine: str = "auto", device: str = "cpu") -> list[ShardResult]:
    """`run_exhaustive` of several rank ranges: on a GPU, in one batch."""
    if device != "gpu":
        return [run_exhaustive(space, lo, hi, min_cards=min_cards, min_tricks=min_tricks, engine=engine, device=device)
                for lo, hi in ranges]
    for lo, hi in ranges:
        space.check_range(int(lo), int(hi))
    from . import gpu
    return gpu.run_exhaustive_batch(space, [(int(lo), int(hi)) for lo, hi in ranges], min_cards=int(min_cards),
                                    min_tricks=int(min_tricks))
