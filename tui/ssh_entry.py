"""The program `cardtui serve` runs for each SSH (or browser) session: the lobby, then a table.

Run as `python -m tui.ssh_entry --server http://127.0.0.1:7777 --name alice`.
"""

from __future__ import annotations

import argparse
import io
import sys
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

import aiohttp
from rich.console import Console, RenderableType
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.theme import Theme

from netplay.messages import ProtocolError
from netplay.protocol import clean_name
from netplay.relay.client import RelayRefused
from netplay.relay.wire import format_room_code
from netplay.seat.keyfile import SeatIdentity
from netplay.seat.remote import RemoteSession
from netplay.table.service import TableInfo, TablesClient
from tui.app import CardApp
from tui.appapi import LobbyAppAPI
from tui.literal import literal
from tui.screens.game import GameScreen
from tui.screens.lobby import LobbyScreen
from tui.settings import Settings

SEAT_TIMEOUT = 10.0
CRASHED = ("cardtui: this session stopped at an error ({kind}). Please tell the server's operator;"
           " you can connect again.")
# The CSS variables of each theme an app has used, with the theme they were made from.
_THEME_VARIABLES: dict[str, tuple[Theme, dict[str, str]]] = {}


class ServerApp(CardApp):
    """CardApp that starts at the server's lobby and returns there when a match is left or ends."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True),
        Binding("ctrl+s", "start_now", "Start now", key_display="^s"),
    ]

    def __init__(self, tables: TablesClient, name: str, *, ascii_only: bool = False,
                 settings: Settings | None = None,
                 on_drawn: Callable[[], None] | None = None,
                 listing: tuple[list[TableInfo], int] | None = None,
                 operator_log: int | None = None) -> None:
        super().__init__(None, ascii_only=ascii_only, settings=settings)
        self.operator_log = operator_log  # a descriptor of the server's log, if it has one
        self._told_operator = False
        self.tables = tables
        self.first_listing = listing
        self.player_name = name
        self.owner: bytes | None = None
        self._identities: dict[str, SeatIdentity] = {}  # room: this visitor's seat secret there
        self._quitting = False
        # Called once the lobby is on screen (the warm process's turns).
        self.on_drawn = on_drawn
        self._notified = False

    def get_css_variables(self) -> dict[str, str]:
        # A theme's colours are worked out once per warm process rather than once per session.
        theme = self.current_theme
        known = _THEME_VARIABLES.get(theme.name)
        if known is None or known[0] is not theme:
            known = _THEME_VARIABLES[theme.name] = (theme, super().get_css_variables())
        self.theme_variables = dict(known[1])
        return dict(known[1])

    SETTINGS_KEPT = False  # the settings file is the operator's: a visitor's last a session

    def update_settings(self, settings: Settings) -> None:
        self.settings = settings


    # The statistics file is the operator's, as the settings file is, and a session has no
    # screen that shows statistics: a visitor's matches and tricks are not counted.
    def record_result(self, game: str, won: bool) -> None:
        pass

    def record_trick(self, total: int) -> None:
        pass

    # Textual shows the traceback on the terminal, with its local variables and the server's
    # paths: here that terminal is a stranger's. They get a sentence, and the traceback goes to
    # the operator's log (that of `cardtui serve`, for a warm session). An error in the app
    # comes through _handle_exception, one in the driver's input thread through panic.
    def _handle_exception(self, error: Exception) -> None:
        self._tell_operator("".join(traceback.format_exception(error)))
        super()._handle_exception(error)
        self._exit_renderables[:] = [Text(CRASHED.format(kind=type(error).__name__))]

    def panic(self, *renderables: RenderableType) -> None:
        written = io.StringIO()
        Console(file=written, width=100, color_system=None).print(*renderables)
        self._tell_operator(written.getvalue())
        super().panic(*renderables)
        self._exit_renderables[:] = [Text(CRASHED.format(kind="reading the terminal"))]

    def _tell_operator(self, text: str) -> None:
        """Write the first error that stops the session to the operator's log."""
        if self.operator_log is not None and not self._told_operator:
            self._told_operator = True
            with open(self.operator_log, "w", closefd=False) as log:
                log.write(f"cardtui: the session of {self.player_name!r} stopped at an error:\n"
                          + text)

    def get_default_screen(self) -> LobbyScreen:
        # The lobby is the first screen rather than pushed over a blank one: one screen to
        # compose and draw at start-up instead of two.
        return LobbyScreen(self.tables, self.player_name, self.first_listing)

    def _refresh_notifications(self) -> None:
        # Until there has been a notification, the toast rack is hidden as its CSS has it:
        # Textual would hide it again on every new screen and lay that screen out once more.
        self._notified = self._notified or bool(self._notifications)
        if self._notified:
            super()._refresh_notifications()

    def on_mount(self, event: events.Mount) -> None:
        event.prevent_default()  # CardApp's own handler would open the start screen as well

    def on_ready(self) -> None:
        # Textual's Ready: the first frame is out. The passes that settle it cost a tenth of the
        # start and are mostly waits for the next frame, which a session need not hold its turn for.
        if self.on_drawn is not None:
            self.on_drawn()

    async def on_unmount(self) -> None:
        await self.tables.close()

    async def sit(self, room: str, *, owner: bytes | None = None, watch: bool = False) -> str | None:
        """Take a seat (or watch) at room and show its table; on failure return why, in words."""
        # The same seat secret for every sitting at one table in this session, so that the
        # dealer gives back the seat a bot kept while this visitor was in the lobby.
        identity = self._identities.setdefault(room, SeatIdentity())
        session = RemoteSession(game="", url=self.tables.relay_url, room=room,
                                name=self.player_name, owner=owner, watch=watch,
                                identity=identity, sign=self.settings.sign or None)
        session.after_match = True  # any seat may offer a rematch here; leaving closes it
        try:
            await session.start()
            await session.wait_seated(SEAT_TIMEOUT)
        except (RelayRefused, ProtocolError) as exc:
            await session.close()
            return f"Could not sit at {format_room_code(room)}: {exc}"
        except (OSError, aiohttp.ClientError, TimeoutError) as exc:
            await session.close()
            return f"The table {format_room_code(room)} did not answer: {exc or 'timed out'}"
        self.owner = owner
        self.play(session)
        if session.my_seat is None and not watch:
            self.notify("The table is full or has started: you are watching.")
        elif owner is not None:
            self.notify("The match starts when every seat is taken; ctrl+s starts it now,"
                        " with bots in the empty seats.", timeout=8)
        return None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "start_now":
            session = self.session
            return (self.owner is not None and isinstance(session, RemoteSession)
                    and session.view is None and not session.closed)
        return True

    async def action_start_now(self) -> None:
        if isinstance(self.session, RemoteSession):
            await self.session.start_match()

    async def leave(self) -> None:
        """Leave the table for the lobby (the seat's place is kept for a while by the dealer)."""
        session, self.session, self.owner = self.session, None, None
        if session is not None and not session.closed:
            await session.close(leave=True)  # chosen: the seat's bot plays it from now on
        if self._quitting or not isinstance(self.screen, GameScreen):
            super().exit()
            return
        self.title = "cardtui"
        while len(self.screen_stack) > 1:  # back to the lobby underneath, which kept watching
            self.pop_screen()
        self.sub_title = "lobby"

    def exit(self, result: str | None = None, return_code: int = 0,
             message: RenderableType | None = None) -> None:
        # The game screen exits the app when a match ends; on a server that means the lobby.
        if not self._quitting and isinstance(self.screen, GameScreen):
            if result:
                self.notify(literal(result).plain, timeout=8, markup=False)
            self.call_later(self.leave)
            return
        super().exit(result, return_code, message)

    async def action_quit(self) -> None:
        self._quitting = True
        await self.leave()


def run_app(server: str, name: str, ascii_only: bool = False, settings: Settings | None = None,
            on_drawn: Callable[[], None] | None = None,
            listing: tuple[list[TableInfo], int] | None = None,
            visitor: str | None = None, operator_log: int | None = None) -> int:
    """Run the lobby app on this process's terminal until the player quits; the exit status.
    The tables it opens count against the `visitor`'s address; an error it stops at is written
    to the descriptor `operator_log`."""
    app = ServerApp(TablesClient(server, visitor), clean_name(name, "player"),
                    ascii_only=ascii_only, settings=settings, on_drawn=on_drawn,
                    listing=listing, operator_log=operator_log)
    app.run()
    return app.return_code or 0


if TYPE_CHECKING:
    # The lobby screen reaches this app through tui.appapi's protocol: mypy checks that it fits.
    _LOBBY_VIEW: type[LobbyAppAPI] = ServerApp


def main(argv: list[str] | None = None) -> int:
    """Run the lobby app for one session."""
    parser = argparse.ArgumentParser(prog="python -m tui.ssh_entry", description=__doc__)
    parser.add_argument("--server", required=True, help="the server's HTTP address")
    parser.add_argument("--name", default="player", help="your name at the tables")
    parser.add_argument("--ascii", action="store_true", help="no Unicode suit symbols")
    parser.add_argument("--visitor", help="the address of the visitor this session is for: the"
                        " tables it opens count against it")
    args = parser.parse_args(argv)
    return run_app(args.server, args.name, args.ascii, visitor=args.visitor)


if __name__ == "__main__":
    sys.exit(main())
