"""Textual's scroll bar, drawn in whole cells (no ▁…▇ block glyphs) in an app that shows only ASCII.

Textual picks one renderer class for every scroll bar of the process, and `cardtui serve` runs
many apps in one process, some in ASCII and some not: the renderer asks the app being drawn.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.segment import Segments
from textual._context import active_app
from textual.scrollbar import ScrollBar, ScrollBarRender


class _WholeCells(ScrollBarRender):
    VERTICAL_BARS: ClassVar[list[str]] = [" "] * 8
    HORIZONTAL_BARS: ClassVar[list[str]] = [" "] * 8


class CardScrollBarRender(ScrollBarRender):
    """A scroll bar in Textual's glyphs, or in whole cells when the app draws only ASCII."""

    @classmethod
    def render_bar(cls, *args: Any, **kwargs: Any) -> Segments:
        app = active_app.get(None)
        if getattr(app, "ascii_only", False):
            return _WholeCells.render_bar(*args, **kwargs)
        return super().render_bar(*args, **kwargs)


def install() -> None:
    """Make every scroll bar of this process draw through CardScrollBarRender."""
    ScrollBar.renderer = CardScrollBarRender
