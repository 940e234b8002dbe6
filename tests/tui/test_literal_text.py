"""Text from other parties is shown as it is (issue 11): markup is not read, controls are dropped.

A name like "[/z]" once killed the other player's app (Textual read it as markup). Here hostile
names, chat, notices and results go through the real app's screens; the app must keep running
and show them literally. The SSH end-to-end version is tests/e2e/test_serve_hostile.py.
"""

from __future__ import annotations

from netplay.seat.remote import RemoteSession
from netplay.session.events import Notice, SeatInfo, SeatsChanged
from tests.tui.conftest import fresh_app, game_screen, log_text, session_of, settle
from tests.tui.test_seats import close_table, open_table, wait_until
from tui.app import CardApp
from tui.screens.dialogs import Summary
from tui.screens.seats import SeatsScreen

HOSTILE = "[/z][b]\x1b]0;owned\x07[link=file:///etc/passwd]" + "x" * 300
SHOWN = "[/z][b]]0;owned[link=file:///etc/passwd]"


async def test_notices_results_and_seat_names_are_shown_literally() -> None:
    app = fresh_app("zodiak", 2, seed=3)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = game_screen(app)
        session = session_of(app)
        session.emit(Notice(f"the host refused: {HOSTILE}", "error"))
        session.emit(SeatsChanged((SeatInfo(HOSTILE[:80]), SeatInfo("[/]bot", bot="greedy"))))
        await wait_until(pilot, lambda: "the host refused: [/z]" in log_text(app), "the notice")
        await pilot.pause()
        drawn = app.export_screenshot().replace("&#160;", " ")
        assert app.is_running and "[/z][b]]0;owned" in drawn and "\x1b" not in drawn
        await wait_until(pilot, lambda: screen.seats[0].name == HOSTILE[:80], "the new seats")
        await pilot.pause()
        assert "[/z][b]" in app.export_screenshot().replace("&#160;", " ")  # in the players list
        await app.push_screen(Summary(f"{HOSTILE} wins the match.", f"{HOSTILE}: 120\n[b]me: 3"))
        await pilot.pause()
        assert isinstance(app.screen, Summary) and app.is_running
        await pilot.press("enter")
        await pilot.pause()
        assert app.is_running


async def test_a_hostile_name_and_chat_in_the_table_lobby() -> None:
    relay, _host, conn, serving, me = await open_table(3)
    stranger = RemoteSession(game="", url=relay.url, room=conn.room, name=HOSTILE)
    await stranger.start()
    await stranger.wait_seated()
    app = CardApp(me)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SeatsScreen), "the lobby")
        await wait_until(pilot, lambda: len([s for s in me.seats if s.name]) == 2, "the stranger")
        await stranger.chat(f"{HOSTILE} says [bold]hi[/] \x1b[2J")
        await wait_until(pilot, lambda: len(me.chat_log) == 1, "the chat line")
        assert me.chat_log[0].startswith("[/z][b]]0;owned")

        def drawn() -> str:
            return app.export_screenshot().replace("&#160;", " ")

        # The lobby polls its session: the chat reaches the screen at its next look.
        await wait_until(pilot, lambda: drawn().count("[/z][b]]0;owned") >= 2, "seat and chat drawn")
        assert app.is_running and isinstance(app.screen, SeatsScreen)
        assert "\x1b" not in drawn()
    await close_table(relay, conn, serving, stranger, me)
