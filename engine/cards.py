"""Cards of the French deck (Zodiak) and the digit deck (Hekata), with tui/RULES.md section 3 notation."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from engine.errors import InvalidMove

SUITS = "SHDC"
SUIT_SYMBOLS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
SUIT_NAMES = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}
_SYMBOL_TO_SUIT = {v: k for k, v in SUIT_SYMBOLS.items()} | {"♤": "S", "♡": "H", "♢": "D", "♧": "C"}
RANK_NAMES = {1: "A", 10: "10", 11: "J", 12: "Q", 13: "K"}
_RANK_FROM_TEXT = {"A": 1, "T": 10, "10": 10, "J": 11, "Q": 12, "K": 13} | {
    str(n): n for n in range(2, 10)
}

HEKATA_DIGITS = range(10)
HEKATA_COPIES = 5


def parse_suit(text: str) -> str:
    """Return the suit letter for `text` (a letter in any case, or a suit symbol)."""
    t = text.strip()
    if t in _SYMBOL_TO_SUIT:
        return _SYMBOL_TO_SUIT[t]
    if len(t) == 1 and t.upper() in SUITS:
        return t.upper()
    raise InvalidMove(f"{text!r} is not a suit: use S, H, D or C (or ♠ ♥ ♦ ♣)")


@dataclass(frozen=True, order=True, slots=True)
class Card:
    """A card of the French deck: rank 1 (ace) to 13 (king) and a suit letter."""

    rank: int
    suit: str

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse tui/RULES.md 3 card notation (`2S`, `10h`, `TD`, `Q♣`), raising InvalidMove."""
        if not isinstance(text, str):
            raise InvalidMove(f"{text!r} is not a card")
        t = text.strip()
        if len(t) < 2:
            raise InvalidMove(f"{text!r} is not a card: write rank then suit, like 2S or 10H")
        rank_text, suit_text = t[:-1].upper(), t[-1]
        if rank_text not in _RANK_FROM_TEXT:
            raise InvalidMove(f"{text!r} is not a card: the rank must be A, 2-10 (or T), J, Q or K")
        try:
            suit = parse_suit(suit_text)
        except InvalidMove:
            raise InvalidMove(
                f"{text!r} is not a card: the suit must be S, H, D or C (or ♠ ♥ ♦ ♣)"
            ) from None
        return cls(_RANK_FROM_TEXT[rank_text], suit)

    @property
    def rank_text(self) -> str:
        """The rank as written in notation: A, 2-10, J, Q or K."""
        return RANK_NAMES.get(self.rank, str(self.rank))

    def pretty(self, ascii_only: bool = False) -> str:
        """The card with a suit symbol (`10♥`), or plain notation when `ascii_only`."""
        return str(self) if ascii_only else f"{self.rank_text}{SUIT_SYMBOLS[self.suit]}"

    def __str__(self) -> str:
        return f"{self.rank_text}{self.suit}"

    def __repr__(self) -> str:
        return f"Card.parse({str(self)!r})"


def french_deck() -> list[Card]:
    """The 52 cards in a fixed order (spades, hearts, diamonds, clubs; ace to king)."""
    return [Card(rank, suit) for suit in SUITS for rank in range(1, 14)]


def hekata_deck() -> list[int]:
    """The 50 digit cards in a fixed order: five of each digit 0-9."""
    return [d for d in HEKATA_DIGITS for _ in range(HEKATA_COPIES)]


def parse_cards(text: str) -> list[Card]:
    """Parse space- or comma-separated cards, raising InvalidMove for any that is not a card."""
    if not isinstance(text, str):
        raise InvalidMove(f"{text!r} is not a list of cards")
    return [Card.parse(part) for part in text.replace(",", " ").split()]


def parse_digit(text: object) -> int:
    """Parse one Hekata card, a digit 0-9 given as text or int, raising InvalidMove."""
    if isinstance(text, bool):
        raise InvalidMove(f"{text!r} is not a Hekata card: the cards are the digits 0 to 9")
    if isinstance(text, int) and 0 <= text <= 9:
        return text
    if isinstance(text, str):
        t = text.strip()
        if len(t) == 1 and t in "0123456789":  # not str.isdigit(): "²" is a digit to it
            return int(t)
    raise InvalidMove(f"{text!r} is not a Hekata card: the cards are the digits 0 to 9")


def format_cards(cards: Iterable[Card | None]) -> str:
    """Cards in notation separated by spaces; an unknown card shows as `??`."""
    return " ".join("??" if c is None else str(c) for c in cards)
