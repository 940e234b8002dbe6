"""Small modal dialogs: confirm quitting, pick a suit for a wild eight, a round's summary, the result.

Each has a footer of its own: the screen's underneath offered keys the dialog does not take.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Label, Static

from engine.cards import SUIT_NAMES, SUIT_SYMBOLS, SUITS
from tui.literal import literal


class ConfirmQuit(ModalScreen[bool]):
    """Ask before quitting; a match in progress is saved on the way out."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes, quit"),
        Binding("n,escape", "answer(False)", "No, keep playing"),
    ]

    def __init__(self, question: str, yes: str = "Quit (y)", no: str = "Keep playing (n)") -> None:
        super().__init__()
        self.question = question
        self.yes, self.no = yes, no

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.question, classes="dialog-title")
            with Horizontal(classes="dialog-buttons"):
                yield Button(self.yes, id="yes", variant="error")
                yield Button(self.no, id="no", variant="primary")
        yield Footer()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class SuitPicker(ModalScreen[str | None]):
    """Choose the suit a wild eight declares: a key per suit, or the buttons."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "pick('S')", "Spades"),
        Binding("h", "pick('H')", "Hearts"),
        Binding("d", "pick('D')", "Diamonds"),
        Binding("c", "pick('C')", "Clubs"),
        Binding("left", "app.focus_previous", "Previous", show=False),
        Binding("right", "app.focus_next", "Next", show=False),
        Binding("escape", "pick(None)", "Cancel"),
    ]

    def __init__(self, ascii_only: bool, suggested: str | None = None) -> None:
        super().__init__()
        self.ascii_only = ascii_only
        self.suggested = suggested

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Your eight is wild: which suit must the next player follow?",
                        classes="dialog-title")
            with Horizontal(classes="dialog-buttons"):
                for suit in SUITS:
                    symbol = suit if self.ascii_only else SUIT_SYMBOLS[suit]
                    yield Button(f"{symbol} {SUIT_NAMES[suit]} ({suit.lower()})", id=f"suit-{suit}",
                                 classes="suit-red" if suit in "HD" else "suit-black")
        yield Footer()

    def on_mount(self) -> None:
        if self.suggested:
            self.query_one(f"#suit-{self.suggested}", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss((event.button.id or "suit-S")[-1])

    def action_pick(self, suit: str | None) -> None:
        self.dismiss(suit)


class Summary(ModalScreen[None]):
    """A round's or the match's outcome, with the scores; enter (or a click) goes on."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter,space,escape", "close", "Continue")]

    def __init__(self, title: str, body: str, button: str = "Next round") -> None:
        super().__init__()
        self.title_text = title
        self.body = body
        self.button = button
        self._outdated = False  # asked to close while another screen was on top

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(literal(self.title_text), classes="dialog-title")
            yield Static(literal(self.body), classes="dialog-body")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self.button} (enter)", variant="primary", id="continue")
        yield Footer()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)

    def close_when_shown(self) -> None:
        """Close now if this is the screen on top, else as soon as it is."""
        self._outdated = True
        if self.is_current and self.is_mounted:  # else on_screen_resume closes it
            self.app.call_later(self.dismiss, None)

    def on_screen_resume(self) -> None:
        if self._outdated:  # dismissed from the app: a screen may not await its own dismissal
            self.app.call_later(self.dismiss, None)


class MatchResult(ModalScreen[str]):
    """The match's result and score history: rematch (r), look back at the table (v), leave (enter)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "choose('rematch')", "Rematch"),
        Binding("v,escape", "choose('review')", "Look back"),
        Binding("enter", "choose('leave')", "Leave"),
    ]

    def __init__(self, title: str, body: str, rematch: bool) -> None:
        super().__init__()
        self.title_text = title
        self.body = body
        self.rematch = rematch

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="dialog-title")
            yield Static(self.body, classes="dialog-body", markup=False)
            with Horizontal(classes="dialog-buttons"):
                if self.rematch:
                    yield Button("Rematch (r)", id="rematch", variant="success")
                yield Button("Look back (v)", id="review")
                yield Button("Leave (enter)", id="leave", variant="primary")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#leave", Button).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "choose" and parameters == ("rematch",):
            return self.rematch
        return True

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id or "leave")

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)
