"""The cardtui Textual app: a start screen, then a game screen fed by a GameSession."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, ClassVar

from textual import events
from textual.app import App
from textual.binding import Binding, BindingType
from textual.content import Content

from netplay.session.events import GameSession
from tui.matchsetup import MatchOptions
from tui.screens.game import GameScreen
from tui.settings import Settings, load_settings, record_match, record_trick, save_settings
from tui.widgets import scrollbars

if TYPE_CHECKING:
    from tui.appapi import CardAppAPI
    from tui.screens.netstart import JoinFailure

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
    SETTINGS_KEPT = True  # the settings screen saves them for next time
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True),
        Binding("f9", "toggle_dark", "Light/dark", show=False),
    ]

    def __init__(self, session: GameSession | None = None, *, ascii_only: bool = False,
                 pace: float = 0.0, defaults: MatchOptions | None = None,
                 settings: Settings | None = None,
                 join_failure: JoinFailure | None = None) -> None:
        super().__init__()
        scrollbars.install()
        self.session = session
        self.settings = settings if settings is not None else load_settings()
        self.ascii_only = ascii_only or self.settings.card_style == "ascii"
        self.set_class(self.ascii_only, "-ascii")
        self.pace = pace
        self.defaults = defaults
        self.join_failure = join_failure  # why the last Join from the start screen failed
        self.began_at_start = False  # a finished match goes back to the start screen then
        # A `cardtui` command line to run once this app ends (host or join, chosen at the start).
        self.next_command: list[str] | None = None
        # Where the join screen looks for tables: every interface, or those listed (tests: loopback).
        listed = os.environ.get("CARDTUI_LAN_INTERFACES", "")
        self.lan_interfaces = [a.strip() for a in listed.split(",") if a.strip()] or None

    def on_mount(self, event: events.Mount) -> None:
        # The event is taken, though not used, so that the SSH server's app (whose own handler
        # stops this one with it) overrides this handler with the same signature.
        # A light terminal can ask for a light theme (any Textual theme name); else the saved one.
        theme = os.environ.get("CARDTUI_THEME") or self.settings.theme
        if theme in self.available_themes:
            self.theme = theme
        if self.session is not None and getattr(self.session, "match_started", True) is False:
            from netplay.seat.remote import RemoteSession
            from tui.screens.seats import SeatsScreen

            assert isinstance(self.session, RemoteSession)  # the only session that waits so
            self.push_screen(SeatsScreen(self.session))
        elif self.session is not None:
            self.play(self.session)
        else:
            from tui.screens.start import StartScreen

            self.began_at_start = True
            self.push_screen(StartScreen(self.defaults, self.ascii_only, self.join_failure))

    def watch_theme(self, theme: str) -> None:
        # A theme chosen with F9 or in the settings is the theme next time. (The theme set as the
        # app mounts is the saved one, or CARDTUI_THEME's: neither is saved.)
        if theme != self.settings.theme and not os.environ.get("CARDTUI_THEME"):
            self.update_settings(replace(self.settings, theme=theme))

    def update_settings(self, settings: Settings) -> None:
        """Use and save new settings; a settings file that cannot be written is only reported."""
        self.settings = settings
        try:
            save_settings(settings)
        except OSError as exc:
            self.notify(f"Settings not saved: {exc}", severity="warning")

    def open_settings(self, after: Callable[[], None] | None = None) -> None:
        """Show the settings screen; saved settings apply at once (cards: from the next screen)."""
        from tui.screens.settings import SettingsScreen

        def apply(chosen: Settings | None) -> None:
            if chosen is None:
                return
            self.update_settings(chosen)
            if chosen.theme in self.available_themes and not os.environ.get("CARDTUI_THEME"):
                self.theme = chosen.theme
            self.ascii_only = chosen.card_style == "ascii"
            self.set_class(self.ascii_only, "-ascii")
            self.pace = chosen.speed
            self.notify("Settings saved." if self.SETTINGS_KEPT else
                        "Settings changed for this session.", timeout=2)
            if after is not None:
                after()

        self.push_screen(SettingsScreen(self.settings, sorted(self.available_themes),
                                        kept=self.SETTINGS_KEPT), apply)

    def record_result(self, game: str, won: bool) -> None:
        """Count a finished match in the saved statistics."""
        try:
            record_match(game, won)
        except OSError as exc:
            self.notify(f"Statistics not saved: {exc}", severity="warning")

    def record_trick(self, total: int) -> None:
        """Remember your best Hekata trick."""
        try:
            record_trick(total)
        except OSError:
            pass  # statistics are a nicety; a read-only data directory must not stop play

    def can_rematch(self) -> bool:
        """Whether the match that just ended can be played again with the same seats: against
        bots always; at a networked table the host offers it and a seated person accepts."""
        from netplay.seat.remote import RemoteSession
        from netplay.session.local import LocalMatch

        session = self.session
        if isinstance(session, RemoteSession):
            if session.closed or session.gone is not None:
                return False  # the table closed (its rematch window ran out, say)
            return session.may_offer_rematch or (session.my_seat is not None
                                                 and session.rematch_offered)
        return isinstance(session, LocalMatch)

    def rematch(self) -> None:
        """A new match with the same seats, names, signs and house rules, freshly dealt."""
        from netplay.seat.remote import RemoteSession
        from netplay.session.local import LocalMatch

        old = self.session
        if isinstance(old, RemoteSession):
            # The host offers (offering accepts for its own seat); a joined seat accepts.
            if old.rematch_offered:
                self.run_worker(old.set_ready(True))
                self.notify("You accepted the rematch: it starts when everyone has.", timeout=4)
            else:
                self.run_worker(old.offer_rematch())
                self.notify("Rematch offered: it starts when everyone has accepted.", timeout=4)
            return
        assert isinstance(old, LocalMatch) and old.match is not None  # a match just ended
        self.play(LocalMatch.new(old.game, list(old.seats), my_seat=old.my_seat or 0,
                                 delay=old.delay, save_path=old.save_path,
                                 house=old.match.house, think=old.think))

    def play(self, session: GameSession) -> None:
        """Show the game screen for `session` in place of whatever is showing."""
        self.session = session
        self.title = f"cardtui {'-' if self.ascii_only else '—'} {session.game.capitalize()}"
        screen = game_screen(session, self.ascii_only, self.pace)
        if len(self.screen_stack) > 1:
            self.switch_screen(screen)
        else:
            self.push_screen(screen)

    def after_match(self, title: str) -> None:
        """Leave a finished match (`title` says who won): back to the start screen it was
        begun from, else exit, saying it."""
        session = self.session
        if not self.began_at_start or session is None:
            self.exit(title)
            return
        from tui.screens.start import StartScreen

        self.session = None
        self.run_worker(session.close(), exit_on_error=False)
        self.notify(title, timeout=6)
        self.switch_screen(StartScreen(self.defaults, self.ascii_only))

    async def leave(self) -> None:
        """Close the session (a local match saves itself) and exit, saying how to resume."""
        session = self.session
        message = None
        if session is not None and not session.closed:
            await session.close(leave=True)  # chosen: a networked seat's bot plays it at once
            path = getattr(session, "save_path", None)
            if path is not None and path.exists():
                message = f"Match saved to {path}. Continue it with: cardtui play --resume"
        self.exit(message)

    def format_title(self, title: str, sub_title: str) -> Content:
        if not self.ascii_only or not sub_title:
            return super().format_title(title, sub_title)
        return Content.assemble(Content(title), (" - ", "dim"), Content(sub_title).stylize("dim"))

    def get_key_display(self, binding: Binding) -> str:
        # Terminals without Unicode get words for the arrow, enter and space symbols.
        shown = super().get_key_display(binding)
        if self.ascii_only:
            return ASCII_KEYS.get(shown, shown)
        return shown

    async def action_quit(self) -> None:
        await self.leave()


if TYPE_CHECKING:
    # The screens reach this app through tui.appapi's protocol: mypy checks that it fits.
    _SCREENS_VIEW: type[CardAppAPI] = CardApp
