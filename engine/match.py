"""A match: rounds of one game played until a seat (Zodiak, 55) or a team (Hekata, 10,000) wins."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from engine import zodiak
from engine.errors import IllegalMove
from engine.games import Game, Round, game_named
from engine.house import STANDARD, HouseRules

__all__ = ["Match", "Round"]


@dataclass
class Match:
    """Scores, dealer and round number across the rounds of one match."""

    game: str
    players: int
    signs: tuple[str, ...] = ()
    dealer: int = 0
    scores: list[int] = field(default_factory=list)
    rounds_played: int = 0
    house: HouseRules = STANDARD

    @property
    def rules(self) -> Game:
        """The game this match plays, raising IllegalMove if `game` names none."""
        return game_named(self.game)

    def __post_init__(self) -> None:
        self.rules.check_players(self.players)
        self.rules.check_house(self.house)
        if self.rules.uses_signs:
            if len(self.signs) != self.players:
                raise IllegalMove("every Zodiak player needs a zodiac sign")
            self.signs = tuple(zodiak.parse_sign(s) for s in self.signs)
        if not self.scores:
            self.scores = [0] * self.rules.sides(self.players)

    @property
    def target(self) -> int:
        """The score that wins: the game's (RULES 1.6, 2.4), or the house rules' lower one."""
        return self.house.target or self.rules.target

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
        return self.rules.deal(deck, self.players, self.signs, self.dealer, self.scores, self.house)

    def end_round(self, finished: Round) -> None:
        """Take a finished round's scores and pass the deal clockwise."""
        if not finished.round_over:
            raise IllegalMove("the round is not over yet")
        self.scores = list(finished.scores)
        self.dealer = (self.dealer + 1) % self.players
        self.rounds_played += 1
