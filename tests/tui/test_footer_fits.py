"""Every key the footer offers is on screen at 80 columns, the smallest size the game screens
draw (tui/screens/game.py MIN_SIZE), in plain ASCII too: the Hekata trick builder's keys and
Zodiak's in ASCII were cut off at the right edge."""

from __future__ import annotations

from textual.app import App
from textual.widgets import Footer

from tests.tui.conftest import app_from_deal, fresh_app, settle
from tests.tui.test_hekata_play import deal_app
from tests.tui.test_join_flood import wait_for
from tui.screens.dialogs import MatchResult
from tui.widgets.trick_builder import TrickBuilder


def keys_cut_off(app: App[None]) -> list[str]:
    """The footer's keys that do not end inside the screen's width."""
    footer = app.screen.query_one(Footer)
    width = app.size.width
    return [str(key.description) for key in footer.query("FooterKey")
            if key.region.right > width]


async def test_the_trick_builders_keys_fit_80_columns() -> None:
    for ascii_only in (False, True):
        app = deal_app()
        app.ascii_only = ascii_only
        app.set_class(ascii_only, "-ascii")
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await settle(pilot)
            await pilot.press("left", "enter")  # the 9 takes a trick: the builder opens
            assert screen.query_one(TrickBuilder).has_focus
            await pilot.pause()
            assert "Quit" in footer_keys(app)
            assert keys_cut_off(app) == [], ascii_only


async def test_zodiaks_keys_fit_80_columns_in_plain_ascii() -> None:
    app = fresh_app("zodiak", 4, seed=4)
    app.ascii_only = True
    app.set_class(True, "-ascii")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.pause()
        assert keys_cut_off(app) == []


async def test_looking_back_at_a_finished_match_offers_its_keys_not_moves() -> None:
    """After a match, look back (v): the footer offered Play and Hint, which do nothing then,
    and not r, which shows the result again."""
    app = app_from_deal("zodiak", [{"name": "Me", "sign": "leo"},
                                   {"name": "Ada", "sign": "pisces", "bot": "greedy"}], 1, {
        "hands": [["7H"], ["AS", "9D", "JC", "QH", "5C", "6C", "10D"]],
        "pile": ["2H"], "stock": ["4D", "5H"]}, scores=[50, 0])
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("enter")  # play the 7: out, and the match is won
        await wait_for(pilot, lambda: isinstance(app.screen, MatchResult), "the result")
        assert "Rematch" in footer_keys(app)  # the dialog's own footer
        await pilot.press("v")
        await wait_for(pilot, lambda: "Result" in footer_keys(app), "r in the footer")
        assert not {"Play", "Draw", "Hint", "Pick"} & set(footer_keys(app))


def footer_keys(app: App[None]) -> list[str]:
    """What the footer on top says each key does."""
    return [str(key.description) for key in app.screen.query("FooterKey")]
