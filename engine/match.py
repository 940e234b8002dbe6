"""A match: rounds of one game played until a seat (Zodiak, 55) or a team (Hekata, 10,000) wins."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from engine import hekata, zodiak
from engine.cards import Card, french_deck, hekata_deck
from engine.errors import IllegalMove

GAMES = ("zodiak", "hekata")
Round = zodiak.ZodiakRound | hekata.HekataDeal


def target_of(game: str) -> int:
    """The score that wins a match of `game`."""
    return zodiak.MATCH_TARGET if game == "zodiak" else hekata.GAME_TARGET


def shuffled_deck(game: str, rng: random.Random) -> list[Card] | list[int]:
    """A freshly shuffled deck for `game`, drawn from `rng`."""
    deck: list = french_deck() if game == "zodiak" else hekata_deck()
    rng.shuffle(deck)
    return deck


def check_players(game: str, players: int) -> None:
    """Raise IllegalMove unless `game` can be played by `players` seats."""
    if game not in GAMES:
        raise IllegalMove(f"{game!r} is not a game: choose zodiak or hekata")
    allowed, words = ((2, 3, 4), "2 to 4") if game == "zodiak" else ((2, 4), "2 or 4")
    if players not in allowed:
        raise IllegalMove(f"{game.capitalize()} is for {words} players, not {players}")


@dataclass
class Match:
    """Scores, dealer and round number across the rounds of one match."""

    game: str
    players: int
    signs: tuple[str, ...] = ()
    dealer: int = 0
    scores: list[int] = field(default_factory=list)
    rounds_played: int = 0

    def __post_init__(self) -> None:
        check_players(self.game, self.players)
        if self.game == "zodiak":
            if len(self.signs) != self.players:
                raise IllegalMove("every Zodiak player needs a zodiac sign")
            self.signs = tuple(zodiak.parse_sign(s) for s in self.signs)
        if not self.scores:
            self.scores = [0] * (self.players if self.game == "zodiak" else 2)

    @property
    def target(self) -> int:
        """The score that wins."""
        return target_of(self.game)

    @property
    def winner(self) -> int | None:
        """The seat (Zodiak) or team (Hekata) that has won the match, if any."""
        best = max(range(len(self.scores)), key=lambda i: self.scores[i])
        return best if self.scores[best] >= self.target else None

    @property
    def over(self) -> bool:
        """Whether the match is decided."""
        return self.winner is not None

    def start_round(self, deck: Sequence) -> Round:
        """The next round, dealt from `deck` in order."""
        if self.over:
            raise IllegalMove("the match is over")
        if self.game == "zodiak":
            return zodiak.ZodiakRound.deal(deck, self.signs, self.dealer, self.scores)
        return hekata.HekataDeal.deal(deck, self.players, self.dealer, self.scores)

    def end_round(self, finished: Round) -> None:
        """Take a finished round's scores and pass the deal clockwise."""
        if not finished.round_over:
            raise IllegalMove("the round is not over yet")
        self.scores = list(finished.scores)
        self.dealer = (self.dealer + 1) % self.players
        self.rounds_played += 1
