"""The tables API at shutdown: a lobby waiting for the listing to change is answered at once."""

from __future__ import annotations

import asyncio

import aiohttp
from aiohttp import web

from netplay.table.service import TableLimits, TablesService, add_table_routes


async def test_a_waiting_lobby_is_answered_when_the_server_stops() -> None:
    app = web.Application()
    add_table_routes(app, TablesService(TableLimits()))
    # A short grace: without the answer at shutdown the waiting request would be cut off.
    runner = web.AppRunner(app, shutdown_timeout=0.5)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    base = f"http://127.0.0.1:{port}/tables"
    async with aiohttp.ClientSession() as http:
        async with http.get(base) as answer:
            version = (await answer.json())["version"]

        async def wait_for_change() -> dict[str, object]:
            async with http.get(f"{base}?since={version}&wait=30") as answer:
                return await answer.json()  # type: ignore[no-any-return]

        waiting = asyncio.create_task(wait_for_change())
        await asyncio.sleep(0.2)  # the request is in the server, waiting for a change
        assert not waiting.done()
        await runner.cleanup()
        listing = await asyncio.wait_for(waiting, 10)
    assert listing["tables"] == [] and listing["version"] == version
