"""Issue 10, item 9 in the app: a table with a turn timer counts the mover's seconds down in the
players panel, and when they run out the seat's bot moves for the player who did not."""

from __future__ import annotations

import asyncio
import re

from rich.console import Console

from netplay.relay.client import RelayConnection
from netplay.relay.launch import start_relay
from netplay.seat.remote import RemoteSession
from netplay.session.events import SeatInfo
from netplay.table.host import Host, HostConfig
from tests.tui.conftest import log_text
from tests.tui.test_seats import close_table, wait_until
from tui.app import CardApp
from tui.screens.game import GameScreen
from tui.widgets.players import Players, TableState


async def test_the_players_panel_counts_down_and_the_bot_moves_when_time_is_up() -> None:
    relay = await start_relay()
    host = Host(HostConfig(game="zodiak", players=2, bots=1, seed=5, turn_seconds=3.0,
                           require_ready=True, bot_delay=0.0), on_event=lambda _: None)
    conn = await RelayConnection.open_room(relay.url)
    serving = asyncio.create_task(host.serve(conn))
    me = RemoteSession(game="", url=relay.url, room=conn.room, name="Slow", sign="leo")
    await me.start()
    await me.wait_seated()
    assert me.turn_seconds == 3
    app = CardApp(me)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.screen.__class__.__name__ == "SeatsScreen", "lobby")
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, GameScreen), "the game screen")
        await wait_until(pilot, lambda: me.view is not None and me.view.turn == me.my_seat,
                         "this seat's turn", limit=20)
        await wait_until(pilot, lambda: any(p.state is not None and p.state.turn_left is not None
                                            for p in app.screen.query(Players)), "the countdown")
        shown = app.screen.query_one(Players).state.turn_left
        assert shown is not None and 0 <= shown <= 3
        console = Console(width=100, record=True, color_system=None)
        console.print(app.screen.query_one(Players).render())
        assert re.search(r"Slow (\(you\) )?\d+s", console.export_text())
        mine = sum(1 for effect in me.view.history if effect.seat == me.my_seat)
        await wait_until(pilot, lambda: sum(1 for e in me.view.history if e.seat == me.my_seat)
                         > mine, "the bot's move for this seat", limit=20)
        assert not me.failures  # a timed-out move is no fault of the dealer's
        # It said so: the move just appeared under the player's hand before.
        await wait_until(pilot, lambda: "your time ran out" in log_text(app), "the notice")
    await close_table(relay, conn, serving, me)


def test_the_countdown_is_shown_only_for_a_person_at_the_table() -> None:
    """An away seat's bot, like any bot, moves without waiting for the timer: a countdown
    there stood at the full time on every turn (seen over ssh)."""
    seats = (SeatInfo("Ann", "leo"), SeatInfo("Bo", "leo", connected=False),
             SeatInfo("bot 2", "leo", bot="greedy"))
    shown = []
    for turn in range(3):
        players = Players()
        players.state = TableState("zodiak", seats, my_seat=0, sizes=(7, 7, 7), turn=turn,
                                   scores=(0, 0, 0), turn_left=42)
        console = Console(width=100, record=True, color_system=None)
        console.print(players.render())
        shown.append("42s" in console.export_text())
    assert shown == [True, False, False]
