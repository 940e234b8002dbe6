"""What one source address may take from a relay: connections, their rate, rooms and reads.

The relay's own limits are per connection; an attacker simply opens more connections. Here
every TCP connection is counted against its source address before aiohttp reads a byte of
it, and dropped when it has not become a WebSocket within the upgrade deadline, so half-sent
requests (slowloris) cannot pile up. Messages from all of an address's connections share one
budget; when it runs dry the relay stops reading them (TCP pushes back on the sender) instead
of refusing, so a flood costs the relay no more than the budget, whatever its size.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("cardtui.relay")


@dataclass
class TokenBucket:
    """A refilling allowance: `rate` tokens a second, at most `burst` saved up."""

    rate: float
    burst: float
    tokens: float = 0.0
    stamp: float = 0.0

    def __post_init__(self) -> None:
        self.tokens = self.burst

    def refill(self, now: float) -> float:
        """Bring the allowance up to date and return it."""
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        return self.tokens

    def take(self, now: float, cost: float = 1.0) -> bool:
        """Spend `cost` tokens if there are that many; whether it could."""
        if self.refill(now) < cost:
            return False
        self.tokens -= cost
        return True

    def wait(self, now: float, cost: float = 1.0) -> float:
        """Spend `cost` now, going into debt if need be; the seconds until the debt is paid."""
        self.tokens = self.refill(now) - cost
        return -self.tokens / self.rate if self.tokens < 0 else 0.0


@dataclass
class Address:
    """What one source address holds on the relay right now."""

    connections: int
    opened: TokenBucket
    reads: TokenBucket
    rooms: int = 0


@dataclass
class AddressBook:
    """Per-address accounting shared by the TCP guard and the relay's handlers."""

    max_connections: int
    connections_per_second: float
    connection_burst: int
    reads_per_second: float
    read_burst: int
    max_connections_total: int
    exempt: frozenset[str] = frozenset()
    addresses_kept: int = 10_000
    addresses: dict[str, Address] = field(default_factory=dict)
    total: int = 0
    refused: int = 0

    def connect(self, address: str, now: float) -> str | None:
        """Count a new connection from `address`; the reason it is refused, or None.

        Each kind of reason is worded the same whatever the address, so that the log
        throttle (one line per kind per interval) sees one kind, not one per attacker.
        """
        if self.total >= self.max_connections_total:
            self.refused += 1
            return "the relay holds all the connections it has room for"
        if address in self.exempt:
            self.total += 1
            return None
        entry = self.addresses.get(address)
        if entry is None:
            self._forget_idle()
            entry = self.addresses[address] = Address(
                0,
                TokenBucket(self.connections_per_second, self.connection_burst, stamp=now),
                TokenBucket(self.reads_per_second, self.read_burst, stamp=now),
            )
        if entry.connections >= self.max_connections:
            self.refused += 1
            return "its address has all the connections it may have open"
        if not entry.opened.take(now):
            self.refused += 1
            return "its address connects too often"
        entry.connections += 1
        self.total += 1
        return None

    def _forget_idle(self, scan: int = 16) -> None:
        """Past addresses_kept, forget the oldest addresses that hold nothing now.

        An address that left before its connection budget refilled would otherwise stay for
        ever: one entry per address that ever connected, without end. Forgetting one early
        only gives it a fresh connection budget. Addresses in use go to the back; the scan is
        bounded, so a relay whose kept addresses are all in use grows only with its
        connections (which max_connections_total bounds).
        """
        for _ in range(min(scan, len(self.addresses))):
            if len(self.addresses) < self.addresses_kept:
                return
            address = next(iter(self.addresses))
            entry = self.addresses.pop(address)
            if entry.connections > 0 or entry.rooms > 0:
                self.addresses[address] = entry

    def disconnect(self, address: str, now: float) -> None:
        """A counted connection closed."""
        self.total -= 1
        entry = self.addresses.get(address)
        if entry is None:
            return
        entry.connections -= 1
        idle = entry.connections <= 0 and entry.rooms <= 0
        if idle and entry.opened.refill(now) >= entry.opened.burst:
            del self.addresses[address]  # nothing left to remember: it would start afresh

    def read_delay(self, address: str, now: float, cost: float = 1.0) -> float:
        """Charge one message read from `address`; seconds to wait before reading the next."""
        entry = self.addresses.get(address)
        return 0.0 if entry is None else entry.reads.wait(now, cost)

    def rooms_of(self, address: str) -> int:
        """Rooms opened from `address` that are still open."""
        entry = self.addresses.get(address)
        return 0 if entry is None else entry.rooms

    def room_opened(self, address: str) -> None:
        """A room was opened from `address`."""
        entry = self.addresses.get(address)
        if entry is not None:
            entry.rooms += 1

    def room_closed(self, address: str) -> None:
        """A room opened from `address` is gone."""
        entry = self.addresses.get(address)
        if entry is not None:
            entry.rooms -= 1


class GuardedProtocol(asyncio.Protocol):
    """Counts a connection against its address and drops it if it is not a WebSocket in time."""

    def __init__(self, inner: Any, guard: ConnectionGuard) -> None:
        self.inner = inner
        self.guard = guard
        self.address = ""
        self.counted = False
        self.timer: asyncio.TimerHandle | None = None
        self.transport: asyncio.Transport | None = None

    # A TCP listener's transports are always asyncio.Transport, not just the base the API names.
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        peer = transport.get_extra_info("peername")
        self.address = str(peer[0]) if isinstance(peer, tuple) and peer else "?"
        loop = asyncio.get_running_loop()
        refusal = self.guard.book.connect(self.address, loop.time())
        if refusal is not None:
            # The reason is part of the template: one line per kind of refusal per interval.
            log.warning(f"refused a connection from %s: {refusal.replace('%', '%%')}",
                        self.address)
            transport.abort()
            return
        self.counted = True
        self.transport = transport
        self.guard.open[transport] = self
        self.timer = loop.call_later(self.guard.upgrade_seconds, self._deadline)
        self.inner.connection_made(transport)

    def _deadline(self) -> None:
        self.timer = None
        if self.transport is not None and not self.transport.is_closing():
            self.guard.timed_out += 1
            self.transport.abort()

    def upgraded(self) -> None:
        """The connection is a WebSocket now: the upgrade deadline no longer applies."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def data_received(self, data: bytes) -> None:
        if self.counted:
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received() if self.counted else None

    def pause_writing(self) -> None:
        if self.counted:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.counted:
            self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.counted:
            return
        self.counted = False
        self.upgraded()
        if self.transport is not None:
            self.guard.open.pop(self.transport, None)
        self.guard.book.disconnect(self.address, asyncio.get_running_loop().time())
        self.inner.connection_lost(exc)


class ConnectionGuard:
    """The TCP-level gate in front of aiohttp: per-address counts and the upgrade deadline."""

    def __init__(self, book: AddressBook, upgrade_seconds: float) -> None:
        self.book = book
        self.upgrade_seconds = upgrade_seconds
        self.open: dict[asyncio.Transport, GuardedProtocol] = {}
        self.timed_out = 0

    def wrap(self, make_inner: Any) -> Any:
        """A protocol factory for loop.create_server that guards what `make_inner` makes."""
        return lambda: GuardedProtocol(make_inner(), self)

    def upgraded(self, transport: Any) -> None:
        """Stop the upgrade clock of the connection on `transport`, if it is guarded."""
        guarded = self.open.get(transport)
        if guarded is not None:
            guarded.upgraded()


class ThrottleFilter(logging.Filter):
    """Lets each distinct message through at most once per interval, then says how many were not.

    A relay out of file descriptors fails every accept the same way; one line per attempt
    would fill the disk faster than the attack fills the descriptor table.
    """

    def __init__(self, interval: float) -> None:
        super().__init__()
        self.interval = interval
        self.last: dict[tuple[str, str], tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, str(record.msg).split("\n", 1)[0][:200])
        since, skipped = self.last.get(key, (-self.interval, 0))
        if record.created - since < self.interval:
            self.last[key] = (since, skipped + 1)
            return False
        if record.exc_info and record.exc_info[1] is not None:
            # asyncio's accept errors (EMFILE...) come with a traceback: one line says it all.
            first = str(record.getMessage()).split("\n", 1)[0]
            record.msg, record.args = f"{first}: {record.exc_info[1]}", None
            record.exc_info, record.exc_text = None, None
        if skipped:
            record.msg = f"{record.msg} ({skipped} more like this in the last {self.interval:g} s)"
        self.last[key] = (record.created, 0)
        if len(self.last) > 1000:
            self.last.clear()  # distinct messages without end would otherwise grow this for ever
        return True


LOGGERS_TO_THROTTLE = ("asyncio", "aiohttp.server", "aiohttp.web", "aiohttp.websocket",
                       "cardtui.relay")


def throttle_logs(interval: float) -> None:
    """Throttle the relay's noisy loggers (and asyncio's accept errors) to once per interval."""
    throttle = ThrottleFilter(interval)
    for name in LOGGERS_TO_THROTTLE:
        logging.getLogger(name).addFilter(throttle)
