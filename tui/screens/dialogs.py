"""Small modal dialogs: confirm quitting, pick a suit for a wild eight, a round's summary, the result.

Each has a footer of its own: the screen's underneath offered keys the dialog does not take.
"""

from __future__ import annotations

from typing import Any, ClassVar, cast

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Footer, Label, Static

from engine.cards import SUIT_NAMES, SUIT_SYMBOLS, SUITS
from tui.literal import literal


class ClosesOnce:
    """A screen that more than one thing may close (a key, its button, the table going on):
    `close` dismisses it once, and only while it is the screen on top; asked while another
    screen is above it, or before it is shown, it closes as soon as it is on top.

    Textual's own dismiss pops whatever screen is on top: a round's summary closed by the next
    round and by the player's enter at once was dismissed twice, and the second took the game
    screen under it away (an SSH player found themselves in the server's lobby mid-match).
    """

    _closed_once = False
    _close_result: tuple[Any] | None = None  # the result asked for while it could not close

    @property
    def closing(self) -> bool:
        """Whether the screen has been dismissed (its widgets may be going already)."""
        return self._closed_once

    def close(self, result: Any = None) -> None:
        """Dismiss this screen with `result`, once; later or when it is on top."""
        screen = cast(Screen[Any], self)
        if self._closed_once:
            return
        if screen.is_mounted and screen.app.screen is screen:
            self._closed_once, self._close_result = True, None
            screen.dismiss(result)
        elif self._close_result is None:  # the first to ask decides the result
            self._close_result = (result,)

    def on_screen_resume(self) -> None:
        if self._close_result is not None and not self._closed_once:
            # Not from its own handler: a screen may not await its own dismissal.
            cast(Screen[Any], self).app.call_later(self._close_pending)

    def _close_pending(self) -> None:
        if self._close_result is not None:
            self.close(self._close_result[0])


class ConfirmQuit(ClosesOnce, ModalScreen[bool]):
    """Ask before quitting; a match in progress is saved on the way out."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # Plain words: the buttons say what yes and no do for each question.
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
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
        self.close(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.close(answer)


class SuitPicker(ClosesOnce, ModalScreen[str | None]):
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
        self.close((event.button.id or "suit-S")[-1])

    def action_pick(self, suit: str | None) -> None:
        self.close(suit)


class Summary(ClosesOnce, ModalScreen[None]):
    """A round's or the match's outcome, with the scores; enter (or a click) goes on."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter,space,escape", "close", "Continue")]

    def __init__(self, title: str, body: str, button: str = "Next round") -> None:
        super().__init__()
        self.title_text = title
        self.body = body
        self.button = button

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(literal(self.title_text), classes="dialog-title")
            yield Static(literal(self.body), classes="dialog-body")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self.button} (enter)", variant="primary", id="continue")
        yield Footer()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.close(None)

    def action_close(self) -> None:
        self.close(None)


class MatchResult(ClosesOnce, ModalScreen[str]):
    """The match's result and score history: rematch (r), look back at the table (v), leave (enter)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "choose('rematch')", "Rematch"),
        Binding("v,escape", "choose('review')", "Look back"),
        Binding("enter", "choose('leave')", "Leave"),
    ]

    # The scores scroll (a long match's history is taller than a terminal); no button is
    # focused, so that enter is the screen's Leave and the footer lists all three keys.
    AUTO_FOCUS = ".dialog-scroll"

    def __init__(self, title: str, body: str, rematch: bool) -> None:
        super().__init__()
        self.title_text = title
        self.body = body
        self.rematch = rematch

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="dialog-title")
            with VerticalScroll(classes="dialog-scroll"):
                yield Static(self.body, classes="dialog-body", markup=False)
            with Horizontal(classes="dialog-buttons"):
                if self.rematch:
                    yield Button("Rematch (r)", id="rematch", variant="success")
                yield Button("Look back (v)", id="review")
                yield Button("Leave (enter)", id="leave", variant="primary")
        yield Footer()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "choose" and parameters == ("rematch",):
            return self.rematch
        return True

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.close(event.button.id or "leave")

    def action_choose(self, choice: str) -> None:
        self.close(choice)
