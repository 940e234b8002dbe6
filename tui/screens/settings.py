"""The settings screen: your name, sign, theme, bot speed, bell and cards, saved for next time."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Button, Footer, Input, Label, Select, Static, Switch

from engine.errors import IllegalMove
from tui.screens.dialogs import ClosesOnce
from tui.settings import BOT_SPEEDS, CARD_STYLES, HAND_ORDERS, HEKATA_ORDERS, Settings, load_stats
from tui.widgets.bars import card_header
from tui.widgets.dropdown import Dropdown
from tui.words import sign_choices


class SettingsScreen(ClosesOnce, Screen[Settings | None]):
    """Edit the settings; ctrl+s (or Save) keeps them, escape leaves them as they were."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save"),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, settings: Settings, themes: list[str], kept: bool = True) -> None:
        super().__init__()
        self.settings = settings
        self.themes = themes
        # A `cardtui serve` visitor's settings last for their session: the files are the
        # operator's (and so are the statistics), and their name is their SSH login.
        self.kept = kept

    def on_mount(self) -> None:
        # Typing goes somewhere from the first key.
        self.query_one("#set-name" if self.kept else "#set-sign").focus()

    def compose(self) -> ComposeResult:
        s = self.settings
        ascii_only = self.app.has_class("-ascii")
        yield card_header(ascii_only)
        with VerticalScroll(id="settings"):
            yield Static("Settings (kept for next time)" if self.kept else
                         "Settings (for this session)", id="settings-title")
            if self.kept:
                yield from self._field("Your name", Input(s.name, placeholder="your login name",
                                                          id="set-name", max_length=20))
            yield from self._field("Your sign", Dropdown(
                sign_choices(ascii_only), value=s.sign or Select.NULL,
                # `join` without a sign takes today's; a server's table draws one.
                prompt="today's sign" if self.kept else "drawn by the table", id="set-sign"))
            yield from self._field("Theme", Dropdown(
                [(t, t) for t in self.themes], value=s.theme if s.theme in self.themes
                else Select.NULL, prompt="the default", id="set-theme"))
            yield from self._field("Bot speed", Dropdown(
                [(f"{k} ({v:g} s)", k) for k, v in BOT_SPEEDS.items()], value=s.bot_speed,
                allow_blank=False, id="set-speed"))
            yield from self._field("Card style", Dropdown(
                [("suit symbols and boxes", "unicode"), ("plain ASCII", "ascii")],
                value=s.card_style, allow_blank=False, id="set-cards"))
            yield from self._field("Zodiak hand", Dropdown(
                [("by suit", "suit"), ("by rank", "rank")], value=s.hand_order,
                allow_blank=False, id="set-order"))
            yield from self._field("Hekata hand", Dropdown(
                [(words, key) for key, words in HEKATA_ORDERS.items()], value=s.hekata_order,
                allow_blank=False, id="set-hekata-order"))
            yield from self._field("Bell on your turn", Switch(s.bell, id="set-bell"))
            if self.kept:
                yield Static(Text("\n".join(load_stats().lines())), id="stats")
            with Horizontal(id="settings-buttons"):
                yield Button("Save (ctrl+s)", variant="primary", id="save")
                yield Button("Cancel (esc)", id="cancel")
            yield Static("", id="settings-error")
        yield Footer()

    @staticmethod
    def _field(label: str, widget: Widget) -> ComposeResult:
        with Horizontal(classes="field"):
            yield Label(label, classes="field-label")
            yield widget

    def chosen(self) -> Settings:
        """The settings as the screen shows them."""
        def value(selector: str, default: str) -> str:
            picked = self.query_one(selector, Select).value
            return default if picked is Select.NULL else str(picked)

        return Settings(
            name=self.query_one("#set-name", Input).value.strip() if self.kept
            else self.settings.name,
            sign=value("#set-sign", ""), theme=value("#set-theme", ""),
            bot_speed=value("#set-speed", "normal"), bell=self.query_one("#set-bell", Switch).value,
            card_style=value("#set-cards", CARD_STYLES[0]),
            hand_order=value("#set-order", HAND_ORDERS[0]),
            hekata_order=value("#set-hekata-order", next(iter(HEKATA_ORDERS))))

    def action_save(self) -> None:
        settings = self.chosen()
        try:
            settings.check()
        except IllegalMove as exc:
            self.query_one("#settings-error", Static).update(Text(str(exc)))
            return
        self.close(settings)

    def action_cancel(self) -> None:
        self.close(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.action_save() if event.button.id == "save" else self.action_cancel()
