"""A wrapping row of card faces with a cursor; a click on a card posts `CardRow.Clicked`."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from tui.widgets import cardface
from tui.widgets.cardface import Face


class CardRow(Widget):
    """Cards drawn as faces, wrapped to the width; the hand, a Hekata table or a pile's top card."""

    faces: reactive[tuple[Face, ...]] = reactive((), layout=True)
    cursor: reactive[int | None] = reactive(None)
    empty_text: reactive[str] = reactive("")
    big: reactive[bool] = reactive(False, layout=True)
    # A compact row overlaps its cards as soon as they need a second line (a big Hekata table).
    compact: reactive[bool] = reactive(False, layout=True)

    class Clicked(Message):
        """A card was clicked."""

        def __init__(self, row: CardRow, index: int) -> None:
            self.row = row
            self.index = index
            super().__init__()

        @property
        def control(self) -> CardRow:
            """The row that was clicked."""
            return self.row

    def __init__(self, ascii_only: bool = False, empty_text: str = "", *,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.ascii_only = ascii_only
        self.set_reactive(CardRow.empty_text, empty_text)

    def render(self) -> Text:
        if not self.faces:
            return Text(self.empty_text, style="italic")
        return cardface.render_faces(self.faces, self.size.width or 80, self.cursor,
                                     self.ascii_only, self.card_size, self.compact)

    @property
    def card_size(self) -> cardface.CardSize:
        """Large faces when the window has room for them."""
        return cardface.LARGE if self.big else cardface.SMALL

    def get_content_width(self, container: Size, viewport: Size) -> int:
        if not self.faces:
            return len(self.empty_text)
        size = self.card_size
        return min(container.width, len(self.faces) * (size.width + cardface.GAP) - cardface.GAP)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if not self.faces:
            return 1
        return cardface.height_needed(len(self.faces), width, self.card_size, self.compact)

    def per_line(self) -> int:
        """How many cards one line holds at the current width."""
        return cardface.layout(len(self.faces), self.size.width or 80, self.card_size,
                               self.compact)[1]

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        index = cardface.hit(offset.x, offset.y, len(self.faces), self.size.width, self.card_size,
                             self.compact)
        if index is not None:
            self.post_message(self.Clicked(self, index))
