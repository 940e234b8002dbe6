"""The tables API counts a server session's tables against its visitor's address (the README's
"Over SSH"; tests/e2e/test_serve_hostile.py drives the same through real SSH and browser sessions)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web

from netplay.relay.limits import RelayLimits
from netplay.relay.server import make_relay_app
from netplay.table.opened import OpenedGuard, OpenedLimits
from netplay.table.service import (
    VISITOR_HEADER,
    BadTableRequest,
    TableLimits,
    TablesClient,
    TablesService,
    add_table_routes,
)

TABLE = {"game": "zodiak", "players": 2, "bots": 1}


@contextlib.asynccontextmanager
async def tables_api(limits: TableLimits) -> AsyncIterator[tuple[TablesService, str, str]]:
    """A relay with its tables API as `cardtui serve` runs them: the service, the loopback
    listener's base URL and an opened one's (on 127.0.0.2)."""
    app = make_relay_app(RelayLimits(exempt_addresses=frozenset({"127.0.0.1"})))
    opened = OpenedGuard(OpenedLimits(), set())
    app.middlewares.append(opened.middleware)
    service = TablesService(limits, tables_per_remote_address=2)
    add_table_routes(app, service)
    runner = web.AppRunner(app, shutdown_timeout=0.5)
    await runner.setup()
    try:
        loopback = web.TCPSite(runner, "127.0.0.1", 0)
        await loopback.start()
        port = loopback._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        service.relay_url = f"ws://127.0.0.1:{port}/ws"
        public = web.TCPSite(runner, "127.0.0.2", 0)
        await public.start()
        opened_port = public._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        opened.ports.add(opened_port)
        yield service, f"http://127.0.0.1:{port}", f"http://127.0.0.2:{opened_port}"
    finally:
        await runner.cleanup()


@pytest.fixture
async def server() -> AsyncIterator[tuple[str, str]]:
    """The tables API with the default limits: its loopback and opened base URLs."""
    async with tables_api(TableLimits()) as (_, loopback, opened):
        yield loopback, opened


async def post(base: str, headers: dict[str, str], source: str = "127.0.0.1") -> tuple[int, str]:
    connector = aiohttp.TCPConnector(local_addr=(source, 0))
    async with aiohttp.ClientSession(connector=connector) as http, http.post(
            f"{base}/tables", json=TABLE, headers=headers) as answer:
        body = await answer.json()
        return answer.status, str(body.get("error", ""))


async def test_a_sessions_tables_count_against_its_visitor_and_no_one_elses(
        server: tuple[str, str]) -> None:
    loopback, _ = server
    alice, bob, local = (TablesClient(loopback, visitor="192.0.2.7"),
                         TablesClient(loopback, visitor="198.51.100.1"), TablesClient(loopback))
    try:
        await alice.create("zodiak", 2, 1)
        await alice.create("zodiak", 2, 1)
        with pytest.raises(BadTableRequest, match="your address already has 2 tables open"):
            await alice.create("zodiak", 2, 1)
        await bob.create("zodiak", 2, 1)
        # A program on the server's machine names no visitor and is not counted (README,
        # "Not covered": the loopback API is open to every local user).
        for _ in range(3):
            await local.create("zodiak", 2, 1)
    finally:
        for client in (alice, bob, local):
            await client.close()


@pytest.mark.parametrize("garbage", ["", "alice", "127.0.0.1; DROP", "::g", "1" * 80])
async def test_a_visitor_that_is_not_an_address_is_refused(server: tuple[str, str],
                                                           garbage: str) -> None:
    loopback, _ = server
    status, error = await post(loopback, {VISITOR_HEADER: garbage})
    assert (status, error) == (400, f"{VISITOR_HEADER} must be an IP address")


async def test_the_opened_api_counts_its_own_source_whatever_visitor_it_names(
        server: tuple[str, str]) -> None:
    """A remote client cannot pass its tables off as someone else's, nor dodge its own limit."""
    loopback, opened = server
    for _ in range(2):
        assert (await post(opened, {VISITOR_HEADER: "192.0.2.99"}, "127.0.0.3"))[0] == 201
    status, error = await post(opened, {VISITOR_HEADER: "192.0.2.100"}, "127.0.0.3")
    assert status == 503 and "already has 2 tables open" in error
    named = TablesClient(loopback, visitor="192.0.2.99")
    try:
        await named.create("zodiak", 2, 1)  # not blamed for the remote client's tables
    finally:
        await named.close()


async def test_tables_asked_for_at_once_are_counted_before_their_rooms_open(
        server: tuple[str, str]) -> None:
    """Eight requests at the same moment, from one visitor and from one opened-API client: each
    table counts from when it is asked for, so two open for each (the count once waited for
    the room to open, and all eight did)."""
    loopback, opened = server
    for base, headers, source in ((loopback, {VISITOR_HEADER: "192.0.2.7"}, "127.0.0.1"),
                                  (opened, {}, "127.0.0.3")):
        answers = await asyncio.gather(*(post(base, headers, source) for _ in range(8)))
        assert sorted(status for status, _ in answers) == [201] * 2 + [503] * 6


async def test_an_ipv6_visitor_counts_as_its_64_prefix(server: tuple[str, str]) -> None:
    """One visitor holds a whole /64 of addresses: they count as one, as at the relay."""
    loopback, _ = server
    for address in ("2001:db8::1", "2001:db8::ffff:2"):
        assert (await post(loopback, {VISITOR_HEADER: address}))[0] == 201
    status, error = await post(loopback, {VISITOR_HEADER: "2001:db8::3"})
    assert status == 503 and "already has 2 tables open" in error
    assert (await post(loopback, {VISITOR_HEADER: "2001:db8:0:1::1"}))[0] == 201


async def test_the_servers_table_cap_holds_for_tables_asked_for_at_once() -> None:
    async with tables_api(TableLimits(max_tables=3)) as (service, loopback, _):
        answers = await asyncio.gather(*(post(loopback, {VISITOR_HEADER: f"192.0.2.{i}"})
                                         for i in range(10)))
        assert sorted(status for status, _ in answers) == [201] * 3 + [503] * 7
        assert len(service.tables) == 3
