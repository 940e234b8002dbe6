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
import ssl
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from netplay.addresses import address_key

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


async def server_tls(raw: asyncio.Transport, protocol: asyncio.BaseProtocol,
                     tls: ssl.SSLContext, seconds: float) -> asyncio.Transport | None:
    """`raw` upgraded to TLS as a server for `protocol`, or None if the handshake failed or
    took more than `seconds` (the caller aborts `raw` then)."""
    try:
        return await asyncio.get_running_loop().start_tls(
            raw, protocol, tls, server_side=True, ssl_handshake_timeout=seconds)
    except (OSError, ssl.SSLError, ConnectionError, TimeoutError, RuntimeError):
        return None


class GuardedProtocol(asyncio.Protocol):
    """Counts a connection against its address and drops it if it is not a WebSocket in time."""

    def __init__(self, inner: Any, guard: ConnectionGuard) -> None:
        self.inner = inner
        self.guard = guard
        self.address = ""
        self.counted = False
        self.timer: asyncio.TimerHandle | None = None
        self.transport: asyncio.Transport | None = None
        self.handshake: asyncio.Task[None] | None = None  # the TLS handshake, while it runs

    # A TCP listener's transports are always asyncio.Transport, not just the base the API names.
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        peer = transport.get_extra_info("peername")
        self.address = address_key(str(peer[0])) if isinstance(peer, tuple) and peer else "?"
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
        self.guard.wait(self)
        self.timer = loop.call_later(self.guard.upgrade_seconds, self._deadline)
        if self.guard.tls is None:
            self.guard.open[transport] = self
            self.inner.connection_made(transport)
            return
        # TLS after counting: a handshake takes the address's slot and the upgrade deadline
        # like a half-sent request, rather than going on uncounted before the guard sees it.
        transport.pause_reading()  # start_tls reads the client's hello, not data_received
        self.handshake = loop.create_task(self._start_tls(transport, self.guard.tls))

    async def _start_tls(self, raw: asyncio.Transport, tls: ssl.SSLContext) -> None:
        secured = await server_tls(raw, self, tls, self.guard.upgrade_seconds)
        if secured is None or not self.counted:
            raw.abort()
            self._release()  # the TLS layer never tells a protocol it never connected
            return
        self.transport = secured
        self.guard.open[secured] = self
        self.inner.connection_made(secured)

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
        if self._release():
            self.inner.connection_lost(exc)

    def _release(self) -> bool:
        """Stop counting the connection (once); whether it was counted until now."""
        if not self.counted:
            return False
        self.counted = False
        self.upgraded()
        if self.transport is not None:
            self.guard.open.pop(self.transport, None)
        self.guard.stop_waiting(self)
        self.guard.book.disconnect(self.address, asyncio.get_running_loop().time())
        return True


class ConnectionGuard:
    """The TCP-level gate in front of aiohttp: per-address counts, the upgrade deadline, and a
    cap on connections still waiting (not yet a room's host, admitted seat or watcher).

    Past the cap a new connection does not wait its turn: the oldest waiting connection of
    the address holding the most waiting ones is dropped for it. Strangers flooding from many
    addresses then crowd out each other, not a host or seat arriving from an address of its
    own, and never the connections already in a room.
    """

    def __init__(self, book: AddressBook, upgrade_seconds: float, max_waiting: int = 0) -> None:
        self.book = book
        self.upgrade_seconds = upgrade_seconds
        self.tls: ssl.SSLContext | None = None  # set by a TLS site: the guard does handshakes
        self.max_waiting = max_waiting or max(1, book.max_connections_total // 2)
        self.open: dict[asyncio.Transport, GuardedProtocol] = {}
        self.waiting: dict[str, OrderedDict[GuardedProtocol, None]] = {}
        self.waiting_total = 0
        self.timed_out = 0
        self.evicted = 0

    def wait(self, guarded: GuardedProtocol) -> None:
        """Count a new connection as waiting, dropping another one if the cap is reached."""
        if self.address_exempt(guarded.address):
            return
        if self.waiting_total >= self.max_waiting:
            crowded = max(self.waiting.values(), key=len)
            victim = next(iter(crowded))
            self.stop_waiting(victim)
            self.evicted += 1
            log.warning("dropped a waiting connection from %s for a newcomer: too many"
                        " connections are waiting to join", victim.address)
            if victim.transport is not None:
                victim.transport.abort()
        self.waiting.setdefault(guarded.address, OrderedDict())[guarded] = None
        self.waiting_total += 1

    def stop_waiting(self, guarded: GuardedProtocol) -> None:
        """The connection is in a room now, or gone: it no longer counts as waiting."""
        queue = self.waiting.get(guarded.address)
        if queue is not None and guarded in queue:
            del queue[guarded]
            self.waiting_total -= 1
            if not queue:
                del self.waiting[guarded.address]

    def joined(self, transport: Any) -> None:
        """The connection on `transport` opened a room or was admitted into one."""
        guarded = self.open.get(transport)
        if guarded is not None:
            self.stop_waiting(guarded)

    def address_exempt(self, address: str) -> bool:
        """Whether `address` is one of the relay's own components, outside every limit."""
        return address in self.book.exempt

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
