"""The browser door of `cardtui serve`: the lobby app in a web page, with the SSH door's rules.

A page (our own: no web fonts or scripts from elsewhere), textual-serve's terminal script and
stylesheet, and a WebSocket per tab that runs the session program through textual-serve's
AppService. The SSH door's password (HTTP Basic authentication), login throttle, session limits
and terminal size cap apply; a WebSocket whose Origin is not one of the allowed origins is
refused, so other web sites cannot drive sessions in a visitor's browser.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hmac
import json
import logging
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import textual_serve
from aiohttp import WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager

from netplay.protocol import clean_name
from netplay.ssh.guard import (
    LoginThrottle,
    PacedReads,
    ReadBudget,
    SessionCounter,
    capped_size,
    log_failure,
    log_success,
)
from netplay.ssh.input_filter import InputFilter

log = logging.getLogger("cardtui.door")

STATIC = Path(textual_serve.__file__).parent / "static"
# Only these files are served: nothing is listed, nothing else under the directory is reachable.
STATIC_FILES = {
    "css/xterm.css": "text/css",
    "js/textual.js": "text/javascript",
    "fonts/RobotoMono-VariableFont_wght.ttf": "font/ttf",
    "fonts/RobotoMono-Italic-VariableFont_wght.ttf": "font/ttf",
    "images/background.png": "image/png",
}
MAX_MESSAGE_BYTES = 64 * 1024
# Bytes a second read from a terminal WebSocket, per address and from all (as the SSH door's,
# netplay/ssh/guard.py ReadBudget): a keystroke or a click is a message of a few dozen bytes,
# and each costs the server's one event loop about 3 us a byte in the worst case (pings).
READ_PER_ADDRESS = 16 * 1024
READ_TOTAL = 64 * 1024
REALM = "cardtui"
_TEXTUAL_SERVE_SETS = ("TEXTUAL_DRIVER", "TEXTUAL_FPS", "TEXTUAL_COLOR_SYSTEM", "TERM_PROGRAM",
                       "TERM_PROGRAM_VERSION")
DEFAULT_NAME = "guest"

PAGE = """<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>cardtui</title>
<link rel="stylesheet" href="static/css/xterm.css">
<style>
@font-face { font-family: "Roboto Mono";
  src: url("static/fonts/RobotoMono-VariableFont_wght.ttf") format("truetype"); }
html, body { margin: 0; height: 100%; background: #0c181f; color: #eee; }
#terminal { position: absolute; inset: 0; }
.closed { display: none; position: absolute; inset: 0; align-items: center;
  justify-content: center; font-family: "Roboto Mono", monospace; z-index: 10; }
body.-closed .closed { display: flex; }
</style>
<script src="static/js/textual.js"></script>
</head>
<body>
<div class="closed"><p>Session ended. Reload the page to start again.</p></div>
<div id="terminal" class="textual-terminal" data-font-size="16"></div>
<script>
// The socket is named from the address the browser itself shows, not from a request header.
document.getElementById("terminal").dataset.sessionWebsocketUrl =
  (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws";
</script>
</body>
</html>
"""

class _SessionProgram(AppService):
    """textual-serve's AppService with the door's minimal environment instead of the server's."""

    def __init__(self, environment: dict[str, str], *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._environment = environment

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        full = super()._build_environment(width, height)
        # Only what textual-serve itself sets: the server's own TEXTUAL_* settings stay out.
        textual = {k: v for k, v in full.items() if k in _TEXTUAL_SERVE_SETS}
        return {**self._environment, **textual, "COLUMNS": str(width), "ROWS": str(height)}


class WebDoor:
    """The browser door's aiohttp application and the rules it shares with the SSH door."""

    # command(name, address): the argv of the program a visitor from address runs as name.
    def __init__(self, command: Callable[[str, str], Sequence[str]], environment: dict[str, str],
                 sessions: SessionCounter, throttle: LoginThrottle, password: str | None,
                 origins: Sequence[str], idle_timeout: float = 30 * 60,
                 reads: ReadBudget | None = None) -> None:
        self.command = command
        self.environment = environment
        self.sessions = sessions
        self.throttle = throttle
        self.password = password
        self.origins = {origin.rstrip("/").lower() for origin in origins}
        self.idle_timeout = idle_timeout
        self.reads = reads or ReadBudget(READ_PER_ADDRESS, READ_TOTAL)
        self._downloads = DownloadManager()

    def app(self) -> web.Application:
        """Return the application: the page, its static files, and the terminal WebSocket."""
        app = web.Application(client_max_size=MAX_MESSAGE_BYTES)
        app.router.add_get("/", self.page)
        app.router.add_get("/ws", self.terminal)
        app.router.add_get("/static/{path:.+}", self.static)
        return app

    async def page(self, request: web.Request) -> web.StreamResponse:
        """Serve the page (after the password, if there is one)."""
        await self._login(request)
        return web.Response(text=PAGE, content_type="text/html", headers={
            "Content-Security-Policy": "default-src 'self'; script-src 'self' 'unsafe-inline';"
                                      " style-src 'self' 'unsafe-inline'; connect-src 'self';"
                                      " img-src 'self' data:; font-src 'self'",
            "X-Frame-Options": "DENY",
            "Referrer-Policy": "no-referrer",
        })

    async def static(self, request: web.Request) -> web.StreamResponse:
        """Serve one of the page's few files; anything else is not found."""
        path = request.match_info["path"]
        if path not in STATIC_FILES:
            raise web.HTTPNotFound(text="not found")
        return web.FileResponse(STATIC / path, headers={"Content-Type": STATIC_FILES[path]})

    async def terminal(self, request: web.Request) -> web.StreamResponse:
        """Run the session program for one browser tab and relay it over a WebSocket."""
        origin = request.headers.get("Origin")
        if origin is not None and origin.rstrip("/").lower() not in self.origins:
            log.warning("web: refused a WebSocket from %s with the foreign Origin %r",
                        request.remote, origin[:100])
            raise web.HTTPForbidden(text="cardtui: this page may not be used from another site")
        name = await self._login(request)
        address = request.remote or ""
        key = object()
        refusal = self.sessions.admit(key, address)
        if refusal is not None:
            raise web.HTTPServiceUnavailable(text=refusal)
        try:
            return await self._run(request, name, address)
        finally:
            self.sessions.release(key, address)

    async def _run(self, request: web.Request, name: str, address: str) -> web.WebSocketResponse:
        width, height = capped_size(_number(request.query.get("width")),
                                    _number(request.query.get("height")))
        socket = web.WebSocketResponse(heartbeat=15, max_msg_size=MAX_MESSAGE_BYTES)
        # The socket's frames come paced, through whatever already stands before aiohttp's
        # protocol (the count of connections per address, TLS: table/opened.py).
        transport = request.transport
        if isinstance(transport, asyncio.Transport):
            before = transport.get_protocol()
            if isinstance(before, asyncio.Protocol):
                transport.set_protocol(PacedReads(before, transport, self.reads,
                                                  request.remote or ""))
        await socket.prepare(request)
        program = _SessionProgram(
            self.environment, shlex.join(self.command(name, address)),
            write_bytes=socket.send_bytes,
            write_str=socket.send_str, close=socket.close, download_manager=self._downloads)
        await program.start(width, height)
        loop = asyncio.get_running_loop()
        last_input = [loop.time()]

        async def close_when_idle() -> None:
            while (quiet := loop.time() - last_input[0]) < self.idle_timeout:
                await asyncio.sleep(self.idle_timeout - quiet)
            await socket.close(message=b"closed after a while without input")

        watchdog = asyncio.create_task(close_when_idle())
        typed = InputFilter()
        try:
            async for message in socket:
                if message.type is WSMsgType.TEXT:
                    if message.data.startswith('["stdin"'):
                        last_input[0] = loop.time()
                    await _relay(message.data, program, socket, typed)
        finally:
            watchdog.cancel()
            await program.stop()
        return socket

    async def _login(self, request: web.Request) -> str:
        """Return the visitor's name, or raise 401 unless they gave the password."""
        if self.password is None:
            return DEFAULT_NAME
        address, port = request.remote or "", _peer_port(request)
        username, password = _basic_credentials(request.headers.get("Authorization", ""))
        if username is None:
            raise _ask_for_password()
        await self.throttle.wait_turn(address)
        if not hmac.compare_digest(password.encode(), self.password.encode()):
            log_failure("web", "password", username, address, port,
                        self.throttle.failed(address))
            raise _ask_for_password()
        self.throttle.succeeded(address)
        if request.path == "/ws":
            log_success("web", "password", username, address, port)
        return clean_name(username, DEFAULT_NAME)


async def _relay(data: str, program: AppService, socket: web.WebSocketResponse,
                 typed: InputFilter) -> None:
    """Act on one message from the page's terminal; anything malformed is ignored."""
    try:
        envelope = json.loads(data)
    except ValueError:
        return
    if not isinstance(envelope, list) or not envelope or not isinstance(envelope[0], str):
        return
    kind, argument = envelope[0], envelope[1] if len(envelope) > 1 else None
    if kind == "stdin" and isinstance(argument, str):
        keys = typed.feed(argument.encode("utf-8", "replace"))
        if keys:
            await program.send_bytes(keys)
    elif kind == "resize" and isinstance(argument, dict):
        width, height = capped_size(_number(argument.get("width")),
                                    _number(argument.get("height")))
        await program.set_terminal_size(width, height)
    elif kind == "ping" and isinstance(argument, str):
        await socket.send_json(["pong", argument[:64]])
    elif kind == "blur":
        await program.blur()
    elif kind == "focus":
        await program.focus()


def _number(value: object) -> int:
    """Return value as a whole number of cells, 0 (meaning the default) if it is not one."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isdigit() and len(value) < 10:
        return int(value)
    return 0


def _peer_port(request: web.Request) -> int:
    peer = request.transport.get_extra_info("peername") if request.transport else None
    return int(peer[1]) if peer else 0


def _basic_credentials(header: str) -> tuple[str | None, str]:
    """Return the user name and password of a Basic Authorization header, or (None, "")."""
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic" or len(encoded) > 1024:
        return None, ""
    try:
        decoded = base64.b64decode(encoded, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None, ""
    username, colon, password = decoded.partition(":")
    return (username, password) if colon else (None, "")


def _ask_for_password() -> web.HTTPUnauthorized:
    return web.HTTPUnauthorized(text="cardtui: this server asks for its password",
                                headers={"WWW-Authenticate": f'Basic realm="{REALM}"'})

