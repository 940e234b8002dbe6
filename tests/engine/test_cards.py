"""Card notation (tui/RULES.md section 3): parsing, printing and the two decks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import engine
from engine.cards import (
    Card,
    format_cards,
    french_deck,
    hekata_deck,
    parse_cards,
    parse_digit,
    parse_suit,
)
from engine.errors import IllegalMove, RecordError


def test_package_exports_the_errors() -> None:
    """`engine.IllegalMove` is a ValueError importable from the package, as the issue asks."""
    assert engine.IllegalMove is IllegalMove
    assert engine.RecordError is RecordError
    assert issubclass(IllegalMove, ValueError)
    assert issubclass(RecordError, ValueError)
    assert engine.Card is Card
    from engine.hekata import HekataDeal
    from engine.records import Record
    from engine.zodiak import ZodiakRound

    assert engine.ZodiakRound is ZodiakRound and engine.HekataDeal is HekataDeal
    assert engine.Record is Record
    with pytest.raises(AttributeError):
        _ = engine.NoSuchThing  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("text", "rank", "suit"),
    [
        ("2S", 2, "S"), ("10H", 10, "H"), ("QC", 12, "C"), ("AD", 1, "D"), ("KS", 13, "S"),
        ("JH", 11, "H"), ("9C", 9, "C"),
    ],
)
def test_parse_examples(text: str, rank: int, suit: str) -> None:
    """RULES 3: the examples `2S`, `10H`, `QC`, `AD` and friends parse to rank and suit."""
    card = Card.parse(text)
    assert (card.rank, card.suit) == (rank, suit)
    assert str(card) == text


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("2s", "2S"), ("10h", "10H"), ("qc", "QC"), ("aD", "AD"), ("TD", "10D"), ("th", "10H"),
        ("Q♣", "QC"), ("10♥", "10H"), ("A♠", "AS"), ("7♦", "7D"), ("t♠", "10S"), (" 5c ", "5C"),
        ("K♡", "KH"),
    ],
)
def test_parse_is_case_insensitive_and_accepts_t_and_symbols(text: str, canonical: str) -> None:
    """RULES 3: parsing is case-insensitive and also accepts `T` for 10 and the suit symbols."""
    assert str(Card.parse(text)) == canonical


def test_every_card_round_trips_in_letters_and_symbols() -> None:
    """RULES 3: every one of the 52 cards prints as it parses, with letters or symbols."""
    deck = french_deck()
    assert len(deck) == 52 and len(set(deck)) == 52
    for card in deck:
        assert Card.parse(str(card)) == card
        assert Card.parse(card.pretty()) == card
        assert Card.parse(str(card).lower()) == card
    assert Card.parse("10H").pretty() == "10♥"
    assert Card.parse("10H").pretty(ascii_only=True) == "10H"


@pytest.mark.parametrize(
    "text", ["", "S", "1S", "11H", "0C", "ZZ", "10X", "2", "AS AS", "1 0H", "10", "²S", "JJ"],
)
def test_bad_cards_raise_illegal_move_with_a_reason(text: str) -> None:
    """RULES 3: anything that is not a card is rejected with IllegalMove that names it."""
    with pytest.raises(IllegalMove, match="not a card"):
        Card.parse(text)


def test_non_text_is_not_a_card() -> None:
    """RULES 3: a card is text; other values are IllegalMove, not a TypeError."""
    for value in (None, 10, ["2S"], b"2S"):
        with pytest.raises(IllegalMove):
            Card.parse(value)  # type: ignore[arg-type]
        with pytest.raises(IllegalMove):
            parse_cards(value)  # type: ignore[arg-type]


def test_parse_cards_and_format() -> None:
    """RULES 3: a list of cards is separated by spaces (commas are tolerated) and prints back."""
    cards = parse_cards("2S 3s,3C  t♣")
    assert format_cards(cards) == "2S 3S 3C 10C"
    assert parse_cards("   ") == []
    assert format_cards([Card.parse("2S"), None]) == "2S ??"


def test_suits() -> None:
    """RULES 3: suit letters in any case and the symbols name the four suits."""
    assert [parse_suit(s) for s in "shdc"] == list("SHDC")
    assert [parse_suit(s) for s in "♠♥♦♣"] == list("SHDC")
    for bad in ("", "X", "SH", "8"):
        with pytest.raises(IllegalMove, match="not a suit"):
            parse_suit(bad)


def test_hekata_deck_and_digits() -> None:
    """RULES 2: the Hekata deck is the digits 0 to 9, five of each; a card is one digit."""
    deck = hekata_deck()
    assert len(deck) == 50 and all(deck.count(d) == 5 for d in range(10))
    assert [parse_digit(str(d)) for d in range(10)] == list(range(10))
    assert parse_digit(" 7 ") == 7 and parse_digit(3) == 3
    for bad in ("", "10", "x", "-1", "²", "٣", "1.0", True, 10, -1, None, 2.0):
        with pytest.raises(IllegalMove, match="not a Hekata card"):
            parse_digit(bad)  # type: ignore[arg-type]


@given(st.text(max_size=8))
def test_fuzz_card_parser(text: str) -> None:
    """RULES 3: any text either parses to a card that prints back, or is IllegalMove."""
    try:
        card = Card.parse(text)
    except IllegalMove as exc:
        assert str(exc)
        return
    assert Card.parse(str(card)) == card


@given(st.text(alphabet="0123456789AaTtJjQqKkSsHhDdCc♠♥♦♣ ,/x_", max_size=30))
def test_fuzz_card_list_parser(text: str) -> None:
    """RULES 3: a text made of card-like pieces parses to cards or raises IllegalMove."""
    try:
        cards = parse_cards(text)
    except IllegalMove as exc:
        assert "not a card" in str(exc)
        return
    assert parse_cards(format_cards(cards)) == cards


@given(st.one_of(st.text(max_size=4), st.integers(), st.none(), st.floats(), st.booleans()))
def test_fuzz_digit_parser(value: object) -> None:
    """RULES 2/3: any value is a digit card 0-9 or IllegalMove, never another exception."""
    try:
        digit = parse_digit(value)
    except IllegalMove:
        return
    assert digit in range(10)


@given(st.text(max_size=3))
def test_fuzz_suit_parser(text: str) -> None:
    """RULES 3: any text is one of the four suits or IllegalMove, never another exception."""
    try:
        suit = parse_suit(text)
    except IllegalMove as exc:
        assert "not a suit" in str(exc)
        return
    assert suit in "SHDC"
