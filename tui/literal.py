"""Text that comes from another party (names, chat, results, messages), shown as it is."""

from __future__ import annotations

from rich.text import Text


def literal(text: str, style: str = "") -> Text:
    """Return text to show exactly: never read as markup, control characters left out."""
    # A name like "[/z]" is markup to Textual (a crash), and ESC would reach the terminal.
    return Text("".join(ch for ch in str(text) if ch.isprintable() or ch == "\n"), style=style)
