"""The warm process of `cardtui serve`: it pays for Python, Textual and the lobby once, and forks.

Run as `python -m tui.warmstart --server http://127.0.0.1:7777 SOCKET`; it serves until its
stdin closes.

Starting Python and importing Textual costs a session about half a CPU-second, and a first app
in a process parses every stylesheet and fills Textual's caches. The warm process does all of
that once, drawing a lobby nobody sees, and then forks a child per session that shares the
pages and starts drawing at once.

Whoever connects to the warm process's Unix socket sends a JSON request ({"name", "env"}) with
either one descriptor, the slave side of the session's pty, which the child makes its
controlling terminal (the SSH door), or three, its stdin, stdout and stderr (a launcher, see
tui.commands.serve.launch). The warm process answers "pid N" on a line; the child writes
"exit N" on a line before it exits. The child ends when the connection closes;
any byte that arrives on it means the terminal was resized.

Sessions take turns drawing their first lobby, a few at a time (`Turns`): under a burst of
visitors they reach the lobby one after another instead of all of them late.
"""

from __future__ import annotations

import argparse
import fcntl
import gc
import json
import os
import select
import signal
import socket
import sys
import termios
import threading
import time
import traceback
from collections import deque
from typing import Any

FORWARDED_ENV = ("TERM", "LANG", "LC_ALL", "COLORTERM", "TEXTUAL_FPS", "TEXTUAL_COLOR_SYSTEM",
                 "COLUMNS", "ROWS", "TERM_PROGRAM", "TERM_PROGRAM_VERSION")
# The one driver a request may ask for instead of the terminal's: textual-serve's (the browser door).
WEB_DRIVER = "textual.drivers.web_driver:WebDriver"
REQUEST_SECONDS = 5.0  # a client that says nothing must not stall the rest
# Sessions drawing their first lobby at once: two per core keep the cores busy (while one
# waits, on the server say) without splitting them among everyone. On a quiet machine this
# finishes a burst as fast as one per core; on a busy one it keeps more of the cores' share.
DRAWING_AT_ONCE = 2 * (os.cpu_count() or 1)
# A session that has not drawn its lobby within this lets the next one start anyway.
TURN_SECONDS = 2.0
WARM_UP_SECONDS = 10.0
# How long a new session waits for the tables before it starts without them (it asks again).
LISTING_SECONDS = 1.0
MAX_LISTING_BYTES = 1 << 20
# Allocations between collections while a session draws its first frame (Python's default: 700).
START_GC_THRESHOLD = 200_000


def serve_warm(path: str, server: str) -> int:
    """Fork a lobby app for every request on the Unix socket at path, until stdin closes."""
    prepare(server)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)
    listener.listen(128)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C at the server's terminal is its to handle
    turns = Turns(DRAWING_AT_ONCE, TURN_SECONDS)
    print("warm", flush=True)
    while True:
        # The server holds our stdin: when it goes, so do we.
        ready, _, _ = select.select([listener, sys.stdin, *turns.drawing], [], [],
                                    turns.timeout())
        if sys.stdin in ready:
            return 0
        turns.finished([s for s in ready if s in turns.drawing])
        if listener in ready:
            _accept(listener, turns, server)
        turns.expire()


def _accept(listener: socket.socket, turns: Turns, server: str) -> None:
    """Take one request from the socket and fork its session's app."""
    conn, _ = listener.accept()
    conn.settimeout(REQUEST_SECONDS)
    fds: list[int] = []
    try:
        message, fds, _, _ = socket.recv_fds(conn, 4096, 3)
        request = json.loads(message)
    except (OSError, ValueError):
        request = None
    if len(fds) not in (1, 3) or not isinstance(request, dict):
        for fd in fds:
            os.close(fd)
        conn.close()
        return
    ours, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            listener.close()
            ours.close()
            turns.forget()
            conn.settimeout(None)
            code = _run_forked(conn, fds, request, server, theirs)
        except BaseException:  # noqa: BLE001  (whatever went wrong, the child ends here)
            traceback.print_exc()
        finally:
            os._exit(code)  # never back into the warm process's loop
    theirs.close()
    for fd in fds:
        os.close(fd)
    try:
        conn.sendall(f"pid {pid}\n".encode())
    except OSError:
        pass  # the requester left; the child notices the closed connection and ends
    conn.close()
    turns.add(ours)


class Turns:
    """New sessions draw their first lobby a few at a time, in the order they came."""

    def __init__(self, at_once: int, seconds: float) -> None:
        self.at_once = at_once
        self.seconds = seconds
        self.waiting: deque[socket.socket] = deque()
        self.drawing: dict[socket.socket, float] = {}

    def add(self, turn: socket.socket) -> None:
        """Queue a new session (the other end of turn is its); start it if there is room."""
        self.waiting.append(turn)
        self._start_next()

    def finished(self, turns: list[socket.socket]) -> None:
        """Note that these sessions drew their lobby (or ended) and start the next ones."""
        for turn in turns:
            self._end(turn)
        self._start_next()

    def expire(self) -> None:
        """Let the next sessions start in place of those whose turn has run out."""
        now = time.monotonic()
        for turn in [t for t, deadline in self.drawing.items() if deadline <= now]:
            self._end(turn)
        self._start_next()

    def timeout(self) -> float | None:
        """Return the seconds until the next turn runs out (None: nobody is drawing)."""
        if not self.drawing:
            return None
        return max(0.0, min(self.drawing.values()) - time.monotonic())

    def forget(self) -> None:
        """Close every turn (in a child: they are the warm process's, not its)."""
        for turn in [*self.waiting, *self.drawing]:
            turn.close()
        self.waiting.clear()
        self.drawing.clear()

    def _end(self, turn: socket.socket) -> None:
        del self.drawing[turn]
        turn.close()

    def _start_next(self) -> None:
        while self.waiting and len(self.drawing) < self.at_once:
            turn = self.waiting.popleft()
            try:
                turn.send(b"g")
            except OSError:  # that session is gone already
                turn.close()
                continue
            self.drawing[turn] = time.monotonic() + self.seconds


def _run_forked(conn: socket.socket, fds: list[int], request: dict[str, Any], server: str,
                turn: socket.socket) -> int:
    """Become the session's app on the terminal in fds once it is our turn; the exit status."""
    from tui.ssh_entry import run_app

    code = 1
    try:
        os.setsid()  # signals meant for the warm process must not reach sessions
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if len(fds) == 1:
            fcntl.ioctl(fds[0], termios.TIOCSCTTY, 0)  # the session's pty is our terminal now
            fds = fds * 3
        operator_log = os.dup(2)  # the server's own stderr, before the session's takes its place
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in set(fds) - {0, 1, 2}:
            os.close(fd)
        environment = request.get("env", {})
        if isinstance(environment, dict):
            os.environ.update({k: str(v) for k, v in environment.items() if k in FORWARDED_ENV})
            _use_driver(environment.get("TEXTUAL_DRIVER"))
        # The streams were made for the warm process's pipes; the app needs the terminal's.
        # Textual's driver reads and writes sys.__stdin__ and sys.__stderr__, so those are
        # replaced too, though typeshed declares them Final (which fits any other program).
        stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
        stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stdin = sys.__stdin__ = stdin  # type: ignore[misc]
        sys.stdout = sys.__stdout__ = stdout  # type: ignore[misc]
        sys.stderr = sys.__stderr__ = stderr  # type: ignore[misc]
        threading.Thread(target=_follow_requester, args=(conn,), daemon=True).start()
        # Asked before our turn, so the answer's wait overlaps the queue's.
        listing = fetch_listing(server, LISTING_SECONDS)
        turn.recv(1)  # our turn (or the warm process is gone: then nobody waits for one)
        # The first frame allocates much and frees little: collecting while it is drawn would
        # only look at objects that are still in use. (Collections become rare, not impossible:
        # a session that never draws still collects.)
        thresholds = gc.get_threshold()
        gc.set_threshold(START_GC_THRESHOLD, *thresholds[1:])

        def drawn() -> None:
            gc.set_threshold(*thresholds)
            try:
                turn.send(b"d")
            except OSError:
                pass
            turn.close()

        visitor = request.get("visitor")
        code = run_app(server, str(request.get("name", "player")), settings=_SETTINGS,
                       on_drawn=drawn, listing=listing,
                       visitor=visitor if isinstance(visitor, str) else None,
                       operator_log=operator_log)
    finally:
        try:
            conn.sendall(f"exit {code}\n".encode())
        except OSError:
            pass
    return code


def fetch_listing(server: str, timeout: float) -> tuple[list[Any], int] | None:
    """Return the tables and the listing's version from server's API, or None if it fails.

    Blocking and plain: a first frame that shows the tables needs no second drawing, and this
    costs a fraction of the app's own HTTP client's first request.
    """
    from http.client import HTTPConnection, HTTPException
    from urllib.parse import urlsplit

    from netplay.table.service import TableInfo

    address = urlsplit(server)
    connection = HTTPConnection(address.hostname or "127.0.0.1", address.port, timeout=timeout)
    try:
        connection.request("GET", "/tables")
        response = connection.getresponse()
        data = json.loads(response.read(MAX_LISTING_BYTES)) if response.status == 200 else None
        if not isinstance(data, dict) or type(data.get("version")) is not int:
            return None
        return [TableInfo.from_json(t) for t in data["tables"]], data["version"]
    except (OSError, HTTPException, ValueError, KeyError, TypeError):
        return None
    finally:
        connection.close()


def _use_driver(driver: object) -> None:
    """Set what Textual read from the environment when the warm process imported it."""
    import textual.constants

    # Textual declares its constants Final (read once, at import): here they are read again.
    if driver == WEB_DRIVER:
        os.environ["TEXTUAL_DRIVER"] = WEB_DRIVER
        textual.constants.DRIVER = WEB_DRIVER  # type: ignore[misc]
    textual.constants.COLOR_SYSTEM = os.environ.get(  # type: ignore[misc]
        "TEXTUAL_COLOR_SYSTEM", textual.constants.COLOR_SYSTEM)


def _follow_requester(conn: socket.socket) -> None:
    """Turn each byte from the requester into SIGWINCH, and end the app when it hangs up."""
    while True:
        try:
            data = conn.recv(64)
        except OSError:
            data = b""
        if not data:
            os._exit(0)  # the session is gone: nobody is watching
        os.kill(os.getpid(), signal.SIGWINCH)


_SETTINGS: Any = None


def prepare(server: str) -> None:
    """Import, parse and draw once what every session needs, so children start from it."""
    global _SETTINGS
    from textual.drivers.linux_driver import LinuxDriver  # noqa: F401

    from tui.screens import hekata, zodiak  # noqa: F401
    from tui.settings import load_settings

    _SETTINGS = load_settings()  # the operator's settings, read once rather than per session
    fetch_listing(server, WARM_UP_SECONDS)  # imports what it needs
    share_parsed_css()
    try:
        _draw_lobby_once(server)
    except Exception:  # noqa: BLE001  (sessions still start, only less warm)
        traceback.print_exc()
    gc.collect()
    gc.freeze()  # keeps the collector from touching, and so copying, the shared pages


def _draw_lobby_once(server: str) -> None:
    """Run the lobby app without a terminal until it has shown the tables, then quit it."""
    from textual.pilot import Pilot

    from netplay.table.service import TablesClient
    from tui.ssh_entry import ServerApp

    app = ServerApp(TablesClient(server), "warm-up", settings=_SETTINGS)
    drawn = threading.Event()
    app.on_drawn = drawn.set

    async def leave_when_drawn(pilot: Pilot[Any]) -> None:
        deadline = time.monotonic() + WARM_UP_SECONDS
        while not drawn.is_set() and time.monotonic() < deadline:
            await pilot.pause(0.02)
        await pilot.pause(0.2)  # and settled: sessions run those passes too, on warm code
        pilot.app.exit()

    app.run(headless=True, size=(80, 24), auto_pilot=leave_when_drawn)


def share_parsed_css() -> None:
    """Parse each stylesheet, style and set of variables once per process instead of once per app.

    Textual re-parses every source whenever a widget class brings new CSS, into a cache that
    dies with that stylesheet; it tokenizes the theme's variables and parses inline styles
    ("bold $accent") once per stylesheet too. Nothing parsed is changed afterwards, so one cache
    keyed by what was parsed (and the variables it was parsed with) serves every app.
    """
    from textual.css.model import RuleSet
    from textual.css.stylesheet import Stylesheet
    from textual.css.tokenize import tokenize_values
    from textual.style import Style

    parse_rules = Stylesheet._parse_rules
    if getattr(parse_rules, "shared", False):
        return
    parsed: dict[tuple[Any, ...], Any] = {}
    variable_tokens: dict[tuple[tuple[str, str], ...], Any] = {}
    styles: dict[tuple[str, int], Style] = {}
    parse_style = Stylesheet.parse_style

    def shared_parse_rules(self: Stylesheet, css: str, read_from: Any,
                           is_default_rules: bool = False, tie_breaker: int = 0,
                           scope: str = "") -> Any:
        key = (css, read_from, is_default_rules, tie_breaker, scope,
               tuple(sorted(self._variables.items())))
        rules = parsed.get(key)
        if rules is None:
            rules = parsed[key] = parse_rules(self, css, read_from, is_default_rules,
                                              tie_breaker, scope)
        return rules

    def shared_variable_tokens(self: Stylesheet) -> Any:
        tokens = self._Stylesheet__variable_tokens  # type: ignore[attr-defined]
        if tokens is None:
            key = tuple(sorted(self._variables.items()))
            tokens = variable_tokens.get(key)
            if tokens is None:
                tokens = variable_tokens[key] = tokenize_values(self._variables)
            self._Stylesheet__variable_tokens = tokens  # type: ignore[attr-defined]
        return tokens

    def shared_parse_style(self: Stylesheet, style_text: str | Style) -> Style:
        if isinstance(style_text, Style):
            return style_text
        # The app's variables ($accent) are substituted: they are shared by content (above),
        # so their identity names them (a theme changed with F9 gets other styles).
        key = (style_text, id(self._variable_tokens))
        style = styles.get(key)
        if style is None:
            style = styles[key] = parse_style(self, style_text)
        return style

    # The ignores: Textual's methods are replaced, and a private attribute set, on purpose.
    shared_parse_rules.shared = True  # type: ignore[attr-defined]
    Stylesheet._parse_rules = shared_parse_rules  # type: ignore[method-assign]
    Stylesheet._variable_tokens = property(shared_variable_tokens)  # type: ignore[assignment]
    Stylesheet.parse_style = shared_parse_style  # type: ignore[method-assign]
    # A rule set hashes by identity: the C slot does that without a Python call per lookup,
    # and matching a widget to the rules looks each rule up several times.
    RuleSet.__hash__ = object.__hash__  # type: ignore[method-assign]


def main(argv: list[str] | None = None) -> int:
    """Be the process sessions fork from."""
    parser = argparse.ArgumentParser(prog="python -m tui.warmstart", description=__doc__)
    parser.add_argument("--server", required=True, help="the server's HTTP address")
    parser.add_argument("socket", help="the Unix socket to listen on (it must not exist)")
    args = parser.parse_args(argv)
    return serve_warm(args.socket, args.server)


if __name__ == "__main__":
    sys.exit(main())
