"""Joining from the start screen: a typo or an address where nobody hosts does not end the
program; the Join screen opens again with the address and the reason, and an address typed
while the list of LAN tables has the focus lands in the address field."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Input, Select, Static

from tests.tui.test_join_flood import wait_for
from tui.app import CardApp
from tui.commands.join import join_from_start_screen
from tui.commands.play import command_arguments
from tui.matchsetup import MatchOptions
from tui.screens.netstart import JoinFailure, JoinScreen
from tui.screens.settings import SettingsScreen

pytestmark = pytest.mark.usefixtures("mdns_alone")


def closed_port() -> int:
    """A loopback port where nothing listens (bound, then let go)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_joining_an_address_where_nobody_listens_gives_the_reason_back(
        capsys: pytest.CaptureFixture[str]) -> None:
    port = closed_port()
    status, reason = join_from_start_screen(
        command_arguments(["join", f"127.0.0.1:{port}", "--name", "Me"]))
    assert status == 1
    assert reason is not None and f"cannot reach ws://127.0.0.1:{port}/ws" in reason
    assert reason in capsys.readouterr().err  # said on the terminal too, as it happened


def test_an_address_that_is_not_one_gives_the_reason_back() -> None:
    status, reason = join_from_start_screen(command_arguments(["join", "host:notaport"]))
    assert status == 2 and reason


def start_app(failure: JoinFailure | None = None) -> CardApp:
    app = CardApp(defaults=MatchOptions("zodiak", 3, "Me", "leo", seed=1, speed=0.0),
                  join_failure=failure)
    app.lan_interfaces = ["127.0.0.1"]
    return app


async def open_screen(pilot: Pilot[Any], key: str, kind: type[Screen[Any]]) -> Screen[Any]:
    """Press `key` on the start screen and return the screen of `kind` it opens."""
    await pilot.press(key)
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, kind), kind.__name__)
    return pilot.app.screen


async def test_the_start_screen_opens_the_join_screen_again_with_the_reason() -> None:
    failure = JoinFailure("127.0.0.1:1", "cannot reach ws://127.0.0.1:1/ws: connection refused")
    app = start_app(failure)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, JoinScreen), "the Join screen")
        screen = app.screen
        field = screen.query_one("#join-address", Input)
        await wait_for(pilot, lambda: field.has_focus, "the address field")
        assert field.value == "127.0.0.1:1"
        error = str(screen.query_one("#join-error", Static).render())
        assert error == f"Could not join 127.0.0.1:1: {failure.reason}"
        await pilot.press("end", "backspace", *"7777", "enter")
        await wait_for(pilot, lambda: app.next_command is not None, "the join")
    assert app.next_command == ["join", "127.0.0.1:7777", "--name", "Me", "--sign", "leo"]


async def test_an_address_typed_on_the_list_goes_to_the_address_field() -> None:
    app = start_app()
    async with app.run_test(size=(80, 24)) as pilot:
        field = (await open_screen(pilot, "j", JoinScreen)).query_one("#join-address", Input)
        await pilot.press(*"10.0.0.5:7777")
        await wait_for(pilot, lambda: field.value == "10.0.0.5:7777", "the typing")
        assert field.has_focus


async def test_the_settings_screen_takes_typing_at_once() -> None:
    app = start_app()
    async with app.run_test(size=(80, 24)) as pilot:
        settings = await open_screen(pilot, "s", SettingsScreen)
        field = settings.query_one("#set-name", Input)
        await wait_for(pilot, lambda: field.has_focus, "the name field")
        await pilot.press("ctrl+a", "ctrl+k", *"Zoe")
        await wait_for(pilot, lambda: field.value == "Zoe", "the typing")
        signs = settings.query_one("#set-sign", Select)
        assert ("Leo (K♣)", "leo") in [(str(label), value) for label, value in signs._options]
