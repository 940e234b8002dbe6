"""The host: the dealer of a networked table, reached through a relay room as conn 0.

It seats players, deals, validates every proposed move with the engine,
numbers and broadcasts accepted moves, sends drawn cards sealed to their seat,
plays bots, waits for absent players (then lets a bot play for them), and
saves the game after every move so `cardtui host --resume` can continue it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from engine import zodiak
from engine.bots import make_bot
from engine.errors import IllegalMove
from engine.match import Match, Round, check_players, shuffled_deck
from engine.records import Record
from engine.simulate import deal_winner
from netplay.local import round_summary
from netplay.protocol import (
    MAX_CHAT, clean_name, deal_message, pack, parse_move, public_key, seal, unpack,
)
from netplay.relay_client import RelayClosed, RelayConnection
from netplay.session import SeatInfo
from netplay.wire import ProtocolError, field as get_field

log = logging.getLogger("cardtui.host")
STRIKES_BEFORE_IGNORING = 20


@dataclass
class Seat:
    """A seat at the table: who sits there and how to reach them."""

    name: str = ""
    sign: str | None = None
    bot: str | None = None
    token: str | None = None  # hex; the seat's secret for coming back after a lost connection
    box: str | None = None  # hex of the seat's public key, for sealed cards
    conn: int | None = None
    away_since: float | None = None

    @property
    def taken(self) -> bool:
        """Whether a bot or a person holds the seat."""
        return self.bot is not None or self.token is not None

    def info(self) -> SeatInfo:
        """Public facts about the seat."""
        return SeatInfo(self.name, self.sign, self.bot, self.bot is not None or self.conn is not None)


@dataclass
class HostConfig:
    """How a table is set up."""

    game: str = "zodiak"
    players: int = 4
    bots: int = 0
    seed: int | None = None
    bot_kind: str = "greedy"
    bot_delay: float = 0.0
    away_timeout: float = 60.0
    save_path: Path | None = None
    result_path: Path | None = None
    owner_secret: str | None = None  # the host's own app proves it is the owner with this


@dataclass
class Host:
    """The dealer of one table."""

    config: HostConfig
    seats: list[Seat] = field(default_factory=list)
    match: Match | None = None
    state: Round | None = None
    record: Record | None = None
    round_number: int = 0
    moves_made: int = 0
    history: list[bytes] = field(default_factory=list)  # this round's `moved` bodies, for resync
    started: bool = False
    finished: bool = False
    seed: int = 0
    relay: RelayConnection | None = None
    on_event: Callable[[str], None] = print
    strikes: dict[int, int] = field(default_factory=dict)
    spectators: set[int] = field(default_factory=set)
    done: asyncio.Event = field(default_factory=asyncio.Event)
    _bot_task: asyncio.Task | None = None
    _wake: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        check_players(self.config.game, self.config.players)
        if not 0 <= self.config.bots <= self.config.players:
            raise IllegalMove(f"--bots must be between 0 and {self.config.players}")
        self.seed = self.config.seed if self.config.seed is not None else secrets.randbits(32)
        if not self.seats:
            self.seats = [Seat() for _ in range(self.config.players)]
            for i in range(self.config.players - self.config.bots, self.config.players):
                self.seats[i] = Seat(name=f"bot {i}", bot=self.config.bot_kind,
                                     sign=random.Random(self.seed + i).choice(zodiak.SIGNS))

    # -- running --------------------------------------------------------------

    async def serve(self, relay: RelayConnection) -> None:
        """Serve the table through `relay` until the match ends or the relay closes."""
        self.relay = relay
        self.on_event(f"room {relay.room} open")
        self._bot_task = asyncio.create_task(self._play_loop())
        try:
            async for msg in relay:
                await self._on_relay(msg)
                if self.finished:
                    break
        finally:
            self._bot_task.cancel()

    async def _on_relay(self, msg: dict[str, Any]) -> None:
        kind = msg.get("t")
        if kind == "frame":
            conn = msg.get("from")
            if type(conn) is int:
                await self._on_frame(conn, msg.get("body"))
        elif kind == "departed":
            self._departed(msg.get("conn"))
        elif kind == "error":
            self.on_event(f"relay error: {msg.get('code')}: {msg.get('message')}")

    async def _on_frame(self, conn: int, body: Any) -> None:
        try:
            msg = unpack(body)
            handler = self._handlers().get(msg["t"])
            if handler is None:
                raise ProtocolError("unknown_type", f"unknown message type {msg['t']!r}")
            await handler(conn, msg)
        except ProtocolError as exc:
            await self._refuse(conn, exc.code, exc.message)
        except IllegalMove as exc:
            await self._refuse(conn, "illegal", str(exc))

    def _handlers(self) -> dict[str, Callable[[int, dict[str, Any]], Any]]:
        return {"join": self._on_join, "move": self._on_move, "chat": self._on_chat,
                "start": self._on_start, "sync": self._on_sync}

    async def _refuse(self, conn: int, code: str, message: str) -> None:
        self.strikes[conn] = self.strikes.get(conn, 0) + 1
        if self.strikes[conn] <= STRIKES_BEFORE_IGNORING:
            await self._send(conn, pack("error", code=code, message=message))

    async def _send(self, conn: int | None, body: bytes) -> None:
        if self.relay is not None and not self.relay.closed:
            try:
                await self.relay.send(body, to=conn)
            except (ConnectionError, RelayClosed):
                log.warning("relay send failed")

    # -- seats ----------------------------------------------------------------

    def seat_of(self, conn: int) -> int | None:
        """The seat that `conn` speaks for, if any."""
        for i, seat in enumerate(self.seats):
            if seat.conn == conn:
                return i
        return None

    async def _on_join(self, conn: int, msg: dict[str, Any]) -> None:
        if self.seat_of(conn) is not None:
            raise ProtocolError("not_allowed", "this connection already has a seat")
        token = get_field(msg, "token", bytes, optional=True)
        box = public_key(msg)
        index = self._seat_for_token(token.hex()) if token else None
        owner = msg.get("owner")
        is_owner = (isinstance(owner, bytes) and self.config.owner_secret is not None
                    and secrets.compare_digest(owner.hex(), self.config.owner_secret))
        if index is None and not msg.get("watch") and not self.started:
            index = next((i for i, s in enumerate(self.seats) if not s.taken), None)
            if index is not None:
                sign = msg.get("sign")
                self.seats[index] = Seat(
                    name=clean_name(msg.get("name"), f"player {index}"),
                    sign=zodiak.parse_sign(sign) if self.config.game == "zodiak" and sign
                    else (random.Random(self.seed - index).choice(zodiak.SIGNS)
                          if self.config.game == "zodiak" else None),
                    token=secrets.token_hex(16), box=box.hex())
        if index is None:
            self.spectators.add(conn)
            await self._send(conn, pack("welcome", seat=None, token=None, **self._table_facts()))
            await self._send_lobby()
            if self.state is not None:
                await self._resync(conn, None)
            return
        seat = self.seats[index]
        if seat.box != box.hex():
            seat.box = box.hex()  # a returning seat may come with a fresh key
        seat.conn, seat.away_since = conn, None
        self.on_event(f"seat {index} ({seat.name}) joined from conn {conn}")
        await self._send(conn, pack("welcome", seat=index, token=bytes.fromhex(seat.token or ""),
                                    owner=is_owner, **self._table_facts()))
        await self._send_lobby()
        if self.state is not None:
            await self._resync(conn, index)
        elif all(s.taken for s in self.seats):
            await self.start_match()
        self._save()

    def _seat_for_token(self, token: str) -> int | None:
        for i, seat in enumerate(self.seats):
            if seat.token is not None and secrets.compare_digest(seat.token, token):
                return i
        return None

    def _table_facts(self) -> dict[str, Any]:
        return {"game": self.config.game, "players": self.config.players,
                "target": Match(self.config.game, self.config.players,
                                ("aries",) * self.config.players).target}

    def _departed(self, conn: Any) -> None:
        self.spectators.discard(conn)
        index = self.seat_of(conn) if type(conn) is int else None
        if index is None:
            return
        seat = self.seats[index]
        seat.conn, seat.away_since = None, time.monotonic()
        self.on_event(f"seat {index} ({seat.name}) lost its connection")
        if not self.started:
            self.seats[index] = Seat()
        asyncio.ensure_future(self._send_lobby())
        self._wake.set()

    async def _send_lobby(self) -> None:
        seats = [{**asdict(s.info()), "seat": i} for i, s in enumerate(self.seats)]
        await self._send(None, pack("lobby", seats=seats, started=self.started,
                                    watching=len(self.spectators)))

    async def _on_chat(self, conn: int, msg: dict[str, Any]) -> None:
        text = get_field(msg, "text", str)[:MAX_CHAT]
        index = self.seat_of(conn)
        name = self.seats[index].name if index is not None else f"watcher {conn}"
        text = "".join(ch for ch in text if ch.isprintable())
        await self._send(None, pack("chat", seat=index, name=name, text=text))

    async def _on_start(self, conn: int, msg: dict[str, Any]) -> None:
        index = self.seat_of(conn)
        if self.started:
            raise ProtocolError("not_allowed", "the match has started")
        if index is None or msg.get("owner") is None or self.config.owner_secret is None:
            raise ProtocolError("not_allowed", "only the host starts the match")
        owner = get_field(msg, "owner", bytes)
        if not secrets.compare_digest(owner.hex(), self.config.owner_secret):
            raise ProtocolError("not_allowed", "only the host starts the match")
        for i, seat in enumerate(self.seats):
            if not seat.taken:
                self.seats[i] = Seat(name=f"bot {i}", bot=self.config.bot_kind,
                                     sign=random.Random(self.seed + i).choice(zodiak.SIGNS))
        await self.start_match()

    async def _on_sync(self, conn: int, msg: dict[str, Any]) -> None:
        await self._resync(conn, self.seat_of(conn))

    # -- the match ------------------------------------------------------------

    async def start_match(self) -> None:
        """Deal the first round to the seated players."""
        if self.started:
            return
        self.started = True
        signs = tuple(s.sign or "aries" for s in self.seats) if self.config.game == "zodiak" else ()
        dealer = random.Random(self.seed).randrange(self.config.players)
        self.match = Match(self.config.game, self.config.players, signs, dealer=dealer)
        self.on_event("match started")
        await self._send_lobby()
        await self._deal()

    async def _deal(self) -> None:
        match = self.match
        assert match is not None
        rng = random.Random(f"{self.seed}/{match.rounds_played}")
        self.state = match.start_round(shuffled_deck(self.config.game, rng))
        self.round_number = match.rounds_played + 1
        self.record = Record.of_round(self.config.game, [s.name for s in self.seats], self.state)
        self.history = []
        self.on_event(f"round {self.round_number} dealt")
        for conn in self._all_conns():
            await self._resync(conn, self.seat_of(conn))
        self._save()
        self._wake.set()

    def _all_conns(self) -> list[int]:
        return [s.conn for s in self.seats if s.conn is not None] + sorted(self.spectators)

    async def _resync(self, conn: int, index: int | None) -> None:
        """Send `conn` the deal of the round in play and every move since, so it rebuilds its view."""
        if self.state is None or self.record is None:
            return
        start = self.record.start()
        key = bytes.fromhex(self.seats[index].box or "") if index is not None else None
        await self._send(conn, deal_message(self.config.game, self.round_number, start, index,
                                            key or None))
        for body in self.history:
            await self._send(conn, body)

    async def _on_move(self, conn: int, msg: dict[str, Any]) -> None:
        index = self.seat_of(conn)
        if index is None:
            raise ProtocolError("not_allowed", "only a seated player can move")
        state = self.state
        if state is None or state.round_over:
            raise ProtocolError("not_allowed", "no round is in play")
        if get_field(msg, "round", int) != self.round_number or get_field(msg, "n", int) != len(
                self.history):
            raise ProtocolError("stale", "that move is for an earlier position; resync")
        move = parse_move(self.config.game, msg.get("move"))
        state.check(move, index)
        await self._apply(move)

    async def _apply(self, move: Any) -> None:
        state, record, match = self.state, self.record, self.match
        assert state is not None and record is not None and match is not None
        seat = state.turn
        assert seat is not None
        if isinstance(state, zodiak.ZodiakRound) and isinstance(move, zodiak.Draw):
            pending = state.pending_reshuffle()
            if pending is not None:
                random.Random(f"{self.seed}/{self.round_number}/{len(self.history)}").shuffle(pending)
                state.reshuffles.append(pending)
        effect = state.push(move)
        record.add_move(seat, move)
        if isinstance(state, zodiak.ZodiakRound):
            record.set_reshuffles(state.reshuffles)
        self.moves_made += 1
        drawn = list(effect.drawn)
        key = self.seats[seat].box
        body = pack("moved", round=self.round_number, n=len(self.history), seat=seat,
                    move=str(move), count=len(drawn),
                    sealed=seal(drawn, bytes.fromhex(key)) if drawn and key else None)
        self.history.append(body)
        self._save()  # before anyone hears of the move, so a crash cannot lose it
        await self._send(None, body)
        self.on_event(f"move {self.moves_made}: {state.describe(effect)}")
        if state.round_over:
            await self._end_round()
        self._save()
        self._wake.set()

    async def _end_round(self) -> None:
        state, record, match = self.state, self.record, self.match
        assert state is not None and record is not None and match is not None
        winner = deal_winner(record.scores, state)
        points = (state.points() if isinstance(state, zodiak.ZodiakRound)
                  else max(b - a for a, b in zip(record.scores, state.scores)))
        match.end_round(state)
        infos = tuple(s.info() for s in self.seats)
        summary = round_summary(self.config.game, infos, state, winner, points)
        await self._send(None, pack("round_end", round=self.round_number, winner=winner,
                                    points=points, scores=list(match.scores), summary=summary))
        self.on_event(f"round {self.round_number} over: {summary}")
        if match.over:
            await self._finish()
        else:
            await self._deal()

    async def _finish(self) -> None:
        match = self.match
        assert match is not None
        result = self.result()
        await self._send(None, pack("match_end", **result))
        self.on_event(f"match over: {json.dumps(result)}")
        if self.config.result_path is not None:
            self.config.result_path.write_text(json.dumps(result) + "\n")
        self.finished = True
        self.state = None
        if self.config.save_path is not None and self.config.save_path.exists():
            self.config.save_path.unlink()
        self.done.set()

    def result(self) -> dict[str, Any]:
        """The match result: game, scores, winner (seat or team) and number of moves."""
        assert self.match is not None
        return {"game": self.config.game, "scores": list(self.match.scores),
                "winner": self.match.winner, "moves": self.moves_made}

    async def _play_loop(self) -> None:
        """Play for bots, and for people who have been away too long."""
        bots: dict[int, Any] = {}
        while not self.finished:
            self._wake.clear()
            state = self.state
            seat = state.turn if state is not None and not state.round_over else None
            if seat is None:
                await self._wake.wait()
                continue
            occupant = self.seats[seat]
            if occupant.bot is None and occupant.away_since is None:
                await self._wake.wait()
                continue
            if occupant.bot is None:
                left = occupant.away_since + self.config.away_timeout - time.monotonic()
                if left > 0:
                    try:
                        await asyncio.wait_for(self._wake.wait(), left)
                    except TimeoutError:
                        pass
                    continue
            await asyncio.sleep(self.config.bot_delay)
            if self.state is not state or state.turn != seat:
                continue
            bot = bots.setdefault(seat, make_bot(occupant.bot or "greedy", self.seed + seat))
            await self._apply(bot.choose(state.view(seat)))

    # -- saving ---------------------------------------------------------------

    def _save(self) -> None:
        path = self.config.save_path
        if path is None or self.finished:
            return
        data = {
            "config": {"game": self.config.game, "players": self.config.players,
                       "bots": self.config.bots, "seed": self.seed,
                       "owner_secret": self.config.owner_secret},
            "seats": [{**asdict(s), "conn": None, "away_since": None} for s in self.seats],
            "started": self.started, "moves_made": self.moves_made,
            "match": None if self.match is None else {
                "dealer": self.match.dealer, "scores": self.match.scores,
                "rounds_played": self.match.rounds_played},
            "record": None if self.record is None else json.loads(self.record.dumps()),
            "history": [b.hex() for b in self.history],
            "room": self.relay.room if self.relay else None,
            "host_secret": self.relay.host_secret.hex() if self.relay and self.relay.host_secret
            else None,
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data))
        tmp.replace(path)

    @classmethod
    def resume(cls, config: HostConfig, path: Path) -> tuple[Host, str | None, bytes | None]:
        """The host saved at `path`, with its room code and host secret."""
        data = json.loads(path.read_text())
        saved = data["config"]
        config.game, config.players, config.bots = saved["game"], saved["players"], saved["bots"]
        config.seed, config.owner_secret = saved["seed"], saved.get("owner_secret")
        config.save_path = path
        host = cls(config, seats=[Seat(**s) for s in data["seats"]])
        host.started, host.moves_made = data["started"], data["moves_made"]
        for seat in host.seats:
            if seat.bot is None and seat.token is not None:
                seat.away_since = time.monotonic()
        if data["match"] is not None:
            signs = tuple(s.sign or "aries" for s in host.seats) if config.game == "zodiak" else ()
            host.match = Match(config.game, config.players, signs, **data["match"])
        if data["record"] is not None:
            host.record = Record.from_json(data["record"])
            result = host.record.replay()
            host.state = result.state
            host.round_number = host.match.rounds_played + 1 if host.match else 1
            host.history = [bytes.fromhex(h) for h in data["history"]]
        secret = bytes.fromhex(data["host_secret"]) if data.get("host_secret") else None
        return host, data.get("room"), secret
