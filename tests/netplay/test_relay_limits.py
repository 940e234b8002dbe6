"""The relay's limits per source address, its upgrade deadline, admission, pacing and TLS.

Distinct source addresses are loopback addresses (127.0.0.2, 127.0.0.3, ...): Linux routes
all of 127.0.0.0/8 to the loopback interface, and a client binds its socket to one of them.
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from netplay.addresses import address_key
from netplay.messages import PROTOCOL_VERSION
from netplay.messages import decode_map as decode
from netplay.messages import encode_map as encode
from netplay.relay.client import (
    RelayClosed,
    RelayConnection,
    RelayRefused,
    RelayUnreachable,
    client_tls,
)
from netplay.relay.guard import ThrottleFilter, TokenBucket
from netplay.relay.launch import RunningRelay, start_relay, tls_context
from netplay.relay.limits import RelayLimits

# Waits that only a broken relay gets near; nothing here asserts how long anything took.
PATIENCE = 10.0


class Net:
    """Relays and client sessions (one per source address) of one test, closed at its end."""

    def __init__(self) -> None:
        self.relays: list[RunningRelay] = []
        self.sessions: dict[str, aiohttp.ClientSession] = {}
        self.conns: list[RelayConnection] = []

    async def relay(self, **limits: Any) -> RunningRelay:
        tls = limits.pop("tls", None)
        relay = await start_relay(limits=RelayLimits(**limits), tls=tls)
        self.relays.append(relay)
        return relay

    def session(self, address: str) -> aiohttp.ClientSession:
        if address not in self.sessions:
            connector = aiohttp.TCPConnector(local_addr=(address, 0), force_close=True)
            self.sessions[address] = aiohttp.ClientSession(connector=connector)
        return self.sessions[address]

    async def open_room(self, relay: RunningRelay, address: str = "127.0.0.1") -> RelayConnection:
        conn = await RelayConnection.open_room(relay.url, session=self.session(address))
        self.conns.append(conn)
        return conn

    async def enter(self, relay: RunningRelay, room: str, address: str = "127.0.0.1"
                    ) -> RelayConnection:
        conn = await RelayConnection.enter(relay.url, room, session=self.session(address))
        self.conns.append(conn)
        return conn

    async def raw(self, relay: RunningRelay, address: str) -> aiohttp.ClientWebSocketResponse:
        return await self.session(address).ws_connect(relay.url)


@pytest.fixture
async def net() -> AsyncIterator[Net]:
    net = Net()
    yield net
    for conn in net.conns:
        await conn.close()
    for session in net.sessions.values():
        await session.close()
    for relay in net.relays:
        await relay.close()


async def closed_by_relay(ws: aiohttp.ClientWebSocketResponse) -> int | None:
    """Read until the relay closes the socket; its close code."""
    async with asyncio.timeout(PATIENCE):
        while (await ws.receive()).type not in (aiohttp.WSMsgType.CLOSE,
                                                aiohttp.WSMsgType.CLOSED,
                                                aiohttp.WSMsgType.ERROR):
            pass
    return ws.close_code


async def round_trip(conn: RelayConnection) -> None:
    """Ping and wait for the pong: everything sent before it has been read by the relay."""
    await conn.ping()
    async with asyncio.timeout(PATIENCE):
        while (await conn.recv()).t != "pong":
            pass


# -- per source address ---------------------------------------------------------------------


async def test_connections_per_address_are_capped_and_others_still_get_in(net: Net) -> None:
    relay = await net.relay(max_conns_per_address=3)
    held = [await net.raw(relay, "127.0.0.2") for _ in range(3)]
    with pytest.raises(RelayUnreachable):
        await net.open_room(relay, "127.0.0.2")
    host = await net.open_room(relay, "127.0.0.3")
    await round_trip(host)
    await held[0].close()
    async with asyncio.timeout(PATIENCE):  # the relay notices the close, then frees the slot
        while relay.relay.book.addresses["127.0.0.2"].connections > 2:
            await asyncio.sleep(0.01)
    await net.open_room(relay, "127.0.0.2")


async def test_connection_rate_per_address(net: Net) -> None:
    relay = await net.relay(connections_per_second_per_address=0.001,
                            connection_burst_per_address=2)
    await net.open_room(relay, "127.0.0.2")
    await net.open_room(relay, "127.0.0.2")
    with pytest.raises(RelayUnreachable):
        await net.open_room(relay, "127.0.0.2")
    assert relay.relay.book.refused >= 1  # aiohttp may try a dropped GET once more
    await net.open_room(relay, "127.0.0.4")


async def test_rooms_per_address(net: Net) -> None:
    relay = await net.relay(max_rooms_per_address=2)
    first = await net.open_room(relay, "127.0.0.2")
    await net.open_room(relay, "127.0.0.2")
    with pytest.raises(RelayRefused) as refused:
        await net.open_room(relay, "127.0.0.2")
    assert refused.value.code == "too_many_rooms"
    assert "your address" in refused.value.message
    await net.open_room(relay, "127.0.0.3")  # a host elsewhere still gets a room
    # A room counts until it is gone, not only while its host is connected.
    await first.close()
    with pytest.raises(RelayRefused):
        await net.open_room(relay, "127.0.0.2")


async def test_exempt_addresses_are_not_counted(net: Net) -> None:
    relay = await net.relay(max_rooms_per_address=1, exempt_addresses=frozenset({"127.0.0.5"}))
    for _ in range(3):
        await net.open_room(relay, "127.0.0.5")


async def test_past_the_waiting_cap_the_most_crowded_address_makes_room(net: Net) -> None:
    # Six connections wait (never say hello) from 127.0.0.2, two from 127.0.0.3: the cap of 8
    # is reached, and a newcomer past it evicts the oldest waiting one of 127.0.0.2, never the
    # room's host nor its admitted seat, nor 127.0.0.3's while 127.0.0.2 holds more.
    relay = await net.relay(max_waiting=8, hello_timeout_seconds=60)
    host = await net.open_room(relay, "127.0.0.5")
    seat = await net.enter(relay, host.room, "127.0.0.5")
    await host.admit(seat.conn)
    await round_trip(host)
    crowd = [await net.raw(relay, "127.0.0.2") for _ in range(6)]
    others = [await net.raw(relay, "127.0.0.3") for _ in range(2)]
    assert relay.relay.guard.waiting_total == 8
    newcomer = await net.open_room(relay, "127.0.0.4")  # in a room: no longer waiting
    assert await closed_by_relay(crowd[0]) is not None
    await net.raw(relay, "127.0.0.7")
    second = await net.enter(relay, newcomer.room, "127.0.0.6")  # waits, until admitted
    assert await closed_by_relay(crowd[1]) is not None
    assert relay.relay.guard.evicted == 2
    await newcomer.admit(second.conn)
    await round_trip(newcomer)
    for ws in crowd[2:] + others:
        await ws.send_bytes(encode({"t": "ping"}))
        assert decode(await ws.receive_bytes(), 1024)["t"] == "pong"
    for conn in (host, seat, newcomer, second):
        await round_trip(conn)


def test_an_ipv6_prefix_counts_as_one_address() -> None:
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:ffff::9")
    assert address_key("2001:db8:1:2::1") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    assert address_key("::ffff:192.0.2.7") == "192.0.2.7"
    assert address_key("192.0.2.7") == "192.0.2.7"
    assert address_key("fe80::1%eth0") == "fe80::/64"
    assert address_key("?") == "?"
    assert RelayLimits(exempt_addresses=frozenset({"2001:db8::5"})).exempt_addresses == {
        "2001:db8::/64"}


async def test_ipv6_addresses_of_one_prefix_share_its_limits() -> None:
    # Two addresses of one /64 on the loopback interface would need configuring; a relay on
    # ::1 sees one address, and counts it as its prefix.
    try:
        relay = await start_relay("::1", limits=RelayLimits(max_conns_per_address=2))
    except OSError:
        # Only a machine without IPv6 on loopback skips; the /64 counting itself is checked
        # above without sockets (address_key), so no feature hides behind this skip.
        pytest.skip("no IPv6 loopback here")
    try:
        async with aiohttp.ClientSession() as session:
            conns = [await RelayConnection.open_room(relay.url, session=session)
                     for _ in range(2)]
            assert set(relay.relay.book.addresses) == {"::/64"}
            with pytest.raises(RelayUnreachable):
                await RelayConnection.open_room(relay.url, session=session)
            for conn in conns:
                await conn.close()
    finally:
        await relay.close()


async def test_a_half_sent_request_is_dropped_at_the_upgrade_deadline() -> None:
    """Slowloris: a request that never ends is closed, and its slot is free again."""
    relay = await start_relay(limits=RelayLimits(upgrade_timeout_seconds=0.2,
                                                 max_conns_per_address=1))
    try:
        reader, writer = await asyncio.open_connection(relay.host, relay.port,
                                                       local_addr=("127.0.0.2", 0))
        writer.write(b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n")  # and no more
        await writer.drain()
        async with asyncio.timeout(PATIENCE):
            assert await reader.read() == b""
        writer.close()
        assert relay.relay.guard.timed_out == 1
        async with asyncio.timeout(PATIENCE):
            while relay.relay.book.total:
                await asyncio.sleep(0.01)
        async with aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(local_addr=("127.0.0.2", 0))
        ) as session:
            host = await RelayConnection.open_room(relay.url, session=session)
            await round_trip(host)  # an upgraded connection outlives the deadline
            await asyncio.sleep(0.3)
            await round_trip(host)
            await host.close()
    finally:
        await relay.close()


async def test_a_plain_http_keepalive_connection_is_dropped_too(net: Net) -> None:
    relay = await net.relay(upgrade_timeout_seconds=0.2)
    reader, writer = await asyncio.open_connection(relay.host, relay.port)
    writer.write(b"GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n")
    async with asyncio.timeout(PATIENCE):
        received = await reader.read()  # the whole answer, then the end: the relay closed it
    writer.close()
    assert received.startswith(b"HTTP/1.1 404")


# -- admission --------------------------------------------------------------------------------


async def test_a_conn_its_host_never_admits_is_dropped(net: Net) -> None:
    relay = await net.relay(admit_timeout_seconds=0.2)
    host = await net.open_room(relay)
    seat = await net.enter(relay, host.room)
    admitted = await net.enter(relay, host.room)
    await host.admit(admitted.conn)
    with pytest.raises(RelayClosed) as closed:
        async with asyncio.timeout(PATIENCE):
            await seat.recv()
    assert closed.value.close_code == 1008
    assert relay.stats.not_admitted == 1
    await round_trip(admitted)


async def test_the_admit_clock_stops_while_the_host_is_away(net: Net) -> None:
    relay = await net.relay(admit_timeout_seconds=0.2)
    host = await net.open_room(relay)
    code, secret = host.room, host.host_secret
    await host.close()
    seat = await net.enter(relay, code)
    assert (await seat.recv()).t == "host_away"
    await asyncio.sleep(0.4)
    await round_trip(seat)  # still there: nobody could have admitted it
    back = await RelayConnection.open_room(relay.url, code, secret)
    net.conns.append(back)
    await back.admit(seat.conn)
    await round_trip(back)
    await asyncio.sleep(0.4)
    await round_trip(seat)


async def test_waiting_slots_per_room_and_per_address(net: Net) -> None:
    """A squatter fills what it may of a room's waiting slots; another address still enters."""
    relay = await net.relay(max_pending_per_room=3, max_pending_per_address=2)
    host = await net.open_room(relay)
    for _ in range(2):
        await net.enter(relay, host.room, "127.0.0.2")
    with pytest.raises(RelayRefused) as refused:
        await net.enter(relay, host.room, "127.0.0.2")
    assert refused.value.code == "room_full"
    honest = await net.enter(relay, host.room, "127.0.0.3")
    with pytest.raises(RelayRefused):
        await net.enter(relay, host.room, "127.0.0.4")
    await host.admit(honest.conn)
    await round_trip(host)
    await net.enter(relay, host.room, "127.0.0.4")  # admitting freed a waiting slot


async def test_watchers_have_their_own_cap(net: Net) -> None:
    relay = await net.relay(max_watchers_per_room=1, max_conns_per_room=2)
    host = await net.open_room(relay)
    a, b, c = [await net.enter(relay, host.room, f"127.0.0.{i}") for i in (2, 3, 4)]
    await host.admit(a.conn, watch=True)
    await host.admit(b.conn, watch=True)
    await host.admit(c.conn)
    await host.ping()
    answers = []
    async with asyncio.timeout(PATIENCE):
        while not answers or answers[-1].t != "pong":
            answers.append(await host.recv())
    errors = [a for a in answers if a.t == "error"]
    assert [e.code for e in errors] == ["room_full"]
    assert "watcher" in errors[0].message


async def test_only_the_host_admits(net: Net) -> None:
    relay = await net.relay()
    host = await net.open_room(relay)
    seat = await net.enter(relay, host.room)
    await seat.admit(seat.conn)
    answer = await seat.recv()
    assert (answer.t, answer.code) == ("error", "not_allowed")


# -- honest clients and the rate limit --------------------------------------------------------


async def test_a_paced_client_is_never_refused(net: Net) -> None:
    relay = await net.relay(messages_per_second=50, burst=10)
    host = await net.open_room(relay)
    seat = await net.enter(relay, host.room)
    await host.admit(seat.conn)
    for i in range(40):
        await seat.send(str(i).encode())
    await round_trip(seat)
    got = [m for m in [await host.recv() for _ in range(41)] if m.t == "frame"]
    assert [m.body for m in got] == [str(i).encode() for i in range(40)]
    assert relay.stats.rejected == 0


async def test_what_was_refused_for_speed_is_sent_again(net: Net) -> None:
    relay = await net.relay(messages_per_second=20, burst=2)
    host = await net.open_room(relay)
    seat = await net.enter(relay, host.room)
    await host.admit(seat.conn)
    seat._pace = TokenBucket(1e9, 1e9)  # a client that does not pace, as a busy network might
    for i in range(8):
        await seat.send(str(i).encode())
    reading = asyncio.create_task(round_trip(seat))  # reading is what sees the refusals
    bodies: set[bytes] = set()
    async with asyncio.timeout(PATIENCE):
        while len(bodies) < 8:
            msg = await host.recv()
            if msg.t == "frame":
                bodies.add(msg.body)
    await reading
    assert bodies == {str(i).encode() for i in range(8)}
    assert seat.resent > 0 and relay.stats.rejected >= seat.resent


async def test_errors_name_the_refused_message(net: Net) -> None:
    relay = await net.relay()
    ws = await net.raw(relay, "127.0.0.1")
    await ws.send_bytes(encode({"t": "ping"}))
    await ws.send_bytes(encode({"t": "nonsense"}))
    await ws.send_bytes(encode({"t": "enter", "v": PROTOCOL_VERSION, "room": "0000000000"}))
    answers = [decode((await ws.receive()).data, 1 << 16) for _ in range(3)]
    assert [(a["t"], a.get("seq")) for a in answers] == [("pong", None), ("error", 1),
                                                         ("error", 2)]
    await ws.close()


# -- logs -------------------------------------------------------------------------------------


def test_the_same_error_is_logged_once_per_interval() -> None:
    throttle = ThrottleFilter(10.0)

    def record(message: str, at: float) -> logging.LogRecord:
        made = logging.LogRecord("asyncio", logging.ERROR, __file__, 1, message, None, None)
        made.created = at
        return made

    passed = [throttle.filter(record(f"socket.accept() out of system resource\nsocket {i}", t))
              for i, t in enumerate([0.0, 0.1, 0.2, 5.0, 10.5, 10.6])]
    assert passed == [True, False, False, False, True, False]
    later = record("socket.accept() out of system resource\nsocket 9", 21.0)
    assert throttle.filter(later)
    assert "1 more like this" in later.getMessage()
    assert throttle.filter(record("something else", 21.0))


def test_an_accept_error_is_one_line_without_its_traceback() -> None:
    try:
        raise OSError(24, "Too many open files")
    except OSError:
        made = logging.LogRecord("asyncio", logging.ERROR, __file__, 1,
                                 "socket.accept() out of system resource\nsocket: <socket>", None,
                                 sys.exc_info())
    assert ThrottleFilter(10.0).filter(made)
    assert made.exc_info is None
    assert made.getMessage() == ("socket.accept() out of system resource:"
                                 " [Errno 24] Too many open files")


# -- TLS ----------------------------------------------------------------------------------------


def self_signed(tmp_path: Path) -> tuple[str, str]:
    """A certificate for 127.0.0.1 and its key, made with the openssl command."""
    cert, key = tmp_path / "relay.pem", tmp_path / "relay.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj",
                    "/CN=cardtui test relay", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return str(cert), str(key)


async def test_a_tls_relay_with_a_trusted_certificate(net: Net, tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    relay = await net.relay(tls=tls_context(cert, key))
    assert relay.url.startswith("wss://127.0.0.1:")
    trusted = client_tls(cert)
    host = await RelayConnection.open_room(relay.url, tls=trusted)
    seat = await RelayConnection.enter(relay.url, host.room, tls=trusted)
    net.conns += [host, seat]
    await host.admit(seat.conn)
    await seat.send(b"over tls")
    assert (await host.recv()).t == "arrived"
    assert (await host.recv()).body == b"over tls"
    with pytest.raises(RelayUnreachable, match="not trusted"):
        await RelayConnection.enter(relay.url, host.room, tls=client_tls(None))


async def test_tls_handshakes_count_against_their_address(net: Net, tmp_path: Path) -> None:
    # A connection that never starts its handshake holds its address's one slot, so the
    # address's next is closed at once; another address still gets in over TLS, and the
    # silent one is dropped at the upgrade deadline, its slot free again.
    cert, key = self_signed(tmp_path)
    relay = await net.relay(tls=tls_context(cert, key), max_conns_per_address=1,
                            upgrade_timeout_seconds=1.0)
    silent_reader, silent = await asyncio.open_connection(relay.host, relay.port,
                                                          local_addr=("127.0.0.2", 0))
    async with asyncio.timeout(PATIENCE):
        while relay.relay.book.total < 1:
            await asyncio.sleep(0.01)
    assert relay.relay.book.addresses["127.0.0.2"].connections == 1
    reader, writer = await asyncio.open_connection(relay.host, relay.port,
                                                   local_addr=("127.0.0.2", 0))
    async with asyncio.timeout(PATIENCE):
        assert await reader.read() == b""  # closed unanswered: no handshake for it
    writer.close()
    assert relay.relay.book.refused >= 1
    host = await RelayConnection.open_room(relay.url, tls=client_tls(cert),
                                           session=net.session("127.0.0.3"))
    net.conns.append(host)
    await round_trip(host)
    async with asyncio.timeout(PATIENCE):
        assert await silent_reader.read() == b""  # the deadline took it
    silent.close()
    assert relay.relay.guard.timed_out >= 1
    async with asyncio.timeout(PATIENCE):
        while "127.0.0.2" in relay.relay.book.addresses and (
                relay.relay.book.addresses["127.0.0.2"].connections):
            await asyncio.sleep(0.01)
    await round_trip(host)
