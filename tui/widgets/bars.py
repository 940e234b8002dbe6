"""A title bar and a key line, each one cheap widget: the lobby every SSH session draws first.

Textual's Header and Footer are a widget per part and per key, and the Footer composes itself
again whenever the bindings change; on a server where a hundred sessions start at once they
were a third of each session's start-up CPU. These show the same things in one widget each.
"""

from __future__ import annotations

from textual.binding import Binding
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Header, Static


def header_icon(ascii_only: bool) -> str:
    """cardtui's icon: a spade, or * in plain ASCII."""
    return "*" if ascii_only else "♠"


def card_header(ascii_only: bool) -> Header:
    """Textual's Header with cardtui's icon on every screen."""
    return Header(icon=header_icon(ascii_only))


class TitleBar(Static):
    """The app's title and sub-title on the top line, like Textual's Header without a clock."""

    DEFAULT_CSS = """
    TitleBar {
        dock: top;
        width: 100%;
        height: 1;
        background: $panel;
        color: $foreground;
        content-align: center middle;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def on_mount(self) -> None:
        self.watch(self.app, "title", self._show_title)
        self.watch(self.app, "sub_title", self._show_title)

    def _show_title(self) -> None:
        self.update(self.app.format_title(self.app.title, self.app.sub_title))


class KeyLine(Widget):
    """The screen's shown key bindings on the bottom line, like Textual's Footer; click a key."""

    DEFAULT_CSS = """
    KeyLine {
        dock: bottom;
        width: 100%;
        height: 1;
        background: $footer-background;
        color: $footer-description-foreground;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        link-color: $footer-key-foreground;
        link-background: $footer-key-background;
        link-style: bold;
        link-color-hover: $footer-key-foreground;
        link-background-hover: $block-hover-background;
        link-style-hover: bold;
    }
    """

    def render(self) -> Content:
        parts: list[Content] = []
        for binding in self.screen.BINDINGS:
            if isinstance(binding, Binding) and binding.show:
                key = self.app.get_key_display(binding)
                action = binding.action if "." in binding.action else f"screen.{binding.action}"
                parts.append(Content.assemble((f" {key} ", f"@click={action}"),
                                              f"{binding.description} "))
        return Content("").join(parts)
