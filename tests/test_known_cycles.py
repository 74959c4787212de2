"""The two published cycles reachable from balanced deals: Casella's (standard deck, 2024) and
Zanotto's (Camicia, 2017). Their figures on every engine, every balanced deal that enters them
(backward play, each replayed on the reference player), and the structure the cycle research
measures against (benchmarks/README.md, "Cycles by construction"): both are quasi-periodic, the
same pattern of penalty cards coming back within the period with some penalty values exchanged."""

from __future__ import annotations

import pytest
from helpers import CASELLA, CASELLA_ID, ZANOTTO, ZANOTTO_ID, play_engine

from kernels.backward import ancestors
from kernels.engines.reference import Game, play_reference
from kernels.notation import parse_deal


def test_zanotto_camicia_cycle_figures(engine):
    r = play_engine(parse_deal(ZANOTTO), engine)
    assert (r.outcome, r.winner, r.cycle_id) == ("cycle", None, ZANOTTO_ID)
    assert (r.preperiod_tricks, r.preperiod_cards) == (0, 0)  # the deal is a state of its cycle
    assert (r.period_tricks, r.period_cards) == (84, 546)
    assert (r.tricks, r.cards) == (84, 546)


def test_every_balanced_deal_entering_the_camicia_cycle():
    back = ancestors(parse_deal(ZANOTTO), max_states=1_000_000)
    assert not back.truncated
    hands = {d.hands for d in back.deals}
    assert back.count == len(hands) == 90 and ZANOTTO in hands
    for d in back.deals:
        deal = parse_deal(d.hands)
        assert [len(h) for h in deal] == [20, 20]
        r = play_reference(deal)
        assert (r.outcome, r.cycle_id) == ("cycle", ZANOTTO_ID)
        assert (r.tricks, r.cards) == (d.result.tricks, d.result.cards)


def trick_states(deal: str, count: int) -> list[tuple[int, tuple]]:
    game = Game(parse_deal(deal))
    states = []
    for _ in range(count):
        states.append(game.state())
        game.play_trick()
    return states


def shape(state) -> tuple:
    """Who leads and where the penalty cards lie, values forgotten."""
    lead, hands = state
    return lead, tuple(tuple(v > 0 for v in h) for h in hands)


@pytest.mark.parametrize("deal, period, first, sub", [(ZANOTTO, 84, 0, 28), (CASELLA, 62, 4, 31)],
                         ids=["zanotto", "casella"])
def test_known_cycles_are_quasi_periodic(deal, period, first, sub):
    states = trick_states(deal, first + period + 1)
    cycle = states[first:]
    assert cycle[period] == cycle[0]
    # After `sub` tricks the same pattern of penalty cards is back, with the same leader, but it
    # is not the same state: some penalty values have changed places.
    for t in range(period):
        assert shape(cycle[(t + sub) % period]) == shape(cycle[t])
        assert cycle[(t + sub) % period] != cycle[t]
    assert all(shape(cycle[t]) != shape(cycle[0]) for t in range(1, sub))


def test_the_camicia_cycle_is_its_own_mirror_after_half_a_period():
    cycle = trick_states(ZANOTTO, 84)
    lead, hands = cycle[0]
    assert cycle[42] == (1 - lead, (hands[1], hands[0]))


def test_the_known_cycle_ids_differ():
    assert play_reference(parse_deal(CASELLA)).cycle_id == CASELLA_ID != ZANOTTO_ID


def test_the_cycles_the_camicia_composition_family_met_replay_on_the_reference_player():
    """tests/data/camicia_family_cycles.tsv: a balanced deal of each cycle that benchmarks/atlas/camicia.toml
    met (four each of 1 2 3, 24 and 28 cards; docs/atlas.md, "From small decks to full ones"), its cycle
    id and period as the reference player and the fast engine replay it."""
    from pathlib import Path

    from kernels.decks import parse_deck
    from kernels.play import play

    lines = [line.split("\t") for line in (Path(__file__).parent / "data" / "camicia_family_cycles.tsv").read_text()
             .splitlines() if line and not line.startswith(("#", "deck\t"))]
    assert len(lines) == 36 and {deck for deck, *_ in lines} == {"0:12,1:4,2:4,3:4", "0:16,1:4,2:4,3:4"}
    for deck, cycle_id, tricks, cards, hands, _ in lines:
        deal = parse_deal(hands)
        assert sorted(v for hand in deal for v in hand) == sorted(parse_deck(deck).cards())
        for r in (play_reference(deal), play(deal)):
            assert (r.outcome, r.cycle_id, r.period_tricks, r.period_cards) == ("cycle", cycle_id, int(tricks),
                                                                                int(cards))
