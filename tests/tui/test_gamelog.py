"""The log keeps its lines whole across being hidden: the Hekata trick builder hides it while a
trick is built, and a window that narrows hides the side log."""

from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult

import tui
from tui.widgets.gamelog import MAX_LINES, GameLog


class OneLog(App[None]):
    def compose(self) -> ComposeResult:
        yield GameLog(id="log")


async def test_lines_written_while_the_log_is_hidden_are_whole_when_it_shows_again() -> None:
    """They were wrapped to the hidden log's width, one character a row."""
    app = OneLog()
    async with app.run_test(size=(60, 20)) as pilot:
        log = app.query_one(GameLog)
        log.note("Ada lays 7")
        await pilot.pause()
        log.display = False
        await pilot.pause()
        log.move("You lay 9 and take 91 + 9 = 100", mine=True)
        log.note("Cleo lays 3")
        await pilot.pause()
        log.display = True
        for _ in range(20):
            await pilot.pause()
            if len(log.lines) >= 3:
                break
        assert [line.text for line in log.lines] == [
            "Ada lays 7", "You lay 9 and take 91 + 9 = 100", "Cleo lays 3"]


async def test_a_log_never_shown_keeps_at_most_its_line_limit() -> None:
    """The narrow window's hidden side log is written too: a host's flood of notices must not
    grow it without bound."""
    app = OneLog()
    async with app.run_test(size=(60, 20)) as pilot:
        log = app.query_one(GameLog)
        log.display = False
        await pilot.pause()
        for number in range(MAX_LINES + 500):
            log.note(f"notice {number}")
        log.display = True
        for _ in range(50):
            await pilot.pause()
            if log.lines:
                break
        assert len(log.lines) == MAX_LINES
        assert log.lines[-1].text == f"notice {MAX_LINES + 499}"


class StyledLog(OneLog):
    CSS_PATH = str(Path(tui.__file__).parent / "cardtui.tcss")  # the app's own styles


async def test_lines_keep_their_last_character_when_the_scrollbar_comes() -> None:
    """A line is wrapped to the log's width as it is written: the scrollbar that came with the
    first full page covered the last column of every line written before it."""
    app = StyledLog()
    async with app.run_test(size=(40, 10)) as pilot:
        log = app.query_one(GameLog)
        log.note("Ada lays 7")
        await pilot.pause()
        width = log.scrollable_content_region.width
        for n in range(30):
            log.note(f"line {n}")
        await pilot.pause()
        assert log.max_scroll_y > 0  # the scrollbar is there now
        assert log.scrollable_content_region.width == width
