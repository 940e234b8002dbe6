"""The join screen while a hostile neighbour floods the LAN with announcements (loopback only).

The neighbour is tests/netplay/lan_flood.py in a process of its own; the app is the real one,
under `run_test()`, listening on 127.0.0.1 only.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Static

from netplay.relay.lan import MAX_TABLES, LanAnnouncement
from tui.app import CardApp
from tui.matchsetup import MatchOptions
from tui.screens.netstart import JoinScreen

pytestmark = pytest.mark.usefixtures("mdns_alone")

FLOOD = Path(__file__).parents[1] / "netplay" / "lan_flood.py"
GARBAGE_PORTS = (39001, 39002, 39003)
HONEST = 17959


@pytest.fixture
def flooding() -> Iterator[Callable[[], subprocess.Popen[bytes]]]:
    """Starts the hostile announcer on demand (churning, with garbage TXT records); stops it."""
    started: list[subprocess.Popen[bytes]] = []

    def start() -> subprocess.Popen[bytes]:
        started.append(subprocess.Popen(
            [sys.executable, str(FLOOD), "--seconds", "40", "--garbage", "--ghosts", "200",
             "--tables", "400", "--churn"], stdout=subprocess.DEVNULL))
        return started[-1]

    yield start
    for process in started:
        process.terminate()
        process.wait(timeout=10)


async def wait_for(pilot: Pilot[Any], condition: Callable[[], bool], what: str) -> None:
    """Let the app run until `condition()` holds: up to about 25 s, however loaded the machine."""
    for _ in range(500):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"waited in vain for {what}")


def status(screen: JoinScreen) -> str:
    return str(screen.query_one("#lan-status", Static).render())


def rows(screen: JoinScreen) -> list[list[str]]:
    table = screen.query_one("#lan-tables", DataTable)
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


def new_app() -> CardApp:
    app = CardApp(defaults=MatchOptions("zodiak", 3, "Me", "leo", seed=1, speed=0.0))
    app.lan_interfaces = ["127.0.0.1"]
    return app


async def test_the_join_screen_lists_the_honest_table_through_a_flood_and_joins_it(
        flooding: Callable[[], subprocess.Popen[bytes]]) -> None:
    honest = await LanAnnouncement.start(HONEST, "127.0.0.1", "hekata", 4, "Hana",
                                         interfaces=["127.0.0.1"])
    app = new_app()
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("j")
            screen = app.screen
            assert isinstance(screen, JoinScreen)
            await wait_for(pilot, lambda: any(f"127.0.0.1:{HONEST}" in row
                                              for row in rows(screen)), "the honest table")
            process = flooding()
            await wait_for(pilot, lambda: "more not shown" in status(screen)
                           and len(rows(screen)) == MAX_TABLES, "a full list")
            assert process.poll() is None
            shown = rows(screen)
            assert shown[0] == ["Hana", "Hekata", "4", f"127.0.0.1:{HONEST}"]  # heard first
            assert f"{MAX_TABLES} tables shown and " in status(screen)
            # Garbage announced in the TXT records is shown cleaned: printable, cut short, and
            # an unreadable seat count as "?".
            garbage = [row for row in shown if row[3].split(":")[1] in map(str, GARBAGE_PORTS)]
            assert garbage
            for host, game, seats, _ in garbage:
                assert host.isprintable() and "\x1b" not in host and len(host) <= 40
                assert game == "Z" + "z" * 39 and seats == "?"
            # Keys are handled while the flood goes on: the cursor moves, comes back, and
            # enter joins the honest table.
            table = screen.query_one("#lan-tables", DataTable)
            await pilot.press("down")
            await wait_for(pilot, lambda: table.cursor_row == 1, "the cursor to move")
            await pilot.press("up")
            await wait_for(pilot, lambda: table.cursor_row == 0, "the cursor to come back")
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.next_command is not None, "the join")
    finally:
        await honest.close()
    assert app.next_command == ["join", f"127.0.0.1:{HONEST}", "--name", "Me", "--sign", "leo"]


async def test_a_typed_address_joins_through_a_flood(
        flooding: Callable[[], subprocess.Popen[bytes]]) -> None:
    process = flooding()
    app = new_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("j")
        screen = app.screen
        assert isinstance(screen, JoinScreen)
        await wait_for(pilot, lambda: "more not shown" in status(screen), "a full list")
        assert process.poll() is None
        field = screen.query_one("#join-address", Input)
        await pilot.press("tab")
        await wait_for(pilot, lambda: field.has_focus, "the address field")
        await pilot.press(*"192.0.2.7:7777")
        await wait_for(pilot, lambda: field.value == "192.0.2.7:7777", "the typing")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.next_command is not None, "the join")
    assert app.next_command == ["join", "192.0.2.7:7777", "--name", "Me", "--sign", "leo"]
