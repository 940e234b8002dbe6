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
## Keys: Zodiak

| key | what it does |
|---|---|
| arrows | move the cursor in your hand |
| space | add the card under the cursor to your run, or take it out |
| enter | play the run (with no run: the card under the cursor; with nothing playable: draw) |
| d | draw (the whole penalty when aces are pending) |
| h | select the run the greedy bot would play |
| escape | clear the run |
| click | add a card to the run, or take it out |

A `•` under a card: you may start a run with it now. The heavy-edged card under `▼`
is the cursor; the numbers above cards are the order of the run you are building.
A lone eight asks for the suit it declares.

## Keys: Hekata

| key | what it does |
|---|---|
| arrows | move the cursor in your hand |
| enter or space | lay the card under the cursor; a card marked `•` opens the trick builder |
| h | choose the best card and fill in its best trick |
| in the builder | space adds a card to the row, n starts a row, s shifts a lone card left, backspace undoes, c clears, t takes the trick, escape lays the card without a trick, b goes back to your hand |

## Everywhere

| key | what it does |
|---|---|
| PgUp PgDn | scroll the log |
| ? | this help (escape closes it) |
| F9 | switch between the dark and the light theme |
| q | quit; a match against bots is saved and `cardtui play --resume` continues it |
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
