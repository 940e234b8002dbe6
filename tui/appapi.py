"""What the screens ask of the app they run in, as types they can name.

The screens run in tui.app.CardApp (over SSH, in its lobby subclass) but cannot import it: it
imports them. Textual types a screen's `app` as any App, so a screen reaching for CardApp's own
methods names them through these protocols, and tui/app.py and tui/ssh_entry.py have mypy check
that their apps provide them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, cast

from textual.app import App

from netplay.session.events import GameSession
from tui.settings import Settings


class CardAppAPI(Protocol):
    """The part of tui.app.CardApp that screens use."""

    settings: Settings
    next_command: list[str] | None

    def play(self, session: GameSession) -> None: ...

    async def leave(self) -> None: ...

    def after_match(self, title: str) -> None: ...

    def can_rematch(self) -> bool: ...

    def rematch(self) -> None: ...

    def update_settings(self, settings: Settings) -> None: ...

    def open_settings(self, after: Callable[[], None] | None = None) -> None: ...


class LobbyAppAPI(CardAppAPI, Protocol):
    """The SSH server's app, which also seats its player at the lobby's tables."""

    async def sit(self, room: str, *, owner: bytes | None = None,
                  watch: bool = False) -> str | None: ...


def card_app(app: App[Any]) -> CardAppAPI:
    """A screen's `app` as the CardApp it runs in (a cast: the screens run in no other app)."""
    return cast("CardAppAPI", app)


def lobby_app(app: App[Any]) -> LobbyAppAPI:
    """The lobby screen's `app` as the SSH server's app it runs in (a cast, as above)."""
    return cast("LobbyAppAPI", app)
