"""The engine contract (kernels/engines/__init__.py, workspace.py): one table of engines (name,
id, what each holds, its kernels), the rule that picks one, the compiled dispatch that mirrors the
table, the workspace; and every engine, through every way of calling it, against the reference."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import CASELLA

from kernels.engines import (
    ENGINE_TABLE,
    ENGINES,
    FAST,
    GENERAL,
    PERCARD,
    Workspace,
    default_brent_start,
    engine_named,
    new_workspace,
    pick_engine,
    play_one,
    play_rows,
)
from kernels.engines.reference import play_reference
from kernels.errors import BmnError
from kernels.game import F_TRICKS, N_FIELDS, GameResult
from kernels.notation import parse_deal

STANDARD = [0] * 36 + [1, 2, 3, 4] * 4


def shuffled(cards, n, seed):
    rng = np.random.default_rng(seed)
    return np.stack([rng.permutation(np.array(cards, dtype=np.uint8)) for _ in range(n)])


def cut(seq, split):
    return [tuple(int(v) for v in seq[sum(split[:p]):sum(split[:p + 1])]) for p in range(len(split))]


def holders(deals, split):
    shape = (len(split), deals.shape[1], int((deals != 0).sum(axis=1).max()), int(deals.max()))
    return [e for e in ENGINE_TABLE if e.holds(*shape)]


CASELLA_SEQ = np.array([v for hand in parse_deal(CASELLA) for v in hand], dtype=np.uint8)
DECKS = {
    # name: (deals, split); the standard deck with the Casella cycle, a small deck where cycles are common,
    # three players
    "standard": (np.vstack([shuffled(STANDARD, 30, 1), CASELLA_SEQ[None, :]]), (26, 26)),
    "standard 20/32": (shuffled(STANDARD, 30, 2), (20, 32)),
    "small": (shuffled([0] * 8 + [1, 1], 40, 3), (5, 5)),
    "three players": (shuffled([0] * 13 + [1, 1, 2, 2, 3, 3, 4, 4], 60, 4), (7, 7, 7)),
    "three players, uneven": (shuffled([0] * 8 + [1, 1, 2, 3], 60, 5), (3, 4, 5)),
}


# -- the table ------------------------------------------------------------------------------------

def test_every_engine_round_trips_between_name_id_and_record():
    assert [e.id for e in ENGINE_TABLE] == list(range(len(ENGINE_TABLE)))
    for engine in ENGINE_TABLE:
        assert engine_named(engine.name) is engine
        assert ENGINE_TABLE[engine.id] is engine
    assert [engine_named(n).id for n in ("fast", "percard", "general")] == [FAST, PERCARD, GENERAL]


def test_the_engine_choices_are_auto_then_the_table_fastest_first():
    assert ENGINES == ("auto", "fast", "percard", "general")


@pytest.mark.parametrize("shape,name", [
    ((2, 52, 16, 4), "fast"),
    ((2, 64, 16, 9), "fast"),
    ((2, 52, 17, 4), "percard"),
    ((2, 65, 16, 4), "percard"),
    ((2, 1024, 300, 9), "percard"),
    ((3, 52, 16, 4), "general"),
    ((8, 1024, 300, 9), "general"),
])
def test_auto_picks_the_fastest_engine_that_holds_the_deals(shape, name):
    assert pick_engine(*shape) == name


@pytest.mark.parametrize("name", ["fast", "percard", "general"])
def test_a_named_engine_that_holds_the_deals_is_used(name):
    assert pick_engine(2, 52, 16, 4, name) == name


@pytest.mark.parametrize("name,shape,message", [
    ("fast", (3, 52, 16, 4), "the fast kernel holds two-player deals of at most 64 cards"),
    ("fast", (2, 52, 17, 4), "use --engine percard"),
    ("fast", (2, 66, 16, 4), "use --engine percard"),
    ("percard", (3, 52, 16, 4), "plays two-player deals only; use --engine general"),
    ("turbo", (2, 52, 16, 4), "unknown engine 'turbo'; choose one of auto, fast, percard, general"),
])
def test_a_named_engine_that_cannot_hold_the_deals_is_refused(name, shape, message):
    with pytest.raises(BmnError, match=message):
        pick_engine(*shape, name)


# -- every engine, every way of calling it, against the reference ----------------------------------

@pytest.mark.parametrize("deck", DECKS)
def test_every_engine_that_holds_a_deck_plays_like_the_reference(deck):
    deals, split = DECKS[deck]
    split_arr = np.array(split, dtype=np.int64)
    engines = holders(deals, split)
    assert engines[-1].name == "general" and (len(engines) == 3) == (deck.startswith("standard") or deck == "small")
    for leader in range(len(split)):
        want = [play_reference(cut(seq, split), leader) for seq in deals]
        for engine in engines:
            brent = default_brent_start(deals.shape[1])
            batch = np.zeros((len(deals), N_FIELDS), dtype=np.int64)
            engine.batch(deals, split_arr, leader, brent, batch)
            ws = new_workspace(len(split), deals.shape[1])  # one workspace for every deal, in turn
            for seq, row, expected in zip(deals, batch, want):
                one = np.zeros(N_FIELDS, dtype=np.int64)
                engine.play(seq, split_arr, leader, brent, ws, one)
                dispatched = np.zeros(N_FIELDS, dtype=np.int64)
                play_one(engine.id, seq, split_arr, leader, brent, ws, dispatched)
                for how, got in (("batch", row), ("play", one), ("play_one", dispatched)):
                    assert GameResult.from_row(got) == expected, f"{engine.name} ({how}) on {cut(seq, split)}"


@pytest.mark.parametrize("deck", DECKS)
def test_play_rows_plays_each_row_with_its_own_cut(deck):
    deals, split = DECKS[deck]
    rng = np.random.default_rng(6)
    players = len(split)
    # Row i cut at sorted random points: every hand non-empty (so every engine of the table holds it).
    splits = np.array([np.diff([0, *sorted(rng.choice(np.arange(1, deals.shape[1]), players - 1, replace=False)),
                                deals.shape[1]]) for _ in deals], dtype=np.int64)
    want = [play_reference(cut(seq, list(s))) for seq, s in zip(deals, splits)]
    for engine in holders(deals, split):
        if engine.name == "fast" and max((seq != 0).sum() for seq in deals) > 16:
            continue
        out = np.zeros((len(deals), N_FIELDS), dtype=np.int64)
        play_rows(engine.id, deals, splits, default_brent_start(deals.shape[1]), out)
        assert [GameResult.from_row(r) for r in out] == want, engine.name


def test_play_one_dispatches_each_id_to_that_engines_kernel():
    # Outside the two-player engines' domain on purpose: on a three-player deal the bitmask engine
    # plays hand 1 against hands 2 and 3 together, the per-card two-player trick never lets hand 3
    # play, and only the general engine plays all three. So each kernel gives its own result, and
    # play_one must give, for each id, the result of that id's kernel. (This deal ends in a win
    # every way, so no engine needs a cycle measured with the wrong trick.)
    seq = np.array([0, 1, 0, 0, 2, 0, 0, 3, 0, 1, 0, 0], dtype=np.uint8)
    split = np.array([4, 4, 4], dtype=np.int64)
    ws = new_workspace(3, len(seq))
    rows = {}
    for engine in ENGINE_TABLE:
        direct = np.zeros(N_FIELDS, dtype=np.int64)
        engine.play(seq, split, 0, 100, ws, direct)
        dispatched = np.zeros(N_FIELDS, dtype=np.int64)
        play_one(engine.id, seq, split, 0, 100, ws, dispatched)
        assert dispatched.tolist() == direct.tolist(), engine.name
        rows[engine.name] = tuple(direct)
    assert len(set(rows.values())) == len(ENGINE_TABLE), rows
    assert GameResult.from_row(np.array(rows["general"])) == play_reference(cut(seq, [4, 4, 4]))


@pytest.mark.parametrize("deck", ["standard", "small", "three players"])
def test_results_do_not_depend_on_when_cycle_detection_starts(deck):
    # default_brent_start only saves work: a cycle entered before it is still measured exactly.
    deals, split = DECKS[deck]
    split_arr = np.array(split, dtype=np.int64)
    for engine in holders(deals, split):
        rows = []
        for brent in (0, 1, 7, default_brent_start(deals.shape[1])):
            out = np.zeros((len(deals), N_FIELDS), dtype=np.int64)
            engine.batch(deals, split_arr, 0, brent, out)
            rows.append(out.tolist())
        assert all(r == rows[0] for r in rows), engine.name


# -- the workspace ----------------------------------------------------------------------------------

@pytest.mark.parametrize("players,total,capacity", [(2, 2, 2), (2, 3, 4), (2, 52, 64), (3, 64, 64), (8, 65, 128),
                                                    (8, 1024, 1024)])
def test_a_workspace_is_one_named_value_with_three_slots_of_ring_buffers(players, total, capacity):
    ws = new_workspace(players, total)
    assert isinstance(ws, Workspace)
    assert ws._fields == ("hands", "head", "size", "still_in", "pile", "enc")
    assert (ws.hands.shape, ws.hands.dtype) == ((3, players, capacity), np.uint8)
    for field in (ws.head, ws.size):
        assert (field.shape, field.dtype) == ((3, players), np.int64)
    assert (ws.still_in.shape, ws.still_in.dtype) == ((3, players), np.uint8)
    assert (ws.pile.shape, ws.pile.dtype) == ((capacity,), np.uint8)
    assert (ws.enc.shape, ws.enc.dtype) == ((2, total + players), np.uint8)


def test_cycle_detection_starts_after_almost_every_finite_game_is_over():
    # So the common case pays nothing for it (the record games, over 1,100 tricks, do pay).
    out = np.zeros((2000, N_FIELDS), dtype=np.int64)
    engine_named("fast").batch(shuffled(STANDARD, 2000, 7), np.array([26, 26]), 0, 10**9, out)
    assert out[:, F_TRICKS].max() < default_brent_start(52)
