"""A rematch at a networked table with the app (issue 13, "a rematch with the same seats"), on
a real relay and host: the host's r offers it, a joined seat's r accepts it, the bot stays, and
the same screens play the new match from zero."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

import tui.app
from engine.bots import GreedyBot
from engine.house import HouseRules
from netplay.relay.client import RelayConnection
from netplay.relay.launch import start_relay
from netplay.seat.remote import RemoteSession
from netplay.table.host import Host, HostConfig
from tests.tui.test_footer_fits import footer_keys
from tui.app import CardApp
from tui.screens.dialogs import ConfirmQuit, MatchResult, Summary
from tui.screens.game import GameScreen

from .test_seats import wait_until


async def play_for(session: RemoteSession, think: float = 0.0) -> None:
    """Move for `session`'s seat with the greedy bot whenever it is its turn (the app watches),
    after `think` seconds."""
    bot, done = GreedyBot(), None
    while True:
        await asyncio.sleep(0.02)
        view = session.view
        if (view is None or view.round_over or view.turn != session.my_seat
                or (session.round_number, len(view.history)) == done):
            continue
        done = (session.round_number, len(view.history))
        await asyncio.sleep(think)
        await session.submit(bot.choose(view.view(session.my_seat)))


TableOpener = Callable[[HostConfig], Awaitable[tuple[Host, str, str]]]


@pytest.fixture
async def open_table() -> AsyncIterator[TableOpener]:
    """Opens a hosted table on a relay of its own: the host, the relay's URL and the room;
    shut down after the test (which closes its sessions first)."""
    opened: list[tuple[Any, RelayConnection, asyncio.Task[None]]] = []

    async def start(config: HostConfig) -> tuple[Host, str, str]:
        relay = await start_relay()
        host = Host(config, on_event=lambda _: None)
        conn = await RelayConnection.open_room(relay.url)
        opened.append((relay, conn, asyncio.create_task(host.serve(conn))))
        return host, relay.url, conn.room

    yield start
    for relay, conn, serving in opened:
        serving.cancel()
        await conn.close()
        await relay.close()


async def test_the_host_offers_a_rematch_a_joined_seat_accepts_and_the_bot_stays(open_table: TableOpener) -> None:
    owner = secrets.token_hex(16)
    host, url, room = await open_table(HostConfig(
        game="zodiak", players=3, bots=1, seed=4, owner_secret=owner, require_ready=True,
        rematch_seconds=60, house=HouseRules(target=1)))
    me = RemoteSession(game="", url=url, room=room, name="Hosty", sign="leo",
                       owner=bytes.fromhex(owner))
    friend = RemoteSession(game="", url=url, room=room, name="Friend")
    for session in (me, friend):
        session.after_match = True
        await session.start()
        await session.wait_seated()
    players = [asyncio.create_task(play_for(s)) for s in (me, friend)]
    await friend.set_ready(True)
    await me.set_ready(True)
    app = CardApp(me)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, (GameScreen, Summary,
                                                                    MatchResult)), "the game")
            await wait_until(pilot, lambda: isinstance(app.screen, MatchResult), "the result",
                             limit=60)
            screen = app.screen_stack[-2]
            assert isinstance(screen, GameScreen) and screen.match_over
            assert not CardApp(friend).can_rematch(), "a joined seat waits for the offer"
            await pilot.press("r")  # the host offers
            await wait_until(pilot, lambda: friend.rematch_offered, "the offer at the friend")
            assert not host.started, "the friend has not accepted yet"
            assert host.seats[2].bot is not None, "the bot keeps its seat"
            assert CardApp(friend).can_rematch()  # its result now offers r: it accepts
            await friend.set_ready(True)  # what the friend's r does (app.rematch)
            # Conditions that stay true: the rematch may end before the next look at it.
            await wait_until(pilot, lambda: host.round_base >= 1 and host.started
                             and me.view is not None, "the new match")
            # The table numbers the rematch's rounds on; the screen counts them from 1.
            await wait_until(pilot, lambda: screen.round_number >= 1 and screen.rounds_before >= 1,
                             "round 1 of the new match on screen")
            assert sum(host.match.scores) == 0 or host.match.rounds_played <= 1
            assert [s.name for s in me.seats] == ["Hosty", "Friend", "bot 2"]
            assert host.round_base >= 1 and me.round_number > host.round_base
            await wait_until(pilot, lambda: isinstance(app.screen, MatchResult), "the 2nd end",
                             limit=60)
            # Its notices too: the audit of its first round is "round 1", as the title says.
            lines = list(screen.log_lines)
            begun = next(i for i, line in enumerate(lines) if "A new match with the same" in line)
            audits = [line for line in lines[begun:] if " audited: " in line]
            assert audits and audits[0].startswith("round 1 audited: "), lines[begun:]
            await pilot.pause(0.3)
    finally:
        for task in players:
            task.cancel()
        for session in (me, friend):
            await session.close()


async def ann_and_bo_at_a_server_table(open_table: TableOpener, bots: int = 1,
                                       mental: bool = False) -> tuple[
        Host, RemoteSession, RemoteSession, list[asyncio.Task[None]]]:
    """A table like `cardtui serve`'s (any seat may offer a rematch; a match to 1 point): Ann
    and Bo seated, ready and played by `play_for`, and `bots` bots; the host, Ann, Bo, their
    tasks."""
    host, url, room = await open_table(HostConfig(
        game="zodiak", players=2 + bots, bots=bots, seed=4, owner_secret=secrets.token_hex(16),
        require_ready=True, rematch_seconds=60, rematch_by_any_seat=True,
        house=HouseRules(target=1), mental=mental))
    ann = RemoteSession(game="", url=url, room=room, name="Ann", sign="leo")
    bo = RemoteSession(game="", url=url, room=room, name="Bo")
    for session in (ann, bo):
        session.after_match = True
        await session.start()
        await session.wait_seated()
    players = [asyncio.create_task(play_for(s)) for s in (ann, bo)]
    for session in (bo, ann):
        await session.set_ready(True)
    return host, ann, bo, players


async def test_at_a_server_table_any_seat_offers_the_rematch_with_its_r(open_table: TableOpener) -> None:
    """A table like `cardtui serve`'s (no owner plays there): a joined seat's r offers the
    rematch, the other seat accepts, and the same seats play again."""
    host, me, other, players = await ann_and_bo_at_a_server_table(open_table)
    app = CardApp(me)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, MatchResult), "the result",
                             limit=60)
            assert not me.is_owner and app.can_rematch()
            await pilot.press("r")  # Ann, no owner, offers
            await wait_until(pilot, lambda: other.rematch_offered, "the offer at the other")
            assert not host.started and host.seats[0].ready and not host.seats[1].ready
            await other.set_ready(True)
            await wait_until(pilot, lambda: host.started and host.round_base >= 1, "the rematch")
            assert [s.name for s in me.seats] == ["Ann", "Bo", "bot 2"]
            await wait_until(pilot, lambda: host.finished, "the rematch's end", limit=60)
            await wait_until(pilot, lambda: isinstance(app.screen, MatchResult), "its result",
                             limit=60)
            await pilot.pause(0.3)
    finally:
        for task in players:
            task.cancel()
        for session in (me, other):
            await session.close()


async def test_the_result_says_who_offers_the_rematch(open_table: TableOpener) -> None:
    """The offer was said only in the log, which the result dialog hides at 80x24: the result,
    shown again with its Rematch button, now says who offers and that r accepts."""
    _host, offerer, me, players = await ann_and_bo_at_a_server_table(open_table)
    app = CardApp(me)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, MatchResult), "the result",
                             limit=60)
            await wait_until(pilot, lambda: offerer.result is not None, "Ann's end")
            await offerer.offer_rematch()
            await wait_until(pilot, lambda: isinstance(app.screen, MatchResult)
                             and "offers a rematch" in app.screen.body, "the result, again")
            assert app.screen.body.startswith(
                "Ann offers a rematch with the same seats: r accepts it.\n")
            assert app.screen.rematch
    finally:
        for task in players:
            task.cancel()
        for session in (offerer, me):
            await session.close()


class ShowsResults(CardApp):
    """The app, counting the round results it shows."""

    CSS_PATH = str(Path(tui.app.__file__).with_name("cardtui.tcss"))  # not beside this test
    results_shown = 0

    def push_screen(self, screen: Any, *args: Any, **kwargs: Any) -> Any:
        self.results_shown += isinstance(screen, Summary)
        return super().push_screen(screen, *args, **kwargs)


async def test_a_round_result_left_open_closes_when_the_table_deals_the_next_round(open_table: TableOpener) -> None:
    """At a networked table the next round starts when the table starts it: a player still
    looking at the last round's result sees the new round (and their turn) come, where the
    dialog used to hold every event back until they pressed enter, and their turns ran out
    behind it. It closes at the player's turn (the turn's clock runs)."""
    _, url, room = await open_table(HostConfig(game="zodiak", players=2, seed=4,
                                               require_ready=True, house=HouseRules(target=500)))
    me = RemoteSession(game="", url=url, room=room, name="Me", sign="leo")
    friend = RemoteSession(game="", url=url, room=room, name="Friend")
    for session in (me, friend):
        await session.start()
        await session.wait_seated()
    # The person takes a moment at each turn, as people do: the match lasts, and the screen is
    # seen at their turn between one round's result and the next.
    players = [asyncio.create_task(play_for(me, think=0.1)),
               asyncio.create_task(play_for(friend))]
    await friend.set_ready(True)
    await me.set_ready(True)
    app = ShowsResults(me)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, GameScreen), "the game")
            screen = app.screen
            assert isinstance(screen, GameScreen)
            await wait_until(pilot, lambda: app.results_shown and screen.round_number >= 2
                             and app.screen is screen,
                             "the next round, the result closed at the player's turn", limit=60)
            for task in players:
                task.cancel()
            for session in (me, friend):
                await session.close()
            await pilot.pause(0.2)
    finally:
        for task in players:
            task.cancel()
        for session in (me, friend):
            await session.close()


async def test_a_watcher_is_offered_no_move_keys(open_table: TableOpener) -> None:
    """A watcher has no hand: the footer offers the log and help, not Play, Draw or Hint."""
    _, url, room = await open_table(HostConfig(game="zodiak", players=2, bots=1, seed=4,
                                               require_ready=True))
    friend = RemoteSession(game="", url=url, room=room, name="Friend")
    watcher = RemoteSession(game="", url=url, room=room, name="Eve", watch=True)
    await friend.start()
    await friend.wait_seated()
    player = asyncio.create_task(play_for(friend, think=0.2))
    await friend.set_ready(True)
    await watcher.start()
    await watcher.wait_seated()
    app = CardApp(watcher)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, GameScreen)
                             and app.screen.view is not None, "the table")
            screen = app.screen
            assert isinstance(screen, GameScreen) and screen.my_seat is None
            await pilot.pause(0.3)
            shown = {binding.action for (_, binding, enabled, _) in
                     screen.active_bindings.values() if enabled}
            for action in ("play", "draw", "hint", "expert_hint", "select"):
                assert screen.check_action(action, ()) is False, action
            assert "log_page(-1)" in shown and "help" in shown
            player.cancel()
            for session in (friend, watcher):
                await session.close()
            await pilot.pause(0.2)
    finally:
        player.cancel()
        for session in (friend, watcher):
            await session.close()


async def test_once_the_rematch_window_runs_out_the_result_offers_none(
        open_table: TableOpener) -> None:
    """A server's table waits a while for a rematch, then closes. Its seats were told only
    that the host was away, and the result went on offering a rematch that could no longer
    begin (r: "the host is away; the frame was dropped"). The host now says the table closed,
    and the result is shown again without the offer."""
    _host, url, room = await open_table(HostConfig(
        game="zodiak", players=2, bots=1, seed=4, owner_secret=secrets.token_hex(16),
        require_ready=True, rematch_seconds=1, rematch_by_any_seat=True,
        house=HouseRules(target=1)))
    me = RemoteSession(game="", url=url, room=room, name="Ann", sign="leo")
    me.after_match = True
    await me.start()
    await me.wait_seated()
    player = asyncio.create_task(play_for(me))
    await me.set_ready(True)
    app = CardApp(me)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(pilot, lambda: me.gone is not None, "the table closing", limit=60)
            assert me.gone == "the table closed: no rematch began in time"
            assert not app.can_rematch()
            await wait_until(pilot, lambda: isinstance(app.screen, MatchResult)
                             and not app.screen.rematch and app.screen.is_mounted,
                             "the result without a rematch", limit=30)
            assert not app.screen.query("#rematch")
            assert "r Rematch" not in " ".join(footer_keys(app))
    finally:
        player.cancel()
        await me.close()


async def test_a_table_its_host_closed_offers_no_moves_and_says_it_is_closed(
        open_table: TableOpener) -> None:
    """The host quit mid-match: the seat's screen went on looking like a live game (the play
    keys in its footer did nothing) and q offered "a bot plays your seat until you come back"."""
    host, url, room = await open_table(HostConfig(
        game="zodiak", players=2, bots=1, seed=4, owner_secret=secrets.token_hex(16),
        require_ready=True, bot_delay=60.0))  # the bot never moves: the match stays on
    me = RemoteSession(game="", url=url, room=room, name="Ann", sign="leo")
    await me.start()
    await me.wait_seated()
    await me.set_ready(True)
    app = CardApp(me)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, GameScreen)
                             and app.screen.view is not None, "the game")
            await host.say_closing()
            await wait_until(pilot, lambda: me.gone is not None, "the table closing")
            await wait_until(pilot, lambda: "Draw" not in " ".join(footer_keys(app)),
                             "the play keys gone from the footer")
            assert "Play" not in " ".join(footer_keys(app))
            await pilot.press("q")
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmQuit), "the question")
            assert app.screen.question.startswith("Leave? The table is closed: the host closed")
    finally:
        await me.close()
