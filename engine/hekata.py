"""Hekata, tui/RULES.md section 2: lay a digit card, perhaps take a trick whose column sum is a multiple of 100.

`HekataDeal` is one deal as one seat (or the dealer, who sees all) knows it;
a hand or the stock may hold `None` for a card the seat cannot see.
"""

from __future__ import annotations

import copy as _copy
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import cast

from engine.cards import parse_digit
from engine.errors import IllegalMove, InvalidMove
from engine.house import STANDARD, HouseRules
from engine.tricks import Row, Trick, best_trick, check_trick, parse_trick

__all__ = [
    "GAME_TARGET", "HekataDeal", "HekataMove", "Row", "TakenTrick", "Trick",
    "best_trick", "check_trick", "parse_trick", "team_of",
]

GAME_TARGET = 10_000
HAND_SIZE = {4: 12, 2: 6}
TABLE_START = 2


def team_of(seat: int, players: int) -> int:
    """The team of `seat`: partners sit opposite (0 and 2, 1 and 3); with two players each is a team."""
    return seat % 2 if players == 4 else seat


@dataclass(frozen=True, slots=True)
class HekataMove:
    """Lay `card` on the table and, optionally, take `trick` with it."""

    card: int
    trick: Trick | None = None

    @classmethod
    def parse(cls, text: str) -> HekataMove:
        """Parse `7` or `7: 31 + 27 + 42` (the card, then the trick taken with it), as parse_trick does."""
        if not isinstance(text, str) or not text.strip():
            raise InvalidMove("a Hekata move is a digit card, optionally with a trick: `7: 31 + 27 + 42`")
        card_text, colon, trick_text = text.partition(":")
        card = parse_digit(card_text)
        trick = parse_trick(trick_text) if colon else None
        return cls(card, trick)

    def __str__(self) -> str:
        return f"{self.card}: {self.trick}" if self.trick is not None else str(self.card)


@dataclass(frozen=True, slots=True)
class TakenTrick:
    """A trick taken: by which seat, written how, worth how much."""

    seat: int
    trick: Trick
    total: int


@dataclass(frozen=True, slots=True)
class HekataEffect:
    """What a move did: the table cards it took and the card the mover drew (None where unseen)."""

    seat: int
    move: HekataMove
    taken: tuple[int, ...] = ()
    total: int = 0
    drawn: tuple[int | None, ...] = ()


@dataclass
class HekataDeal:
    """One deal of Hekata as one seat (or the dealer, who sees all) knows it."""

    players: int
    dealer: int
    hands: list[list[int | None]]
    table: list[int]
    stock: list[int | None]
    scores: list[int]
    turn: int | None = 0
    tricks: list[TakenTrick] = field(default_factory=list)
    history: list[HekataEffect] = field(default_factory=list)
    max_row: int | None = None
    target: int = GAME_TARGET

    @classmethod
    def deal(
        cls, deck: Sequence[int], players: int, dealer: int, scores: Sequence[int] | None = None,
        house: HouseRules = STANDARD,
    ) -> HekataDeal:
        """Deal from `deck` in order: each seat's hand in turn, then two table cards, the rest stock."""
        if players not in HAND_SIZE:
            raise IllegalMove(f"Hekata is for 2 or 4 players, not {players}")
        size = HAND_SIZE[players]
        hands = [list(deck[i * size:(i + 1) * size]) for i in range(players)]
        start = players * size
        table = list(deck[start:start + TABLE_START])
        return cls.from_parts(hands, table, list(deck[start + TABLE_START:]), dealer, scores, house)

    @classmethod
    def from_parts(
        cls, hands: Sequence[Sequence[int | None]], table: Sequence[int],
        stock: Sequence[int | None], dealer: int, scores: Sequence[int] | None = None,
        house: HouseRules = STANDARD,
    ) -> HekataDeal:
        """A deal about to start from explicit hands, table and stock (drawn first first), under `house`."""
        players = len(hands)
        if players not in HAND_SIZE:
            raise IllegalMove(f"Hekata is for 2 or 4 players, not {players}")
        if players == 4 and stock:
            raise IllegalMove("the four-player game has no stock")
        if not 0 <= dealer < players:
            raise IllegalMove(f"dealer {dealer} is not a seat")
        teams = 2
        scores = list(scores) if scores is not None else [0] * teams
        if len(scores) != teams:
            raise IllegalMove(f"{len(scores)} scores for {teams} teams")
        deal = cls(players, dealer, [list(h) for h in hands], list(table), list(stock), scores,
                   turn=dealer, max_row=house.max_row, target=house.target or GAME_TARGET)
        if not any(deal.hands) or deal.winner is not None:
            deal.turn = None  # RULES 2.4: a game already won deals no more
        return deal

    # -- public facts -----------------------------------------------------

    @property
    def round_over(self) -> bool:
        """Whether the deal has ended: every card played, or a team reached the target (10,000)."""
        return self.turn is None

    @property
    def winner(self) -> int | None:
        """The team that reached the target (10,000 points, or the house rules' target), if one did."""
        for team, score in enumerate(self.scores):
            if score >= self.target:
                return team
        return None

    def team(self, seat: int) -> int:
        """The team `seat` plays for."""
        return team_of(seat, self.players)

    def hand_sizes(self) -> list[int]:
        """How many cards each seat holds."""
        return [len(h) for h in self.hands]

    # -- checking ---------------------------------------------------------

    def check(self, move: object, seat: int | None = None) -> int:
        """The points `move` scores, or IllegalMove with the reason if it is illegal."""
        if self.turn is None:
            raise IllegalMove("the deal is over")
        if seat is not None and seat != self.turn:
            raise IllegalMove(f"it is seat {self.turn}'s turn, not seat {seat}'s")
        if not isinstance(move, HekataMove):
            raise IllegalMove(f"{move!r} is not a Hekata move")
        if isinstance(move.card, bool) or not isinstance(move.card, int) or not 0 <= move.card <= 9:
            raise IllegalMove(f"{move.card!r} is not a Hekata card: the cards are the digits 0 to 9")
        hand = self.hands[self.turn]
        if move.card not in hand and None not in hand:
            raise IllegalMove(f"you hold no {move.card}")
        if move.trick is None:
            return 0
        if not self.table:
            raise IllegalMove("the table is empty: lay a card without taking a trick")
        return check_trick(self.table, move.card, move.trick, self.max_row)

    def is_legal(self, move: HekataMove) -> bool:
        """Whether the seat to move may make `move`."""
        try:
            self.check(move)
        except IllegalMove:
            return False
        return True

    def legal_moves(self) -> Iterator[HekataMove]:
        """For each distinct card in hand: laying it with its best trick (if any), then laying it alone.

        The tricks a card can take are far too many to list; each card's best
        trick stands for them, and `check` accepts every legal trick.
        """
        if self.turn is None:
            return
        for card in sorted({c for c in self.hands[self.turn] if c is not None}, reverse=True):
            trick = best_trick(self.table, card, self.max_row) if self.table else None
            if trick is not None:
                yield HekataMove(card, trick)
            yield HekataMove(card)

    # -- applying ---------------------------------------------------------

    def push(self, move: object, drawn: Sequence[int | None] | None = None) -> HekataEffect:
        """Check and apply the move of the seat to move; `drawn` names the card a view learns it drew."""
        total = self.check(move)
        move = cast(HekataMove, move)  # `check` lets only a HekataMove by
        seat = self.turn
        assert seat is not None
        hand = self.hands[seat]
        hand.remove(move.card if move.card in hand else None)
        taken: tuple[int, ...] = ()
        if move.trick is not None:
            taken = _table_cards_of(move.trick, move.card)
            for card in taken:
                self.table.remove(card)
            self.scores[self.team(seat)] += total
            self.tricks.append(TakenTrick(seat, move.trick, total))
        else:
            self.table.append(move.card)
        got: list[int | None] = []
        if self.stock:
            got = [self.stock.pop(0)]
            if drawn is not None:
                if len(drawn) != 1:
                    raise IllegalMove(f"the draw takes 1 card, not {len(drawn)}")
                got = list(drawn)
            hand.extend(got)
        effect = HekataEffect(seat, move, taken, total, tuple(got))
        self.history.append(effect)
        if self.winner is not None or not any(self.hands):
            self.turn = None
        else:
            nxt = (seat + 1) % self.players
            while not self.hands[nxt]:
                nxt = (nxt + 1) % self.players
            self.turn = nxt
        return effect

    # -- views ------------------------------------------------------------

    def view(self, seat: int | None, history: bool = True) -> HekataDeal:
        """A copy holding only what `seat` may see (None: a spectator); bots need no `history`."""
        v = self.copy()
        v.hands = [list(h) if s == seat else [None] * len(h) for s, h in enumerate(self.hands)]
        v.stock = [None] * len(self.stock)
        v.history = [] if not history else [
            e if e.seat == seat else HekataEffect(e.seat, e.move, e.taken, e.total,
                                                  (None,) * len(e.drawn))
            for e in self.history
        ]
        return v

    def copy(self) -> HekataDeal:
        """An independent copy (cards, tricks and effects are immutable, so only the lists are new)."""
        c = _copy.copy(self)
        c.hands = [list(h) for h in self.hands]
        c.table, c.stock, c.scores = list(self.table), list(self.stock), list(self.scores)
        c.tricks, c.history = list(self.tricks), list(self.history)
        return c

    def describe(self, effect: object) -> str:
        """A one-line account of a move's effect, in tui/RULES.md 3 notation."""
        if not isinstance(effect, HekataEffect):
            raise TypeError(f"{effect!r} is not what a Hekata move did")
        if effect.move.trick is None:
            return f"seat {effect.seat} lays {effect.move.card}"
        return (f"seat {effect.seat} lays {effect.move.card} and takes"
                f" {effect.move.trick} = {effect.total}")


def _table_cards_of(trick: Trick, card: int) -> tuple[int, ...]:
    """The trick's cards other than the one just played."""
    cards = list(trick.cards)
    cards.remove(card)
    return tuple(cards)
