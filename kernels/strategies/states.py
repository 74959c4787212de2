"""`states`: random trick-boundary states, hunting cycles anywhere in the state space.

Cycles are rare among deals (none among 10^9 random standard deals) but any trick-boundary state
may lie on one or lead into one, and most states are not deals: hands of any sizes. A shard plays
random states of the stream (seed, shard): state j is deal j of the random stream (kernels/rng.py)
cut at a random place drawn after it, hand 1 holding the first part and leading. Every state with
both hands holding cards is equally likely (the census's states, kernels/strategies/census.py).
With `max_imbalance = K` only the states whose hands are at most K cards from equal hands are
sampled, each of them equally likely (kernels/sweep `run_random_states`): cycles favour hands near
equal (docs/atlas.md, "Where to aim").

Every cycle met is reported once per shard (a CycleRow) with:
  - `basin`: the shard's random states that entered it (summed over shards: how often the hunt
    meets it, about its closure's share of all states);
  - its backward closure (kernels/backward.py `closure`): `closure`, the states entering it;
    `closest` and `imbalance`, the first of them with the most nearly equal hands and its cards
    away from equal hands; `complete`, whether the search saw the whole closure within
    `max_states`;
  - its balanced deals (those in the closure with equal hands): the shard's candidates, so the
    games table gets one row each and the cycles table's `deals` counts them.
The closure of a cycle does not depend on where the shard met it: shards that meet the same cycle
report the same closure, and the cycles table keeps one. The shard's `deals` column counts the
states played; finished games are not tallied (a state is not a deal).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..backward import DEFAULT_MAX_STATES, closure
from ..notation import parse_deal
from ..sweep import run_random_states, run_random_states_batch
from ..tally import Candidate, CycleRow, ShardResult
from .base import EverySplit, Example, Shard, ShardParams, ShardPlan, StreamShards, Table, key, keys_of, shards_of


def run_states(space, seed: int, shard: int, count: int, *, start: int = 0, max_states: int = DEFAULT_MAX_STATES,
               max_imbalance: int | None = None, device: str = "cpu") -> ShardResult:
    """States start..start+count-1 of the stream (seed, shard), each cycle met with its closure; with
    `max_imbalance`, only states whose hands are at most that many cards from equal hands.

    The states are played on `device` (the same states and result on either); the closures are
    searched on the CPU."""
    played = run_random_states(space, seed, shard, count, start=start, device=device, max_imbalance=max_imbalance)
    return closed(space, played, max_states)


def closed(space, played: ShardResult, max_states: int) -> ShardResult:
    """A states shard's result from its played states: each cycle met once, with its closure."""
    result = ShardResult.empty(space.players)
    result.deals, result.cards, result.cycles = played.deals, played.cards, played.cycles
    first: dict[str, Candidate] = {}  # each cycle's first state met (by index), and how many entered it
    hits: dict[str, int] = {}
    for c in sorted(played.candidates, key=lambda c: c.index):
        first.setdefault(c.result.cycle_id, c)
        hits[c.result.cycle_id] = hits.get(c.result.cycle_id, 0) + 1
    spec = space.deck.spec()
    for cid, met in sorted(first.items(), key=lambda item: item[1].index):
        found = closure(parse_deal(met.hands), max_states=max_states)
        if found.cycle.cycle_id != cid:
            raise RuntimeError(f"the closure of cycle {cid} replays as cycle {found.cycle.cycle_id}")
        result.cycle_rows.append(CycleRow(
            cid, found.cycle.period_tricks, found.cycle.period_cards, spec, found.state, basin=hits[cid],
            complete=not found.truncated, closure=found.states, closest=found.closest, imbalance=found.imbalance))
        result.candidates += [Candidate(d.hands, met.index, d.result) for d in found.deals]
    return result


@dataclass(frozen=True, kw_only=True)
class StatesTable(Table):
    max_states: int = key(DEFAULT_MAX_STATES, "ancestor states a cycle's closure search visits at most")
    max_imbalance: int | None = key(None, "only states whose hands are at most this many cards from equal hands "
                                          "(|hand 1 - hand 2| // 2; not set: every state)", minimum=0,
                                    unsaid=True)


@dataclass(frozen=True, kw_only=True)
class StatesShard(ShardParams, keys_of(StatesTable)):
    """States 0..count-1 of the stream (seed, shard), every cycle met closed within `max_states`."""

    seed: int
    shard: int
    count: int


class States(EverySplit, StreamShards):
    name = "states"
    summary = ("random trick-boundary states (a random order of the deck cut at a random place, hand 1 leading): every "
               "cycle met, with its backward closure, its most nearly balanced state and its balanced deals")
    example = Example(
        search=dict(deck="0:8,1:2,2:2,3:2", deals=40_000, shard_size=10_000, seed=3),
        pin="b2f708cc2fac10ec16017bcd1578a2b6e8435782eee52102722d32968674c721",
    )
    warm_group = "sweep"
    Table = StatesTable
    Params = StatesShard
    gpu = True
    unit = "states"
    finite_games = False  # a state is not a deal: its finished games are not tallied
    players_why = "plays two-player states (backward play finds the closures)"
    split_why = "cuts each state at a random place"

    def plan(self, search, space, table: StatesTable):
        def shard(k: int) -> Shard:
            count = min(search.shard_size, search.deals - k * search.shard_size)
            return Shard(k, self.name, StatesShard(seed=search.seed, shard=k, count=count, **table.values()))
        return ShardPlan(shards_of(search.deals, search.shard_size), shard)

    def run(self, space, params: StatesShard, deals=(), device="cpu"):
        return run_states(space, params.seed, params.shard, params.count, max_states=params.max_states,
                          max_imbalance=params.max_imbalance, device=device)

    def run_batch(self, space, params, deals, device="cpu"):
        if len({(p.max_states, p.max_imbalance) for p in params}) != 1:
            return super().run_batch(space, params, deals, device)
        played = run_random_states_batch(space, [(p.seed, p.shard, p.count, 0) for p in params], device=device,
                                         max_imbalance=params[0].max_imbalance)
        return [closed(space, one, params[0].max_states) for one in played]

    def warm_up(self, space, device="cpu"):
        run_states(space, 0, 0, 16, max_states=16, device=device)
        closure(parse_deal(WARM_CYCLE), max_states=16)  # the backward kernels, whatever the deck


# A state on the one cycle of 0:6,1:2,2:2 (its census's canonical state): a closure to compile the
# backward kernels with before the first cycle is met.
WARM_CYCLE = "--J-/Q-Q-J-"


STRATEGY = States()
