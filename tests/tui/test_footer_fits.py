"""Every key the footer offers is on screen at 80 columns, the smallest size the game screens
draw (tui/screens/game.py MIN_SIZE), in plain ASCII too: the Hekata trick builder's keys and
Zodiak's in ASCII were cut off at the right edge."""

from __future__ import annotations

from textual.app import App
from textual.widgets import Footer

from tests.tui.conftest import fresh_app, settle
from tests.tui.test_hekata_play import deal_app
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
            assert "Quit" in [str(k.description) for k in screen.query("FooterKey")]
            assert keys_cut_off(app) == [], ascii_only


async def test_zodiaks_keys_fit_80_columns_in_plain_ascii() -> None:
    app = fresh_app("zodiak", 4, seed=4)
    app.ascii_only = True
    app.set_class(True, "-ascii")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.pause()
        assert keys_cut_off(app) == []
