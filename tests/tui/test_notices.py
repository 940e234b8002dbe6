"""Notices on the game screen: every one in the log, few at once as pop-ups (a host sending
refusals or chat without end cannot bury the table in them), a failed check always."""

from __future__ import annotations

import argparse
import asyncio

from netplay.relay.client import RelayConnection
from netplay.relay.launch import start_relay
from netplay.seat.remote import RemoteSession
from netplay.session.events import Notice
from netplay.table.host import Host, HostConfig
from tests.tui.conftest import fresh_app, game_screen, log_text, settle
from tui.commands.join import bot_main
from tui.screens.game import TOASTS_AT_ONCE


async def test_a_flood_of_notices_is_logged_whole_but_pops_up_only_a_few() -> None:
    app = fresh_app("zodiak", 2, seed=3)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = game_screen(app)
        before = len(app._notifications)
        for i in range(50):
            screen.session.emit(Notice(f"p1: chat {i}", "chat"))
        screen.session.emit(Notice("check failed: the dealer: a test", "error", kept=True))
        await settle(pilot)
        text = log_text(app)
        assert "p1: chat 0" in text and "p1: chat 49" in text
        shown = [n for n in app._notifications][before:]
        assert len(shown) == TOASTS_AT_ONCE + 1, [n.message for n in shown]
        assert shown[-1].message == "check failed: the dealer: a test"
        assert shown[-1].severity == "error"
        assert all(n.severity == "information" for n in shown[:-1]), "chat is no error"


async def test_a_seat_named_like_a_notice_does_not_make_a_bot_seat_give_up() -> None:
    """A player (not the host) names itself "the host is away" and chats: its line reads
    "the host is away: ..." but is chat, not the connection's state; a `join --bot` seat must
    not take it for the host gone and leave the table (tui/commands/join.py, --give-up)."""
    relay = await start_relay()
    host = Host(HostConfig(game="zodiak", players=3, seed=2), on_event=lambda _: None)
    conn = await RelayConnection.open_room(relay.url)
    serving = asyncio.create_task(host.serve(conn))
    liar = RemoteSession(game="", url=relay.url, room=conn.room, name="the host is away")
    victim = RemoteSession(game="", url=relay.url, room=conn.room, name="victim")
    args = argparse.Namespace(bot="greedy", think=None, playouts=None, rematches=0,
                              give_up=1.0)
    try:
        await liar.start()
        await liar.wait_seated()
        bot = asyncio.create_task(bot_main(victim, args))
        async with asyncio.timeout(30):
            while victim.my_seat is None:
                await asyncio.sleep(0.02)
        await liar.chat("waiting for it to come back")
        async with asyncio.timeout(30):
            while not any(line.startswith("the host is away: ") for line in victim.chat_log):
                await asyncio.sleep(0.02)
        await asyncio.sleep(3.0)  # three times the bot's patience
        assert not bot.done(), "the bot seat gave up on a table that is here"
        bot.cancel()
    finally:
        await liar.close()
        await victim.close()
        serving.cancel()
        await conn.close()
        await relay.close()


async def test_a_host_refusal_saying_the_host_is_away_does_not_stop_the_player() -> None:
    """The host's refusals are its own text ("the host refused: ..."): one that says "the host
    is away" is no reason for the screen to refuse the player's moves."""
    app = fresh_app("zodiak", 2, seed=3)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = game_screen(app)
        screen.session.emit(Notice("the host refused: the host is away; waiting for it",
                                   "warning"))
        screen.session.emit(Notice("p1: the host is away; waiting", "chat"))
        await pilot.pause()
        await pilot.pause()
        assert screen.halted == ""


async def test_chat_read_in_the_lobby_is_logged_but_not_popped_up_again() -> None:
    """The lobby's chat lines wait as notices for the game screen: they popped up again as the
    game began. The lines heard before the screen are logged only; later ones pop up."""
    app = fresh_app("zodiak", 2, seed=3)
    assert app.session is not None
    app.session.chat_count = 2  # type: ignore[attr-defined]  # two lines heard in the lobby
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = game_screen(app)
        before = len(app._notifications)
        for line in ("p1: hello", "p1: ready?", "p1: good luck"):
            screen.session.emit(Notice(line, "chat"))
        await settle(pilot)
        assert "p1: hello" in log_text(app) and "p1: ready?" in log_text(app)
        shown = [n.message for n in app._notifications][before:]
        assert shown == ["p1: good luck"]


async def test_a_long_reconnect_pops_up_when_the_host_goes_and_comes_back_not_every_try() -> None:
    """Every try of a reconnect popped up over the hand; the status line already says the
    host is out of reach. The log keeps every line; a pop-up says the change of state."""
    app = fresh_app("zodiak", 2, seed=3)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = game_screen(app)
        before = len(app._notifications)
        screen.session.emit(Notice("connection lost; reconnecting…", "warning", state=True))
        for delay in (1, 2, 4, 8, 8, 8):
            screen.session.emit(Notice(f"reconnecting failed: refused; trying again in {delay} s"))
        screen.session.emit(Notice("the host is away; waiting for it to come back", "warning",
                                   state=True))
        screen.session.emit(Notice("reconnected", state=True))
        await settle(pilot)
        shown = [n.message for n in app._notifications][before:]
        assert shown == ["connection lost; reconnecting…"], shown  # "reconnected" is info
        assert "trying again in 8 s" in log_text(app)
        assert screen.halted == ""
