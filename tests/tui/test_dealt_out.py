"""A person dealt out of a round by mental poker (away when it was dealt again, FAIRNESS.md A8)
sees why on the game screen: their hand says so, and their seat's turns are the host's bot's,
not theirs. The real app under `run_test`, a real relay and host on 127.0.0.1."""

from __future__ import annotations

import asyncio

from netplay.relay.client import RelayConnection
from netplay.relay.launch import start_relay
from netplay.seat.remote import RemoteSession
from netplay.table.host import Host, HostConfig
from tests.netplay.test_mental_table import hold_reconnection, seat_to_move, until
from tui.app import CardApp
from tui.screens.game import GameScreen
from tui.widgets.hand import CardRow

from .test_seats import wait_until


async def test_a_person_dealt_out_is_told_so_and_not_offered_the_seats_turns() -> None:
    events: list[str] = []
    # The bots think 1 s a move: the deal made again is still in play when the client is back.
    host = Host(HostConfig(game="zodiak", players=2, bots=1, seed=3, bot_delay=1.0, mental=True,
                           away_timeout=2.0), on_event=events.append)
    relay = await start_relay()
    conn = await RelayConnection.open_room(relay.url)
    serving = asyncio.create_task(host.serve(conn))
    me = RemoteSession(game="", url=relay.url, room=conn.room, name="Away")
    app = CardApp(me)
    try:
        await me.start()
        await me.wait_seated()
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, GameScreen), "the game")
            screen = app.screen
            assert isinstance(screen, GameScreen)
            seat = me.my_seat
            await until(lambda: seat_to_move(host, seat), "this seat's turn, all else sent")
            await wait_until(pilot, lambda: screen.my_turn, "the turn on this screen")
            back = hold_reconnection(me)
            assert me._conn is not None
            await me._conn.close()  # away past the host's patience: dealt out
            await until(lambda: any("voided" in line for line in events), "dealt out", 30.0)
            back.set()
            hand = screen.query_one("#hand", CardRow)
            await wait_until(pilot, lambda: me.failures or hand.empty_text.startswith(
                "Dealt out of this round: the host's bot plays your seat"),
                "the deal made again on screen", limit=30)
            assert not me.failures, me.failures
            assert not me.plays_own_seat() and me.mental is not None
            assert me.mental.first_epoch >= 1
            assert screen.waiting_status(seat) == "The host's bot plays your seat this round…"
            view = me.view
            assert view is not None
            if view.turn == seat:
                assert not screen.my_turn
    finally:
        await me.close()
        serving.cancel()
        await conn.close()
        await relay.close()
