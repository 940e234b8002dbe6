"""The footer shows the keys that work now (tui/screens/game.py `update_bindings` asks it to
redraw only when whose turn it is, the result view or the trick builder changed)."""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey  # pinned Textual: the keys the footer drew

from tests.tui.conftest import app_from_deal, settle
from tui.screens.hekata import HekataScreen
from tui.widgets.trick_builder import TrickBuilder

SEATS = [{"name": "Me"}, {"name": "Ada", "bot": "greedy"}]
DEAL = {"hands": [[9, 3, 4, 5, 6, 7], [2, 2, 3, 3, 4, 4]], "table": [1, 0],
        "stock": [5, 5, 6, 6, 7, 7, 8, 8]}


def shown(screen: Screen[object]) -> dict[str, bool]:
    """What the footer draws: each action, and whether it is enabled."""
    return {key.action: not key._disabled for key in screen.query_one(Footer).query(FooterKey)}


def working(screen: Screen[object]) -> dict[str, bool]:
    """What the footer would draw if it were rebuilt now."""
    return {binding.action: enabled
            for _, binding, enabled, _ in screen.active_bindings.values() if binding.show}


async def test_the_footer_follows_the_trick_builder_and_the_turn() -> None:
    app = app_from_deal("hekata", SEATS, 0, DEAL, delay=3.0)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await settle(pilot)
        assert isinstance(screen, HekataScreen) and screen.my_turn
        assert shown(screen) == working(screen)
        await pilot.press("left", "enter")
        assert screen.query(TrickBuilder)
        await pilot.pause(0.3)
        assert shown(screen) == working(screen)
        await pilot.press("escape")  # the builder lays the card alone; Ada thinks for 3 s
        await pilot.pause(0.5)
        assert not screen.query(TrickBuilder) and not screen.my_turn
        assert shown(screen) == working(screen)


async def test_the_footer_follows_a_turn_that_came_while_help_was_open() -> None:
    app = app_from_deal("hekata", SEATS, 1, DEAL, delay=1.0)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause(0.3)
        screen = app.screen
        assert isinstance(screen, HekataScreen) and not screen.my_turn
        await pilot.press("question_mark")
        for _ in range(60):
            await pilot.pause(0.1)
            if screen.my_turn:
                break
        assert screen.my_turn
        await pilot.press("escape")
        await pilot.pause(0.3)
        assert shown(screen) == working(screen)
