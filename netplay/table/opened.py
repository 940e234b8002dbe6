"""Per-address limits for the relay and tables API once an operator opens it to other machines.

`cardtui serve` keeps its API on loopback for its own sessions; `--api-bind` adds a second
listener that remote `cardtui host`/`join` players reach. Requests that arrive on that one are
limited per source address: requests at once (an open WebSocket counts as one), a request
rate, and tables opened and still open.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import cast

from aiohttp import web

from netplay.addresses import address_key
from netplay.relay.guard import server_tls

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
# Set on a request that came through the opened listener: the address its limits apply to.
OPENED_ADDRESS = web.RequestKey("cardtui.opened_address", str)
ADDRESSES_KEPT = 10_000


@dataclass(frozen=True)
class OpenedLimits:
    """What one remote address may use of an opened API."""

    requests_at_once: int = 16
    requests_per_second: float = 5.0
    burst: int = 20
    tables_per_address: int = 2

    def __post_init__(self) -> None:
        for name in ("requests_at_once", "requests_per_second", "burst", "tables_per_address"):
            if getattr(self, name) <= 0:
                raise ValueError(f"OpenedLimits.{name} must be positive")


class OpenedGuard:
    """Counts each remote address's requests and answers 429 past its limits."""

    def __init__(self, limits: OpenedLimits, ports: set[int]) -> None:
        self.limits = limits
        self.ports = ports  # local ports of the opened listeners
        self._at_once: Counter[str] = Counter()
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def is_opened(self, request: web.Request) -> bool:
        """Return whether request came through an opened listener."""
        local = request.transport.get_extra_info("sockname") if request.transport else None
        if not local:
            return False
        return int(local[1]) in self.ports

    def _take_token(self, address: str) -> bool:
        now = time.monotonic()
        tokens, last = self._buckets.get(address, (float(self.limits.burst), now))
        tokens = min(float(self.limits.burst),
                     tokens + (now - last) * self.limits.requests_per_second)
        allowed = tokens >= 1.0
        self._buckets[address] = (tokens - 1.0 if allowed else tokens, now)
        self._buckets.move_to_end(address)
        while len(self._buckets) > ADDRESSES_KEPT:
            self._buckets.popitem(last=False)
        return allowed

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Apply the per-address limits to requests through the opened listeners."""
        if not self.is_opened(request):
            return await handler(request)
        address = address_key(request.remote or "")
        if self._at_once[address] >= self.limits.requests_at_once:
            return _too_many("too many connections from your address at once")
        if not self._take_token(address):
            return _too_many("too many requests from your address; slow down")
        request[OPENED_ADDRESS] = address
        self._at_once[address] += 1
        try:
            return await handler(request)
        finally:
            self._at_once[address] -= 1
            if self._at_once[address] <= 0:
                del self._at_once[address]


def _too_many(why: str) -> web.Response:
    return web.json_response({"error": why}, status=429, headers={"Retry-After": "5"})


class ConnectionCap:
    """TCP connections at once, per address and in total, for an HTTP listener.

    Requests are limited by OpenedGuard; this bounds the connections that never send one, so
    that silent connections cannot use up the process's descriptors. Connections past the cap
    are closed as soon as they are accepted. With TLS, a connection is counted before its
    handshake, which must end within `handshake_seconds`: a silent TLS client holds a slot as
    a silent plain one does, rather than going on uncounted until it says hello.
    """

    def __init__(self, per_address: int = 32, total: int = 512,
                 tls: ssl.SSLContext | None = None, handshake_seconds: float = 10.0) -> None:
        self.per_address = per_address
        self.total = total
        self.tls = tls
        self.handshake_seconds = handshake_seconds
        self.refused = 0
        self._open: Counter[str] = Counter()

    @property
    def open_connections(self) -> int:
        """Return how many connections are open."""
        return sum(self._open.values())

    def take(self, address: str) -> bool:
        """Count a new connection from address in; False if it is one too many."""
        if self._open[address] >= self.per_address or self.open_connections >= self.total:
            self.refused += 1
            return False
        self._open[address] += 1
        return True

    def give_back(self, address: str) -> None:
        """Count a connection from address out."""
        self._open[address] -= 1
        if self._open[address] <= 0:
            del self._open[address]

    def wrap(self, factory: Callable[[], asyncio.Protocol]) -> Callable[[], asyncio.Protocol]:
        """Return a protocol factory whose connections this cap counts."""
        return lambda: _CountedProtocol(factory, self)


class _CountedProtocol(asyncio.Protocol):
    """A connection counted by a ConnectionCap; it hands everything to the real protocol."""

    def __init__(self, factory: Callable[[], asyncio.Protocol], cap: ConnectionCap) -> None:
        self._factory = factory
        self._cap = cap
        self._inner: asyncio.Protocol | None = None
        self._address = ""
        self._counted = False
        self._handshake: asyncio.Task[None] | None = None
        # The TLS layer hands on what came with the client's last handshake message at once,
        # before start_tls returns and the real protocol exists: it waits here until then.
        self._early: list[bytes] = []
        self._early_eof = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        raw = cast(asyncio.Transport, transport)  # a listener's transports are streams
        peer = transport.get_extra_info("peername")
        self._address = str(peer[0]) if peer else ""
        if not self._cap.take(self._address):
            raw.abort()
            return
        self._counted = True
        if self._cap.tls is None:
            self._start(raw)
            return
        raw.pause_reading()  # start_tls reads the client's hello, not data_received
        self._handshake = asyncio.get_running_loop().create_task(
            self._secure(raw, self._cap.tls))

    async def _secure(self, raw: asyncio.Transport, tls: ssl.SSLContext) -> None:
        secured = await server_tls(raw, self, tls, self._cap.handshake_seconds)
        if secured is None or not self._counted:
            raw.abort()
            self._release()  # the TLS layer never tells a protocol it never connected
            return
        self._start(secured)

    def _start(self, transport: asyncio.Transport) -> None:
        self._inner = inner = self._factory()
        inner.connection_made(transport)
        for data in self._early:
            inner.data_received(data)
        self._early.clear()
        if self._early_eof and not inner.eof_received():
            transport.close()

    def _release(self) -> None:
        if self._counted:
            self._counted = False
            self._cap.give_back(self._address)

    def connection_lost(self, exc: Exception | None) -> None:
        self._release()
        if self._inner is not None:
            self._inner.connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._inner is not None:
            self._inner.data_received(data)
        elif self._counted:
            self._early.append(data)

    def eof_received(self) -> bool | None:
        if self._inner is None:
            self._early_eof = True
            return True  # keep the connection open until the real protocol has its say
        return self._inner.eof_received()

    def pause_writing(self) -> None:
        if self._inner is not None:
            self._inner.pause_writing()

    def resume_writing(self) -> None:
        if self._inner is not None:
            self._inner.resume_writing()
