"""Fast playouts: Zodiak and Hekata on plain ints, for the expert bot's search.

The rules engine (engine.zodiak, engine.hekata) is the law; these classes play
the same rules on bit masks and digit counts, many times faster, and the tests
check them against the engine move by move on random positions. A Zodiak card
is an int 0-51 (suit index * 13 + rank - 1, suits in `SUITS` order); a hand is
a bit mask of those ints. A Zodiak move is a `FastRun` (cards, declared suit
index or -1) or `DRAW`. A Hekata hand, table or stock holds digits.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from engine import hekata, zodiak
from engine.cards import SUITS, Card
from engine.trick_search import search_best_rows

FastRun = tuple[tuple[int, ...], int]
FastMove = FastRun | None
DRAW: FastMove = None

CARDS = [Card(index % 13 + 1, SUITS[index // 13]) for index in range(52)]
RANK = [index % 13 + 1 for index in range(52)]
SUIT = [index // 13 for index in range(52)]
RANK_MASK = [0] * 14
SUIT_MASK = [0] * 4
for _index in range(52):
    RANK_MASK[RANK[_index]] |= 1 << _index
    SUIT_MASK[SUIT[_index]] |= 1 << _index
# The cards that may follow a card inside a run (RULES 1.3): same rank, or next in suit.
FOLLOW = [
    (RANK_MASK[RANK[c]] & ~(1 << c))
    | (1 << (c - 1) if RANK[c] > 1 else 0)
    | (1 << (c + 1) if RANK[c] < 13 else 0)
    for c in range(52)
]
ACES = RANK_MASK[1]
EIGHTS = RANK_MASK[8]


def card_index(card: Card) -> int:
    """The int a card has in fast playouts."""
    return SUITS.index(card.suit) * 13 + card.rank - 1


def bits(mask: int) -> list[int]:
    """The cards of a mask, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def to_engine_move(move: FastMove) -> zodiak.ZodiakMove:
    """The engine's move for a fast Zodiak move."""
    if move is None:
        return zodiak.Draw()
    cards, declared = move
    return zodiak.Run(tuple(CARDS[c] for c in cards), SUITS[declared] if declared >= 0 else None)


def from_engine_move(move: zodiak.ZodiakMove) -> FastMove:
    """The fast move for an engine Zodiak move."""
    if isinstance(move, zodiak.Draw):
        return None
    declared = SUITS.index(move.declared) if move.declared else -1
    return tuple(card_index(c) for c in move.cards), declared


class FastZodiak:
    """A Zodiak round with every card known, on bit masks (tui/RULES.md section 1)."""

    __slots__ = (
        "blocked",
        "declared",
        "from_ace",
        "hands",
        "idle",
        "penalty",
        "players",
        "rng",
        "stock",
        "top",
        "turn",
        "under",
        "winner",
        "zodiac",
    )

    def __init__(self, hands: list[int], top: int, under: list[int], stock: list[int],
                 zodiac_cards: list[int], turn: int, rng: random.Random | None = None) -> None:
        self.players = len(hands)
        self.hands = hands
        self.top = top
        self.under = under  # the pile under its top, bottom first
        self.stock = stock  # drawn from the end: stock[-1] is the next card drawn
        self.zodiac = zodiac_cards
        self.turn = turn  # -1 once the round is over
        self.declared = -1
        self.penalty = 0
        self.from_ace = False
        self.winner = -1
        self.idle = 0
        self.blocked = False
        self.rng = rng  # None: a reshuffle keeps the pile's order, as the engine does without a record

    @classmethod
    def from_round(cls, state: zodiak.ZodiakRound, rng: random.Random | None = None) -> FastZodiak:
        """The fast copy of a round whose hands and stock are all known."""
        hands = []
        for hand in state.hands:
            mask = 0
            for card in hand:
                assert card is not None, "a fast round needs every card known"
                mask |= 1 << card_index(card)
            hands.append(mask)
        stock = [card_index(c) for c in reversed(state.stock) if c is not None]
        assert len(stock) == len(state.stock), "a fast round needs every card known"
        fast = cls(hands, card_index(state.top), [card_index(c) for c in state.pile[:-1]], stock,
                   [card_index(state.zodiac_card(s)) for s in range(state.players)],
                   -1 if state.turn is None else state.turn, rng)
        fast.declared = SUITS.index(state.declared) if state.declared else -1
        fast.penalty, fast.from_ace = state.penalty, state.penalty_from_ace
        fast.winner = -1 if state.winner is None else state.winner
        fast.idle, fast.blocked = state.idle_turns, state.blocked
        return fast

    def copy(self) -> FastZodiak:
        """An independent copy."""
        c = FastZodiak.__new__(FastZodiak)
        c.players, c.hands, c.top = self.players, list(self.hands), self.top
        c.under, c.stock, c.zodiac = list(self.under), list(self.stock), self.zodiac
        c.declared, c.penalty, c.from_ace = self.declared, self.penalty, self.from_ace
        c.winner, c.turn, c.idle, c.blocked = self.winner, self.turn, self.idle, self.blocked
        c.rng = self.rng
        return c

    def key(self) -> tuple:
        """Everything that decides what happens next, for comparing with the engine."""
        return (tuple(self.hands), self.top, tuple(self.under), tuple(self.stock), self.declared,
                self.penalty, self.from_ace, self.winner, self.turn, self.idle, self.blocked)

    def points(self) -> int:
        """The winner's points: the cards left in the other hands."""
        if self.winner < 0:
            return 0
        return sum(h.bit_count() for s, h in enumerate(self.hands) if s != self.winner)

    def next_seat(self, seat: int) -> int:
        """The seat after `seat`, skipping empty hands while a penalty is passed on (RULES 1.6)."""
        n = self.players
        nxt = (seat + 1) % n
        if self.penalty:
            for _ in range(n):
                if self.hands[nxt]:
                    break
                nxt = (nxt + 1) % n
        return nxt

    def starters(self) -> int:
        """The mask of cards in hand that may begin a run now (eights counting as wild)."""
        hand = self.hands[self.turn]
        if self.penalty:
            return hand & ACES if self.from_ace else 0
        if self.declared >= 0:
            return hand & (SUIT_MASK[self.declared] | EIGHTS)
        top = self.top
        return hand & (SUIT_MASK[SUIT[top]] | RANK_MASK[RANK[top]] | EIGHTS)

    def legal_moves(self) -> list[FastMove]:
        """Every legal move, as the engine lists them (in another order)."""
        moves: list[FastMove] = []
        if self.turn < 0:
            return moves
        hand = self.hands[self.turn]
        if self.penalty:
            moves.extend(((c,), -1) for c in bits(self.starters()))
            moves.append(DRAW)
            return moves
        if self.declared >= 0:
            matching = SUIT_MASK[self.declared]
        else:
            matching = SUIT_MASK[SUIT[self.top]] | RANK_MASK[RANK[self.top]]
        for c in bits(self.starters()):
            rest = hand ^ (1 << c)
            if RANK[c] == 8:
                moves.extend(((c,), suit) for suit in range(4))
                if matching >> c & 1:
                    before = len(moves)
                    _extend(moves, (c,), c, rest)
                    del moves[before]  # the eight alone is already there, with its suits
            else:
                _extend(moves, (c,), c, rest)
        moves.append(DRAW)
        return moves

    def push(self, move: FastMove) -> None:
        """Apply a legal move of the seat to move (not checked: check with the engine in tests)."""
        seat = self.turn
        if move is None:
            self._draw(seat)
            return
        cards, declared = move
        hand = self.hands[seat]
        for c in cards:
            hand ^= 1 << c
        self.hands[seat] = hand
        self.under.append(self.top)
        self.under.extend(cards[:-1])
        self.top = cards[-1]
        self.idle = 0
        self.declared = declared
        if len(cards) == 1:
            first = cards[0]
            if RANK[first] == 1:
                self.penalty += zodiak.ACE_PENALTY
                self.from_ace = True
            elif first == self.zodiac[seat]:
                self.penalty = zodiak.ZODIAC_PENALTY
                self.from_ace = False
        if not hand and self.winner < 0:
            self.winner = seat
        if self.winner >= 0 and not any(self.hands):
            self.penalty, self.from_ace = 0, False
        if self.winner >= 0 and not self.penalty:
            self.turn = -1
        else:
            self.turn = self.next_seat(seat)

    def _draw(self, seat: int) -> None:
        want = self.penalty or 1
        got = 0
        hand = self.hands[seat]
        stock = self.stock
        while got < want:
            if not stock:
                if not self.under:
                    break
                stock = self._reshuffle()
            hand |= 1 << stock.pop()
            got += 1
        self.hands[seat] = hand
        self.idle = 0 if got else self.idle + 1
        was_penalty = self.penalty
        self.penalty, self.from_ace = 0, False
        if self.winner >= 0 and was_penalty:
            self.turn = -1
        elif self.idle >= self.players:
            self.blocked = True
            self.turn = -1
        else:
            self.turn = (seat + 1) % self.players

    def _reshuffle(self) -> list[int]:
        stock = self.under
        if self.rng is not None:
            self.rng.shuffle(stock)
        else:
            stock.reverse()  # the engine draws the old pile bottom first
        self.under = []
        self.stock = stock
        return stock


def _extend(moves: list[FastMove], prefix: tuple[int, ...], last: int, rest: int) -> None:
    moves.append((prefix, -1))
    follow = FOLLOW[last] & rest
    while follow:
        low = follow & -follow
        follow ^= low
        c = low.bit_length() - 1
        _extend(moves, prefix + (c,), c, rest ^ low)


# -- Hekata ---------------------------------------------------------------

_TRICKS: dict[tuple[tuple[int, ...], int], tuple[int, tuple[int, ...]]] = {}
_TRICK_CACHE_LIMIT = 1 << 18


def trick_value(table_counts: Sequence[int], card: int) -> tuple[int, tuple[int, ...]]:
    """The best trick's total for `card` laid on a table of digit counts, and the table cards it
    takes as digit counts; (0, ()) when there is none. Exact (engine.trick_search), and cached."""
    key = (tuple(table_counts), card)
    found = _TRICKS.get(key)
    if found is not None:
        return found
    table = [d for d in range(10) for _ in range(table_counts[d])]
    rows = search_best_rows(table, card) if table else None
    if rows is None:
        found = (0, ())
    else:
        total = 0
        taken = [0] * 10
        for digits, shift in rows:
            total += int("".join(map(str, digits))) * 10**shift
            for d in digits:
                taken[d] += 1
        taken[card] -= 1
        found = (total, tuple(taken))
    if len(_TRICKS) >= _TRICK_CACHE_LIMIT:
        _TRICKS.clear()
    _TRICKS[key] = found
    return found


class FastHekata:
    """A Hekata deal with every card known, on digit counts (tui/RULES.md section 2).

    A move lays a card and either takes that card's best trick or takes nothing:
    the moves `HekataDeal.legal_moves` lists.
    """

    __slots__ = ("hands", "players", "scores", "stock", "table", "target", "turn")

    def __init__(self, hands: list[list[int]], table: list[int], stock: list[int],
                 scores: list[int], turn: int) -> None:
        self.players = len(hands)
        self.hands = hands  # per seat, digit counts
        self.table = table  # digit counts
        self.stock = stock  # drawn from the end
        self.scores = scores  # per team
        self.turn = turn
        self.target = hekata.GAME_TARGET

    @classmethod
    def from_deal(cls, deal: hekata.HekataDeal) -> FastHekata:
        """The fast copy of a deal whose hands and stock are all known."""
        def counts(cards: Sequence[int | None]) -> list[int]:
            out = [0] * 10
            for card in cards:
                assert card is not None, "a fast deal needs every card known"
                out[card] += 1
            return out

        stock = [c for c in reversed(deal.stock) if c is not None]
        assert len(stock) == len(deal.stock), "a fast deal needs every card known"
        fast = cls([counts(h) for h in deal.hands], counts(deal.table), stock, list(deal.scores),
                   -1 if deal.turn is None else deal.turn)
        fast.target = deal.target
        return fast

    def copy(self) -> FastHekata:
        """An independent copy."""
        c = FastHekata.__new__(FastHekata)
        c.players, c.hands = self.players, [list(h) for h in self.hands]
        c.table, c.stock, c.scores = list(self.table), list(self.stock), list(self.scores)
        c.turn, c.target = self.turn, self.target
        return c

    def key(self) -> tuple:
        """Everything that decides what happens next, for comparing with the engine."""
        return (tuple(map(tuple, self.hands)), tuple(self.table), tuple(self.stock),
                tuple(self.scores), self.turn)

    def team(self, seat: int) -> int:
        """The team `seat` plays for (RULES 2.1)."""
        return seat % 2 if self.players == 4 else seat

    def legal_moves(self) -> list[tuple[int, bool]]:
        """(card, takes its best trick) for each distinct card, as HekataDeal.legal_moves lists."""
        moves: list[tuple[int, bool]] = []
        if self.turn < 0:
            return moves
        has_table = any(self.table)
        for card in range(9, -1, -1):
            if self.hands[self.turn][card]:
                if has_table and trick_value(self.table, card)[0]:
                    moves.append((card, True))
                moves.append((card, False))
        return moves

    def push(self, card: int, take: bool) -> int:
        """Lay `card`, taking its best trick if `take`; returns the points scored."""
        seat = self.turn
        hand = self.hands[seat]
        hand[card] -= 1
        total = 0
        if take:
            total, taken = trick_value(self.table, card)
            table = self.table
            for d in range(10):
                table[d] -= taken[d]
            self.scores[self.team(seat)] += total
        else:
            self.table[card] += 1
        if self.stock:
            hand[self.stock.pop()] += 1
        if max(self.scores) >= self.target or not any(any(h) for h in self.hands):
            self.turn = -1
        else:
            nxt = (seat + 1) % self.players
            while not any(self.hands[nxt]):
                nxt = (nxt + 1) % self.players
            self.turn = nxt
        return total

    def best_take(self) -> tuple[int, int]:
        """The card whose best trick scores most now, and that trick's total (-1, 0 if none)."""
        best_card, best_total = -1, 0
        if any(self.table):
            hand = self.hands[self.turn]
            for card in range(10):
                if hand[card]:
                    total = trick_value(self.table, card)[0]
                    if total > best_total:
                        best_card, best_total = card, total
        return best_card, best_total


def random_move(state: FastZodiak, rng: random.Random) -> FastMove:
    """A random legal Zodiak move, cheap at any hand size: draw, or a run grown card by card.

    Not uniform over the legal moves (a long hand has far too many runs to list):
    drawing and each playable first card are equally likely, then each further
    card is added with even odds while one can follow.
    """
    starters = bits(state.starters())
    pick = rng.randrange(len(starters) + 1)
    if pick == len(starters):
        return DRAW
    first = starters[pick]
    if state.penalty:
        return (first,), -1
    hand = state.hands[state.turn]
    if state.declared >= 0:
        matching = SUIT_MASK[state.declared]
    else:
        matching = SUIT_MASK[SUIT[state.top]] | RANK_MASK[RANK[state.top]]
    eight = RANK[first] == 8
    if eight and (not matching >> first & 1 or rng.random() < 0.5):
        return (first,), rng.randrange(4)
    run = [first]
    rest = hand ^ (1 << first)
    last = first
    while True:
        follow = FOLLOW[last] & rest
        if not follow or (rng.random() < 0.5 and not (eight and len(run) == 1)):
            break
        options = bits(follow)
        last = options[rng.randrange(len(options))]
        run.append(last)
        rest ^= 1 << last
    if eight and len(run) == 1:
        return (first,), rng.randrange(4)
    return tuple(run), -1
