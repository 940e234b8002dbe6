"""Every per-address limit counts an IPv6 /64 as one address (netplay/addresses.py): the SSH
and browser doors' sessions, logins and reads, and the opened tables API, as the relay does.

Loopback has one IPv6 address, so these tests give the limits the addresses a client would
come from, and the sockets are real where the limit reads them.
"""

from __future__ import annotations

import asyncio

from aiohttp import web
from aiohttp.test_utils import make_mocked_request

from netplay.addresses import address_key
from netplay.ssh.guard import LoginThrottle, PacedReads, ReadBudget, SessionCounter, ThrottleLimits
from netplay.table.opened import OPENED_ADDRESS, OpenedGuard, OpenedLimits

ONE = "2001:db8:1:2::1"
SAME_PREFIX = "2001:db8:1:2:ffff:ffff:ffff:fffe"
OTHER_PREFIX = "2001:db8:1:3::1"
OPENED_PORT = 8443


def test_sessions_of_one_prefix_share_the_per_address_limit() -> None:
    counter = SessionCounter(total=100, per_address=2)
    assert counter.admit("a", ONE) is None
    assert counter.admit("b", SAME_PREFIX) is None
    refusal = counter.admit("c", "2001:db8:1:2::77")
    assert refusal is not None and "too many sessions from your address" in refusal
    assert counter.admit("d", OTHER_PREFIX) is None
    counter.release("a", ONE)
    assert counter.admit("c", "2001:db8:1:2::77") is None


def test_failed_logins_of_one_prefix_slow_the_whole_prefix() -> None:
    throttle = LoginThrottle(ThrottleLimits(free_failures=1, first_delay=1.0, max_delay=1.0))
    throttle.failed(ONE)
    throttle.failed(SAME_PREFIX)
    assert throttle.failures("2001:db8:1:2::5") == 2
    assert throttle.delay("2001:db8:1:2::5") == 1.0
    assert throttle.delay(OTHER_PREFIX) == 0.0
    throttle.succeeded("2001:db8:1:2::9")
    assert throttle.failures(ONE) == 0


async def test_reads_of_one_prefix_share_one_budget() -> None:
    """Bytes read from one address of a /64 are charged to the whole /64 (a real loopback
    connection, paced as the SSH and browser doors pace theirs)."""
    budget = ReadBudget(per_address=100, total=1_000_000, burst_seconds=1.0)
    got = bytearray()
    arrived = asyncio.Event()

    class Sink(asyncio.Protocol):
        def data_received(self, data: bytes) -> None:
            got.extend(data)
            arrived.set()

    def accepted() -> asyncio.Protocol:
        sink = Sink()

        class Wrap(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                assert isinstance(transport, asyncio.Transport)
                transport.set_protocol(PacedReads(sink, transport, budget, ONE))

        return Wrap()

    server = await asyncio.get_running_loop().create_server(accepted, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(b"x" * 150)
        await writer.drain()
        await asyncio.wait_for(arrived.wait(), 10)
        assert budget.wait(address_key(SAME_PREFIX)) > 0
        assert budget.wait(address_key(OTHER_PREFIX)) == 0
    finally:
        writer.close()
        server.close()
        await server.wait_closed()


async def test_the_opened_api_counts_a_prefix_as_one_address() -> None:
    """Requests through an opened listener are limited per /64, and the tables they open are
    counted against the /64 too (the address the middleware hands on)."""
    guard = OpenedGuard(OpenedLimits(requests_per_second=0.001, burst=2), ports={OPENED_PORT})
    seen: list[str] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        seen.append(request[OPENED_ADDRESS])
        return web.Response(text="ok")

    statuses = []
    for address in (ONE, SAME_PREFIX, "2001:db8:1:2::3", OTHER_PREFIX):
        request = make_mocked_request("GET", "/tables", transport=_Peer(address))
        response = await guard.middleware(request, handler)
        statuses.append(response.status)
    assert statuses == [200, 200, 429, 200]
    assert seen == ["2001:db8:1:2::/64", "2001:db8:1:2::/64", "2001:db8:1:3::/64"]


class _Peer(asyncio.Transport):
    """A transport that names the peer a request came from, on an opened listener's port."""

    def __init__(self, address: str) -> None:
        super().__init__()
        self._address = address

    def get_extra_info(self, name: str, default: object = None) -> object:
        if name == "peername":
            return (self._address, 40000, 0, 0)
        return ("::", OPENED_PORT, 0, 0) if name == "sockname" else default
