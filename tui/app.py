"""The cardtui Textual app: a start screen, then a game screen fed by a GameSession."""

from __future__ import annotations

import importlib
import os
from typing import ClassVar

from textual.app import App
from textual.binding import Binding, BindingType

from netplay.session.events import GameSession
from tui.matchsetup import MatchOptions
from tui.screens.game import GameScreen

# The one place in the app that names each game's screen.
GAME_SCREENS: dict[str, tuple[str, str]] = {
    "zodiak": ("tui.screens.zodiak", "ZodiakScreen"),
    "hekata": ("tui.screens.hekata", "HekataScreen"),
}


def game_screen(session: GameSession, ascii_only: bool = False, pace: float = 0.0) -> GameScreen:
    """The screen for the session's game (each game's screen is imported only when it is played)."""
    module, name = GAME_SCREENS[session.game]
    screen_class = getattr(importlib.import_module(module), name)
    return screen_class(session, ascii_only, pace)


ASCII_KEYS = {"←→↑↓": "arrows", "←→": "arrows", "⏎": "enter", "␣": "space", "⌫": "bksp"}


class CardApp(App[str | None]):
    """A card table in the terminal; returns a line to print on exit (saved, or who won)."""

    CSS_PATH = "cardtui.tcss"
    TITLE = "cardtui"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True),
        Binding("f9", "toggle_dark", "Light/dark", show=False),
    ]

    def __init__(self, session: GameSession | None = None, *, ascii_only: bool = False,
                 pace: float = 0.0, defaults: MatchOptions | None = None) -> None:
        super().__init__()
        self.session = session
        self.ascii_only = ascii_only
        self.pace = pace
        self.defaults = defaults

    def on_mount(self) -> None:
        # A light terminal can ask for a light theme (any Textual theme name).
        theme = os.environ.get("CARDTUI_THEME")
        if theme in self.available_themes:
            self.theme = theme
        if self.session is not None and getattr(self.session, "match_started", True) is False:
            from tui.screens.seats import SeatsScreen

            self.push_screen(SeatsScreen(self.session))  # type: ignore[arg-type]
        elif self.session is not None:
            self.play(self.session)
        else:
            from tui.screens.start import StartScreen

            self.push_screen(StartScreen(self.defaults, self.ascii_only))

    def play(self, session: GameSession) -> None:
        """Show the game screen for `session` in place of whatever is showing."""
        self.session = session
        self.title = f"cardtui — {session.game.capitalize()}"
        screen = game_screen(session, self.ascii_only, self.pace)
        if len(self.screen_stack) > 1:
            self.switch_screen(screen)
        else:
            self.push_screen(screen)

    async def leave(self) -> None:
        """Close the session (a local match saves itself) and exit, saying how to resume."""
        session = self.session
        message = None
        if session is not None and not session.closed:
            await session.close()
            path = getattr(session, "save_path", None)
            if path is not None and path.exists():
                message = f"Match saved to {path}. Continue it with: cardtui play --resume"
        self.exit(message)

    def get_key_display(self, binding: Binding) -> str:
        # Terminals without Unicode get words for the arrow, enter and space symbols.
        shown = super().get_key_display(binding)
        if self.ascii_only:
            return ASCII_KEYS.get(shown, shown)
        return shown

    async def action_quit(self) -> None:
        await self.leave()
