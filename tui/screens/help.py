"""The rules, from RULES.md, and the keys, readable inside the app."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Markdown

RULES = Path(__file__).resolve().parent.parent / "RULES.md"

KEYS = """\
## Keys

| key | Zodiak | Hekata |
|---|---|---|
| ← → ↑ ↓ | move the cursor in your hand | move the cursor (hand, or table cards in the builder) |
| space | add the card to your run, or take it out | choose the card to lay |
| enter | play the run (or the card under the cursor) | lay the card / take the trick built |
| d | draw (the whole penalty when aces are pending) | |
| h | select the run the greedy bot would play | fill in the best trick |
| escape | clear the run | put the card back |
| PgUp PgDn | scroll the log | scroll the log |
| ? | this help | this help |
| q | quit (the match is saved; `cardtui play --resume`) | the same |

A `•` under a card: you may start a run with it now. The card with a heavy edge and
`▼` is the cursor; numbers above cards are the order of the run you are building.
"""


class HelpScreen(ModalScreen[None]):
    """The keys and the full rules in a scrollable Markdown view."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "app.pop_screen", "Close help"),
        Binding("up", "scroll('up')", "Scroll", show=False),
        Binding("down", "scroll('down')", "Scroll", show=False),
        Binding("pageup", "scroll('page_up')", "Page up"),
        Binding("pagedown,space", "scroll('page_down')", "Page down"),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-scroll"):
            yield Markdown(KEYS + "\n" + RULES.read_text(encoding="utf-8"), id="help-text")
        yield Footer()

    def action_scroll(self, how: str) -> None:
        getattr(self.query_one("#help-scroll", VerticalScroll), f"scroll_{how}")()
