"""What the doors (SSH and browser) share against hostile visitors: login throttling, session
counting, the terminal size cap, and a quiet warning when descriptors run out; and the SSH
door's read budget."""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections import Counter, OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from netplay.addresses import address_key

log = logging.getLogger("cardtui.door")

# A session's app renders every cell of its screen: past this it is a memory and CPU sink.
MAX_COLUMNS = 500
MAX_ROWS = 200
MAX_PIXELS = 65535  # struct winsize holds 16-bit fields
# asyncio's accept loop reports this message when accept() fails for want of resources.
_ACCEPT_FAILED = "socket.accept() out of system resource"
_WARNED_LOOPS: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()


def capped_size(columns: int, rows: int) -> tuple[int, int]:
    """Return (columns, rows) within 1..MAX_COLUMNS and 1..MAX_ROWS; 0 means 80x24's side."""
    columns = columns if columns > 0 else 80
    rows = rows if rows > 0 else 24
    return min(columns, MAX_COLUMNS), min(rows, MAX_ROWS)


def capped_pixels(pixels: int) -> int:
    """Return a pixel dimension that fits a struct winsize field."""
    return pixels if 0 <= pixels <= MAX_PIXELS else 0


def shown(text: str, limit: int = 40) -> str:
    """Return text quoted for a log line: control characters escaped, long text cut."""
    return repr(text[:limit] + ("…" if len(text) > limit else ""))


@dataclass(frozen=True)
class ThrottleLimits:
    """How failed logins from one address are slowed: no delay for the first few, then doubling."""

    free_failures: int = 3
    first_delay: float = 0.5
    max_delay: float = 8.0
    forget_after: float = 600.0
    addresses_kept: int = 10_000


class LoginThrottle:
    """Remembers failed logins per source address and says how long the next attempt waits."""

    def __init__(self, limits: ThrottleLimits = ThrottleLimits()) -> None:
        self.limits = limits
        self._failures: OrderedDict[str, tuple[int, float]] = OrderedDict()
        self._next_turn: OrderedDict[str, float] = OrderedDict()  # address: when its next may go

    def failures(self, address: str) -> int:
        """Return how many logins from address failed recently."""
        address = address_key(address)
        count, last = self._failures.get(address, (0, 0.0))
        if count and time.monotonic() - last > self.limits.forget_after:
            del self._failures[address]
            return 0
        return count

    def delay(self, address: str) -> float:
        """Return the seconds an attempt from address waits before it is checked."""
        over = self.failures(address) - self.limits.free_failures
        if over < 0:
            return 0.0
        return min(self.limits.max_delay, self.limits.first_delay * 2 ** min(over, 16))

    async def wait_turn(self, address: str) -> float:
        """Sleep for the delay address has earned, after its attempts already waiting; the wait.

        Attempts from one address take turns: each waits `delay` after the one before it, so
        parallel connections (or browser requests) guess no faster than one.
        """
        delay = self.delay(address)
        if delay <= 0:
            return 0.0
        address = address_key(address)
        now = time.monotonic()
        turn = max(now, self._next_turn.get(address, now)) + delay
        self._next_turn[address] = turn
        self._next_turn.move_to_end(address)
        while len(self._next_turn) > self.limits.addresses_kept:
            self._next_turn.popitem(last=False)
        await asyncio.sleep(turn - now)
        return turn - now

    def failed(self, address: str) -> int:
        """Count a failed login from address and return its recent failures."""
        count = self.failures(address) + 1
        address = address_key(address)
        self._failures[address] = (count, time.monotonic())
        self._failures.move_to_end(address)
        while len(self._failures) > self.limits.addresses_kept:
            self._failures.popitem(last=False)
        return count

    def succeeded(self, address: str) -> None:
        """Forget address's failures: whoever is there knows the secret."""
        self._failures.pop(address_key(address), None)


def log_failure(door: str, method: str, username: str, address: str, port: int,
                failures: int) -> None:
    """Log one failed login as one line an operator (or fail2ban) reads."""
    log.warning("%s login failed: %s for %s from %s port %d (%d recent failures from this"
                " address)", door, method, shown(username), address, port, failures)


def log_success(door: str, method: str, username: str, address: str, port: int) -> None:
    """Log one successful login as one line."""
    log.info("%s login: %s for %s from %s port %d", door, method, shown(username), address,
                port)


class SessionCounter:
    """Sessions at once, in total and per address, shared by every door of one server."""

    def __init__(self, total: int, per_address: int) -> None:
        self.total = total
        self.per_address = per_address
        self._sessions: set[Hashable] = set()
        self._by_address: Counter[str] = Counter()

    def __len__(self) -> int:
        return len(self._sessions)

    def __iter__(self) -> Any:
        return iter(list(self._sessions))

    def admit(self, session: Hashable, address: str) -> str | None:
        """Count session in if the limits allow it; otherwise return the reason it was refused."""
        if len(self._sessions) >= self.total:
            return "cardtui: the server is full right now; please try again in a few minutes."
        address = address_key(address)
        if self._by_address[address] >= self.per_address:
            return (f"cardtui: too many sessions from your address ({self.per_address} at most);"
                    " close one and try again.")
        self._sessions.add(session)
        self._by_address[address] += 1
        return None

    def release(self, session: Hashable, address: str) -> None:
        """Count a session out again (no effect if it was never admitted)."""
        if session in self._sessions:
            self._sessions.discard(session)
            address = address_key(address)
            self._by_address[address] -= 1
            if self._by_address[address] <= 0:
                del self._by_address[address]


@dataclass
class _Bucket:
    """Bytes a second with a burst; taking more than it holds leaves a debt to wait out."""

    rate: float
    burst: float
    tokens: float
    at: float

    def debt_after(self, now: float) -> float:
        """Refill up to `now`; return how many seconds its debt takes to repay (0: none)."""
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        return max(0.0, -self.tokens / self.rate)


class ReadBudget:
    """How many bytes a second the SSH door reads from one address, and from all together.

    The door, the relay and every table of `cardtui serve` share one event loop, and every
    byte an SSH connection sends costs it a parse, before any login (packets before the key
    exchange are in the clear, and SSH_MSG_IGNORE is allowed there): a connection over budget
    is not read until its address's and the door's budgets have refilled (`PacedReads`).
    """

    def __init__(self, per_address: float, total: float, burst_seconds: float = 4.0) -> None:
        self.per_address = per_address
        self.burst_seconds = burst_seconds
        now = time.monotonic()
        self._total = _Bucket(total, total * burst_seconds, total * burst_seconds, now)
        self._addresses: dict[str, tuple[_Bucket, int]] = {}  # address: its bucket, its readers

    def join(self, address: str) -> None:
        """Count a connection from address in (its address's bucket lives while one does)."""
        burst = self.per_address * self.burst_seconds
        bucket, readers = self._addresses.get(
            address, (_Bucket(self.per_address, burst, burst, time.monotonic()), 0))
        self._addresses[address] = bucket, readers + 1

    def leave(self, address: str) -> None:
        """Count a connection from address out again."""
        bucket, readers = self._addresses.get(address, (None, 0))
        if bucket is None or readers <= 1:
            self._addresses.pop(address, None)
        else:
            self._addresses[address] = bucket, readers - 1

    def wait(self, address: str) -> float:
        """Seconds before address may be read again (0: now)."""
        now = time.monotonic()
        entry = self._addresses.get(address)
        mine = entry[0].debt_after(now) if entry is not None else 0.0
        return max(mine, self._total.debt_after(now))

    def take(self, address: str, size: int) -> None:
        """Charge size bytes read from address."""
        self._total.tokens -= size
        entry = self._addresses.get(address)
        if entry is not None:
            entry[0].tokens -= size


# What a paced connection is given at once: the SSH library parses a connection's whole
# buffer in one call, copying what is left after each packet, so a large read of tiny
# packets would cost it time quadratic in the read's size.
FEED_CHUNK = 4 * 1024


class PacedReads(asyncio.Protocol):
    """Stands between a transport and its protocol, passing the bytes read on only as fast as
    a `ReadBudget` allows, in chunks, and pausing the transport while it holds any back."""

    def __init__(self, inner: asyncio.Protocol, transport: asyncio.Transport,
                 budget: ReadBudget, address: str) -> None:
        self._inner, self._transport = inner, transport
        self._budget, self._address = budget, address_key(address)
        self._held = bytearray()
        self._eof = False
        self._next: asyncio.TimerHandle | asyncio.Handle | None = None
        budget.join(self._address)

    def data_received(self, data: bytes) -> None:
        if self._next is None and len(data) <= FEED_CHUNK and not self._budget.wait(
                self._address):
            self._pass_on(data)
            return
        self._held += data
        self._transport.pause_reading()  # again if the protocol resumed it meanwhile
        if self._next is None:
            self._feed()

    def _pass_on(self, data: bytes) -> None:
        self._budget.take(self._address, len(data))
        self._inner.data_received(data)

    def _feed(self) -> None:
        """Pass on the next chunk held back once the budget allows; read again when none is."""
        loop = asyncio.get_running_loop()
        self._next = None
        if not self._held:
            if not self._eof:
                self._transport.resume_reading()
            elif not self._inner.eof_received():
                self._transport.close()
            return
        wait = self._budget.wait(self._address)
        if wait > 0:
            self._next = loop.call_later(wait, self._feed)
            return
        chunk = bytes(self._held[:FEED_CHUNK])
        del self._held[:FEED_CHUNK]
        self._pass_on(chunk)
        self._next = loop.call_soon(self._feed)  # others' callbacks run between two chunks

    def eof_received(self) -> bool | None:
        if self._next is None:
            return self._inner.eof_received()
        self._eof = True  # passed on after what is held
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        if self._next is not None:
            self._next.cancel()
            self._next = None
        self._held.clear()
        self._budget.leave(self._address)
        self._inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()


class DescriptorWarning:
    """An event loop exception handler that reports failed accepts once per interval."""

    def __init__(self, interval: float = 60.0) -> None:
        self.interval = interval
        self.suppressed = 0
        self._last = -interval

    @classmethod
    def install_once(cls, loop: asyncio.AbstractEventLoop, interval: float = 60.0) -> None:
        """Install a DescriptorWarning on loop unless one is there already."""
        if loop not in _WARNED_LOOPS:
            _WARNED_LOOPS.add(loop)
            cls(interval).install(loop)

    def install(self, loop: asyncio.AbstractEventLoop) -> None:
        """Handle loop's exceptions: accept failures here, everything else as before."""
        previous = loop.get_exception_handler()

        def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
            if context.get("message") == _ACCEPT_FAILED:
                self.report(context.get("exception"))
            elif previous is not None:
                previous(loop, context)
            else:
                loop.default_exception_handler(context)

        loop.set_exception_handler(handle)

    def report(self, error: object) -> None:
        """Log the failure unless one was logged within the interval; count it otherwise."""
        now = time.monotonic()
        if now - self._last < self.interval:
            self.suppressed += 1
            return
        log.error("cannot accept connections: %s (%d more such failures since the last report;"
                  " new connections wait until descriptors are free)", error, self.suppressed)
        self.suppressed = 0
        self._last = now
