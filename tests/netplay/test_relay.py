"""The relay against real WebSocket clients on loopback: routing, rooms, limits and abuse."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import socket
import struct
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from netplay.messages import (
    PROTOCOL_VERSION,
    Arrived,
    Departed,
    Frame,
    HostAway,
    HostBack,
    Pong,
    Refused,
)
from netplay.messages import decode_map as decode
from netplay.messages import encode_map as encode
from netplay.relay.client import RelayClosed, RelayConnection, RelayRefused, relay_url
from netplay.relay.launch import RunningRelay, start_relay
from netplay.relay.limits import RelayLimits
from netplay.relay.wire import (
    CLOSE_HOST_GONE,
    CLOSE_REPLACED,
    CLOSE_ROOM_IDLE,
    format_room_code,
    room_code_for,
)


class Net:
    """Relays and relay clients started by one test, all closed when it ends."""

    def __init__(self) -> None:
        self.relays: list[RunningRelay] = []
        self.clients: list[RelayConnection] = []

    async def start(self, **limits: Any) -> RunningRelay:
        single_room = limits.pop("single_room", False)
        relay = await start_relay(limits=RelayLimits(**limits), single_room=single_room)
        self.relays.append(relay)
        return relay

    async def open_room(self, url: str, **kwargs: Any) -> RelayConnection:
        self.clients.append(await RelayConnection.open_room(url, **kwargs))
        return self.clients[-1]

    async def enter(self, url: str, code: str | None = None) -> RelayConnection:
        self.clients.append(await RelayConnection.enter(url, code))
        return self.clients[-1]


@pytest.fixture
async def net() -> AsyncIterator[Net]:
    net = Net()
    yield net
    for client in net.clients:
        await client.close()
    for relay in net.relays:
        await relay.close()


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as s:
        yield s


async def send(ws: aiohttp.ClientWebSocketResponse, msg: dict[str, Any]) -> None:
    await ws.send_bytes(encode(msg))


async def recv(ws: aiohttp.ClientWebSocketResponse) -> dict[str, Any]:
    msg = await ws.receive()
    assert msg.type is aiohttp.WSMsgType.BINARY, (msg.type, msg.data, msg.extra)
    return decode(msg.data, 1 << 20)


async def close_code(ws: aiohttp.ClientWebSocketResponse) -> int | None:
    """Read until the relay closes the socket; the close code it gave."""
    while (await ws.receive()).type not in (
        aiohttp.WSMsgType.CLOSE,
        aiohttp.WSMsgType.CLOSED,
        aiohttp.WSMsgType.ERROR,
    ):
        pass
    return ws.close_code


async def seat_ws(
    session: aiohttp.ClientSession, relay: RunningRelay, room: str | None
) -> aiohttp.ClientWebSocketResponse:
    ws = await session.ws_connect(relay.url)
    await send(ws, {"t": "enter", "v": PROTOCOL_VERSION, "room": room})
    assert (await recv(ws))["t"] == "entered"
    return ws


async def error_code(conn: RelayConnection) -> str:
    msg = await conn.recv()
    assert isinstance(msg, Refused), msg
    assert msg.message
    return msg.code


# -- routing ---------------------------------------------------------------------------------


async def test_host_and_seats_exchange_stamped_frames(net: Net) -> None:
    relay = await net.start()
    host = await net.open_room(relay.url)
    assert host.conn == 0 and host.is_host and len(host.host_secret or b"") >= 16
    alice = await net.enter(relay.url, host.room)
    bob = await net.enter(relay.url, format_room_code(host.room).lower())
    assert (alice.conn, bob.conn) == (1, 2)
    assert await host.recv() == Arrived(conn=1)
    assert await host.recv() == Arrived(conn=2)

    await bob.send(b"from bob")
    await alice.send(b"from alice", to=0)
    assert await host.recv() == Frame(sender=2, body=b"from bob")
    assert await host.recv() == Frame(sender=1, body=b"from alice")

    await host.send(b"only bob", to=2)
    await host.send(b"everyone")
    assert await bob.recv() == Frame(sender=0, body=b"only bob")
    assert await bob.recv() == Frame(sender=0, body=b"everyone")
    assert await alice.recv() == Frame(sender=0, body=b"everyone")
    assert relay.stats.frames_in == 4 and relay.stats.frames_out == 5
    for conn in (alice, bob, host):
        await conn.close()


async def test_a_seat_cannot_spoof_its_sender_or_reach_another_seat(
    net: Net, session: aiohttp.ClientSession
) -> None:
    relay = await net.start()
    host = await net.open_room(relay.url)
    honest = await net.enter(relay.url, host.room)
    cheat = await seat_ws(session, relay, host.room)
    await send(cheat, {"t": "send", "to": honest.conn, "body": b"psst"})
    error = await recv(cheat)
    assert error["t"] == "error" and error["code"] == "not_allowed"
    await send(cheat, {"t": "send", "from": 0, "to": 0, "body": b"I am the host"})
    await send(cheat, {"t": "send", "from": 1, "body": b"I am alice"})
    assert (await host.recv()).t == "arrived"
    assert (await host.recv()).t == "arrived"
    assert await host.recv() == Frame(sender=2, body=b"I am the host")
    assert await host.recv() == Frame(sender=2, body=b"I am alice")
    await honest.ping()
    assert await honest.recv() == Pong()  # nothing from the cheat reached alice


async def test_conn_numbers_are_never_reused_and_departures_are_told(net: Net) -> None:
    relay = await net.start()
    host = await net.open_room(relay.url)
    first = await net.enter(relay.url, host.room)
    await first.close()
    second = await net.enter(relay.url, host.room)
    assert second.conn == 2
    assert [await host.recv() for _ in range(3)] == [
        Arrived(conn=1),
        Departed(conn=1),
        Arrived(conn=2),
    ]
    await host.send(b"x", to=1)
    assert await error_code(host) == "no_such_conn"


async def test_host_away_back_and_reclaim_with_the_secret(net: Net) -> None:
    relay = await net.start()
    host = await net.open_room(relay.url)
    seat = await net.enter(relay.url, host.room)
    await host.close()
    assert await seat.recv() == HostAway()
    await seat.send(b"anyone?")
    assert await error_code(seat) == "host_away"
    late = await net.enter(relay.url, host.room)
    assert await late.recv() == HostAway()

    with pytest.raises(RelayRefused) as refused:
        await net.open_room(relay.url, room=host.room, host_secret=b"guess" * 8)
    assert refused.value.code == "not_allowed"

    back = await net.open_room(relay.url, room=host.room, host_secret=host.host_secret)
    assert (back.room, back.conn, back.host_secret) == (host.room, 0, host.host_secret)
    assert await seat.recv() == HostBack()
    assert await late.recv() == HostBack()
    await seat.send(b"welcome back")
    assert await back.recv() == Frame(sender=1, body=b"welcome back")


async def test_a_restarted_relay_reopens_a_room_only_for_its_secret(net: Net) -> None:
    # The relay forgot the room (it restarted): the secret the code stands for opens it again;
    # another secret, or the code of another room, is told there is no such room.
    first = await net.start()
    host = await net.open_room(first.url)
    assert host.host_secret is not None and room_code_for(host.host_secret) == host.room
    restarted = await net.start()
    for secret in (b"guess" * 8, bytes(32), host.host_secret[:16]):
        with pytest.raises(RelayRefused) as refused:
            await net.open_room(restarted.url, room=host.room, host_secret=secret)
        assert refused.value.code == "no_such_room"
    other = await net.open_room(first.url)
    with pytest.raises(RelayRefused) as refused:
        await net.open_room(restarted.url, room=other.room, host_secret=host.host_secret)
    assert refused.value.code == "no_such_room"
    back = await net.open_room(restarted.url, room=format_room_code(host.room).lower(),
                               host_secret=host.host_secret)
    assert (back.room, back.conn, back.host_secret) == (host.room, 0, host.host_secret)
    seat = await net.enter(restarted.url, host.room)
    await seat.send(b"back again")
    assert isinstance(await back.recv(), Arrived)
    assert await back.recv() == Frame(sender=1, body=b"back again")


async def test_reclaim_replaces_a_host_link_that_still_looks_alive(net: Net) -> None:
    relay = await net.start()
    stale = await net.open_room(relay.url)
    seat = await net.enter(relay.url, stale.room)
    fresh = await net.open_room(relay.url, room=stale.room, host_secret=stale.host_secret)
    assert await stale.recv() == Arrived(conn=1)
    with pytest.raises(RelayClosed) as closed:
        await stale.recv()
    assert closed.value.close_code == 1001
    assert await seat.recv() == HostBack()
    await seat.send(b"hi")
    assert await fresh.recv() == Frame(sender=1, body=b"hi")


async def test_a_room_closes_when_its_host_does_not_return(net: Net) -> None:
    relay = await net.start(host_grace_seconds=0.05)
    host = await net.open_room(relay.url)
    seat = await net.enter(relay.url, host.room)
    await host.close()
    assert await seat.recv() == HostAway()
    with pytest.raises(RelayClosed) as closed:
        await seat.recv()
    assert closed.value.close_code == CLOSE_HOST_GONE  # gone for good: no point trying again
    assert relay.relay.rooms == {}
    with pytest.raises(RelayRefused) as refused:
        await net.enter(relay.url, host.room)
    assert refused.value.code == "no_such_room"


async def test_idle_rooms_expire(net: Net) -> None:
    relay = await net.start(idle_room_seconds=0.05)
    host = await net.open_room(relay.url)
    with pytest.raises(RelayClosed) as closed:
        await host.recv()
    assert closed.value.close_code == CLOSE_ROOM_IDLE
    assert relay.relay.rooms == {}


async def test_single_room_relay_lets_seats_enter_without_a_code(net: Net) -> None:
    relay = await net.start(single_room=True)
    host = await net.open_room(relay.url)
    seat = await net.enter(relay.url)
    assert seat.room == host.room and seat.conn == 1
    with pytest.raises(RelayRefused) as refused:
        await net.open_room(relay.url)
    assert refused.value.code == "too_many_rooms"


async def test_many_room_relay_needs_the_code(net: Net) -> None:
    relay = await net.start()
    await net.open_room(relay.url)
    for code in (None, "K7QX-M2RD-9A", "not a code"):
        with pytest.raises(RelayRefused) as refused:
            await net.enter(relay.url, code)
        assert refused.value.code == "no_such_room"


# -- protocol errors -----------------------------------------------------------------------


async def test_protocol_errors_answer_and_keep_the_connection(
    net: Net, session: aiohttp.ClientSession
) -> None:
    relay = await net.start()
    ws = await session.ws_connect(relay.url)
    await send(ws, {"t": "ping"})
    assert await recv(ws) == {"t": "pong"}
    cases = [
        ({"t": "send", "body": b"x"}, "not_allowed"),
        ({"t": "dance"}, "unknown_type"),
        ({"t": "open", "v": 1, "room": 5}, "bad_frame"),
        ({"t": "open", "v": 1, "room": "K7QX-M2RD-9A", "host_secret": b"x"}, "no_such_room"),
        ({"t": "open", "v": 1, "room": "K7QX-M2RD-9A"}, "bad_frame"),
    ]
    for msg, code in cases:
        await send(ws, msg)
        answer = await recv(ws)
        assert (answer["t"], answer["code"]) == ("error", code), msg
    await ws.send_str("hello")
    assert (await recv(ws))["code"] == "bad_frame"
    await ws.send_bytes(b"\xc1")
    assert (await recv(ws))["code"] == "bad_frame"
    await send(ws, {"t": "ping"})
    assert await recv(ws) == {"t": "pong"}
    assert relay.stats.rejected == 7 and relay.relay.rooms == {}


async def test_a_wrong_version_is_refused_and_closed(
    net: Net, session: aiohttp.ClientSession
) -> None:
    relay = await net.start()
    for hello in ({"t": "open", "v": 2}, {"t": "enter", "room": None}):
        ws = await session.ws_connect(relay.url)
        await send(ws, hello)
        assert (await recv(ws))["code"] == "version"
        assert await close_code(ws) == 1002


async def test_a_connection_that_never_says_hello_is_closed(
    net: Net, session: aiohttp.ClientSession
) -> None:
    relay = await net.start(hello_timeout_seconds=0.05)
    ws = await session.ws_connect(relay.url)
    assert await close_code(ws) == 1008


async def test_a_second_open_or_enter_on_one_connection_is_refused(net: Net) -> None:
    relay = await net.start()
    host = await net.open_room(relay.url)
    await host._ws.send_bytes(encode({"t": "enter", "v": 1, "room": host.room}))
    assert await error_code(host) == "not_allowed"
    assert relay.relay.rooms[host.room].seats == {}


# -- limits --------------------------------------------------------------------------------


async def test_too_big_frames_are_refused_and_huge_ones_close(
    net: Net, session: aiohttp.ClientSession
) -> None:
    relay = await net.start(max_frame_bytes=1024)
    host = await net.open_room(relay.url)
    seat = await net.enter(relay.url, host.room)
    await seat.send(b"x" * 2000)
    assert await error_code(seat) == "too_big"
    await seat.send(b"x" * 900)
    assert (await host.recv()).t == "arrived"
    assert len(getattr(await host.recv(), "body", b"")) == 900
    ws = await seat_ws(session, relay, host.room)
    await ws.send_bytes(b"\x00" * 100_000)
    assert await close_code(ws) == 1009


async def test_rate_limit_refuses_beyond_the_burst(
    net: Net, session: aiohttp.ClientSession
) -> None:
    """A raw client (the reference client paces itself) is refused past its burst."""
    relay = await net.start(messages_per_second=0.001, burst=3)
    host = await net.open_room(relay.url)
    ws = await seat_ws(session, relay, host.room)  # the enter spends one token
    for _ in range(4):
        await send(ws, {"t": "ping"})
    answers = [await recv(ws) for _ in range(4)]
    assert answers[:2] == [{"t": "pong"}] * 2
    assert [(a.get("code"), a.get("seq")) for a in answers[2:]] == [("rate_limited", 3),
                                                                    ("rate_limited", 4)]


async def test_room_full(net: Net) -> None:
    """Seats are admitted by the host up to the room's cap; past it the admit is refused."""
    relay = await net.start(max_conns_per_room=3)
    host = await net.open_room(relay.url)
    seats = [await net.enter(relay.url, host.room) for _ in range(2)]
    for seat in seats:
        await host.admit(seat.conn)
    await host.ping()  # answered after the admits: the relay reads a conn in order
    assert [(await host.recv()).t for _ in range(3)] == ["arrived", "arrived", "pong"]
    third = await net.enter(relay.url, host.room)
    await host.admit(third.conn)
    assert (await host.recv()).t == "arrived"
    assert (await error_code(host)) == "room_full"


async def test_too_many_rooms(net: Net) -> None:
    # A full relay closes an empty room for a newcomer; when every room has an admitted seat
    # it refuses.
    relay = await net.start(max_rooms=2)
    rooms = [await net.open_room(relay.url), await net.open_room(relay.url)]
    for host in rooms:
        seat = await net.enter(relay.url, host.room)
        await host.admit(seat.conn)
        assert isinstance(await host.recv(), Arrived)
        await host.ping()
        assert await host.recv() == Pong()
    with pytest.raises(RelayRefused) as refused:
        await net.open_room(relay.url)
    assert refused.value.code == "too_many_rooms"


async def test_a_full_relay_closes_the_most_crowded_addresss_empty_room(net: Net) -> None:
    relay = await net.start(max_rooms=3)
    busy = await net.open_room(relay.url)  # 127.0.0.1: in use, a seat admitted
    seat = await net.enter(relay.url, busy.room)
    await busy.admit(seat.conn)
    assert isinstance(await busy.recv(), Arrived)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(
            local_addr=("127.0.0.2", 0), force_close=True)) as session:
        idle = [await RelayConnection.open_room(relay.url, session=session) for _ in range(2)]
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(
                local_addr=("127.0.0.3", 0), force_close=True)) as other:
            newcomer = await RelayConnection.open_room(relay.url, session=other)
            with pytest.raises(RelayClosed) as closed:
                await idle[0].recv()
            assert closed.value.close_code == 1001
            assert relay.stats.rooms_evicted == 1
            assert set(relay.relay.rooms) == {busy.room, idle[1].room, newcomer.room}
            await seat.send(b"still here")
            assert await busy.recv() == Frame(sender=1, body=b"still here")
            await newcomer.close()
        for conn in idle:
            await conn.close()


async def test_repeated_abuse_closes_only_the_abuser(
    net: Net, session: aiohttp.ClientSession
) -> None:
    relay = await net.start(strikes_before_close=3)
    host = await net.open_room(relay.url)
    honest = await net.enter(relay.url, host.room)
    abuser = await seat_ws(session, relay, host.room)
    for _ in range(3):
        await abuser.send_bytes(b"\xc1 garbage")
    codes = [(await recv(abuser))["code"] for _ in range(3)]
    assert codes == ["bad_frame"] * 3
    assert await close_code(abuser) == 1008
    assert relay.stats.closed_for_abuse == 1
    assert [await host.recv() for _ in range(3)] == [
        Arrived(conn=1),
        Arrived(conn=2),
        Departed(conn=2),
    ]
    await honest.send(b"still here")
    assert await host.recv() == Frame(sender=1, body=b"still here")
    await host.send(b"good")
    assert await honest.recv() == Frame(sender=0, body=b"good")


async def test_a_seat_that_stops_reading_is_cut_off_not_waited_for(
    net: Net, session: aiohttp.ClientSession
) -> None:
    relay = await net.start(max_send_backlog_bytes=200_000, burst=10_000, messages_per_second=10_000)
    host = await net.open_room(relay.url)
    reader = await net.enter(relay.url, host.room)
    stuck = await seat_ws(session, relay, host.room)  # never reads again
    body = b"z" * 60_000
    sent = 0
    while relay.stats.evicted_slow == 0 and sent < 2000:
        await host.send(body)
        assert await reader.recv() == Frame(sender=0, body=body)
        sent += 1
    assert relay.stats.evicted_slow == 1
    messages = [await host.recv() for _ in range(3)]
    assert Departed(conn=2) in messages
    await stuck.close()


async def test_a_seat_that_pings_and_never_reads_is_cut_off_and_its_host_told(net: Net) -> None:
    """The relay's pongs go through the same backlog check as its frames: a seat that floods
    WebSocket pings and reads nothing (its receive buffer tiny) is cut off, and its host hears
    that it left. (Found by an attacker's review: the pongs once filled that seat's own buffer
    until its serve loop waited forever, and the seat stayed in the room.)"""
    relay = await net.start(max_send_backlog_bytes=100_000, reads_per_second_per_address=1e6,
                            read_burst_per_address=1_000_000, admit_timeout_seconds=600)
    host = await net.open_room(relay.url)
    loop = asyncio.get_running_loop()
    sock, conn = await raw_seat_that_never_reads(relay, host)
    with sock:
        pings = masked_frame(b"p" * 125, opcode=9) * 64

        async def flood() -> None:
            with contextlib.suppress(OSError):
                while True:
                    await loop.sock_sendall(sock, pings)

        flooding = asyncio.create_task(flood())
        async with asyncio.timeout(60):
            assert await host.recv() == Departed(conn=conn)
        assert relay.stats.evicted_slow == 1
        flooding.cancel()


async def test_a_silent_seat_with_unread_frames_is_dropped_and_its_socket_freed(
        net: Net) -> None:
    """A seat that reads nothing and says nothing, with frames waiting for it (under the
    backlog that would cut it off), is dropped by the relay's heartbeat, its host told, and
    its socket let go a heartbeat later, not held until it reads what it never will."""
    relay = await net.start(heartbeat_seconds=2.0, messages_per_second=10_000, burst=10_000,
                            admit_timeout_seconds=600)
    host = await net.open_room(relay.url)
    sock, conn = await raw_seat_that_never_reads(relay, host)
    with sock:
        seat = next(c for c in relay.relay.conns if c.conn == conn)
        assert seat.transport is not None
        while seat.transport.get_write_buffer_size() == 0:  # past what the kernels hold
            await host.send(b"z" * 30_000, to=conn)
            await host.ping()  # answered once the frame is written: the relay reads in order
            assert await host.recv() == Pong()
        async with asyncio.timeout(60):
            assert await host.recv() == Departed(conn=conn)
        assert relay.stats.evicted_slow == 0  # the heartbeat's doing, not the backlog's
        transport = seat.transport
        async with asyncio.timeout(60):
            while transport.get_write_buffer_size() > 0:
                await asyncio.sleep(0.1)
        assert transport.is_closing()


async def test_a_slow_seat_dropped_by_its_host_still_gets_what_waited_and_why(
        net: Net) -> None:
    """A seat on a slow link (220 KB waiting for it, under the backlog that cuts it off) that
    its host has the relay drop still reads every frame that waited for it and then the close
    code (4003: its seat is elsewhere), so it stops rather than reconnect (an attacker's review
    found the socket freed at once, those frames and the code lost)."""
    relay = await net.start(messages_per_second=10_000, burst=10_000)
    host = await net.open_room(relay.url)
    loop = asyncio.get_running_loop()
    sock, conn = await raw_seat_that_never_reads(relay, host)
    with sock:
        seat = next(c for c in relay.relay.conns if c.conn == conn)
        assert seat.transport is not None
        sent = 0
        while seat.transport.get_write_buffer_size() < 200_000:
            await host.send(b"z" * 30_000, to=conn)
            await host.ping()  # answered once the frame is written: the relay reads in order
            assert await host.recv() == Pong()
            sent += 1
        await host.drop(conn)
        assert await host.recv() == Departed(conn=conn)
        data = b""
        async with asyncio.timeout(30):
            while chunk := await loop.sock_recv(sock, 1 << 20):  # the link catches up
                data += chunk
        frames, codes = server_frames(data)
        assert frames == sent + 1  # and the `entered`
        assert codes == [CLOSE_REPLACED]


def server_frames(data: bytes) -> tuple[int, list[int]]:
    """How many data frames the relay sent in `data`, and the codes of its close frames."""
    at, frames, codes = 0, 0, []
    while at + 2 <= len(data):
        opcode, size, body = data[at] & 0x0F, data[at + 1] & 0x7F, at + 2
        if size == 126:
            size, body = struct.unpack("!H", data[body:body + 2])[0], body + 2
        elif size == 127:
            size, body = struct.unpack("!Q", data[body:body + 8])[0], body + 8
        if opcode == 8:
            codes.append(struct.unpack("!H", data[body:body + 2])[0])
        elif opcode in (1, 2):
            frames += 1
        at = body + size
    return frames, codes


async def raw_seat_that_never_reads(relay: RunningRelay, host: RelayConnection
                                    ) -> tuple[socket.socket, int]:
    """A socket that enters `host`'s room by hand, its receive buffer tiny, and reads nothing
    after the upgrade's answer; admitted by the host. The socket and its conn."""
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting: it sticks
    sock.setblocking(False)
    await loop.sock_connect(sock, ("127.0.0.1", relay.port))
    key = base64.b64encode(os.urandom(16)).decode()
    await loop.sock_sendall(sock, (
        f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade"
        f"\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:  # the 101 only, a byte at a time: nothing after it
        head += await loop.sock_recv(sock, 1)
    assert head.startswith(b"HTTP/1.1 101"), head
    await loop.sock_sendall(sock, masked_frame(
        encode({"t": "enter", "v": PROTOCOL_VERSION, "room": host.room}), opcode=2))
    arrived = await host.recv()
    assert isinstance(arrived, Arrived)
    await host.admit(arrived.conn)
    return sock, arrived.conn


def masked_frame(payload: bytes, opcode: int) -> bytes:
    """One WebSocket frame as a client sends it (masked), payload under 64 KiB."""
    mask = os.urandom(4)
    size = len(payload)
    head = (struct.pack("!BB", 0x80 | opcode, 0x80 | size) if size < 126
            else struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, size))
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


async def test_shutdown_closes_every_socket(net: Net) -> None:
    relay = await net.start()
    host = await net.open_room(relay.url)
    seat = await net.enter(relay.url, host.room)
    await relay.close()
    for conn in (host, seat):
        with pytest.raises(RelayClosed):
            while True:
                await conn.recv()


@pytest.mark.parametrize(
    ("text", "url"),
    [
        ("example.org", "ws://example.org:7777/ws"),
        ("127.0.0.1:9000", "ws://127.0.0.1:9000/ws"),
        ("ws://127.0.0.1:9000", "ws://127.0.0.1:9000/ws"),
        ("ws://127.0.0.1:9000/ws", "ws://127.0.0.1:9000/ws"),
        ("wss://relay.example.org/cards", "wss://relay.example.org/cards"),
        ("[::1]:9000", "ws://[::1]:9000/ws"),
    ],
)
def test_relay_url_accepts_the_forms_people_type(text: str, url: str) -> None:
    assert relay_url(text) == url


@pytest.mark.parametrize("text", ["", "http://x:1", "ws://", "::::"])
def test_relay_url_refuses_nonsense(text: str) -> None:
    with pytest.raises(ValueError):
        relay_url(text)
