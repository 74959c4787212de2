"""A slow, obviously correct player of docs/rules.md: the oracle every kernel is tested against.

It plays one card at a time with deques, remembers every trick-boundary state in a dict, and
follows the rules' sentences as literally as possible. Nothing here is written for speed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..cycleid import cycle_id_of_states
from ..game import GameResult, cycle_id_hex
from ..notation import check_deal


@dataclass
class TrickRecord:
    """The state after a trick: who leads next and every hand (top card first)."""

    tricks: int
    cards: int
    leader: int  # 0-based
    hands: tuple[tuple[int, ...], ...]
    pile: tuple[int, ...]  # the pile that was just picked up, in the order it was played


class Game:
    """One game in progress, advanced a trick at a time."""

    def __init__(self, deal: Sequence[Sequence[int]], leader: int = 0):
        check_deal(deal)
        self.n = len(deal)
        self.hands = [deque(int(v) for v in hand) for hand in deal]
        # A player is out once they must play and hold no card. A player holding no card who has
        # not yet been called to play is still in: they may still have to pay (docs/rules.md).
        self.still_in = [True] * self.n
        self.leader = leader  # hand 1 leads a deal; another leader plays from a mid-game state
        self.tricks = 0
        self.cards = 0
        self.winner: int | None = None
        self.last_pile: tuple[int, ...] = ()

    def state(self) -> tuple:
        """The trick-boundary state. With two players nobody is ever out at a boundary."""
        hands = tuple(tuple(h) for h in self.hands)
        if self.n == 2:
            return (self.leader, hands)
        return (self.leader, hands, tuple(self.still_in))

    def _next_in(self, player: int) -> int:
        q = (player + 1) % self.n
        while not self.still_in[q]:
            q = (q + 1) % self.n
        return q

    def check_boundary(self) -> bool:
        """Rule: at a trick boundary, if only one player holds cards, that player has won."""
        holders = [i for i in range(self.n) if self.hands[i]]
        if len(holders) == 1:
            self.winner = holders[0]
            return True
        return False

    def play_trick(self) -> bool:
        """Play one trick from a boundary. Returns True when the game is over."""
        if self.winner is not None or self.check_boundary():
            return True
        pile: list[int] = []
        player = self.leader
        owed = 0  # cards still to be paid for the last penalty card; 0 in free play
        creditor = -1  # who played the last penalty card
        while True:
            hand = self.hands[player]
            if not hand:
                # A player who must play and holds no card is out.
                self.still_in[player] = False
                left_in = [i for i in range(self.n) if self.still_in[i]]
                if len(left_in) == 1:
                    # The last player in wins and picks up the pile; that pickup is a trick.
                    self.winner = left_in[0]
                    self.hands[self.winner].extend(pile)
                    if pile:
                        self.tricks += 1
                    self.last_pile = tuple(pile)
                    return True
                if owed > 0:
                    # Out while paying: the creditor takes the pile and leads.
                    self.hands[creditor].extend(pile)
                    self.tricks += 1
                    self.leader = creditor
                    self.last_pile = tuple(pile)
                    return self.check_boundary()
                # Out in free play: the pile stays and the next player still in plays.
                player = self._next_in(player)
                continue
            card = hand.popleft()
            pile.append(card)
            self.cards += 1
            if card > 0:
                owed = card
                creditor = player
                player = self._next_in(player)
            elif owed > 0:
                owed -= 1
                if owed == 0:
                    # The pile goes under the creditor's hand in the order it was played.
                    self.hands[creditor].extend(pile)
                    self.tricks += 1
                    self.leader = creditor
                    self.last_pile = tuple(pile)
                    return self.check_boundary()
            else:
                player = self._next_in(player)


def play_reference(deal: Sequence[Sequence[int]], leader: int = 0) -> GameResult:
    """Play a deal to its end, or until a trick-boundary state repeats (a cycle).

    `leader` (0-based) plays the game from a trick-boundary state where another hand leads.
    """
    game = Game(deal, leader)
    seen: dict[tuple, tuple[int, int, int]] = {}  # state -> (index, tricks, cards)
    states: list[tuple] = []
    while True:
        if game.check_boundary():
            return GameResult("win", game.winner + 1, game.tricks, game.cards)
        state = game.state()
        if state in seen:
            index, pre_tricks, pre_cards = seen[state]
            cycle_states = [(s[0], s[1]) for s in states[index:]]
            return GameResult(
                "cycle",
                None,
                game.tricks,
                game.cards,
                pre_tricks,
                pre_cards,
                game.tricks - pre_tricks,
                game.cards - pre_cards,
                cycle_id_hex(cycle_id_of_states(cycle_states)),
            )
        seen[state] = (len(states), game.tricks, game.cards)
        states.append(state)
        if game.play_trick():
            return GameResult("win", game.winner + 1, game.tricks, game.cards)


def trace_reference(
    deal: Sequence[Sequence[int]], leader: int = 0, max_tricks: int | None = None
) -> Iterator[TrickRecord]:
    """The game trick by trick: the state after each trick, until it ends or first repeats."""
    game = Game(deal, leader)
    seen = set()
    while max_tricks is None or game.tricks < max_tricks:
        state = game.state()
        if state in seen:
            return
        seen.add(state)
        before = game.tricks
        over = game.play_trick()
        if game.tricks > before or over:
            yield TrickRecord(
                game.tricks, game.cards, game.leader, tuple(tuple(h) for h in game.hands), game.last_pile
            )
        if over:
            return
