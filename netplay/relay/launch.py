"""Starting a relay on a TCP port: the guarded site, TLS, and the handle tests and commands keep."""

from __future__ import annotations

import asyncio
import ssl

from aiohttp import web

from netplay.relay.guard import ConnectionGuard
from netplay.relay.limits import ACCEPT_BACKLOG, PUBLIC_LIMITS, RelayLimits, RelayStats
from netplay.relay.server import RELAY_KEY, Relay, make_relay_app


class RunningRelay:
    """A relay listening on a TCP port, with its address and its counters."""

    def __init__(self, runner: web.AppRunner, host: str, port: int, tls: bool = False) -> None:
        self.runner = runner
        self.host = host
        self.port = port
        self.tls = tls

    @property
    def relay(self) -> Relay:
        """The live relay state (rooms, conns)."""
        return self.runner.app[RELAY_KEY]

    @property
    def stats(self) -> RelayStats:
        """The relay's running counters."""
        return self.relay.stats

    @property
    def url(self) -> str:
        """The WebSocket URL clients connect to, e.g. ws://127.0.0.1:7777/ws."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'wss' if self.tls else 'ws'}://{host}:{self.port}/ws"

    async def close(self) -> None:
        """Close every socket and stop listening."""
        await self.runner.cleanup()


class RelaySite(web.BaseSite):
    """A TCP site whose connections pass the relay's ConnectionGuard before aiohttp sees them."""

    __slots__ = ("_guard", "_host", "_port")

    def __init__(self, runner: web.AppRunner, host: str, port: int, guard: ConnectionGuard,
                 ssl_context: ssl.SSLContext | None = None) -> None:
        super().__init__(runner, ssl_context=ssl_context, backlog=ACCEPT_BACKLOG)
        self._guard = guard
        self._host = host
        self._port = port

    @property
    def name(self) -> str:
        """The site's URL, for aiohttp's own messages."""
        scheme = "https" if self._ssl_context else "http"
        return f"{scheme}://{self._host}:{self._port}"

    async def start(self) -> None:
        """Listen, wrapping every accepted connection in the guard."""
        await super().start()
        server = self._runner.server
        assert server is not None
        # The guard does the TLS handshake itself, once it has counted the connection against
        # its address: a handshake is held to the same limits and deadline as an upgrade.
        self._guard.tls = self._ssl_context
        self._server = await asyncio.get_running_loop().create_server(
            self._guard.wrap(server), self._host, self._port, backlog=self._backlog,
            reuse_address=True)


def tls_context(cert: str, key: str) -> ssl.SSLContext:
    """A server TLS context from a certificate chain and its private key (PEM files)."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


async def start_relay(
    host: str = "127.0.0.1",
    port: int = 0,
    limits: RelayLimits = PUBLIC_LIMITS,
    single_room: bool = False,
    tls: ssl.SSLContext | None = None,
) -> RunningRelay:
    """Start a relay on host:port (0 = any free port) in the running event loop."""
    runner = web.AppRunner(
        make_relay_app(limits, single_room), handle_signals=False, shutdown_timeout=5.0
    )
    await runner.setup()
    site = RelaySite(runner, host, port, runner.app[RELAY_KEY].guard, tls)
    try:
        await site.start()
    except BaseException:
        await runner.cleanup()
        raise
    return RunningRelay(runner, host, runner.addresses[0][1], tls is not None)
