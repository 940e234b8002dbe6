"""A drop-down whose arrows follow the app's card style (plain ASCII or not)."""

from __future__ import annotations

from typing import TypeVar

from textual.widgets import Select, Static

Value = TypeVar("Value")

# Textual's Select draws these two in its current-value line; the rest of it is plain text.
ARROWS = {"down-arrow": ("▼", "v"), "up-arrow": ("▲", "^")}


class Dropdown(Select[Value]):
    """Textual's Select, its ▼ and ▲ drawn as v and ^ when the app draws in plain ASCII."""

    def on_mount(self) -> None:
        self.match_card_style()

    def match_card_style(self) -> None:
        """Draw the arrows as the app's card style says (after a change in Settings too)."""
        plain = self.app.has_class("-ascii")
        for name, (fancy, ascii_form) in ARROWS.items():
            for arrow in self.query(f".{name}").results(Static):
                arrow.update(ascii_form if plain else fancy)
