"""The log of every move, in tui/RULES.md 3 notation, newest at the bottom."""

from __future__ import annotations

from textual.widgets import RichLog

from tui.literal import literal

MAX_LINES = 2000  # the log's memory: a long match, or a host's flood of notices, drops the oldest


class GameLog(RichLog, can_focus=False):
    """A scrollable log; the screen's page keys scroll it so it never takes the focus."""

    def __init__(self, *, id: str | None = None) -> None:
        # min_width=1: RichLog's default (78) would render lines wider than a side log and cut them.
        super().__init__(id=id, max_lines=MAX_LINES, wrap=True, markup=False, auto_scroll=True,
                         min_width=1)

    def move(self, text: str, mine: bool) -> None:
        """Log a move; your own moves are bold."""
        self.write(literal(text, style="bold" if mine else ""))

    def note(self, text: str, style: str = "italic") -> None:
        """Log something that is not a move: a new round, a summary, a notice."""
        self.write(literal(text, style=style))
