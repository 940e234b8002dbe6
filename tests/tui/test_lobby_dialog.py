"""The SSH lobby's new-table dialog: cancelling it starts nothing that could cancel a seat.

Opening a table and taking a seat share one exclusive worker group ("sit"), so starting one
cancels the other. The dialog's cancel used to start the create worker too (with no table),
which cancelled a seat the player had asked for just before. Real parts: the server's app,
its lobby and tables client, against the real tables API on loopback."""

from __future__ import annotations

from aiohttp import web

from netplay.table.service import TableLimits, TablesClient, TablesService, add_table_routes
from tui.screens.lobby import LobbyScreen, NewTableDialog
from tui.ssh_entry import ServerApp


async def test_cancelling_the_new_table_dialog_starts_no_seat_or_table_worker() -> None:
    api = web.Application()
    add_table_routes(api, TablesService(TableLimits()))
    runner = web.AppRunner(api, shutdown_timeout=0.5)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        app = ServerApp(TablesClient(f"http://127.0.0.1:{port}"), "Me")
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, LobbyScreen)
            await pilot.press("n")
            await pilot.pause()
            assert isinstance(app.screen, NewTableDialog)
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, LobbyScreen)
            started = [w.name for w in app.workers if w.group == "sit"]
            assert started == [], f"cancelling the dialog started {started}"
    finally:
        await runner.cleanup()
