"""The relay: an aiohttp WebSocket router that passes opaque frames between the conns of a room."""

from __future__ import annotations

import asyncio
import hmac
import logging
import secrets
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import WSCloseCode, WSMsgType, web

from netplay.addresses import address_key
from netplay.messages import (
    RELAY_REQUESTS,
    Admit,
    Arrived,
    Departed,
    Drop,
    Enter,
    Entered,
    HostAway,
    HostBack,
    Open,
    Opened,
    Ping,
    Pong,
    ProtocolError,
    Refused,
    Send,
    decode_map,
    decode_mapped,
    encode,
    encode_frame,
    read_send,
)
from netplay.relay.guard import AddressBook, ConnectionGuard
from netplay.relay.limits import PUBLIC_LIMITS, RelayLimits, RelayStats, descriptor_budget
from netplay.relay.rooms import PENDING, SEAT, WATCHER, Conn, Room
from netplay.relay.wire import (
    CLOSE_HOST_GONE,
    CLOSE_REPLACED,
    CLOSE_ROOM_IDLE,
    parse_room_code,
    room_code_for,
)

log = logging.getLogger("cardtui.relay")
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
        self.book = AddressBook(
            max_connections=limits.max_conns_per_address,
            connections_per_second=limits.connections_per_second_per_address,
            connection_burst=limits.connection_burst_per_address,
            reads_per_second=limits.reads_per_second_per_address,
            read_burst=limits.read_burst_per_address,
            max_connections_total=limits.max_connections or descriptor_budget(),
            exempt=limits.exempt_addresses,
            addresses_kept=limits.addresses_kept,
        )
        self.guard = ConnectionGuard(self.book, limits.upgrade_timeout_seconds, limits.max_waiting)

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
            if conn.reads is not None:
                # The address's budget is shared by all its conns: past it, stop reading and
                # let TCP hold the sender back, rather than spend the relay on a flood. A
                # WebSocket ping counts too: it is answered here, not by aiohttp unread.
                delay = conn.reads.wait(loop.time())
                if delay > 0.0:
                    await asyncio.sleep(delay)
            if msg.type is WSMsgType.PING:
                await self.write(conn, msg.data, pong=True)
                continue
            if msg.type is WSMsgType.PONG:
                continue
            conn.received += 1
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
        await self.write(conn, encode(Refused(code=err.code, message=err.message[:1000],
                                              seq=conn.received - 1)))
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
        if conn.admit_timer is not None:
            conn.admit_timer.cancel()
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
                    if seat.admit_timer is not None:  # its host cannot admit it while away
                        seat.admit_timer.cancel()
                        seat.admit_timer = None
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
        mapped = decode_map(data, limits.max_frame_bytes)
        send = read_send(mapped, len(data))  # nearly every message: no generic walk for it
        if send is not None:
            await self.on_send(conn, send, now)
            return
        try:
            msg = decode_mapped(mapped, data, RELAY_REQUESTS)
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
        elif isinstance(msg, Enter):
            await self.on_enter(conn, msg, now)
        elif isinstance(msg, Drop):
            self.on_drop(conn, msg)
        else:
            self.on_admit(conn, msg)

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
        frame = encode_frame(conn.conn, msg.body)
        for target in targets:
            await self.write(target, frame)
        self.stats.frames_out += len(targets)

    async def on_open(self, conn: Conn, msg: Open, now: float) -> None:
        """Open a new room with this conn as its host, or reclaim one with its host secret."""
        if conn.room is not None:
            raise ProtocolError("not_allowed", "this connection is already in a room")
        code_text = msg.room
        if code_text is None:
            room = self.new_room(conn, now, *self.unused_code())
        else:
            secret = msg.host_secret
            if secret is None:
                raise ProtocolError("bad_frame", "'open' with a 'room' needs a field 'host_secret'")
            try:
                room = self.find_room(code_text)
            except ProtocolError as err:
                # A relay that restarted forgot its rooms: the secret a code stands for opens
                # that code again, so the host (and then its seats) carry on under it.
                if (err.code != "no_such_room" or len(secret) != 32
                        or not hmac.compare_digest(room_code_for(secret), _canonical(code_text))):
                    raise
                room = self.new_room(conn, now, room_code_for(secret), secret)
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
        self.guard.joined(conn.transport)
        conn.tokens = self.limits.burst * self.limits.host_rate_factor
        room.host = conn
        room.last_active = now
        factor = self.limits.host_rate_factor
        answer = Opened(room=room.code, conn=HOST_CONN, host_secret=room.host_secret,
                        rate=self.limits.messages_per_second * factor,
                        burst=self.limits.burst * factor)
        await self.write(conn, encode(answer))
        if code_text is not None:
            for seat in list(room.seats.values()):
                if seat.role == PENDING:
                    self.arm_admit_timer(seat)
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
        limits = self.limits
        if room.count(PENDING) >= limits.max_pending_per_room:
            raise ProtocolError("room_full", "too many connections are waiting to join this room;"
                                " try again in a few seconds")
        if (conn.address not in limits.exempt_addresses
                and room.count(PENDING, conn.address) >= limits.max_pending_per_address):
            raise ProtocolError("room_full", "your address has connections waiting to join this"
                                " room already; try again in a few seconds")
        number = room.next_conn
        room.next_conn += 1
        conn.room, conn.conn, conn.role = room, number, PENDING
        room.seats[number] = conn
        room.last_active = now
        await self.write(conn, encode(Entered(room=room.code, conn=number,
                                              rate=limits.messages_per_second,
                                              burst=limits.burst)))
        if room.host is None:
            await self.write(conn, _HOST_AWAY)
        else:
            self.arm_admit_timer(conn)
            await self.write(room.host, encode(Arrived(conn=number)))

    def on_admit(self, conn: Conn, msg: Admit) -> None:
        """The host vouches for a conn: a seat, or (with `watch`) a watcher; no answer."""
        room = conn.room
        if room is None or room.host is not conn:
            raise ProtocolError("not_allowed", "only a room's host admits its conns")
        number = msg.conn
        watch = msg.watch is True
        target = room.seats.get(number)
        if target is None:
            raise ProtocolError("no_such_conn", f"conn {number} is not in the room")
        role = WATCHER if watch else SEAT
        if target.role == role:
            return
        cap = (self.limits.max_watchers_per_room if watch
               else self.limits.max_conns_per_room - 1)
        if room.count(role) >= cap:
            raise ProtocolError("room_full", f"the room holds {cap} {role}s already")
        target.role = role
        self.guard.joined(target.transport)
        if target.admit_timer is not None:
            target.admit_timer.cancel()
            target.admit_timer = None

    def on_drop(self, conn: Conn, msg: Drop) -> None:
        """The host closes one of its conns (a seat's old connection); no answer, even if the
        conn has gone already."""
        room = conn.room
        if room is None or room.host is not conn:
            raise ProtocolError("not_allowed", "only a room's host drops its conns")
        target = room.seats.get(msg.conn)
        if target is not None:
            self.in_background(target.ws.close(code=CLOSE_REPLACED,
                                               message=b"the seat came back on another connection"))

    def arm_admit_timer(self, conn: Conn) -> None:
        """Give a pending conn admit_timeout_seconds of its host's presence to be admitted."""
        if conn.admit_timer is None:
            conn.admit_timer = asyncio.get_running_loop().call_later(
                self.limits.admit_timeout_seconds, self.admit_expired, conn)

    def admit_expired(self, conn: Conn) -> None:
        """Drop a conn its host did not admit in time (it entered but never joined)."""
        conn.admit_timer = None
        if conn.role == PENDING and conn.room is not None and conn.room.host is not None:
            self.stats.not_admitted += 1
            self.in_background(conn.ws.close(code=CLOSE_ABUSE, message=b"not admitted in time"))

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

    def unused_code(self) -> tuple[str, bytes]:
        """A fresh host secret and the code it stands for, not in use (collisions at 50 bits
        are rare but cheap to rule out)."""
        while (code := room_code_for(secret := secrets.token_bytes(32))) in self.rooms:
            pass
        return code, secret

    def new_room(self, conn: Conn, now: float, code: str, secret: bytes) -> Room:
        """A room opened from conn's address, within the relay's and the address's limits.

        A full relay closes an empty room for it (no admitted seat or watcher; the oldest
        of those opened from the address with the most rooms), so that rooms opened from
        many addresses crowd out each other rather than a host from an address of its own.
        """
        if (conn.address not in self.limits.exempt_addresses
                and self.book.rooms_of(conn.address) >= self.limits.max_rooms_per_address):
            raise ProtocolError("too_many_rooms", f"{self.limits.max_rooms_per_address} rooms"
                                " are open from your address already")
        if len(self.rooms) >= self.max_rooms:
            victim = self.crowded_empty_room() if not self.single_room else None
            if victim is None:
                raise ProtocolError("too_many_rooms", "this relay is full; try again later")
            del self.rooms[victim.code]
            self.book.room_closed(victim.opener)
            self.stats.rooms_evicted += 1
            log.warning("closed an empty room opened from %s for a newcomer: the relay is full",
                        victim.opener)
            self.in_background(self.close_room(victim, b"room closed: the relay is full"))
        room = Room(code, now, conn.address, secret)
        self.book.room_opened(conn.address)
        self.rooms[room.code] = room
        self.stats.rooms_opened += 1
        return room

    def crowded_empty_room(self) -> Room | None:
        """The room a full relay closes for a newcomer: None if every room is in use."""
        exempt = self.limits.exempt_addresses
        empty = [r for r in self.rooms.values() if r.opener not in exempt
                 and not any(c.role != PENDING for c in r.seats.values())]
        return max(empty, key=lambda r: self.book.rooms_of(r.opener), default=None)

    def expire_room(self, room: Room) -> None:
        """Close a room whose host never came back."""
        self.in_background(self.close_room(room, b"the host did not come back", CLOSE_HOST_GONE))

    async def close_room(self, room: Room, reason: bytes, code: int = CLOSE_GONE) -> None:
        """Remove a room and close every conn still in it with `code`."""
        if self.rooms.get(room.code) is room:
            del self.rooms[room.code]
            self.book.room_closed(room.opener)
        if room.away_timer is not None:
            room.away_timer.cancel()
        members = list(room.seats.values()) + ([room.host] if room.host else [])
        room.seats.clear()
        room.host = None
        for member in members:
            member.room = None
        await asyncio.gather(
            *(m.ws.close(code=code, message=reason) for m in members),
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
                await self.close_room(room, b"room idle for too long", CLOSE_ROOM_IDLE)

    # -- output ----------------------------------------------------------------------------

    async def write(self, target: Conn, data: bytes, pong: bool = False) -> None:
        """Send bytes (or a pong) to a conn; one that stopped reading is cut off, not waited for."""
        transport = target.transport
        if transport is None or transport.is_closing():
            return
        if transport.get_write_buffer_size() > self.limits.max_send_backlog_bytes:
            self.stats.evicted_slow += 1
            transport.abort()
            return
        try:
            # A pong too: a conn that pings and never reads would otherwise fill its own
            # buffer past the high-water mark and wait forever in its own serve loop.
            await (target.ws.pong(data) if pong else target.ws.send_bytes(data))
        except (ConnectionError, RuntimeError):
            pass  # the target's own handler notices the loss and cleans up


def _canonical(code_text: str) -> str:
    try:
        return parse_room_code(code_text)
    except ValueError:
        return ""


RELAY_KEY = web.AppKey("relay", Relay)


async def websocket_handler(request: web.Request) -> web.StreamResponse:
    """Upgrade to a WebSocket and serve it until it closes."""
    relay = request.app[RELAY_KEY]
    limits = relay.limits
    ws = web.WebSocketResponse(max_msg_size=limits.transport_max_bytes, compress=False,
                               autoping=False,  # pings are read on the budget (Relay.serve)
                               heartbeat=limits.heartbeat_seconds or None)
    transport = request.transport
    guarded = transport is not None and transport in relay.guard.open
    address = address_key(request.remote or "?")
    loop = asyncio.get_running_loop()
    if not guarded:
        # Served behind another site (`cardtui serve`): count it here, from the upgrade on.
        refusal = relay.book.connect(address, loop.time())
        if refusal is not None:
            raise web.HTTPTooManyRequests(text=refusal + "\n")
    try:
        await ws.prepare(request)
    except BaseException:
        if not guarded:
            relay.book.disconnect(address, loop.time())
        raise
    relay.guard.upgraded(transport)
    if transport is not None:
        # A high-water mark above the eviction threshold keeps a slow reader from blocking
        # its room: `write` cuts it off before aiohttp would wait for it to drain.
        transport.set_write_buffer_limits(
            high=limits.max_send_backlog_bytes * 2 + limits.transport_max_bytes * 2
        )
    entry = relay.book.addresses.get(address)
    conn = Conn(ws, transport, limits.burst, loop.time(), address,
                entry.reads if entry is not None else None)
    relay.conns.add(conn)
    try:
        await relay.serve(conn)
    finally:
        await relay.leave(conn)
        if transport is not None and transport.get_write_buffer_size() > 0:
            # Closed with bytes its peer has not read yet: a slow reader still gets them (and
            # the close code) for a while, one that never reads (its heartbeat unanswered)
            # does not hold the socket for ever.
            loop.call_later(limits.heartbeat_seconds or 10.0, transport.abort)
        if not guarded:
            relay.book.disconnect(address, loop.time())
    return ws


async def _close_all_sockets(app: web.Application) -> None:
    relay = app[RELAY_KEY]
    await asyncio.gather(
        *(c.ws.close(code=CLOSE_GONE, message=b"relay shutting down") for c in list(relay.conns)),
        return_exceptions=True,
    )


async def _room_sweeper(app: web.Application) -> AsyncIterator[None]:
    task = asyncio.ensure_future(app[RELAY_KEY].sweep_idle_rooms())
    yield
    task.cancel()
    for room in app[RELAY_KEY].rooms.values():
        if room.away_timer is not None:
            room.away_timer.cancel()


def make_relay_app(limits: RelayLimits = PUBLIC_LIMITS, single_room: bool = False) -> web.Application:
    """The relay as an aiohttp Application serving WebSockets at /ws."""
    app = web.Application()
    app[RELAY_KEY] = Relay(limits, single_room)
    app.router.add_get("/ws", websocket_handler)
    app.on_shutdown.append(_close_all_sockets)
    app.cleanup_ctx.append(_room_sweeper)
    return app
