"""The SSH lobby's new-table dialog: its keys keep answering, and cancelling it starts nothing
that could cancel a seat.

Opening a table and taking a seat share one exclusive worker group ("sit"), so starting one
cancels the other. The dialog's cancel used to start the create worker too (with no table),
which cancelled a seat the player had asked for just before. Real parts: the server's app,
its lobby and tables client, against the real tables API on loopback."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from rich.text import Text
from textual import events
from textual.pilot import Pilot
from textual.widgets import Markdown, Select, Static

from engine.house import HouseRules
from netplay.table.service import TableLimits, TablesClient, TablesService, add_table_routes
from tests.netplay.test_tables_per_visitor import tables_api
from tests.tui.test_footer_fits import footer_keys
from tests.tui.test_issue13 import screen_text
from tests.tui.test_seats import wait_until
from tui.app import CardApp
from tui.screens.game import GameScreen
from tui.screens.help import HelpScreen
from tui.screens.lobby import LobbyScreen, NewTableDialog
from tui.screens.settings import SettingsScreen
from tui.settings import load_stats, settings_path, stats_path
from tui.ssh_entry import ServerApp
from tui.widgets.bars import KeyLine


@pytest.fixture
async def tables_url() -> AsyncIterator[str]:
    """A real tables API on loopback, as `cardtui serve` runs it for its sessions."""
    api = web.Application()
    add_table_routes(api, TablesService(TableLimits()))
    runner = web.AppRunner(api, shutdown_timeout=0.5)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def test_cancelling_the_new_table_dialog_starts_no_seat_or_table_worker(
        tables_url: str) -> None:
    app = ServerApp(TablesClient(tables_url), "Me")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, LobbyScreen)
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, NewTableDialog)
        # Its own footer: the lobby's said n, ⏎ Join and q, none of which the dialog takes.
        keys = footer_keys(app)
        assert "Create" in keys and "Cancel" in keys and "Join" not in keys, keys
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, LobbyScreen)
        started = [w.name for w in app.workers if w.group == "sit"]
        assert started == [], f"cancelling the dialog started {started}"


async def test_the_lobby_has_help_on_question_mark(tables_url: str) -> None:
    """An SSH visitor who never played reads how to play both games before sitting down."""
    app = ServerApp(TablesClient(tables_url), "Me")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert " ? Help " in app.screen.query_one(KeyLine).render().plain
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        how = app.screen.query_one("#how-text", Markdown).source
        assert "## Zodiak" in how and "## Hekata" in how
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, LobbyScreen)


async def open_dialog(pilot: Pilot[None], app: ServerApp) -> NewTableDialog:
    """Press n in the lobby and return the dialog it opens."""
    await pilot.pause()
    await pilot.press("n")
    await pilot.pause()
    dialog = app.screen
    assert isinstance(dialog, NewTableDialog)
    return dialog


def chosen(dialog: NewTableDialog) -> tuple[object, ...]:
    """The dialog's four choices and the line that describes them."""
    values = tuple(dialog.query_one(f"#{name}", Select).value
                   for name in ("game", "players", "bots", "kind"))
    return (*values, str(dialog.query_one("#new-table-about", Static).render()))


async def test_the_dialogs_keys_cycle_every_choice_and_it_keeps_answering(
        tables_url: str) -> None:
    """g, p, b and k in any order: each key changes its choice once. The dialog used to set its
    choices again on each change it made itself, for ever, and then took no more keys."""
    app = ServerApp(TablesClient(tables_url), "Me")
    async with app.run_test(size=(100, 30)) as pilot:
        dialog = await open_dialog(pilot, app)
        steps = [
            ("g", ("hekata", 2, 1, "greedy", "Hekata for 2: you, 1 greedy bot.")),
            ("p", ("hekata", 4, 1, "greedy",
                   "Hekata for 4: you and 2 more people, 1 greedy bot.")),
            ("k", ("hekata", 4, 1, "random",
                   "Hekata for 4: you and 2 more people, 1 random bot.")),
            ("k", ("hekata", 4, 1, "expert",
                   "Hekata for 4: you and 2 more people, 1 expert bot.")),
            ("b", ("hekata", 4, 2, "expert",
                   "Hekata for 4: you and 1 more person, 2 expert bots.")),
            ("g", ("zodiak", 4, 2, "expert",
                   "Zodiak for 4: you and 1 more person, 2 expert bots.")),
            ("p", ("zodiak", 2, 1, "expert", "Zodiak for 2: you, 1 expert bot.")),
            ("k", ("zodiak", 2, 1, "greedy", "Zodiak for 2: you, 1 greedy bot.")),
        ]
        for key, expected in steps:
            await pilot.press(key)
            await pilot.pause()
            assert chosen(dialog) == expected, key


async def test_choosing_players_in_the_drop_down_offers_the_bots_that_leave_a_seat(
        tables_url: str) -> None:
    app = ServerApp(TablesClient(tables_url), "Me")
    async with app.run_test(size=(100, 30)) as pilot:
        dialog = await open_dialog(pilot, app)
        dialog.query_one("#players", Select).focus()
        await pilot.press("space", "down", "down", "enter")  # open; 2 -> 3 -> 4 players
        await pilot.pause()
        assert chosen(dialog)[:3] == ("zodiak", 4, 1)
        bots = dialog.query_one("#bots", Select)
        bots.focus()
        await pilot.press("space", "down", "down", "enter")
        await pilot.pause()
        assert chosen(dialog) == ("zodiak", 4, 3, "greedy", "Zodiak for 4: you, 3 greedy bots.")


async def test_an_error_shows_the_visitor_a_sentence_and_the_operator_the_traceback(
        tables_url: str, capfd: pytest.CaptureFixture[str]) -> None:
    """Textual prints an error's traceback, with its local variables, on the terminal: for a
    server's session that is a stranger's terminal. It goes to the server's log instead."""
    operator_reads, operator_log = os.pipe()
    app = ServerApp(TablesClient(tables_url), "Me", operator_log=operator_log)
    secret = "a local variable the visitor must not see"

    def fail() -> None:
        raise RuntimeError(secret)

    with pytest.raises(RuntimeError):
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            app.call_later(fail)
            await pilot.pause()
    os.close(operator_log)
    with os.fdopen(operator_reads) as log:
        logged = log.read()
    assert "the session of 'Me' stopped at an error" in logged
    assert "Traceback" in logged and secret in logged
    shown = " ".join(capfd.readouterr().err.split())  # the app's terminal, rewrapped
    assert "this session stopped at an error (RuntimeError)" in shown
    assert "Traceback" not in shown and secret not in shown


async def test_a_visitors_matches_stay_out_of_the_operators_statistics(
        tables_url: str, data_dir: Path) -> None:
    """A server's sessions share its statistics file: they neither change it nor race each
    other to rewrite it (an SSH visitor's win was counted as the operator's)."""
    app = ServerApp(TablesClient(tables_url), "Me")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        app.record_result("zodiak", True)
        app.record_trick(300)
    assert not stats_path().exists()
    CardApp(None).record_result("zodiak", True)  # the local app's statistics are kept
    assert load_stats().won == {"zodiak": 1}


async def test_house_rules_typed_just_before_enter_are_the_tables(tables_url: str) -> None:
    """Enter is the dialog's priority key, acted on before keys still waiting for the house
    field: typed fast over ssh, `target=1` and enter opened a table by the rules as written
    (or said "'t' is not a house rule"). Keys posted at once, as a fast terminal sends them."""
    async with tables_api(TableLimits()) as (service, loopback, _opened):
        app = ServerApp(TablesClient(loopback), "Me")
        async with app.run_test(size=(100, 30)) as pilot:
            await open_dialog(pilot, app)
            await pilot.press("h")
            for key in [*"target=1", "enter"]:
                app.post_message(events.Key(key, "\r" if key == "enter" else key))
            await wait_until(pilot, lambda: bool(service.tables), "the new table", limit=20)
            (table,) = service.tables.values()
            assert table.host.config.house == HouseRules(target=1)
            # Leave only once the table's screen is whole: its header's title is set after
            # mount, and an app stopped between the two fails in the header.
            await wait_until(pilot, lambda: isinstance(app.screen, GameScreen)
                             and app.screen.view is not None, "the table's screen", limit=20)
            await pilot.pause(0.3)


async def test_a_failure_of_the_terminals_input_is_told_the_same_way(
        tables_url: str, capfd: pytest.CaptureFixture[str]) -> None:
    """Textual's driver panics with a traceback when its input thread fails (a key it could not
    read): the visitor gets the sentence there too, the operator the traceback."""
    operator_reads, operator_log = os.pipe()
    app = ServerApp(TablesClient(tables_url), "Me", operator_log=operator_log)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        app.panic(Text("ValueError in the input thread, /root/secret.py"))
    os.close(operator_log)
    with os.fdopen(operator_reads) as log:
        assert "/root/secret.py" in log.read()
    shown = " ".join(capfd.readouterr().err.split())
    assert "this session stopped at an error (reading the terminal)" in shown
    assert "secret" not in shown


async def test_a_visitor_chooses_a_sign_for_the_session_and_sits_with_it(
        tables_url: str, data_dir: Path) -> None:
    """s in the lobby opens the settings for this session (no name: it is the SSH login; no
    statistics: they are the operator's; nothing saved); the sign chosen is the seat's."""
    async with tables_api(TableLimits()) as (service, loopback, _opened):
        app = ServerApp(TablesClient(loopback), "Me")
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            assert " s Sign, settings " in app.screen.query_one(KeyLine).render().plain
            await pilot.press("s")
            await pilot.pause()
            settings = app.screen
            assert isinstance(settings, SettingsScreen)
            assert str(settings.query_one("#settings-title", Static).render()) == (
                "Settings (for this session)")
            assert not settings.query("#set-name") and not settings.query("#stats")
            settings.query_one("#set-sign", Select).value = "leo"
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert isinstance(app.screen, LobbyScreen)
            title = str(app.screen.query_one("#lobby-title", Static).render())
            assert title.endswith("you are Me, Leo (for Zodiak)"), title
            assert app.settings.sign == "leo" and not settings_path().exists()
            await open_dialog(pilot, app)
            await pilot.press("enter")  # Zodiak for 2: the visitor and a bot
            await wait_until(pilot, lambda: isinstance(app.screen, GameScreen)
                             and app.screen.view is not None, "the table's screen", limit=20)
            (table,) = service.tables.values()
            me = app.screen.session.my_seat
            assert table.host.seats[me].sign == "leo"
            await pilot.pause(0.3)


async def test_an_ascii_session_sees_the_lobby_and_its_dialog_in_ascii(tables_url: str) -> None:
    """--ascii (or the card style chosen): the lobby's dashes, ellipses and enter key in words
    (seen over ssh: the lobby still drew them)."""
    app = ServerApp(TablesClient(tables_url), "Me", ascii_only=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        lobby = screen_text(app)
        await open_dialog(pilot, app)
        dialog = screen_text(app)
        for text in (lobby, dialog):
            assert text.isascii(), sorted({ch for ch in text if not ch.isascii()})
        assert "you are Me" in lobby and "enter joins" in lobby and "Create (enter)" in dialog
