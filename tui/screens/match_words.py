"""The words and tables of a match's scores: how a round ended, who won, the score history."""

from __future__ import annotations

from engine.games import game_named
from engine.match import Round
from netplay.session.events import GameSession, SeatInfo
from tui.widgets.players import score_text


class MatchWords:
    """How the game screen words rounds, scores and results, from the match as it stands."""

    session: GameSession
    seats: tuple[SeatInfo, ...]
    my_seat: int | None
    target: int
    view: Round | None
    ascii_only: bool
    scores: tuple[int, ...]
    scores_before: tuple[int, ...] | None  # the match's scores before this screen began
    # (round number, its winner, its points, the match scores after it)
    history: list[tuple[int, int | None, int, tuple[int, ...]]]

    def seat_name(self, seat: int) -> str:
        """A seat's name."""
        return self.seats[seat].name if seat < len(self.seats) else f"seat {seat}"

    @property
    def round_word(self) -> str:
        """What a round is called in this game (tui/RULES.md: a Zodiak round, a Hekata deal)."""
        return game_named(self.session.game).round_word

    def round_title(self, winner: int | None, points: int) -> str:
        """How a round or deal ended, in words."""
        if self.session.game == "zodiak":
            if winner is None:
                return "The round is blocked: no winner, no points."
            if winner == self.my_seat:
                return f"You go out and score {points:,}."
            return f"{self.seat_name(winner)} goes out and scores {points:,}."
        if winner is None:
            return "The deal is even."
        if max(self.scores, default=0) >= self.target:
            # RULES 2.4: the match ends the moment a team reaches the target, most often mid-deal.
            who = "Your team" if self.my_team == winner else self.team_name(winner)
            return f"The match ends in this deal; {who} took the most in it, {points:,}."
        if self.my_team == winner:
            return f"Your team wins the deal, taking {points:,}."
        names = self.team_name(winner)
        verb = "win" if " & " in names else "wins"
        return f"{names} {verb} the deal, taking {points:,}."

    @property
    def my_team(self) -> int | None:
        """Your Hekata team (None when watching)."""
        if self.my_seat is None:
            return None
        return self.my_seat % 2 if len(self.seats) == 4 else self.my_seat

    def score_history(self) -> str:
        """The score after every round of the match so far, one line per round."""
        if not self.history:
            return ""
        # One column a score: a watcher may hear a round's end before the seats' names.
        name = self.seat_name if self.session.game == "zodiak" else self.team_name
        names = [name(i) for i in range(len(self.scores))]
        width = max([8, *(len(n) for n in names)])
        head = f"{self.round_word.capitalize():<6}" + "".join(f"{n[:width]:>{width + 2}}"
                                                             for n in names)
        rows = [("before", self.scores_before)] if self.scores_before is not None else []
        rows += [(str(number), scores) for number, _winner, _points, scores in self.history]
        return "\n".join([head] + [f"{label:<6}" + "".join(f"{s:>{width + 2},}" for s in scores)
                                   for label, scores in rows])

    def score_lines(self, scores: tuple[int, ...]) -> str:
        """The match scores under a header, one line per seat (Zodiak: with its cards left) or team."""
        sizes = (self.view.hand_sizes() if self.session.game == "zodiak" and self.view is not None
                 else [])
        cards = "  Cards" if sizes else ""
        if not game_named(self.session.game).plays_in_teams(len(self.seats)):
            rows = [(s.name, scores[i], f"  {sizes[i]:>5}" if i < len(sizes) else " " * len(cards))
                    for i, s in enumerate(self.seats) if i < len(scores)]
        else:
            rows = [(self.team_name(t), score, "") for t, score in enumerate(scores)]
        width = max([4, *(len(name) for name, _, _ in rows)])
        lines = [f"{'':<{width}}{cards}  {'Score':>6}"]
        lines += [f"{name:<{width}}{left}  {score_text(score, 40, self.ascii_only):>6}"
                  for name, score, left in rows]
        max_row = getattr(self.view, "max_row", None)
        house = f"\nHouse rule: rows of at most {max_row} cards." if max_row else ""
        return "\n".join(lines) + f"\n\nThe match is played to {self.target:,}.{house}"

    def team_name(self, team: int) -> str:
        """A Hekata team named by its players."""
        players = len(self.seats)
        return " & ".join(s.name for i, s in enumerate(self.seats)
                          if (i % 2 if players == 4 else i) == team) or f"team {team + 1}"

    def result_title(self, winner: int | None) -> str:
        """Who won the match, in words."""
        if winner is None:
            return "The match is over."
        if not game_named(self.session.game).plays_in_teams(len(self.seats)):
            name = self.seats[winner].name
            return "You win the match!" if winner == self.my_seat else f"{name} wins the match."
        mine = self.my_seat is not None and (self.my_seat % 2 if len(self.seats) == 4
                                             else self.my_seat) == winner
        return "Your team wins the match!" if mine else f"{self.team_name(winner)} win the match."
