"""The table lobby of a networked match, on a real relay and host: seats, bots, ready, chat, start."""

from __future__ import annotations

import asyncio
import secrets

from textual.app import App
from textual.widgets import RichLog, Static

from netplay.relay.client import RelayConnection
from netplay.relay.launch import start_relay
from netplay.seat.bot_player import play_as_bot
from netplay.seat.remote import CHAT_KEPT, RemoteSession
from netplay.session.events import MAX_QUEUED_NOTES, SeatInfo
from netplay.table.host import Host, HostConfig
from tests.netplay.test_prepared_table import until
from tests.tui.test_footer_fits import footer_keys
from tui.app import CardApp
from tui.screens.dialogs import ConfirmQuit
from tui.screens.game import GameScreen
from tui.screens.seats import SeatsScreen
from tui.widgets.gamelog import GameLog


async def wait_until(pilot, check, what: str, limit: float = 15.0) -> None:
    deadline = asyncio.get_running_loop().time() + limit
    while not check():
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.05)


async def open_table(players: int, mental: bool = False) -> tuple:
    relay = await start_relay()
    owner = secrets.token_hex(16)
    host = Host(HostConfig(game="zodiak", players=players, seed=2, owner_secret=owner,
                           require_ready=True, mental=mental), on_event=lambda _: None)
    conn = await RelayConnection.open_room(relay.url)
    serving = asyncio.create_task(host.serve(conn))
    me = RemoteSession(game="", url=relay.url, room=conn.room, name="Hosty", sign="leo",
                       owner=bytes.fromhex(owner))
    await me.start()
    await me.wait_seated()
    return relay, host, conn, serving, me


async def close_table(relay, conn, serving, *sessions) -> None:
    for s in sessions:
        await s.close()
    serving.cancel()
    await conn.close()
    await relay.close()


async def test_host_seats_a_bot_says_ready_and_the_match_starts() -> None:
    """docs/DESIGN.md, "A move, end to end", starts here: the lobby fills, everyone is ready, the game opens."""
    relay, host, conn, serving, me = await open_table(3)
    friend = RemoteSession(game="", url=relay.url, room=conn.room, name="Friend")
    await friend.start()
    await friend.wait_seated()
    friend_plays = asyncio.create_task(play_as_bot(friend, "greedy"))  # says ready at once
    app = CardApp(me)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SeatsScreen), "the lobby")
        await wait_until(pilot, lambda: len([s for s in me.seats if s.name]) == 2, "the friend")
        await pilot.press("h", "i", "enter")
        await wait_until(pilot, lambda: me.chat_log == ["Hosty: hi"], "the chat line")
        await pilot.press("f3")
        await wait_until(pilot, lambda: any(s.bot for s in me.seats), "the bot")
        await pilot.press("f6")  # issue 14: the bot's kind cycles greedy -> random -> expert
        await wait_until(pilot, lambda: any(s.bot == "random" for s in me.seats), "a random bot")
        await pilot.press("f6")
        await wait_until(pilot, lambda: any(s.bot == "expert" for s in me.seats), "the expert")
        assert not host.started, "a person who is not ready holds the start"
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, GameScreen), "the game screen")
        assert host.started and [bool(s.name) for s in me.seats] == [True, True, True]
        await wait_until(pilot, lambda: app.screen.view is not None, "the first deal")
        await pilot.pause(0.3)
    friend_plays.cancel()
    await close_table(relay, conn, serving, me, friend)


async def test_only_the_host_seats_bots_or_starts() -> None:
    """A seat without the owner secret cannot seat a bot or start; the host refuses, nothing changes."""
    relay, host, conn, serving, me = await open_table(3)
    other = RemoteSession(game="", url=relay.url, room=conn.room, name="Other", owner=b"guess")
    await other.start()
    await other.wait_seated()
    await other.set_bot(2, "greedy")
    await other.start_match()
    await other.set_ready(True)
    # The host reads one connection's messages in order: once the ready counts, the two
    # before it were refused.
    await until(lambda: host.seats[1].ready, "the ready")
    assert host.seats[2].bot is None and not host.started
    assert not other.is_owner and me.is_owner
    await me.set_bot(2, "random")
    await until(lambda: host.seats[2].bot == "random", "the host's bot seated")
    await me.set_bot(2, None)
    await until(lambda: not host.seats[2].taken, "the host's bot unseated")
    await close_table(relay, conn, serving, me, other)


async def test_the_lobby_shows_the_table_fingerprint_every_seat_computes() -> None:
    """FAIRNESS.md A10: the same digits on every screen when nobody is in the middle."""
    relay, host, conn, serving, me = await open_table(3)
    friend = RemoteSession(game="", url=relay.url, room=conn.room, name="Friend",
                           expect=host.identity.public.fingerprint())
    await friend.start()
    await friend.wait_seated()
    app = CardApp(me)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, SeatsScreen), "the lobby")
            await wait_until(pilot, lambda: me.fingerprint() == friend.fingerprint() != "",
                             "both seats' keys")
            await wait_until(pilot, lambda: me.fingerprint() in str(
                app.screen.query_one("#seats-help").render()), "the fingerprint on screen")
    finally:
        await close_table(relay, conn, serving, me, friend)


async def test_the_lobby_shows_round_ones_deck_being_shuffled_and_then_ready() -> None:
    """FAIRNESS.md A8, "Lobby deck": once every seat is taken, the lobby says where round 1's deck stands."""
    relay, _host, conn, serving, me = await open_table(3, mental=True)
    friend = RemoteSession(game="", url=relay.url, room=conn.room, name="Friend")
    await friend.start()
    await friend.wait_seated()
    friend_plays = asyncio.create_task(play_as_bot(friend, "greedy"))  # says ready at once
    app = CardApp(me)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, SeatsScreen), "the lobby")
            help_text = app.screen.query_one("#seats-help")
            await wait_until(pilot, lambda: "Table fingerprint" in str(help_text.render()),
                             "the lobby's text")
            assert "Round 1's deck" not in str(help_text.render()), "no deck while a seat is empty"
            assert me.first_deck_line() == ""
            await pilot.press("f3")
            ready_line = "Round 1's deck: shuffled and checked, ready to deal."
            # The friend checks the deck on its own: it may come a moment after this screen.
            await wait_until(pilot, lambda: ready_line in str(help_text.render())
                             and friend.first_deck_line() == ready_line,
                             "the deck ready on screen and at the friend")
            # At 80x24 the whole lobby fits: the chat and its input stay on screen.
            assert app.screen.query_one("#say").region.bottom <= 23
            await pilot.press("f2")
            await wait_until(pilot, lambda: isinstance(app.screen, GameScreen), "the game")
            assert me.first_deck_line() == "", "the line is the lobby's only"
            await wait_until(pilot, lambda: app.screen.view is not None, "the first deal")
            await pilot.pause(0.3)  # leave once the game screen is whole (its header's title)
    finally:
        friend_plays.cancel()
        await close_table(relay, conn, serving, me, friend)


async def test_a_host_flooding_the_lobby_with_chat_keeps_the_client_bounded() -> None:
    """A host that lies sends 3,000 chat lines into the lobby, where nothing drains the session's
    events: the client keeps the last lines (CHAT_KEPT to twice that), at most MAX_QUEUED_NOTES
    notices wait, and the game screen then says how many it left out."""
    relay, host, conn, serving, me = await open_table(3)
    friend = RemoteSession(game="", url=relay.url, room=conn.room, name="Friend")
    await friend.start()
    await friend.wait_seated()
    friend_plays = asyncio.create_task(play_as_bot(friend, "greedy"))
    app = CardApp(me)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, SeatsScreen), "the lobby")
            lines = 3 * MAX_QUEUED_NOTES
            for i in range(lines):  # the real host's own signed chat, as a lying host sends it
                await host._broadcast("chat", seat=0, name="Hosty", text=f"line {i}")
            await wait_until(pilot, lambda: me.chat_count == lines, "every chat line", limit=120)
            assert CHAT_KEPT <= len(me.chat_log) <= 2 * CHAT_KEPT
            assert me.chat_log[-1] == f"Hosty: line {lines - 1}"
            assert me.queue.qsize() <= MAX_QUEUED_NOTES + 20  # the other events of the lobby
            chat = app.screen.query_one("#chat", RichLog)
            await wait_until(pilot, lambda: chat.lines and f"line {lines - 1}" in chat.lines[-1].text,
                             "the last line on screen", limit=60)
            assert len(chat.lines) <= CHAT_KEPT
            await pilot.press("f3", "f2")
            await wait_until(pilot, lambda: isinstance(app.screen, GameScreen), "the game",
                             limit=60)
            screen = app.screen
            # Both logs (wide and narrow layouts) get every line; neither exists until the
            # screen has composed, which can come after it is the app's screen.
            await wait_until(pilot, lambda: any("left out" in line.text
                                                for log in screen.query(GameLog)
                                                for line in log.lines),
                             "the count of notices left out", limit=60)
            # Leave only once the game screen is whole: its header's title is set after mount.
            await wait_until(pilot, lambda: screen.view is not None, "the first deal", limit=60)
            await pilot.pause(0.3)
    finally:
        friend_plays.cancel()
        await close_table(relay, conn, serving, me, friend)


def unstarted_seat(*seats: SeatInfo) -> RemoteSession:
    """Seat 0 of a table with these seats, never connected: the screen reads only what it holds."""
    session = RemoteSession(game="zodiak", url="ws://127.0.0.1:9/ws", room="ABCD2345EF",
                            name="Me")
    session.my_seat = 0
    session.seats = seats
    return session


class LobbyOf(App[None]):
    """An app showing only the lobby of `session`."""

    def __init__(self, session: RemoteSession) -> None:
        super().__init__()
        self.session = session

    def on_mount(self) -> None:
        self.push_screen(SeatsScreen(self.session))


async def test_a_seat_back_in_a_match_under_way_is_told_so_not_to_get_ready() -> None:
    """A seat that comes back mid-round at a mental-poker table (a new key) waits in the lobby
    for the next deal: the lobby said "Starts when ... ready (F2)" and offered F2; it now says
    the match is under way, and offers no F2 (the lobby's `started`)."""
    session = unstarted_seat(SeatInfo("Me", "leo"), SeatInfo("bot 1", "leo", "greedy"))
    session.table_started = True
    app = LobbyOf(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SeatsScreen), "the lobby")
        await wait_until(pilot, lambda: "under way" in str(
            app.screen.query_one("#seats-help", Static).render()), "the words")
        help_text = str(app.screen.query_one("#seats-help", Static).render())
        keys = footer_keys(app)
        assert "Ready" not in keys and "(F2)" not in help_text
        assert "you are dealt in at the next round" in help_text


async def test_the_hosts_seat_back_in_a_match_under_way_is_offered_no_lobby_changes() -> None:
    """A resumed host's own seat waits in the lobby for the next deal: F3 to F7 (bots, start,
    house rules) did nothing there, as the host refuses them once the match is under way, yet
    the footer offered them."""
    session = unstarted_seat(SeatInfo("Me", "leo"), SeatInfo("bot 1", "leo", "greedy"))
    session.is_owner = True
    session.table_started = True
    app = LobbyOf(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: "under way" in str(
            app.screen.query_one("#seats-help", Static).render()), "the words")
        keys = footer_keys(app)
        for label in ("Add bot", "Drop bot", "Start", "Bot kind", "House"):
            assert label not in keys, keys
        assert "F5" not in str(app.screen.query_one("#seats-help", Static).render())


async def test_seats_that_saw_the_lobby_wait_are_told_the_deal_is_coming() -> None:
    """Both players pressed F2 and the match began: while the first deal was made (a few
    seconds with mental poker) they read "you are dealt in at the next round", which is the
    line for a seat back in a match under way."""
    session = unstarted_seat(SeatInfo("Me", "leo"), SeatInfo("Bo", "leo"))
    app = LobbyOf(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SeatsScreen), "the lobby")
        await wait_until(pilot, lambda: "(F2)" in str(
            app.screen.query_one("#seats-help", Static).render()), "the lobby waiting")
        session.table_started = True  # everyone is ready: the host starts the match
        await wait_until(pilot, lambda: "cards are being dealt" in str(
            app.screen.query_one("#seats-help", Static).render()), "the deal coming")
        assert "next round" not in str(app.screen.query_one("#seats-help", Static).render())


async def test_the_hosts_escape_in_the_lobby_asks_before_closing_the_table() -> None:
    """Escape in the host's lobby closed the table for everyone at once."""
    relay, _host, conn, serving, me = await open_table(2)
    app = CardApp(me)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, SeatsScreen), "the lobby")
            await pilot.press("escape")
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmQuit), "the question")
            assert app.screen.question.startswith("Close the table? You are the host")
            await pilot.press("n")
            await wait_until(pilot, lambda: isinstance(app.screen, SeatsScreen), "the lobby again")
            assert app.is_running and not me.closed
    finally:
        await close_table(relay, conn, serving, me)
