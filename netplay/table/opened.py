"""Per-address limits for the relay and tables API once an operator opens it to other machines.

`cardtui serve` keeps its API on loopback for its own sessions; `--api-bind` adds a second
listener that remote `cardtui host`/`join` players reach. Requests that arrive on that one are
limited per source address: requests at once (an open WebSocket counts as one), a request
rate, and tables opened and still open.
"""

from __future__ import annotations

import time
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
# Set on a request that came through the opened listener: the address its limits apply to.
OPENED_ADDRESS = "cardtui.opened_address"
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
        return bool(local) and int(local[1]) in self.ports

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
        address = request.remote or ""
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
