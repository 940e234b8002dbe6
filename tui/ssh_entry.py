"""The program `cardtui serve` runs for each SSH (or browser) session: the lobby, then a table.

Run as `python -m tui.ssh_entry --server http://127.0.0.1:7777 --name alice`.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import socket
import sys
import threading
import traceback
from typing import Any, ClassVar

import aiohttp
from textual import events
from textual.binding import Binding, BindingType

from netplay.messages import ProtocolError
from netplay.protocol import clean_name
from netplay.relay.client import RelayRefused
from netplay.relay.wire import format_room_code
from netplay.seat.remote import RemoteSession
from netplay.table.service import TablesClient
from tui.app import CardApp
from tui.literal import literal
from tui.screens.game import GameScreen
from tui.screens.lobby import LobbyScreen

SEAT_TIMEOUT = 10.0


class ServerApp(CardApp):
    """CardApp that starts at the server's lobby and returns there when a match is left or ends."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True),
        Binding("ctrl+s", "start_now", "Start now", key_display="^s"),
    ]

    def __init__(self, tables: TablesClient, name: str, *, ascii_only: bool = False) -> None:
        super().__init__(None, ascii_only=ascii_only)
        self.tables = tables
        self.player_name = name
        self.owner: bytes | None = None
        self._quitting = False

    def on_mount(self, event: events.Mount) -> None:
        event.prevent_default()  # CardApp's own handler would open the start screen as well
        self.push_screen(LobbyScreen(self.tables, self.player_name))

    async def on_unmount(self) -> None:
        await self.tables.close()

    async def sit(self, room: str, *, owner: bytes | None = None, watch: bool = False) -> str | None:
        """Take a seat (or watch) at room and show its table; on failure return why, in words."""
        session = RemoteSession(game="", url=self.tables.relay_url, room=room,
                                name=self.player_name, owner=owner, watch=watch)
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
            await session.close()
        if self._quitting or not isinstance(self.screen, GameScreen):
            super().exit()
            return
        self.title = "cardtui"
        self.switch_screen(LobbyScreen(self.tables, self.player_name))

    def exit(self, result: str | None = None, return_code: int = 0,
             message: object | None = None) -> None:
        # The game screen exits the app when a match ends; on a server that means the lobby.
        if not self._quitting and isinstance(self.screen, GameScreen):
            if result:
                self.notify(literal(result).plain, timeout=8, markup=False)
            self.call_later(self.leave)
            return
        super().exit(result, return_code, message)  # type: ignore[arg-type]

    async def action_quit(self) -> None:
        self._quitting = True
        await self.leave()


def run_app(server: str, name: str, ascii_only: bool = False) -> int:
    """Run the lobby app on this process's terminal until the player quits; the exit status."""
    app = ServerApp(TablesClient(server), clean_name(name, "player"), ascii_only=ascii_only)
    app.run()
    return app.return_code or 0


def main(argv: list[str] | None = None) -> int:
    """Run the lobby app for one session, or (with --warm) be the process sessions fork from."""
    parser = argparse.ArgumentParser(prog="python -m tui.ssh_entry", description=__doc__)
    parser.add_argument("--server", required=True, help="the server's HTTP address")
    parser.add_argument("--name", default="player", help="your name at the tables")
    parser.add_argument("--ascii", action="store_true", help="no Unicode suit symbols")
    parser.add_argument("--warm", metavar="SOCKET",
                        help="listen on this Unix socket and fork a ready app per launcher")
    args = parser.parse_args(argv)
    if args.warm:
        return serve_warm(args.warm, args.server)
    return run_app(args.server, args.name, args.ascii)


# -- the warm process ----------------------------------------------------------------------
# Starting Python and importing Textual costs a session about half a CPU-second. The warm
# process pays it once; each launcher (see tui.commands.serve.launch) hands it the session's
# terminal and it forks a child that is ready at once and shares the imported pages.


def serve_warm(path: str, server: str) -> int:
    """Fork a lobby app for every launcher that connects to the Unix socket at path."""
    import gc

    from tui.screens import hekata, zodiak  # noqa: F401  (imported now so children share them)

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)
    listener.listen(64)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C at the server's terminal is its to handle
    gc.freeze()  # keeps the collector from touching, and so copying, the shared pages
    print("warm", flush=True)
    while True:
        # The server holds our stdin: when it goes, so do we.
        ready, _, _ = select.select([listener, sys.stdin], [], [])
        if sys.stdin in ready:
            return 0
        conn, _ = listener.accept()
        conn.settimeout(REQUEST_SECONDS)  # a launcher that says nothing must not stall the rest
        try:
            message, fds, _, _ = socket.recv_fds(conn, 4096, 3)
            request = json.loads(message)
        except (OSError, ValueError):
            conn.close()
            continue
        if len(fds) == 3 and isinstance(request, dict) and os.fork() == 0:
            listener.close()
            conn.settimeout(None)
            code = 1
            try:
                code = _run_forked(conn, fds, request, server)
            except BaseException:  # noqa: BLE001  (whatever went wrong, the child ends here)
                traceback.print_exc()
            finally:
                os._exit(code)  # never back into the loop above: that is the warm process's
        for fd in fds:
            os.close(fd)
        conn.close()


def _run_forked(conn: socket.socket, fds: list[int], request: dict[str, Any], server: str) -> int:
    """Become the session's app on the terminal in fds; the exit status."""
    code = 1
    try:
        os.setsid()  # signals meant for the warm process must not reach sessions
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in set(fds) - {0, 1, 2}:
            os.close(fd)
        environment = request.get("env", {})
        os.environ.update({k: str(v) for k, v in environment.items() if k in FORWARDED_ENV})
        # The streams were made for the warm process's pipes; the app needs the terminal's.
        sys.stdin = sys.__stdin__ = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stdout = sys.__stdout__ = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = sys.__stderr__ = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        threading.Thread(target=_follow_launcher, args=(conn,), daemon=True).start()
        code = run_app(server, str(request.get("name", "player")))
    finally:
        try:
            conn.sendall(f"{code}\n".encode())
        except OSError:
            pass
    return code


def _follow_launcher(conn: socket.socket) -> None:
    """Pass the launcher's resize notes on as SIGWINCH, and end the app when the launcher ends."""
    while True:
        try:
            data = conn.recv(64)
        except OSError:
            data = b""
        if not data:
            os._exit(0)  # the launcher (so the SSH session) is gone: nobody is watching
        os.kill(os.getpid(), signal.SIGWINCH)


FORWARDED_ENV = ("TERM", "LANG", "LC_ALL", "COLORTERM")
REQUEST_SECONDS = 5.0


if __name__ == "__main__":
    sys.exit(main())
