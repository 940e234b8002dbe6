"""Zodiak, tui/RULES.md section 1: runs, wild eights, stacking aces, zodiac cards, one round at a time.

A `ZodiakRound` is written against what a seat can see: a hand may hold `None`
for a card that seat cannot see, and the stock may be all `None`. The dealer's
round is the same class with every card known. Nothing random happens inside
a transition; a reshuffle takes its order from `reshuffles` (docs/RECORDS.md, "Shape").
"""

from __future__ import annotations

import copy as _copy
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import cast

from engine.cards import SUIT_NAMES, SUITS, Card, format_cards, parse_suit
from engine.errors import IllegalMove, InvalidMove, RecordError

SIGN_CARDS: dict[str, Card] = {
    sign: Card.parse(card)
    for sign, card in [
        ("aries", "JC"), ("taurus", "KD"), ("gemini", "QS"), ("cancer", "JH"),
        ("leo", "KC"), ("virgo", "QD"), ("libra", "JS"), ("scorpio", "KH"),
        ("sagittarius", "QC"), ("capricorn", "JD"), ("aquarius", "KS"), ("pisces", "QH"),
    ]
}
SIGNS = tuple(SIGN_CARDS)
SIGN_SYMBOLS = dict(zip(SIGNS, "♈♉♊♋♌♍♎♏♐♑♒♓"))
HAND_SIZE = 7
ACE_PENALTY = 2
ZODIAC_PENALTY = 7
MATCH_TARGET = 55


def parse_sign(text: str) -> str:
    """Return the lower-case English sign named by `text`, raising IllegalMove if there is none."""
    sign = str(text).strip().lower()
    if sign not in SIGN_CARDS:
        raise IllegalMove(f"{text!r} is not a zodiac sign: choose one of {', '.join(SIGNS)}")
    return sign


@dataclass(frozen=True, slots=True)
class Run:
    """One or more cards played in order; a lone eight carries its declared suit."""

    cards: tuple[Card, ...]
    declared: str | None = None

    @classmethod
    def parse(cls, text: str) -> Run:
        """Parse tui/RULES.md 3 run notation (`2S 3S 3C 4C`, `8H/D`).

        Raises InvalidMove for text that is not a run, and IllegalMove for a well-written run
        that tui/RULES.md 1.4 forbids in any position: a lone eight without a suit, or a suit
        declared by anything but a lone eight.
        """
        if not isinstance(text, str) or not text.strip():
            raise InvalidMove("a run needs at least one card, like `7H` or `2S 3S`")
        body, slash, suit_text = text.strip().partition("/")
        cards = tuple(Card.parse(part) for part in body.split())
        if not cards:
            raise InvalidMove("a run needs at least one card, like `7H` or `2S 3S`")
        declared = parse_suit(suit_text) if slash else None
        if slash and (len(cards) != 1 or cards[0].rank != 8):
            raise IllegalMove("only an eight played alone declares a suit (`8H/D`)")
        if not slash and len(cards) == 1 and cards[0].rank == 8:
            raise IllegalMove(f"an eight played alone must name a suit: write `{cards[0]}/S`")
        return cls(cards, declared)

    @property
    def alone(self) -> bool:
        """Whether the run is a single card, the only way special cards take effect."""
        return len(self.cards) == 1

    def __str__(self) -> str:
        text = " ".join(str(c) for c in self.cards)
        return f"{text}/{self.declared}" if self.declared else text


@dataclass(frozen=True, slots=True)
class Draw:
    """Draw what the rules require now: one card, or the whole pending penalty."""

    def __str__(self) -> str:
        return "draw"


ZodiakMove = Run | Draw


def parse_move(text: str) -> ZodiakMove:
    """Parse `draw` or a run in tui/RULES.md 3 notation, raising InvalidMove or IllegalMove as Run.parse does."""
    if isinstance(text, str) and text.strip().lower() == "draw":
        return Draw()
    return Run.parse(text)


def follows(prev: Card, card: Card) -> bool:
    """Whether `card` may follow `prev` inside a run: same rank, or same suit one rank apart."""
    return card.rank == prev.rank or (card.suit == prev.suit and abs(card.rank - prev.rank) == 1)


@dataclass(frozen=True, slots=True)
class MoveEffect:
    """What a move did: the cards the mover drew (None where unseen) and how many reshuffles."""

    seat: int
    move: ZodiakMove
    drawn: tuple[Card | None, ...] = ()
    reshuffles: int = 0
    went_out: bool = False


@dataclass
class ZodiakRound:
    """One round of Zodiak as one seat (or the dealer, who sees all) knows it."""

    signs: tuple[str, ...]
    dealer: int
    hands: list[list[Card | None]]
    pile: list[Card]
    stock: list[Card | None]
    scores: list[int]
    reshuffles: list[list[Card]] = field(default_factory=list)
    turn: int | None = 0
    declared: str | None = None
    penalty: int = 0
    penalty_from_ace: bool = False
    winner: int | None = None
    blocked: bool = False
    idle_turns: int = 0
    reshuffles_done: int = 0
    sees_stock: bool = True
    history: list[MoveEffect] = field(default_factory=list)

    # -- construction -----------------------------------------------------

    @classmethod
    def deal(
        cls, deck: Sequence[Card], signs: Sequence[str], dealer: int,
        scores: Sequence[int] | None = None,
    ) -> ZodiakRound:
        """Deal from `deck` in order: seven cards to each seat in turn, one to the pile, the rest stock."""
        n = len(signs)
        need = n * HAND_SIZE + 1
        if len(deck) < need:
            raise IllegalMove(f"a deal for {n} players needs {need} cards, not {len(deck)}")
        hands = [list(deck[i * HAND_SIZE:(i + 1) * HAND_SIZE]) for i in range(n)]
        return cls.from_parts(hands, [deck[n * HAND_SIZE]], list(deck[need:]), signs, dealer, scores)

    @classmethod
    def from_parts(
        cls, hands: Sequence[Sequence[Card | None]], pile: Sequence[Card],
        stock: Sequence[Card | None], signs: Sequence[str], dealer: int,
        scores: Sequence[int] | None = None, reshuffles: Sequence[Sequence[Card]] = (),
    ) -> ZodiakRound:
        """A round about to start from explicit hands, pile (bottom first) and stock (drawn first first)."""
        n = len(signs)
        if not 2 <= n <= 4:
            raise IllegalMove(f"Zodiak is for 2 to 4 players, not {n}")
        if len(hands) != n:
            raise IllegalMove(f"{len(hands)} hands for {n} seats")
        if not pile:
            raise IllegalMove("the pile needs a starting card")
        if not 0 <= dealer < n:
            raise IllegalMove(f"dealer {dealer} is not a seat")
        scores = list(scores) if scores is not None else [0] * n
        if len(scores) != n:
            raise IllegalMove(f"{len(scores)} scores for {n} seats")
        return cls(
            signs=tuple(parse_sign(s) for s in signs), dealer=dealer,
            hands=[list(h) for h in hands], pile=list(pile), stock=list(stock),
            scores=scores, reshuffles=[list(r) for r in reshuffles], turn=(dealer + 1) % n,
        )

    # -- public facts -----------------------------------------------------

    @property
    def players(self) -> int:
        """The number of seats."""
        return len(self.signs)

    @property
    def top(self) -> Card:
        """The pile's top card."""
        return self.pile[-1]

    @property
    def round_over(self) -> bool:
        """Whether the round has ended: someone went out and any penalty is drawn, or it is blocked."""
        return self.turn is None

    def zodiac_card(self, seat: int) -> Card:
        """The card that is special for `seat`, from its sign."""
        return SIGN_CARDS[self.signs[seat]]

    def hand_sizes(self) -> list[int]:
        """How many cards each seat holds."""
        return [len(h) for h in self.hands]

    def points(self) -> int:
        """The winner's points: every card left in the other hands (0 with no winner)."""
        if self.winner is None:
            return 0
        return sum(len(h) for seat, h in enumerate(self.hands) if seat != self.winner)

    def draw_count(self) -> int:
        """How many cards a draw takes now: the pending penalty, or one."""
        return self.penalty or 1

    def pending_reshuffle(self) -> list[Card] | None:
        """The pile cards a draw now would reshuffle into the stock (bottom first), or None."""
        if self.turn is None or len(self.stock) >= self.draw_count() or len(self.pile) < 2:
            return None
        if self.reshuffles_done < len(self.reshuffles):
            return None
        return [c for c in self.pile[:-1]]

    def next_seat(self, seat: int) -> int:
        """The seat after `seat`, skipping empty hands while a penalty is being passed on."""
        n = self.players
        nxt = (seat + 1) % n
        if self.penalty:
            for _ in range(n):
                if self.hands[nxt]:
                    break
                nxt = (nxt + 1) % n
        return nxt

    # -- checking ---------------------------------------------------------

    def check(self, move: object, seat: int | None = None) -> None:
        """Raise IllegalMove with the reason if `move` by `seat` (default: the seat to move) is illegal."""
        if self.turn is None:
            raise IllegalMove("the round is over")
        if seat is not None and seat != self.turn:
            raise IllegalMove(f"it is seat {self.turn}'s turn, not seat {seat}'s")
        if isinstance(move, Draw):
            return
        if not isinstance(move, Run):
            raise IllegalMove(f"{move!r} is not a Zodiak move")
        self._check_run(move, self.hands[self.turn])

    def _check_run(self, run: Run, hand: Sequence[Card | None]) -> None:
        if not run.cards or not all(isinstance(c, Card) for c in run.cards):
            raise IllegalMove("a run is one or more cards, like `7H` or `2S 3S`")
        remaining = list(hand)
        for card in run.cards:
            if card in remaining:
                remaining.remove(card)
            elif None in remaining and not self._seen_elsewhere(card):
                remaining.remove(None)  # a hidden card: only its owner can know it is not this one
            elif None in remaining:
                raise IllegalMove(f"{card} cannot be in that hand: it is on the table or known")
            elif None in hand:
                raise IllegalMove(f"seat {self.turn} holds only {len(hand)} cards")
            else:
                raise IllegalMove(f"{card} is not in your hand")
        if len(set(run.cards)) != len(run.cards):
            raise IllegalMove("a run cannot hold the same card twice")
        first = run.cards[0]
        eight_alone = run.alone and first.rank == 8
        if eight_alone and run.declared is None:
            raise IllegalMove(f"an eight played alone must name a suit: write `{first}/S`")
        if run.declared is not None and not eight_alone:
            raise IllegalMove("only an eight played alone declares a suit")
        if run.declared is not None and run.declared not in SUITS:
            raise IllegalMove(f"{run.declared!r} is not a suit: use S, H, D or C")
        if self.penalty:
            if self.penalty_from_ace:
                if not (run.alone and first.rank == 1):
                    raise IllegalMove(
                        f"you face {self.penalty} cards: answer with an ace alone or draw them"
                    )
            else:
                raise IllegalMove(f"a zodiac card makes you draw {self.penalty}: you must draw")
        elif eight_alone:
            pass
        elif self.declared is not None:
            if first.suit != self.declared:
                raise IllegalMove(
                    f"{first} does not follow the declared suit: play a {SUIT_NAMES[self.declared]}"
                    " card or an eight alone"
                )
        elif first.suit != self.top.suit and first.rank != self.top.rank:
            raise IllegalMove(f"{first} does not match {self.top}: same suit or same rank")
        for prev, card in zip(run.cards, run.cards[1:]):
            if not follows(prev, card):
                raise IllegalMove(
                    f"{card} does not follow {prev}: same rank or next card of the same suit"
                )

    def _seen_elsewhere(self, card: Card) -> bool:
        return card in self.pile or any(card in h for h in self.hands)

    def can_start(self, card: Card) -> bool:
        """Whether a run may begin with `card` now (the hand's playable cards are marked with this)."""
        if self.turn is None:
            return False
        if self.penalty:
            return self.penalty_from_ace and card.rank == 1
        if card.rank == 8:
            return True
        if self.declared is not None:
            return card.suit == self.declared
        return card.suit == self.top.suit or card.rank == self.top.rank

    def is_legal(self, move: ZodiakMove) -> bool:
        """Whether the seat to move may make `move`."""
        try:
            self.check(move)
        except IllegalMove:
            return False
        return True

    def legal_moves(self) -> Iterator[ZodiakMove]:
        """Every legal move of the seat to move, lazily: each run, then the draw."""
        if self.turn is None:
            return
        hand = [c for c in self.hands[self.turn] if c is not None]
        for i, first in enumerate(hand):
            if not self.can_start(first):
                continue
            rest = hand[:i] + hand[i + 1:]
            if first.rank == 8 and not self.penalty:
                for suit in SUITS:
                    yield Run((first,), suit)
                if self.declared is None and first.suit != self.top.suit and first.rank != self.top.rank:
                    continue  # playable only as a wild eight alone
                if self.declared is not None and first.suit != self.declared:
                    continue
                for run in self._extensions((first,), rest):
                    if len(run.cards) > 1:
                        yield run
                continue
            if self.penalty:
                yield Run((first,))
                continue
            yield from self._extensions((first,), rest)
        yield Draw()

    def _extensions(self, prefix: tuple[Card, ...], rest: list[Card]) -> Iterator[Run]:
        yield Run(prefix)
        last = prefix[-1]
        for i, card in enumerate(rest):
            if follows(last, card):
                yield from self._extensions(prefix + (card,), rest[:i] + rest[i + 1:])

    # -- applying ---------------------------------------------------------

    def push(self, move: object, drawn: Sequence[Card | None] | None = None) -> MoveEffect:
        """Check and apply the move of the seat to move; `drawn` names cards a view learns it drew."""
        self.check(move)
        seat = self.turn
        assert seat is not None
        if isinstance(move, Draw):
            effect = self._draw(seat, move, drawn)
        else:
            effect = self._play(seat, cast(Run, move))  # `check` lets only a Draw or a Run by
        self.history.append(effect)
        return effect

    def _play(self, seat: int, run: Run) -> MoveEffect:
        hand = self.hands[seat]
        for card in run.cards:
            hand.remove(card if card in hand else None)
        self.pile.extend(run.cards)
        self.idle_turns = 0
        self.declared = run.declared
        first = run.cards[0]
        if run.alone and first.rank == 1:
            self.penalty += ACE_PENALTY
            self.penalty_from_ace = True
        elif run.alone and first == self.zodiac_card(seat):
            self.penalty = ZODIAC_PENALTY
            self.penalty_from_ace = False
        went_out = not hand
        if went_out and self.winner is None:
            self.winner = seat
        if self.winner is not None and not any(self.hands):
            self.penalty = 0  # RULES 1.5/1.6: nobody is left to draw the penalty
            self.penalty_from_ace = False
        if self.winner is not None and not self.penalty:
            self.turn = None
            self._score()
        else:
            self.turn = self.next_seat(seat)
        return MoveEffect(seat, run, went_out=went_out)

    def _draw(self, seat: int, move: Draw, drawn: Sequence[Card | None] | None) -> MoveEffect:
        want = self.draw_count()
        got: list[Card | None] = []
        reshuffled = 0
        while len(got) < want:
            if not self.stock:
                if len(self.pile) < 2:
                    break
                self._reshuffle()
                reshuffled += 1
            got.append(self.stock.pop(0))
        if drawn is not None:
            if len(drawn) != len(got):
                raise IllegalMove(f"the draw takes {len(got)} cards, not {len(drawn)}")
            got = list(drawn)
        self.hands[seat].extend(got)
        self.idle_turns = self.idle_turns + 1 if not got else 0
        was_penalty = bool(self.penalty)
        self.penalty = 0
        self.penalty_from_ace = False
        if self.winner is not None and was_penalty:
            self.turn = None
            self._score()
        elif self.idle_turns >= self.players:
            self.blocked = True
            self.turn = None
        else:
            self.turn = self.next_seat(seat)
        return MoveEffect(seat, move, tuple(got), reshuffled)

    def _reshuffle(self) -> None:
        under = self.pile[:-1]
        if not self.sees_stock:
            stock: list[Card | None] = [None] * len(under)
        elif self.reshuffles_done < len(self.reshuffles):
            order = self.reshuffles[self.reshuffles_done]
            if sorted(order) != sorted(under):
                # The order comes from a record (docs/RECORDS.md, "Invalid records and illegal moves"), not from a seat: the record is bad.
                raise RecordError(
                    f"deal.reshuffles[{self.reshuffles_done}] must hold exactly the pile's cards"
                    f" under its top ({format_cards(sorted(under))})"
                )
            stock = list(order)
        else:
            stock = list(under)
        del self.pile[:-1]
        self.stock = stock
        self.reshuffles_done += 1

    def _score(self) -> None:
        if self.winner is not None:
            self.scores[self.winner] += self.points()

    # -- views ------------------------------------------------------------

    def view(self, seat: int | None, history: bool = True) -> ZodiakRound:
        """A copy holding only what `seat` may see (None: a spectator); bots need no `history`."""
        v = self.copy()
        v.hands = [list(h) if s == seat else [None] * len(h) for s, h in enumerate(self.hands)]
        v.stock = [None] * len(self.stock)
        v.reshuffles = []
        v.sees_stock = False
        v.history = [] if not history else [
            e if e.seat == seat or not e.drawn
            else MoveEffect(e.seat, e.move, (None,) * len(e.drawn), e.reshuffles, e.went_out)
            for e in self.history
        ]
        return v

    def copy(self) -> ZodiakRound:
        """An independent copy (cards and effects are immutable, so only the lists are new)."""
        c = _copy.copy(self)
        c.hands = [list(h) for h in self.hands]
        c.pile, c.stock, c.scores = list(self.pile), list(self.stock), list(self.scores)
        c.reshuffles = [list(r) for r in self.reshuffles]
        c.history = list(self.history)
        return c

    def describe(self, effect: object) -> str:
        """A one-line account of a move's effect, in tui/RULES.md 3 notation."""
        if not isinstance(effect, MoveEffect):
            raise TypeError(f"{effect!r} is not what a Zodiak move did")
        if isinstance(effect.move, Draw):
            n = len(effect.drawn)
            text = f"seat {effect.seat} draws {n} card{'s' if n != 1 else ''}"
            if effect.reshuffles:
                text += " (the pile was reshuffled into the stock)"
            return text
        text = f"seat {effect.seat} plays {effect.move}"
        if effect.went_out:
            text += " and goes out"
        return text
