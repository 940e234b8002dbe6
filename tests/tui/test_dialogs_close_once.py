"""A dialog that more than one thing closes at once closes once, and only itself (tui/screens/
dialogs.py `ClosesOnce`). Textual's dismiss pops whatever screen is on top: a round's summary
closed by the next round reaching the player's turn and by the player's enter at the same
moment took the game screen under it away, and an SSH player was back in the server's lobby
mid-match; a match result closed before it was shown crashed the session."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Button, Static

from tui.screens.dialogs import MatchResult, Summary
from tui.screens.help import HelpScreen


class Lobby(Screen[None]):
    def compose(self) -> ComposeResult:
        yield Static("the lobby")


class Table(Screen[None]):
    def compose(self) -> ComposeResult:
        yield Static("the table")


class Stand(App[None]):
    """The app's first screen stands for a server's lobby; a table screen goes on top."""

    def get_default_screen(self) -> Screen[None]:
        return Lobby()


def stack(app: App[None]) -> list[str]:
    return [type(screen).__name__ for screen in app.screen_stack]


async def settle(pilot: Pilot[None]) -> None:
    for _ in range(4):
        await pilot.pause()


def summary_over_a_table(app: App[None]) -> Summary:
    """Push a table, then a round's summary over it; return the summary."""
    app.push_screen(Table())
    summary = Summary("Round 1", "bot 1 goes out")
    app.push_screen(summary)
    return summary


async def test_a_summary_closed_by_the_table_and_by_enter_at_once_leaves_the_table() -> None:
    for table_first in (False, True):
        app = Stand()
        async with app.run_test() as pilot:
            summary = summary_over_a_table(app)
            await settle(pilot)
            if table_first:
                summary.close(None)  # the next round reached the player's turn
                summary.query_one(Button).press()  # and enter on "Next round" was on its way
            else:
                summary.query_one(Button).press()
                summary.close(None)
            await settle(pilot)
            assert stack(app) == ["Lobby", "Table"], table_first


async def test_a_summary_the_table_closes_right_after_it_is_pushed_leaves_the_table() -> None:
    app = Stand()
    async with app.run_test() as pilot:
        summary = summary_over_a_table(app)
        summary.close(None)  # before it was shown: it closes when it is
        await settle(pilot)
        assert stack(app) == ["Lobby", "Table"]


async def test_a_summary_under_the_help_closes_when_the_help_does() -> None:
    app = Stand()
    async with app.run_test() as pilot:
        summary = summary_over_a_table(app)
        await settle(pilot)
        app.push_screen(HelpScreen())
        await settle(pilot)
        summary.close(None)  # the table goes on while the player reads the help
        await settle(pilot)
        assert stack(app) == ["Lobby", "Table", "Summary", "HelpScreen"], "the help stays"
        app.pop_screen()
        await settle(pilot)
        assert stack(app) == ["Lobby", "Table"]


async def test_a_result_closed_before_it_is_shown_neither_crashes_nor_takes_the_table() -> None:
    """The catch-up of a seat that sat down after a match showed the result, and the table's
    rematch offer closed it at once to show it again: on_mount then found no buttons."""
    app = Stand()
    async with app.run_test() as pilot:
        app.push_screen(Table())
        chosen: list[str | None] = []
        result = MatchResult("Ann wins the match", "scores", rematch=False)
        app.push_screen(result, chosen.append)
        result.close("again")
        result.close("leave")  # a second close changes nothing
        await settle(pilot)
        assert app.is_running and stack(app) == ["Lobby", "Table"]
        assert chosen == ["again"]
