"""The games cardtui knows, one object each: deck, players, deal, move notation, target and layout.

Everything that differs between Zodiak and Hekata outside their rules modules asks the game's
object (`game_named("zodiak")`, `game_of(state)`) instead of comparing names, so a third game
would add one object here and a screen in the app.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from engine import hekata, zodiak
from engine.cards import Card, french_deck, hekata_deck, parse_digit
from engine.errors import IllegalMove
from engine.house import STANDARD, HouseRules

Round = zodiak.ZodiakRound | hekata.HekataDeal
Move = zodiak.ZodiakMove | hekata.HekataMove


@dataclass(frozen=True)
class Game(ABC):
    """One game's fixed facts and the few operations that differ between games."""

    name: str
    title: str
    players: tuple[int, ...]
    players_words: str
    default_players: int
    target: int
    round_word: str
    uses_signs: bool
    face_up_at_start: int
    reshuffles: bool
    blurb: str
    rows: bool = False  # whether tricks are built of rows, which `max-row` caps (RULES 2)

    def __str__(self) -> str:
        return self.name

    def check_house(self, house: HouseRules) -> None:
        """Raise IllegalMove unless every rule of `house` means something in this game."""
        if house.max_row is not None and not self.rows:
            raise IllegalMove(f"max-row caps the rows of a Hekata trick; {self.title} has none")

    def check_players(self, players: int) -> None:
        """Raise IllegalMove unless this game can be played by `players` seats."""
        if players not in self.players:
            raise IllegalMove(f"{self.title} is for {self.players_words} players, not {players}")

    @abstractmethod
    def sides(self, players: int) -> int:
        """How many scores a match keeps: one per seat, or one per team."""

    @abstractmethod
    def hand_size(self, players: int) -> int:
        """How many cards each seat is dealt."""

    @abstractmethod
    def deck(self) -> list[Any]:
        """The game's whole deck in its fixed canonical order."""

    @abstractmethod
    def parse_card(self, text: str) -> Any:
        """The card for its text form (`7H`, or a digit), raising IllegalMove if it is none."""

    @abstractmethod
    def parse_move(self, text: str) -> Move:
        """A move from its text form (tui/RULES.md section 3), raising IllegalMove if it is none."""

    @abstractmethod
    def deal(self, deck: Sequence[Any], players: int, signs: Sequence[str], dealer: int,
             scores: Sequence[int], house: HouseRules = STANDARD) -> Round:
        """A round (or deal) dealt from `deck` in order, played by the `house` rules."""

    @abstractmethod
    def seat_view(self, hands: list[list[Any]], face_up: list[Any], stock: list[Any],
                   signs: Sequence[str], dealer: int, scores: Sequence[int],
                   house: HouseRules = STANDARD) -> Round:
        """A round as one seat sees it: hands and stock may hold None for unseen cards."""

    @abstractmethod
    def summary(self, names: Sequence[str], winner: int | None, points: int) -> str:
        """One line that says how a round or deal ended: who won it (a seat or team) and how much."""

    @abstractmethod
    def owns(self, state: object) -> bool:
        """Whether `state` is a round of this game."""

    def signs_for(self, signs: Sequence[str | None]) -> tuple[str, ...]:
        """The seats' zodiac signs as a match of this game takes them (none if it has no signs)."""
        return tuple(sign or "aries" for sign in signs) if self.uses_signs else ()

    def plays_in_teams(self, players: int) -> bool:
        """Whether partners share a score (RULES 2.1: four-player Hekata)."""
        return self.sides(players) < players

    def shuffled_deck(self, rng: random.Random) -> list[Any]:
        """A freshly shuffled deck drawn from `rng`."""
        deck = self.deck()
        rng.shuffle(deck)
        return deck

    def deal_layout(self, players: int) -> Iterator[int | None]:
        """Who gets each position dealt at once: seat numbers in order, then None per face-up card."""
        size = self.hand_size(players)
        for seat in range(players):
            yield from [seat] * size
        yield from [None] * self.face_up_at_start


@dataclass(frozen=True)
class _Zodiak(Game):
    def sides(self, players: int) -> int:
        return players

    def hand_size(self, players: int) -> int:
        return zodiak.HAND_SIZE

    def deck(self) -> list[Any]:
        return list(french_deck())

    def parse_card(self, text: str) -> Card:
        return Card.parse(text)

    def parse_move(self, text: str) -> Move:
        return zodiak.parse_move(text)

    def deal(self, deck: Sequence[Any], players: int, signs: Sequence[str], dealer: int,
             scores: Sequence[int], house: HouseRules = STANDARD) -> Round:
        return zodiak.ZodiakRound.deal(deck, tuple(signs), dealer, scores)

    def seat_view(self, hands: list[list[Any]], face_up: list[Any], stock: list[Any],
                   signs: Sequence[str], dealer: int, scores: Sequence[int],
                   house: HouseRules = STANDARD) -> Round:
        state = zodiak.ZodiakRound.from_parts(hands, face_up, stock, tuple(signs), dealer, scores)
        state.sees_stock = False
        return state

    def summary(self, names: Sequence[str], winner: int | None, points: int) -> str:
        if winner is None:
            return "The round is blocked: no winner, no points."
        return f"{names[winner]} goes out and scores {points}."

    def owns(self, state: object) -> bool:
        return isinstance(state, zodiak.ZodiakRound)


@dataclass(frozen=True)
class _Hekata(Game):
    def sides(self, players: int) -> int:
        return 2

    def hand_size(self, players: int) -> int:
        return hekata.HAND_SIZE[players]

    def deck(self) -> list[Any]:
        return list(hekata_deck())

    def parse_card(self, text: str) -> int:
        return parse_digit(text)

    def parse_move(self, text: str) -> Move:
        return hekata.HekataMove.parse(text)

    def deal(self, deck: Sequence[Any], players: int, signs: Sequence[str], dealer: int,
             scores: Sequence[int], house: HouseRules = STANDARD) -> Round:
        return hekata.HekataDeal.deal(deck, players, dealer, scores, house)

    def seat_view(self, hands: list[list[Any]], face_up: list[Any], stock: list[Any],
                   signs: Sequence[str], dealer: int, scores: Sequence[int],
                   house: HouseRules = STANDARD) -> Round:
        return hekata.HekataDeal.from_parts(hands, face_up, stock, dealer, scores, house)

    def summary(self, names: Sequence[str], winner: int | None, points: int) -> str:
        if winner is None:
            return "The deal is even."
        side = [name for seat, name in enumerate(names) if seat % 2 == winner]
        return f"{' & '.join(side)} {'win' if len(side) > 1 else 'wins'} the deal by taking {points}."

    def owns(self, state: object) -> bool:
        return isinstance(state, hekata.HekataDeal)


ZODIAK: Game = _Zodiak(
    "zodiak", "Zodiak", (2, 3, 4), "2 to 4", default_players=3, target=zodiak.MATCH_TARGET,
    round_word="round", uses_signs=True, face_up_at_start=1, reshuffles=True,
    blurb="Zodiak: shed your cards in runs onto the pile. Eights are wild, aces make the next"
          " player draw two, your own zodiac card makes them draw seven. First to 55.")
HEKATA: Game = _Hekata(
    "hekata", "Hekata", (2, 4), "2 or 4", default_players=4, target=hekata.GAME_TARGET,
    round_word="deal", uses_signs=False, face_up_at_start=hekata.TABLE_START, reshuffles=False,
    rows=True,
    blurb="Hekata: lay a digit card and take table cards that add up, in a column sum, to a"
          " multiple of 100. Two play alone; four play as two teams, partners sitting"
          " opposite. First to 10,000.")
GAMES: dict[str, Game] = {game.name: game for game in (ZODIAK, HEKATA)}
GAME_NAMES: tuple[str, ...] = tuple(GAMES)


def game_named(name: object) -> Game:
    """The game called `name`, raising IllegalMove if cardtui knows no such game."""
    game = GAMES.get(name) if isinstance(name, str) else None
    if game is None:
        raise IllegalMove(f"{name!r} is not a game: choose {' or '.join(GAME_NAMES)}")
    return game


def game_of(state: object) -> Game:
    """The game `state` is a round of."""
    for game in GAMES.values():
        if game.owns(state):
            return game
    raise TypeError(f"{type(state).__name__} is not a round of any game")
