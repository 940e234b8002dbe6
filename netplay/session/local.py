"""A match against bots on this machine, as a `GameSession`; it saves itself as a game record."""

from __future__ import annotations

import asyncio
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.bots import Bot, bot_view, make_bot
from engine.dealer import DealtRound
from engine.errors import IllegalMove, RecordError
from engine.games import game_named
from engine.house import STANDARD, HouseRules
from engine.match import Match, Round
from engine.records import Record
from netplay.machine import write_private
from netplay.session.events import (
    GameSession,
    MatchEnded,
    MatchStarted,
    Move,
    MoveMade,
    Notice,
    RoundEnded,
    RoundStarted,
    SeatInfo,
)
from netplay.session.thinking import choose_off_loop


@dataclass
class LocalMatch(GameSession):
    """You (seat `my_seat`) against bots; bot moves are paced by `delay` seconds."""

    seats: tuple[SeatInfo, ...] = ()
    seed: int = 0
    delay: float = 0.6
    save_path: Path | None = None
    think: float | None = None  # an expert bot's time limit per move; None: the default
    match: Match | None = None
    dealt: DealtRound | None = None
    moves_made: int = 0
    _bots: dict[int, Bot] = field(default_factory=dict)
    _wake: asyncio.Event = field(default_factory=asyncio.Event)
    _task: asyncio.Task | None = None
    _resume_record: Record | None = None

    @classmethod
    def new(cls, game: str, seats: list[SeatInfo], my_seat: int = 0, seed: int | None = None,
            delay: float = 0.6, save_path: Path | None = None,
            house: HouseRules = STANDARD, think: float | None = None) -> LocalMatch:
        """A fresh match by the `house` rules; the first dealer is drawn from the seed (RULES 1.2, 2.1)."""
        seed = random.randrange(2**32) if seed is None else seed
        signs = game_named(game).signs_for([s.sign for s in seats])
        dealer = random.Random(seed).randrange(len(seats))
        match = Match(game, len(seats), signs, dealer=dealer, house=house)
        return cls(game=game, my_seat=my_seat, seats=tuple(seats), seed=seed, delay=delay,
                   save_path=save_path, match=match, think=think)

    @classmethod
    def resume(cls, path: Path, delay: float = 0.6, think: float | None = None) -> LocalMatch:
        """The match saved at `path`, continuing from its last move."""
        data = json.loads(path.read_text())
        saved = data.get("cardtui")
        if not isinstance(saved, dict):
            raise RecordError("this record was not saved by cardtui play")
        record = Record.from_json(data)
        seats = [SeatInfo(s["name"], s.get("sign"), s.get("bot")) for s in saved["seats"]]
        match = Match(record.game, len(seats), game_named(record.game).signs_for(
                          [s.sign for s in seats]), dealer=record.dealer,
                      scores=list(record.scores), rounds_played=saved["rounds_played"],
                      house=record.house)
        session = cls(game=record.game, my_seat=saved["my_seat"], seats=tuple(seats),
                      seed=saved["seed"], delay=delay, save_path=path, match=match,
                      think=think)
        session.moves_made = saved.get("moves_made", 0)
        session._resume_record = record
        return session

    @property
    def state(self) -> Round | None:
        """The round in play, every card known (None between rounds)."""
        return self.dealt.state if self.dealt is not None else None

    @property
    def record(self) -> Record | None:
        """The record of the round in play, or of the last one."""
        return self.dealt.record if self.dealt is not None else None

    # -- the session interface ---------------------------------------------

    async def start(self) -> None:
        """Start the match loop in the background."""
        self._bots = {i: make_bot(s.bot, self.seed + i, seconds=self.think)
                      for i, s in enumerate(self.seats) if s.bot}
        self._task = asyncio.create_task(self._run())

    async def submit(self, move: Move) -> None:
        """Play your move now, or raise IllegalMove saying why not."""
        state = self.state
        if state is None or state.round_over:
            raise IllegalMove("there is no round in play")
        state.check(move, self.my_seat)
        self._apply(move)
        self._wake.set()

    async def close(self, leave: bool = False) -> None:
        """Save an unfinished match and stop."""
        self.save()
        if self._task is not None:
            self._task.cancel()
        await super().close(leave)

    # -- the match loop -----------------------------------------------------

    async def _run(self) -> None:
        match = self.match
        assert match is not None
        self.emit(MatchStarted(self.game, self.seats, self.my_seat, match.target,
                               tuple(match.scores)))
        while not match.over:
            self._begin_round()
            state = self.state
            assert state is not None
            while not state.round_over:
                seat = state.turn
                assert seat is not None
                if seat in self._bots:
                    await asyncio.sleep(self.delay)
                    bot = self._bots[seat]
                    move = await choose_off_loop(bot, bot_view(bot, state, seat))
                    if self.state is state and state.turn == seat:
                        self._apply(move)
                else:
                    self._wake.clear()
                    await self._wake.wait()
            self._finish_round()
        self.emit(MatchEnded(match.winner, tuple(match.scores), self.moves_made))
        self._delete_save()

    def _begin_round(self) -> None:
        match = self.match
        assert match is not None
        rng = random.Random(f"{self.seed}/{match.rounds_played}")
        if self._resume_record is not None:
            record, self._resume_record = self._resume_record, None
            self.dealt = DealtRound.resume(record, rng)
        else:
            self.dealt = DealtRound.deal(match, [s.name for s in self.seats], rng)
        self.emit(RoundStarted(match.rounds_played + 1, self._view(), tuple(match.scores)))

    def _apply(self, move: Move) -> None:
        assert self.dealt is not None
        seat = self.dealt.state.turn
        assert seat is not None
        effect = self.dealt.push(move)
        self.moves_made += 1
        text = self.dealt.state.describe(effect).replace(f"seat {seat}", self.seats[seat].name, 1)
        self.emit(MoveMade(seat, move, text, self._view()))

    def _finish_round(self) -> None:
        match, dealt = self.match, self.dealt
        assert match is not None and dealt is not None
        winner, points = dealt.outcome()
        number = match.rounds_played + 1
        match.end_round(dealt.state)
        self.emit(RoundEnded(self._view(), winner, points, tuple(match.scores),
                             round_summary(self.game, self.seats, dealt.state, winner, points),
                             number))
        self.dealt = None

    def _view(self) -> Round:
        assert self.state is not None
        return self.state.view(self.my_seat)

    # -- saving -------------------------------------------------------------

    def saved_json(self) -> dict[str, Any] | None:
        """The record of the round in play plus what `resume` needs, or None between rounds."""
        if self.record is None or self.match is None or self.match.over:
            return None
        data = json.loads(self.record.dumps())
        data["cardtui"] = {
            "seats": [{"name": s.name, "sign": s.sign, "bot": s.bot} for s in self.seats],
            "my_seat": self.my_seat, "seed": self.seed, "moves_made": self.moves_made,
            "rounds_played": self.match.rounds_played,
        }
        return data

    def save(self) -> Path | None:
        """Write the match to `save_path` if it is unfinished; return the path written."""
        data = self.saved_json()
        if self.save_path is None or data is None:
            return None
        write_private(self.save_path, json.dumps(data, indent=1))
        self.emit(Notice(f"saved to {self.save_path}"))
        return self.save_path

    def _delete_save(self) -> None:
        if self.save_path is not None and self.save_path.exists():
            self.save_path.unlink()


def round_summary(game: str, seats: tuple[SeatInfo, ...], state: Round, winner: int | None,
                  points: int) -> str:
    """One line that says how a round or deal ended."""
    return game_named(game).summary([s.name for s in seats], winner, points)
