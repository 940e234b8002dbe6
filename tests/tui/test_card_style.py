"""The plain-ASCII card style reaches every part of the start screen: the header's icon, the
sign cards and the drop-downs' arrows, when the app starts in it and when Settings picks it."""

from __future__ import annotations

import pytest
from textual.widgets import Header, Select, Static

from tests.tui.test_join_failure import open_screen, start_app
from tests.tui.test_join_flood import wait_for
from tui.app import CardApp
from tui.matchsetup import MatchOptions
from tui.screens.settings import SettingsScreen
from tui.screens.start import StartScreen

pytestmark = pytest.mark.usefixtures("mdns_alone")


def arrows(screen: StartScreen) -> set[str]:
    """Every drop-down arrow the screen draws."""
    return {str(arrow.render()) for arrow in screen.query(".down-arrow").results(Static)}


def sign_labels(screen: StartScreen) -> list[str]:
    return [str(label) for label, _ in screen.query_one("#sign", Select)._options]


async def test_an_app_started_in_plain_ascii_draws_no_unicode_on_the_start_screen() -> None:
    app = CardApp(defaults=MatchOptions("zodiak", 3, "Me", "leo", seed=1, speed=0.0),
                  ascii_only=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, StartScreen), "the start screen")
        screen = app.screen
        assert isinstance(screen, StartScreen)
        await wait_for(pilot, lambda: arrows(screen) == {"v"}, "plain arrows")
        assert screen.query_one(Header).icon == "*"
        assert "Leo (KC)" in sign_labels(screen)


async def test_choosing_plain_ascii_in_settings_redraws_the_start_screen() -> None:
    app = start_app()
    async with app.run_test(size=(80, 24)) as pilot:
        start = app.screen
        assert isinstance(start, StartScreen)
        await wait_for(pilot, lambda: arrows(start) == {"▼"}, "the arrows")
        assert "Leo (K♣)" in sign_labels(start) and start.query_one(Header).icon == "♠"
        settings = await open_screen(pilot, "s", SettingsScreen)
        settings.query_one("#set-cards", Select).value = "ascii"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.screen is start, "the start screen again")
        await wait_for(pilot, lambda: arrows(start) == {"v"}, "plain arrows")
        assert "Leo (KC)" in sign_labels(start) and start.query_one(Header).icon == "*"
        assert start.query_one("#sign", Select).value == "leo"
        # The Settings screen opened again is drawn in the style chosen.
        settings = await open_screen(pilot, "s", SettingsScreen)
        await wait_for(pilot, lambda: {str(a.render()) for a in settings.query(".down-arrow")
                                       .results(Static)} == {"v"}, "plain arrows in Settings")


async def test_plain_ascii_gives_textuals_own_fields_and_buttons_plain_borders() -> None:
    """Inputs, drop-downs and switches drew half blocks (▊▔▁▎) round themselves, buttons ▔ and
    ▁ edges: in plain ASCII they get + - | borders, or none."""
    app = CardApp(defaults=MatchOptions("zodiak", 3, "Me", "leo", seed=1, speed=0.0),
                  ascii_only=True)
    async with app.run_test(size=(80, 40)) as pilot:
        settings = await open_screen(pilot, "s", SettingsScreen)
        await pilot.pause()
        borders = {settings.query_one(selector).styles.border_top[0]
                   for selector in ("#set-name", "#set-sign SelectCurrent", "#set-bell")}
        assert borders == {"ascii"}
        assert {button.styles.border_top[0] for button in settings.query("Button")} <= {"", "none"}
        start = app.screen_stack[-2]  # its fields are compact: no border at all
        assert start.query_one("#name").styles.border_top[0] in ("", "none")
