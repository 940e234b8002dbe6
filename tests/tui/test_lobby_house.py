"""House rules set in the host's lobby before the start (issue 13, "chosen at the start and in
the lobby"), on a real relay and host: F7 sets them, every seat gets them, all say ready again."""

from __future__ import annotations

import asyncio

from textual.widgets import Static

from engine.house import HouseRules
from netplay.seat.remote import RemoteSession
from tests.netplay.test_prepared_table import until
from tests.tui.test_footer_fits import footer_keys
from tui.app import CardApp
from tui.screens.game import GameScreen
from tui.screens.seats import HouseRulesDialog, SeatsScreen
from tui.widgets.house import HouseRulesInput

from .test_seats import close_table, open_table, wait_until


async def test_the_host_sets_house_rules_in_the_lobby_and_every_seat_plays_by_them() -> None:
    relay, host, conn, serving, me = await open_table(3)
    friend = RemoteSession(game="", url=relay.url, room=conn.room, name="Friend")
    await friend.start()
    await friend.wait_seated()
    app = CardApp(me)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, SeatsScreen), "the lobby")
            await wait_until(pilot, lambda: len([s for s in me.seats if s.name]) == 2,
                             "the friend")
            help_text = app.screen.query_one("#seats-help", Static)
            assert "House rules: none" in str(help_text.render())
            await pilot.press("f7")
            await wait_until(pilot, lambda: isinstance(app.screen, HouseRulesDialog), "the dialog")
            await pilot.pause()
            assert footer_keys(app) == ["Set", "Keep"], "its own footer, not the lobby's"
            await pilot.press(*"target=0", "enter")
            await pilot.pause()
            assert "target must be a whole number" in str(
                app.screen.query_one("#house-error", Static).render())
            app.screen.query_one("#house", HouseRulesInput).value = ""
            await pilot.press(*"target=500", "enter")
            await wait_until(pilot, lambda: friend.house == HouseRules(target=500),
                             "the friend's house rules")
            assert friend.target == 500 and host.config.house == HouseRules(target=500)
            assert not any(s.ready for s in friend.seats)
            # Nobody's seat changed (nobody was ready): the lobby still shows the new rules.
            await wait_until(pilot, lambda: "the match is played to 500" in str(
                app.screen.query_one("#seats-help", Static).render()), "the rules on screen")
            await friend.set_ready(True)
            await pilot.press("f3")  # a bot in the last seat; then ready: the match starts
            await wait_until(pilot, lambda: any(s.bot for s in me.seats), "the bot")
            await pilot.press("f2")
            await wait_until(pilot, lambda: host.started and friend.view is not None, "the deal")
            assert host.match is not None and host.match.target == 500
            await me.set_house(HouseRules(target=9))  # too late: the match has started
            await asyncio.sleep(0.3)
            assert host.config.house == HouseRules(target=500) and friend.target == 500
            # The game screen takes over from the lobby: let it settle before the app closes.
            await wait_until(pilot, lambda: isinstance(app.screen, GameScreen), "the game screen")
            await pilot.pause(0.3)
    finally:
        await close_table(relay, conn, serving, me, friend)


async def test_only_the_host_sets_house_rules() -> None:
    relay, host, conn, serving, me = await open_table(3)
    other = RemoteSession(game="", url=relay.url, room=conn.room, name="Other", owner=b"guess")
    await other.start()
    await other.wait_seated()
    await other.set_house(HouseRules(max_row=2))
    await asyncio.sleep(0.5)
    assert host.config.house == HouseRules() and other.house == HouseRules()
    await close_table(relay, conn, serving, me, other)


async def test_a_change_of_house_rules_asks_everyone_again() -> None:
    relay, host, conn, serving, me = await open_table(3)
    friend = RemoteSession(game="", url=relay.url, room=conn.room, name="Friend")
    await friend.start()
    await friend.wait_seated()
    await friend.set_ready(True)
    await until(lambda: host.seats[1].ready, "the friend ready")
    await me.set_house(HouseRules(target=77))
    await until(lambda: friend.target == 77, "the new rules at the friend")
    assert not host.seats[1].ready and not host.started
    await close_table(relay, conn, serving, me, friend)
