"""A seat at a networked table, as a `GameSession`: it validates every move the host broadcasts.

The client keeps its own view of the round, built from the public deal and
its sealed hand, and applies a broadcast move only after its own engine
accepts it. A host that sends an illegal move is named and no longer trusted.
The connection comes back by itself after a loss, with the seat's secret token.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from nacl.public import PrivateKey

from engine.errors import IllegalMove
from engine.match import Round
from netplay.protocol import pack, parse_move, unpack, unseal, view_from_deal
from netplay.relay_client import RelayClosed, RelayConnection, RelayRefused
from netplay.session import (
    GameSession, MatchEnded, MatchStarted, Move, MoveMade, Notice, RoundEnded, RoundStarted,
    SeatInfo, SeatsChanged,
)
from netplay.wire import ProtocolError, field as get_field

log = logging.getLogger("cardtui.client")
BACKOFF_START = 0.2
BACKOFF_MAX = 5.0


@dataclass
class SeatIdentity:
    """What lets a seat come back: its secret token and its private key, kept in a small file."""

    token: bytes | None = None
    key: PrivateKey = field(default_factory=PrivateKey.generate)

    @classmethod
    def load(cls, path: Path | None) -> SeatIdentity:
        """The identity stored at `path`, or a fresh one."""
        if path is not None and path.exists():
            try:
                data = json.loads(path.read_text())
                return cls(bytes.fromhex(data["token"]) if data.get("token") else None,
                           PrivateKey(bytes.fromhex(data["key"])))
            except (ValueError, KeyError, TypeError):
                log.warning("ignoring unreadable seat file %s", path)
        return cls()

    def save(self, path: Path | None) -> None:
        """Store the identity at `path` (readable by its owner only)."""
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"token": self.token.hex() if self.token else None,
                                    "key": bytes(self.key).hex()}))
        path.chmod(0o600)


@dataclass
class RemoteSession(GameSession):
    """Your seat at a table served by a host through a relay."""

    url: str = ""
    room: str | None = None
    name: str = "player"
    sign: str | None = None
    watch: bool = False
    owner: bytes | None = None
    identity_path: Path | None = None
    result_path: Path | None = None
    identity: SeatIdentity = field(default_factory=SeatIdentity)
    view: Round | None = None
    round_number: int = 0
    seats: tuple[SeatInfo, ...] = ()
    target: int = 0
    trusted: bool = True
    result: dict[str, Any] | None = None
    moves_seen: int = 0
    _conn: RelayConnection | None = None
    _http: aiohttp.ClientSession | None = None
    _task: asyncio.Task | None = None
    _started_match: bool = False
    _welcome: asyncio.Event = field(default_factory=asyncio.Event)

    async def start(self) -> None:
        """Connect, take a seat, and keep the connection alive in the background (once)."""
        if self._task is not None:
            return
        self.identity = SeatIdentity.load(self.identity_path)
        self._http = aiohttp.ClientSession()
        await self._connect()
        self._task = asyncio.create_task(self._run())

    async def wait_seated(self, timeout: float = 10.0) -> None:
        """Wait until the host has answered the join."""
        await asyncio.wait_for(self._welcome.wait(), timeout)

    async def _connect(self) -> None:
        assert self._http is not None
        self._conn = await RelayConnection.enter(self.url, self.room, session=self._http)
        self.room = self._conn.room
        join: dict[str, Any] = {"name": self.name, "box": bytes(self.identity.key.public_key),
                                "watch": self.watch}
        if self.sign:
            join["sign"] = self.sign
        if self.identity.token:
            join["token"] = self.identity.token
        if self.owner:
            join["owner"] = self.owner
        await self._conn.send(pack("join", **join))

    async def _run(self) -> None:
        delay = BACKOFF_START
        while not self.closed and self.result is None:
            try:
                assert self._conn is not None
                async for msg in self._conn:
                    delay = BACKOFF_START
                    await self._on_relay(msg)
                    if self.result is not None:
                        break
            except (ProtocolError, ConnectionError, aiohttp.ClientError, RelayClosed) as exc:
                log.info("connection trouble: %s", exc)
            if self.closed or self.result is not None:
                break
            self.emit(Notice("connection lost; reconnecting…", "warning"))
            while not self.closed:
                await asyncio.sleep(delay)
                delay = min(delay * 2, BACKOFF_MAX)
                try:
                    await self._connect()
                    self.emit(Notice("reconnected"))
                    break
                except RelayRefused as exc:
                    self.emit(Notice(f"the relay refused: {exc.message}", "error"))
                except (ConnectionError, aiohttp.ClientError, OSError, ProtocolError):
                    continue
        await self._shutdown_connection()
        self.closed = True

    async def _on_relay(self, msg: dict[str, Any]) -> None:
        kind = msg.get("t")
        if kind == "frame":
            try:
                self._on_game_message(unpack(msg.get("body")))
            except ProtocolError as exc:
                self.emit(Notice(f"the host sent a bad message: {exc.message}", "error"))
        elif kind == "host_away":
            self.emit(Notice("the host is away; waiting for it to come back", "warning"))
        elif kind == "host_back":
            self.emit(Notice("the host is back"))
            await self._send(pack("sync"))
        elif kind == "error":
            self.emit(Notice(f"relay: {msg.get('message')}", "error"))

    def _on_game_message(self, msg: dict[str, Any]) -> None:
        handler = {
            "welcome": self._on_welcome, "lobby": self._on_lobby, "deal": self._on_deal,
            "moved": self._on_moved, "round_end": self._on_round_end,
            "match_end": self._on_match_end, "chat": self._on_chat, "error": self._on_error,
        }.get(msg["t"])
        if handler is None:
            raise ProtocolError("unknown_type", f"unknown message {msg['t']!r}")
        handler(msg)

    def _on_welcome(self, msg: dict[str, Any]) -> None:
        self.my_seat = get_field(msg, "seat", int, optional=True)
        token = get_field(msg, "token", bytes, optional=True)
        self.game = get_field(msg, "game", str)
        self.target = get_field(msg, "target", int)
        if token:
            self.identity.token = token
            self.identity.save(self.identity_path)
        self._welcome.set()

    def _on_lobby(self, msg: dict[str, Any]) -> None:
        seats = []
        for s in get_field(msg, "seats", list):
            if not isinstance(s, dict):
                raise ProtocolError("bad_frame", "a lobby seat must be a map")
            seats.append(SeatInfo(str(s.get("name", "")), s.get("sign"), s.get("bot"),
                                  bool(s.get("connected"))))
        self.seats = tuple(seats)
        self.emit(SeatsChanged(self.seats))

    def _on_deal(self, msg: dict[str, Any]) -> None:
        seat = get_field(msg, "seat", int, optional=True)
        if seat != self.my_seat:
            raise ProtocolError("bad_frame", "the deal names another seat as yours")
        self.view = view_from_deal(msg, self.identity.key)
        self.round_number = get_field(msg, "round", int)
        if not self._started_match:
            self._started_match = True
            self.emit(MatchStarted(self.game, self.seats, self.my_seat, self.target,
                                   tuple(self.view.scores)))
        self.emit(RoundStarted(self.round_number, self.view.copy(), tuple(self.view.scores)))

    def _on_moved(self, msg: dict[str, Any]) -> None:
        view = self.view
        if view is None or not self.trusted:
            return
        if get_field(msg, "round", int) != self.round_number:
            return
        n = get_field(msg, "n", int)
        if n != len(view.history):
            if n < len(view.history):
                return  # a move we already applied, sent again on resync
            raise ProtocolError("bad_frame", f"move {n} arrived before move {len(view.history)}")
        seat = get_field(msg, "seat", int)
        count = get_field(msg, "count", int)
        move = parse_move(self.game, msg.get("move"))
        drawn = None
        if seat == self.my_seat and count:
            drawn = unseal(msg.get("sealed"), self.identity.key, self.game, count)
        try:
            view.check(move, seat)
            effect = view.push(move, drawn)
        except IllegalMove as exc:
            self.trusted = False
            self.emit(Notice(f"the host broadcast an illegal move by seat {seat} ({move}): {exc}."
                             " It was not applied; this host is no longer trusted.", "error"))
            return
        if len(effect.drawn) != count:
            self.trusted = False
            self.emit(Notice(f"the host says {count} cards were drawn; the rules say"
                             f" {len(effect.drawn)}. This host is no longer trusted.", "error"))
            return
        self.moves_seen += 1
        name = self.seats[seat].name if seat < len(self.seats) else f"seat {seat}"
        text = view.describe(effect).replace(f"seat {seat}", name, 1)
        self.emit(MoveMade(seat, move, text, view.copy()))

    def _on_round_end(self, msg: dict[str, Any]) -> None:
        view = self.view
        scores = tuple(get_field(msg, "scores", list))
        winner = get_field(msg, "winner", int, optional=True)
        if view is not None and self.trusted and (not view.round_over
                                                  or tuple(view.scores) != scores):
            self.trusted = False
            self.emit(Notice("the host ended the round, but this client's engine disagrees"
                             f" (its scores: {list(view.scores)}).", "error"))
        self.emit(RoundEnded(view.copy() if view else None, winner,  # type: ignore[arg-type]
                             get_field(msg, "points", int), scores,
                             str(msg.get("summary", ""))[:200]))

    def _on_match_end(self, msg: dict[str, Any]) -> None:
        self.result = {"game": self.game, "scores": get_field(msg, "scores", list),
                       "winner": get_field(msg, "winner", int, optional=True),
                       "moves": get_field(msg, "moves", int), "verified": self.trusted}
        if self.result_path is not None:
            self.result_path.write_text(json.dumps(self.result) + "\n")
        self.emit(MatchEnded(self.result["winner"], tuple(self.result["scores"]),
                             self.result["moves"]))

    def _on_chat(self, msg: dict[str, Any]) -> None:
        name = str(msg.get("name", "?"))[:24]
        self.emit(Notice(f"{name}: {str(msg.get('text', ''))[:300]}", "chat"))

    def _on_error(self, msg: dict[str, Any]) -> None:
        self.emit(Notice(f"the host refused: {msg.get('message')}", "warning"))

    # -- the session interface ---------------------------------------------------

    async def submit(self, move: Move) -> None:
        """Check `move` with this client's engine, then propose it to the host."""
        view = self.view
        if view is None or view.round_over:
            raise IllegalMove("there is no round in play")
        if self.my_seat is None:
            raise IllegalMove("you are watching, not playing")
        view.check(move, self.my_seat)
        await self._send(pack("move", round=self.round_number, n=len(view.history),
                              move=str(move)))

    async def chat(self, text: str) -> None:
        """Say something to the table."""
        await self._send(pack("chat", text=text[:300]))

    async def start_match(self) -> None:
        """Ask the host to start (only the host's own seat may)."""
        await self._send(pack("start", owner=self.owner))

    async def _send(self, body: bytes) -> None:
        if self._conn is not None and not self._conn.closed:
            try:
                await self._conn.send(body)
            except (ConnectionError, RelayClosed):
                pass

    async def close(self) -> None:
        """Leave the table."""
        self.closed = True
        if self._task is not None:
            self._task.cancel()
        await self._shutdown_connection()
        await super().close()

    async def _shutdown_connection(self) -> None:
        if self._conn is not None:
            await self._conn.close()
        if self._http is not None and not self._http.closed:
            await self._http.close()


async def play_as_bot(session: RemoteSession, kind: str, seed: int = 0) -> dict[str, Any] | None:
    """Play `session`'s seat with a bot until the match ends; return the result."""
    from engine.bots import make_bot

    bot = make_bot(kind, seed)
    answered: tuple[int, int] | None = None
    async for event in session.events():
        if isinstance(event, MatchEnded):
            break
        view = session.view
        if (view is None or view.round_over or view.turn != session.my_seat
                or not session.trusted or not session.queue.empty()):
            continue
        position = (session.round_number, len(view.history))
        if position == answered and not isinstance(event, Notice):
            continue
        answered = position
        try:
            await session.submit(bot.choose(view.view(session.my_seat)))
        except IllegalMove as exc:
            log.error("bot chose an illegal move: %s", exc)
    return session.result
