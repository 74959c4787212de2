"""The loop over rounds of random deals that `climb` and `longest` share (kernels/strategies/rounds.py)."""

from __future__ import annotations

from helpers import STANDARD

from kernels.engines.reference import play_reference
from kernels.notation import parse_deal
from kernels.strategies import run_random
from kernels.strategies.rounds import Rounds


def _key(result):
    return ([(c.hands, c.index, c.result) for c in result.candidates], result.deals, result.cards, result.cycles,
            result.wins.tolist(), result.histogram.tolist(), result.longest)


def test_rounds_with_nothing_found_are_the_random_shard():
    rounds = Rounds(STANDARD, 4, 2, 25_000, 10_000, min_cards=900)
    sizes = []
    while rounds.left:
        played = rounds.play(600)  # a round keeps more games than the shard does
        sizes.append(played.deals)
        assert all(c.result.cards >= 600 for c in played.candidates)
    assert sizes == [10_000, 10_000, 5_000] and (rounds.rounds, rounds.deals) == (3, 25_000)
    whole = run_random(STANDARD, 4, 2, 25_000, min_cards=900)
    assert _key(rounds.finish()) == _key(whole)
    assert rounds.longest_forward == whole.max_cards


def test_replay_plays_the_last_round_again():
    rounds = Rounds(STANDARD, 4, 2, 25_000, 10_000, min_cards=900, min_tricks=120)
    rounds.play(900)
    rounds.play(900)
    again = rounds.replay(500)
    assert _key(again) == _key(run_random(STANDARD, 4, 2, 10_000, start=10_000, min_cards=500))
    assert rounds.result.deals == 20_000  # not tallied twice


def test_found_deals_are_tallied_and_kept_with_the_index_they_came_from():
    rounds = Rounds(STANDARD, 4, 2, 10_000, 10_000, min_cards=1500)
    rounds.play(1500)
    before, candidates = _key(rounds.result), len(rounds.candidates)
    elsewhere = run_random(STANDARD, 5, 0, 20_000, min_cards=800).candidates  # deals this shard never played
    long = next(c for c in elsewhere if c.result.cards >= 1500)
    short = next(c for c in elsewhere if c.result.outcome == "win" and c.result.cards < 1500)
    rounds.add(long.result, long.hands, 7)
    rounds.add(short.result, short.hands, 8)
    result = rounds.finish()
    assert result.deals == before[1] + 2 and result.cards == before[2] + long.result.cards + short.result.cards
    assert result.histogram[long.result.cards] == before[5][long.result.cards] + 1
    kept = {c.hands: c.index for c in result.candidates}
    assert kept[long.hands] == 7 and short.hands not in kept
    assert len(kept) == candidates + 1
    assert [c.index for c in result.candidates] == sorted(c.index for c in result.candidates)
    for c in result.candidates:
        assert play_reference(parse_deal(c.hands)) == c.result
