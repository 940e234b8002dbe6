"""The SSH lobby's new-table dialog: cancelling it leaves a seat being taken alone.

Opening a table and taking a seat share one exclusive worker group ("sit"), so starting one
cancels the other. The dialog's cancel used to start the create worker too (with no table),
which cancelled a seat the player had asked for just before."""

from __future__ import annotations

import asyncio

from textual.app import App
from textual.widgets import Static

from netplay.table.service import TableInfo
from tui.screens.lobby import LobbyScreen, NewTableDialog

TABLE = TableInfo(room="K7QX-M2RD-9A", game="zodiak", players=2, taken=1, people=1, watching=0,
                  state="waiting")


class QuietTables:
    """A tables client with one table whose listing never changes."""

    async def watch(self, since: int | None, wait: float = 25.0) -> tuple[list[TableInfo], int]:
        if since is not None:
            await asyncio.Event().wait()  # nothing changes
        return [TABLE], 1


class SlowSeatApp(App[None]):
    """An app that takes its time seating the player (a slow relay), noting how that ended."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []
        self.cancelled = False
        self.release = asyncio.Event()

    def get_default_screen(self) -> LobbyScreen:
        return LobbyScreen(QuietTables(), "Me")  # type: ignore[arg-type]  # a stand-in client

    async def sit(self, room: str, *, owner: bytes | None = None,
                  watch: bool = False) -> str | None:
        self.asked.append(room)
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return None


async def test_cancelling_the_new_table_dialog_keeps_the_seat_being_taken() -> None:
    app = SlowSeatApp()
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(50):
            await pilot.pause(0.05)
            if str(app.screen.query_one("#lobby-status", Static).render()).startswith("1 table"):
                break
        await pilot.press("enter")  # join the table: the seat is on its way
        await pilot.pause(0.1)
        assert len(app.asked) == 1
        await pilot.press("n")
        await pilot.pause(0.1)
        assert isinstance(app.screen, NewTableDialog)
        await pilot.press("escape")
        await pilot.pause(0.2)
        assert not isinstance(app.screen, NewTableDialog)
        assert not app.cancelled, "cancelling the dialog cancelled the seat being taken"
        app.release.set()
        await pilot.pause(0.1)
