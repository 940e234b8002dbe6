"""The log of every move, in tui/RULES.md 3 notation, newest at the bottom."""

from __future__ import annotations

from typing import Self

from rich.console import RenderableType
from textual.widgets import RichLog

from tui.literal import literal

MAX_LINES = 2000  # the log's memory: a long match, or a host's flood of notices, drops the oldest


class GameLog(RichLog, can_focus=False):
    """A scrollable log; the screen's page keys scroll it so it never takes the focus."""

    # Lines are wrapped as they are written: without a column kept for the scrollbar, the one
    # that comes with the log's first full page hid the last character of every line before it.
    DEFAULT_CSS = """
    GameLog {
        overflow-y: auto;
        overflow-x: hidden;
        scrollbar-gutter: stable;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        # min_width=1: RichLog's default (78) would render lines wider than a side log and cut them.
        super().__init__(id=id, max_lines=MAX_LINES, wrap=True, markup=False, auto_scroll=True,
                         min_width=1)

    def write(self, content: RenderableType | object, width: int | None = None,
              expand: bool = False, shrink: bool = True, scroll_end: bool | None = None,
              animate: bool = False) -> Self:
        """Write a line; while the log is hidden (no width), keep it until it is shown again."""
        if not self.size.width:
            # RichLog would wrap the line to its minimum width, one character a row, for good;
            # with the size unknown it holds the line and writes it at the next resize.
            self._size_known = False
        super().write(content, width, expand, shrink, scroll_end, animate)
        while len(self._deferred_renders) > MAX_LINES:  # a log never shown keeps no more
            self._deferred_renders.popleft()
        return self

    def move(self, text: str, mine: bool) -> None:
        """Log a move; your own moves are bold."""
        self.write(literal(text, style="bold" if mine else ""))

    def note(self, text: str, style: str = "italic") -> None:
        """Log something that is not a move: a new round, a summary, a notice."""
        self.write(literal(text, style=style))
