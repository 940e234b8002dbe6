"""The relay: an aiohttp WebSocket router that passes opaque frames between the conns of a room."""

from __future__ import annotations

import asyncio
import hmac
import secrets
from dataclasses import dataclass
from typing import Any

from aiohttp import WSCloseCode, WSMsgType, web

from netplay.messages import (
    RELAY_REQUESTS,
    Arrived,
    Departed,
    Enter,
    Entered,
    Frame,
    HostAway,
    HostBack,
    Open,
    Opened,
    Ping,
    Pong,
    ProtocolError,
    Refused,
    Send,
    decode,
    encode,
)
from netplay.relay.wire import new_room_code, parse_room_code

HOST_CONN = 0

# Refusals caused by circumstance, not by the sender's behaviour: they never count as strikes.
# `no_such_room` is deliberately absent so a connection cannot guess room codes for long.
BLAMELESS_CODES = frozenset({"room_full", "too_many_rooms", "no_such_conn", "host_away"})

CLOSE_ABUSE = WSCloseCode.POLICY_VIOLATION  # 1008
CLOSE_VERSION = WSCloseCode.PROTOCOL_ERROR  # 1002
CLOSE_GONE = WSCloseCode.GOING_AWAY  # 1001

_PONG = encode(Pong())
_HOST_AWAY = encode(HostAway())
_HOST_BACK = encode(HostBack())


@dataclass(frozen=True)
class RelayLimits:
    """Every bound the relay enforces; the defaults suit a public relay."""

    max_frame_bytes: int = 65536
    messages_per_second: float = 100.0
    burst: int = 200
    host_rate_factor: float = 20.0  # a host answers every seat at once, and resyncs whole rounds
    max_rooms: int = 1000
    max_conns_per_room: int = 16  # the host counts as one
    strikes_before_close: int = 20
    host_grace_seconds: float = 300.0
    idle_room_seconds: float = 3600.0
    hello_timeout_seconds: float = 30.0
    max_send_backlog_bytes: int = 1 << 20

    @property
    def transport_max_bytes(self) -> int:
        """Largest WebSocket message read at all; between this and max_frame_bytes: too_big."""
        return self.max_frame_bytes * 4 + 1024


@dataclass
class RelayStats:
    """Running counters for tests, benchmarks and operators."""

    frames_in: int = 0  # accepted `send` messages
    frames_out: int = 0  # `frame` messages written to recipients
    rejected: int = 0  # messages answered with an error
    rooms_opened: int = 0
    closed_for_abuse: int = 0
    evicted_slow: int = 0


class Conn:
    """One WebSocket connection and what the relay knows about it."""

    __slots__ = ("conn", "room", "stamp", "strikes", "tokens", "transport", "ws")

    def __init__(self, ws: web.WebSocketResponse, transport: Any, burst: int, now: float) -> None:
        self.ws = ws
        self.transport = transport
        self.room: Room | None = None
        self.conn = -1
        self.tokens = float(burst)
        self.stamp = now
        self.strikes = 0


class Room:
    """A room: its host (absent during a grace period), its seats and its bookkeeping."""

    __slots__ = ("away_timer", "code", "host", "host_secret", "last_active", "next_conn", "seats")

    def __init__(self, code: str, now: float) -> None:
        self.code = code
        self.host_secret = secrets.token_bytes(32)
        self.host: Conn | None = None
        self.seats: dict[int, Conn] = {}
        self.next_conn = 1
        self.last_active = now
        self.away_timer: asyncio.TimerHandle | None = None


class Relay:
    """The rooms of one relay and the rules for routing between their conns."""

    def __init__(self, limits: RelayLimits, single_room: bool) -> None:
        self.limits = limits
        self.single_room = single_room
        self.max_rooms = 1 if single_room else limits.max_rooms
        self.rooms: dict[str, Room] = {}
        self.conns: set[Conn] = set()
        self.stats = RelayStats()
        self._background: set[asyncio.Future[Any]] = set()

    def in_background(self, work: Any) -> None:
        """Run a coroutine without waiting for it, holding a reference until it ends."""
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- connection lifetime -------------------------------------------------------------

    async def serve(self, conn: Conn) -> None:
        """Read and dispatch messages until the connection closes."""
        loop = asyncio.get_running_loop()
        ws = conn.ws
        hello_deadline = loop.time() + self.limits.hello_timeout_seconds
        while not ws.closed:
            if conn.room is None:
                # Sockets that never join a room would otherwise hold a slot forever.
                try:
                    msg = await ws.receive(timeout=max(0.001, hello_deadline - loop.time()))
                except TimeoutError:
                    await ws.close(code=CLOSE_ABUSE, message=b"no open or enter in time")
                    return
            else:
                msg = await ws.receive()
            if msg.type is WSMsgType.BINARY:
                try:
                    await self.dispatch(conn, msg.data, loop.time())
                except ProtocolError as err:
                    await self.reject(conn, err)
            elif msg.type is WSMsgType.TEXT:
                await self.reject(conn, ProtocolError("bad_frame", "binary frames only"))
            else:
                return

    async def reject(self, conn: Conn, err: ProtocolError) -> None:
        """Answer a refused message with an error; close the connection on a version or abuse."""
        self.stats.rejected += 1
        await self.write(conn, encode(Refused(code=err.code, message=err.message[:1000])))
        if err.code == "version":
            await conn.ws.close(code=CLOSE_VERSION, message=b"protocol version mismatch")
            return
        if err.code in BLAMELESS_CODES:
            return
        conn.strikes += 1
        if conn.strikes >= self.limits.strikes_before_close:
            self.stats.closed_for_abuse += 1
            await conn.ws.close(code=CLOSE_ABUSE, message=b"too many refused messages")

    async def leave(self, conn: Conn) -> None:
        """Forget a closed connection and tell whoever needs to know."""
        self.conns.discard(conn)
        room = conn.room
        if room is None:
            return
        conn.room = None
        if conn.conn == HOST_CONN:
            if room.host is conn:
                room.host = None
                room.away_timer = asyncio.get_running_loop().call_later(
                    self.limits.host_grace_seconds, self.expire_room, room
                )
                for seat in list(room.seats.values()):
                    await self.write(seat, _HOST_AWAY)
        elif room.seats.pop(conn.conn, None) is conn and room.host is not None:
            await self.write(room.host, encode(Departed(conn=conn.conn)))

    # -- the messages --------------------------------------------------------------------

    async def dispatch(self, conn: Conn, data: bytes, now: float) -> None:
        """Check one binary message against the limits and act on it."""
        limits = self.limits
        factor = limits.host_rate_factor if conn.room is not None and conn.room.host is conn else 1
        tokens = conn.tokens + (now - conn.stamp) * limits.messages_per_second * factor
        conn.stamp = now
        tokens = min(tokens, limits.burst * factor)
        if tokens < 1.0:
            conn.tokens = tokens
            raise ProtocolError(
                "rate_limited", f"more than {limits.messages_per_second:g} messages a second"
            )
        conn.tokens = tokens - 1.0
        try:
            msg = decode(data, RELAY_REQUESTS, limits.max_frame_bytes)
        except ProtocolError as err:
            if err.code == "version" and conn.room is not None:  # a second hello: not a mismatch
                raise ProtocolError("not_allowed", "this connection is already in a room") from None
            raise
        if isinstance(msg, Send):
            await self.on_send(conn, msg, now)
        elif isinstance(msg, Ping):
            await self.write(conn, _PONG)
        elif isinstance(msg, Open):
            await self.on_open(conn, msg, now)
        else:
            await self.on_enter(conn, msg, now)

    async def on_send(self, conn: Conn, msg: Send, now: float) -> None:
        """Stamp a body with its sender's conn and deliver it to the addressed conns."""
        room = conn.room
        if room is None:
            raise ProtocolError("not_allowed", "open or enter a room before sending")
        to = msg.to
        room.last_active = now
        if conn.conn == HOST_CONN:
            if to is None:
                targets = list(room.seats.values())
            else:
                seat = room.seats.get(to)
                if seat is None:
                    raise ProtocolError("no_such_conn", f"conn {to} is not in the room")
                targets = [seat]
        else:
            if to is not None and to != HOST_CONN:
                raise ProtocolError("not_allowed", "a seat may only send to the host (to = 0)")
            if room.host is None:
                raise ProtocolError("host_away", "the host is away; the frame was dropped")
            targets = [room.host]
        self.stats.frames_in += 1
        frame = encode(Frame(sender=conn.conn, body=msg.body))
        for target in targets:
            await self.write(target, frame)
        self.stats.frames_out += len(targets)

    async def on_open(self, conn: Conn, msg: Open, now: float) -> None:
        """Open a new room with this conn as its host, or reclaim one with its host secret."""
        if conn.room is not None:
            raise ProtocolError("not_allowed", "this connection is already in a room")
        code_text = msg.room
        if code_text is None:
            if len(self.rooms) >= self.max_rooms:
                raise ProtocolError("too_many_rooms", "this relay is full; try again later")
            room = Room(self.unused_code(), now)
            self.rooms[room.code] = room
            self.stats.rooms_opened += 1
        else:
            secret = msg.host_secret
            if secret is None:
                raise ProtocolError("bad_frame", "'open' with a 'room' needs a field 'host_secret'")
            room = self.find_room(code_text)
            if not hmac.compare_digest(secret, room.host_secret):
                raise ProtocolError("not_allowed", "wrong host secret for this room")
            if room.host is not None:
                # The old link may be dead but not yet noticed; the secret holder wins.
                old, room.host = room.host, None
                old.room = None
                self.in_background(old.ws.close(code=CLOSE_GONE, message=b"host reclaimed"))
            if room.away_timer is not None:
                room.away_timer.cancel()
                room.away_timer = None
        conn.room, conn.conn = room, HOST_CONN
        room.host = conn
        room.last_active = now
        answer = Opened(room=room.code, conn=HOST_CONN, host_secret=room.host_secret)
        await self.write(conn, encode(answer))
        if code_text is not None:
            for seat in list(room.seats.values()):
                await self.write(seat, _HOST_BACK)

    async def on_enter(self, conn: Conn, msg: Enter, now: float) -> None:
        """Seat this conn in a room under a fresh conn number and tell the host."""
        if conn.room is not None:
            raise ProtocolError("not_allowed", "this connection is already in a room")
        code_text = msg.room
        if code_text is not None:
            room = self.find_room(code_text)
        elif self.single_room and len(self.rooms) == 1:
            room = next(iter(self.rooms.values()))
        else:
            raise ProtocolError("no_such_room", "this relay serves many rooms: give the room code")
        if len(room.seats) >= self.limits.max_conns_per_room - 1:
            raise ProtocolError("room_full", f"the room has {len(room.seats)} seats taken")
        number = room.next_conn
        room.next_conn += 1
        conn.room, conn.conn = room, number
        room.seats[number] = conn
        room.last_active = now
        await self.write(conn, encode(Entered(room=room.code, conn=number)))
        if room.host is None:
            await self.write(conn, _HOST_AWAY)
        else:
            await self.write(room.host, encode(Arrived(conn=number)))

    # -- rooms -----------------------------------------------------------------------------

    def adopt_room(self, code: str, host_secret: bytes) -> None:
        """Recreate a room a restarted host had, so its seats can find it under the same code."""
        if code not in self.rooms:
            room = Room(code, asyncio.get_running_loop().time())
            room.host_secret = host_secret
            self.rooms[code] = room

    def find_room(self, code_text: str) -> Room:
        """The room a typed code names, or ProtocolError('no_such_room')."""
        try:
            code = parse_room_code(code_text)
        except ValueError as exc:
            raise ProtocolError("no_such_room", str(exc)) from None
        room = self.rooms.get(code)
        if room is None:
            raise ProtocolError("no_such_room", "no room with that code is open here")
        return room

    def unused_code(self) -> str:
        """A fresh room code not in use (collisions at 50 bits are rare but cheap to rule out)."""
        while (code := new_room_code()) in self.rooms:
            pass
        return code

    def expire_room(self, room: Room) -> None:
        """Close a room whose host never came back."""
        self.in_background(self.close_room(room, b"the host did not come back"))

    async def close_room(self, room: Room, reason: bytes) -> None:
        """Remove a room and close every conn still in it."""
        if self.rooms.get(room.code) is room:
            del self.rooms[room.code]
        if room.away_timer is not None:
            room.away_timer.cancel()
        members = list(room.seats.values()) + ([room.host] if room.host else [])
        room.seats.clear()
        room.host = None
        for member in members:
            member.room = None
        await asyncio.gather(
            *(m.ws.close(code=CLOSE_GONE, message=reason) for m in members),
            return_exceptions=True,
        )

    async def sweep_idle_rooms(self) -> None:
        """Close rooms nobody has used for idle_room_seconds, forever (until cancelled)."""
        idle = self.limits.idle_room_seconds
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(min(idle / 4, 60.0))
            cutoff = loop.time() - idle
            for room in [r for r in self.rooms.values() if r.last_active < cutoff]:
                await self.close_room(room, b"room idle for too long")

    # -- output ----------------------------------------------------------------------------

    async def write(self, target: Conn, data: bytes) -> None:
        """Send bytes to a conn; a conn that stopped reading is cut off rather than waited for."""
        transport = target.transport
        if transport is None or transport.is_closing():
            return
        if transport.get_write_buffer_size() > self.limits.max_send_backlog_bytes:
            self.stats.evicted_slow += 1
            transport.abort()
            return
        try:
            await target.ws.send_bytes(data)
        except (ConnectionError, RuntimeError):
            pass  # the target's own handler notices the loss and cleans up


RELAY_KEY = web.AppKey("relay", Relay)


async def websocket_handler(request: web.Request) -> web.StreamResponse:
    """Upgrade to a WebSocket and serve it until it closes."""
    relay = request.app[RELAY_KEY]
    limits = relay.limits
    ws = web.WebSocketResponse(max_msg_size=limits.transport_max_bytes, compress=False)
    await ws.prepare(request)
    transport = request.transport
    if transport is not None:
        # A high-water mark above the eviction threshold keeps a slow reader from blocking
        # its room: `write` cuts it off before aiohttp would wait for it to drain.
        transport.set_write_buffer_limits(
            high=limits.max_send_backlog_bytes * 2 + limits.transport_max_bytes * 2
        )
    conn = Conn(ws, transport, limits.burst, asyncio.get_running_loop().time())
    relay.conns.add(conn)
    try:
        await relay.serve(conn)
    finally:
        await relay.leave(conn)
    return ws


async def _close_all_sockets(app: web.Application) -> None:
    relay = app[RELAY_KEY]
    await asyncio.gather(
        *(c.ws.close(code=CLOSE_GONE, message=b"relay shutting down") for c in list(relay.conns)),
        return_exceptions=True,
    )


async def _room_sweeper(app: web.Application):  # type: ignore[no-untyped-def]
    task = asyncio.ensure_future(app[RELAY_KEY].sweep_idle_rooms())
    yield
    task.cancel()
    for room in app[RELAY_KEY].rooms.values():
        if room.away_timer is not None:
            room.away_timer.cancel()


def make_relay_app(limits: RelayLimits = RelayLimits(), single_room: bool = False) -> web.Application:
    """The relay as an aiohttp Application serving WebSockets at /ws."""
    app = web.Application()
    app[RELAY_KEY] = Relay(limits, single_room)
    app.router.add_get("/ws", websocket_handler)
    app.on_shutdown.append(_close_all_sockets)
    app.cleanup_ctx.append(_room_sweeper)
    return app


class RunningRelay:
    """A relay listening on a TCP port, with its address and its counters."""

    def __init__(self, runner: web.AppRunner, host: str, port: int) -> None:
        self.runner = runner
        self.host = host
        self.port = port

    @property
    def relay(self) -> Relay:
        """The live relay state (rooms, conns)."""
        return self.runner.app[RELAY_KEY]

    @property
    def stats(self) -> RelayStats:
        """The relay's running counters."""
        return self.relay.stats

    @property
    def url(self) -> str:
        """The WebSocket URL clients connect to, e.g. ws://127.0.0.1:7777/ws."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"ws://{host}:{self.port}/ws"

    async def close(self) -> None:
        """Close every socket and stop listening."""
        await self.runner.cleanup()


async def start_relay(
    host: str = "127.0.0.1",
    port: int = 0,
    limits: RelayLimits = RelayLimits(),
    single_room: bool = False,
) -> RunningRelay:
    """Start a relay on host:port (0 = any free port) in the running event loop."""
    runner = web.AppRunner(
        make_relay_app(limits, single_room), handle_signals=False, shutdown_timeout=5.0
    )
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except BaseException:
        await runner.cleanup()
        raise
    return RunningRelay(runner, host, runner.addresses[0][1])
