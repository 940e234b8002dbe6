"""What the app says about moves and cards: names instead of seat numbers, suit symbols, grouped numbers."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from engine.cards import SUIT_NAMES, SUIT_SYMBOLS, Card
from engine.hekata import HekataEffect
from engine.zodiak import SIGN_CARDS, SIGNS, Draw, MoveEffect, Run

# A card in RULES.md notation (`10S`, `KD`), perhaps a wild eight's declared suit (`8D/C`).
_CARD = re.compile(r"\b(10|[2-9AJQK])([SHDC])(?:/([SHDC]))?\b")
_NUMBER = re.compile(r"(?<![\d_,])\d{5,}(?![\d_])")


def pretty_cards(text: str, ascii_only: bool = False) -> str:
    """`text` with every card code shown as the cards are drawn (`10♠`), a declared suit spelled out."""
    def card(match: re.Match[str]) -> str:
        rank, suit, declared = match.groups()
        face = f"{rank}{suit}" if ascii_only else f"{rank}{SUIT_SYMBOLS[suit]}"
        return f"{face} (wild: {declared_words(declared, ascii_only)})" if declared else face

    return _CARD.sub(card, text)


def grouped(text: str) -> str:
    """`text` with long numbers grouped in thousands (`76600` -> `76,600`)."""
    return _NUMBER.sub(lambda m: f"{int(m.group()):,}", text)


def sign_choices(ascii_only: bool) -> list[tuple[str, str]]:
    """Every zodiac sign with its card, for a drop-down: (`Leo (K♣)`, `leo`)."""
    return [(f"{sign.capitalize()} ({SIGN_CARDS[sign].pretty(ascii_only)})", sign)
            for sign in SIGNS]


def declared_words(suit: str, ascii_only: bool = False) -> str:
    """A declared suit as `♣ clubs` (or `C clubs`)."""
    return f"{suit if ascii_only else SUIT_SYMBOLS[suit]} {SUIT_NAMES[suit]}"


def cards_text(cards: Sequence[Card | None], ascii_only: bool = False) -> str:
    """Cards as the app draws them, unseen ones as `?`."""
    return " ".join(c.pretty(ascii_only) if c is not None else "?" for c in cards)


def zodiak_words(name: str, effect: MoveEffect, zodiac_card: Card | None, penalty_after: int,
                 ascii_only: bool = False, show_drawn: bool = False) -> str:
    """One Zodiak move in words: who played what, what it makes the next player do
    (`zodiac_card` is the mover's, or None when the round is not known)."""
    move = effect.move
    if isinstance(move, Draw):
        n = len(effect.drawn)
        text = f"{name} draws {n} card{'s' if n != 1 else ''}"
        seen = [c for c in effect.drawn if c is not None]
        if show_drawn and seen:
            text += f": {cards_text(seen, ascii_only)}"
        if effect.reshuffles:
            text += " (the pile was reshuffled into the stock)"
        return text
    assert isinstance(move, Run)
    text = f"{name} plays {cards_text(move.cards, ascii_only)}"
    if move.declared:
        text += f" (wild eight: {declared_words(move.declared, ascii_only)} next)"
    elif move.alone and move.cards[0] == zodiac_card:
        text += " (their zodiac card)"
    if effect.went_out:
        text += " and goes out"
    if penalty_after:
        text += f"; the next player faces {penalty_after} cards"
    return text


def hekata_words(name: str, effect: HekataEffect, show_drawn: bool = False) -> str:
    """One Hekata move in words: the card laid, the trick taken and its total, grouped."""
    move = effect.move
    text = f"{name} lays {move.card}"
    if move.trick is not None:
        text += f" and takes {move.trick} = {effect.total:,}"
    seen = [c for c in effect.drawn if c is not None]
    if show_drawn and seen:
        # "draws 0" read as "drew nothing": the digit drawn is named as a card.
        text += ", draws " + " and ".join(f"{'an' if c == 8 else 'a'} {c}" for c in seen)
    return text


_ASCII_SUITS = str.maketrans({symbol: suit for suit, symbol in SUIT_SYMBOLS.items()})
_ASCII = str.maketrans({"—": "-", "–": "-", "·": "|", "…": "...", "•": "*", "▶": ">", "▼": "v",
                        "✓": "OK", "✗": "!!", "←": "<", "→": ">", "⏎": "enter", "“": '"', "”": '"', "×": "x"})


def plain_text(text: str) -> str:
    """`text` with the typographic characters a plain ASCII terminal lacks replaced."""
    return text.translate(_ASCII)


def plain_document(text: str) -> str:
    """A document (the help's Markdown) in ASCII alone: keys in words, suits as letters, the
    accents of names dropped."""
    text = text.replace("←→↑↓", "arrows").translate(_ASCII_SUITS)
    return unicodedata.normalize("NFKD", plain_text(text)).encode("ascii", "ignore").decode()
