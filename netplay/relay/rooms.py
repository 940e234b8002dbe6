"""What the relay keeps of each connection and each room."""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

from aiohttp import web

from netplay.relay.guard import TokenBucket


class Conn:
    """One WebSocket connection and what the relay knows about it."""

    __slots__ = ("address", "admit_timer", "conn", "reads", "received", "role", "room", "stamp",
                 "strikes", "tokens", "transport", "ws")

    def __init__(self, ws: web.WebSocketResponse, transport: Any, burst: int, now: float,
                 address: str = "?", reads: TokenBucket | None = None) -> None:
        self.ws = ws
        self.transport = transport
        self.address = address
        self.reads = reads  # the address's shared budget (None: exempt)
        self.room: Room | None = None
        self.conn = -1
        self.role = PENDING
        self.admit_timer: asyncio.TimerHandle | None = None
        self.tokens = float(burst)
        self.stamp = now
        self.strikes = 0
        self.received = 0  # messages read, so an error can say which one it refuses


PENDING, SEAT, WATCHER = "pending", "seat", "watcher"


class Room:
    """A room: its host (absent during a grace period), its seats and its bookkeeping."""

    __slots__ = ("away_timer", "code", "host", "host_secret", "last_active", "next_conn", "opener",
                 "seats")

    def __init__(self, code: str, now: float, opener: str = "",
                 host_secret: bytes | None = None) -> None:
        self.code = code
        self.opener = opener
        self.host_secret = host_secret if host_secret is not None else secrets.token_bytes(32)
        self.host: Conn | None = None
        self.seats: dict[int, Conn] = {}
        self.next_conn = 1
        self.last_active = now
        self.away_timer: asyncio.TimerHandle | None = None

    def count(self, role: str, address: str | None = None) -> int:
        """How many of the room's non-host conns have `role` (and come from `address`)."""
        return sum(1 for c in self.seats.values()
                   if c.role == role and (address is None or c.address == address))
