"""The dealer's side of a round: every card known, reshuffles drawn at random, a record kept."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from engine import zodiak
from engine.errors import RecordError
from engine.games import Move
from engine.match import Match, Round
from engine.records import Record


def deal_winner(start_scores: Sequence[int], finished: Round) -> int | None:
    """The seat (Zodiak) or team (Hekata) that won this round or deal, or None."""
    if isinstance(finished, zodiak.ZodiakRound):
        return finished.winner
    gained = [b - a for a, b in zip(start_scores, finished.scores)]
    if gained[0] == gained[1]:
        return None
    return 0 if gained[0] > gained[1] else 1


@dataclass
class DealtRound:
    """A round as its dealer runs it: the full state, its record, and the dealer's randomness."""

    state: Round
    record: Record
    rng: random.Random

    @classmethod
    def deal(cls, match: Match, names: Sequence[str], rng: random.Random) -> DealtRound:
        """The match's next round, dealt from a deck shuffled by `rng`."""
        state = match.start_round(match.rules.shuffled_deck(rng))
        return cls(state, Record.of_round(match.game, list(names), state, match.house), rng)

    @classmethod
    def resume(cls, record: Record, rng: random.Random) -> DealtRound:
        """A round continued from its record, raising RecordError if the record does not replay."""
        result = record.replay()
        if not result.ok:
            raise RecordError(f"the saved round does not replay: {result.error}")
        return cls(result.state, record, rng)

    def push(self, move: Move) -> object:
        """Apply the move of the seat to move, reshuffling the pile first if the draw needs it."""
        state, seat = self.state, self.state.turn
        pending = None
        if isinstance(state, zodiak.ZodiakRound) and isinstance(move, zodiak.Draw):
            pending = state.pending_reshuffle()
            if pending is not None:
                self.rng.shuffle(pending)
                state.reshuffles.append(pending)
        effect = state.push(move)
        assert seat is not None
        self.record.add_move(seat, move)
        if pending is not None and isinstance(state, zodiak.ZodiakRound):
            self.record.set_reshuffles(state.reshuffles)
        return effect

    def outcome(self) -> tuple[int | None, int]:
        """The finished round's winner (seat or team, or None) and the points it won."""
        state = self.state
        winner = deal_winner(self.record.scores, state)
        if isinstance(state, zodiak.ZodiakRound):
            return winner, state.points()
        return winner, max(b - a for a, b in zip(self.record.scores, state.scores))
