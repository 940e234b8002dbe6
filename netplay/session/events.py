"""What a game screen consumes: a stream of events and views, and a way to submit moves.

The Textual app never calls into a local game directly; it reads a
`GameSession`. A local match against bots, a networked seat and an SSH seat
are all sessions, so the same screens serve every way of playing.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeGuard

from engine.hekata import HekataMove
from engine.match import Round
from engine.zodiak import ZodiakMove

Move = ZodiakMove | HekataMove


@dataclass(frozen=True)
class SeatInfo:
    """Who sits in a seat: a name, a zodiac sign (Zodiak), the bot kind if a bot plays it, readiness."""

    name: str
    sign: str | None = None
    bot: str | None = None
    connected: bool = True
    ready: bool = False


@dataclass(frozen=True)
class MatchStarted:
    """The match begins: the game, the seats, which seat is yours (None: watching), the target."""

    game: str
    seats: tuple[SeatInfo, ...]
    my_seat: int | None
    target: int
    scores: tuple[int, ...]
    rounds_before: int | None = None  # the table's rounds before this match (None: not told)


@dataclass(frozen=True)
class RoundStarted:
    """A round (Zodiak) or deal (Hekata) begins; `view` is what your seat sees."""

    number: int
    view: Round
    scores: tuple[int, ...]


@dataclass(frozen=True)
class MoveMade:
    """A seat moved; `text` says what happened and `view` is your view after it."""

    seat: int
    move: Move
    text: str
    view: Round


@dataclass(frozen=True)
class RoundEnded:
    """A round or deal ended: its winner (seat or team, or None), the points, the match scores."""

    view: Round | None  # None: this seat had no view of the round (it never saw its deal)
    winner: int | None
    points: int
    scores: tuple[int, ...]
    summary: str
    number: int = 0  # the round's number at the table, as RoundStarted's (0: not told)


@dataclass(frozen=True)
class MatchEnded:
    """The match is decided."""

    winner: int | None
    scores: tuple[int, ...]
    moves: int


@dataclass(frozen=True)
class RematchOffered:
    """A new match with the same seats is offered (`by`: who offered, when the lobby shows it);
    being ready accepts it."""

    by: str | None = None


@dataclass(frozen=True)
class SeatsChanged:
    """Someone arrived, left, or was replaced by a bot."""

    seats: tuple[SeatInfo, ...]


@dataclass(frozen=True)
class Notice:
    """A message for the player: `level` is info, chat, warning or error; a `kept` one (a failed
    check, why the session ended) is never dropped from a full queue (its sender bounds how
    many there are); a `state` one (the host or the connection away, or back) is kept as the
    latest, like a seat change: screens follow those to know whether a move can count."""

    text: str
    level: str = "info"
    kept: bool = False
    state: bool = False
    round: int | None = None  # the table's number of the round the text begins with

    def numbered_from(self, rounds_before: int) -> str:
        """The text with its round numbered as a screen that began counting `rounds_before`
        rounds into the table (a rematch's) numbers it."""
        prefix = f"round {self.round}"
        if self.round is None or not rounds_before or not self.text.startswith(prefix):
            return self.text
        return f"round {self.round - rounds_before}{self.text[len(prefix):]}"

    @property
    def out_of_reach(self) -> bool:
        """Whether this `state` notice says the host is out of reach, for now (a warning) or for
        good (an error: the session ended); its others say it is back."""
        return self.state and self.level in ("warning", "error")


Event = (MatchStarted | RoundStarted | MoveMade | RoundEnded | MatchEnded | SeatsChanged | Notice
         | RematchOffered)


MAX_QUEUED_NOTES = 1000
"""Notices and seat changes that may wait for the screen: a host or its chat may send them
without end while nobody drains the queue (the lobby screen does not), so more are dropped."""

Note = Notice | SeatsChanged


def _droppable(event: Event) -> TypeGuard[Note]:
    """Whether a full queue may drop `event` (or keep only its latest): a note not kept."""
    return isinstance(event, Note) and not (isinstance(event, Notice) and event.kept)


@dataclass
class GameSession:
    """Base of every session: an event queue that the screen drains, and the submit/close calls."""

    # Whether the next round waits for the screen to have shown this one's end (a match
    # against bots); at a networked table it starts when the table starts it.
    next_round_waits: ClassVar[bool] = True
    game: str
    my_seat: int | None = None
    queue: asyncio.Queue[Event] = field(default_factory=asyncio.Queue)
    closed: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    _notes_queued: int = 0
    _notes_dropped: int = 0  # notices dropped since the queue was last full
    _seats_dropped: SeatsChanged | None = None  # the latest seat change dropped
    _state_dropped: Notice | None = None  # the latest `state` notice dropped

    def emit(self, event: Event) -> None:
        """Queue an event for the screen (past MAX_QUEUED_NOTES waiting, a notice is dropped and
        counted, a seat change or a `state` notice kept only as the latest)."""
        if _droppable(event):
            if self._notes_queued >= MAX_QUEUED_NOTES:
                if isinstance(event, SeatsChanged):
                    self._seats_dropped = event
                elif event.state:  # "the host is back" must not be lost after "is away"
                    self._notes_dropped += self._state_dropped is not None
                    self._state_dropped = event
                else:
                    self._notes_dropped += 1
                return
            self._notes_queued += 1
        self.queue.put_nowait(event)

    async def events(self) -> AsyncIterator[Event]:
        """Every event, in order, until the session closes."""
        while not (self.closed and self.queue.empty()):
            event = await self.queue.get()
            if _droppable(event):
                self._notes_queued -= 1
                self._emit_dropped()
            yield event

    def _emit_dropped(self) -> None:
        """Say how many notices were dropped, and queue the latest dropped `state` notice and
        seat change."""
        if self._notes_dropped:
            dropped, self._notes_dropped = self._notes_dropped, 0
            self.emit(Notice(f"{dropped} more messages came than the screen could show;"
                             " they were left out", "warning"))
        if self._state_dropped is not None:
            state, self._state_dropped = self._state_dropped, None
            self.emit(state)
        if self._seats_dropped is not None:
            seats, self._seats_dropped = self._seats_dropped, None
            self.emit(seats)

    async def start(self) -> None:
        """Begin producing events."""

    def turn_left(self) -> float | None:
        """Seconds the player to move has left on a turn timer, or None where there is none."""
        return None

    def plays_own_seat(self) -> bool:
        """Whether this person plays their seat in the round in play (not when dealt out)."""
        return True

    async def submit(self, move: Move) -> None:
        """Propose a move for your seat; raises IllegalMove when it is not legal here."""
        raise NotImplementedError

    async def close(self, leave: bool = False) -> None:
        """Stop; a local match saves itself first. `leave`: the person chose to leave the match
        (a networked seat's bot then plays it at once)."""
        self.closed = True
