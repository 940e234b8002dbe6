"""What the doors (SSH and browser) share against hostile visitors: login throttling, session
counting, the terminal size cap, and a quiet warning when descriptors run out."""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections import Counter, OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

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
        self._failures[address] = (count, time.monotonic())
        self._failures.move_to_end(address)
        while len(self._failures) > self.limits.addresses_kept:
            self._failures.popitem(last=False)
        return count

    def succeeded(self, address: str) -> None:
        """Forget address's failures: whoever is there knows the secret."""
        self._failures.pop(address, None)


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
            self._by_address[address] -= 1
            if self._by_address[address] <= 0:
                del self._by_address[address]


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
