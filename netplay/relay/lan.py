"""Tables on the local network: a host announces its relay over mDNS, a joiner lists them.

Service type `_cardtui._tcp.local.`; the TXT record says the game, the seats and the
host's name. What a record says is a hint from an unauthenticated stranger: the join
screen shows it as text only and connects with the same checks as a typed address. Anyone on
the LAN may also flood it with announcements: `LanBrowser` bounds what it keeps and does for
them (the bounds below; docs/DESIGN.md, "Trust", says what they leave open).
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import socket
from collections.abc import Callable
from dataclasses import dataclass

from zeroconf import BadTypeInNameException, IPVersion, ServiceStateChange, Zeroconf
from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

SERVICE_TYPE = "_cardtui._tcp.local."
MAX_FIELD = 40  # characters kept of any announced text
MAX_PLAYERS = 99  # a larger (or unreadable) seat count is shown as unknown
# What a neighbour flooding the LAN with announcements can make the join screen hold and do:
MAX_TABLES = 50  # tables listed
MAX_UNLISTED = 500  # names of the tables left out, kept to count them and list them later
MAX_RESOLVING = 8  # network requests for a table's records running at once
MAX_WAITING = 64  # names waiting for a request; beyond that they are counted and left out
RESOLVE_MS = 3000  # how long one request waits for the records
CHANGE_INTERVAL = 0.25  # seconds; `on_change` is called at most this often


@dataclass(frozen=True)
class LanTable:
    """One announced table: where to join and what the host says it is."""

    name: str
    address: str
    port: int
    game: str
    players: int
    host: str

    @property
    def target(self) -> str:
        """What `cardtui join` takes."""
        address = f"[{self.address}]" if ":" in self.address else self.address
        return f"{address}:{self.port}"


def _text(value: bytes | None) -> str:
    """Printable text of at most MAX_FIELD characters from a stranger's bytes."""
    raw = (value or b"")[:MAX_FIELD * 8].decode("utf-8", "replace")
    return "".join(ch for ch in raw if ch.isprintable())[:MAX_FIELD]


def _players(value: bytes | None) -> int:
    """The announced seat count, or 0 (unknown) unless it is a number from 1 to MAX_PLAYERS."""
    raw = (value or b"").strip()
    if not raw.isdigit() or len(raw) > 2:  # bytes.isdigit() is ASCII digits only
        return 0
    return int(raw) if 1 <= int(raw) <= MAX_PLAYERS else 0


def _info(name: str) -> AsyncServiceInfo | None:
    """What zeroconf asks for a service name, or None for a name it refuses (control characters)."""
    try:
        return AsyncServiceInfo(SERVICE_TYPE, name)
    except BadTypeInNameException:
        return None


def _table(name: str, info: AsyncServiceInfo) -> LanTable | None:
    """The table a resolved service describes, or None without an IPv4 address and a port."""
    addresses = info.parsed_addresses(IPVersion.V4Only)
    if not addresses or not info.port:
        return None
    props = info.properties or {}
    return LanTable(name=_text(name.removesuffix("." + SERVICE_TYPE).encode()),
                    address=addresses[0], port=info.port, game=_text(props.get(b"game")),
                    players=_players(props.get(b"players")), host=_text(props.get(b"host")))


def _zeroconf(interfaces: list[str] | None) -> AsyncZeroconf:
    if interfaces:
        return AsyncZeroconf(interfaces=interfaces, ip_version=IPVersion.V4Only)
    return AsyncZeroconf(ip_version=IPVersion.V4Only)


class LanAnnouncement:
    """A table announced on the LAN until `close()`."""

    def __init__(self, zc: AsyncZeroconf, info: AsyncServiceInfo) -> None:
        self._zc, self._info = zc, info

    @classmethod
    async def start(cls, port: int, address: str, game: str, players: int, host: str,
                    interfaces: list[str] | None = None) -> LanAnnouncement:
        """Announce a relay on `address:port` holding a table of `game` for `players`."""
        zc = _zeroconf(interfaces)
        label = "".join(ch for ch in f"{host} {game}" if ch.isalnum() or ch in " -")[:MAX_FIELD]
        unique = f"{label or 'cardtui'} {port}"
        info = AsyncServiceInfo(
            SERVICE_TYPE, f"{unique}.{SERVICE_TYPE}", port=port,
            addresses=[socket.inet_aton(address)],
            properties={"game": game, "players": str(players), "host": host[:MAX_FIELD]},
            server=f"cardtui-{port}.local.")
        # The call returns once the name is claimed; the task it returns finishes the announcing.
        await (await zc.async_register_service(info, allow_name_change=True))
        return cls(zc, info)

    async def close(self) -> None:
        """Withdraw the announcement."""
        try:
            await (await self._zc.async_unregister_service(self._info))  # the goodbye is sent
        finally:
            await self._zc.async_close()


class LanBrowser:
    """The tables announced on the LAN, kept up to date and bounded against a flooding neighbour.

    At most `MAX_TABLES` are listed: the first heard stay, and a table heard while the list is
    full is counted in `unlisted` (up to `MAX_UNLISTED` names; `unlisted_overflow` says more were
    heard) and listed when a listed one is withdrawn. A name whose records zeroconf's cache holds
    is resolved at once, without a task; the others are asked for on the network by at most
    `MAX_RESOLVING` requests at a time, `MAX_WAITING` more wait their turn, and the rest are
    counted in `dropped` (and `unlisted`). `on_change` is called at most once per
    `CHANGE_INTERVAL` seconds, however many changes arrive.
    """

    def __init__(self, on_change: Callable[[], None] | None = None,
                 interfaces: list[str] | None = None) -> None:
        self.tables: dict[str, LanTable] = {}
        self.unlisted: dict[str, None] = {}  # an ordered set: names heard but not listed
        self.unlisted_overflow = False  # more names were left out than `unlisted` holds
        self.dropped = 0  # names not asked for because the waiting line was full
        self.on_change = on_change
        self._interfaces = interfaces
        self._zc: AsyncZeroconf | None = None
        self._browser: AsyncServiceBrowser | None = None
        self._tasks: set[asyncio.Task[None]] = set()  # every live request, cancelled ones too
        self._resolving: dict[str, asyncio.Task[None]] = {}
        self._waiting: dict[str, None] = {}  # an ordered set: names waiting for a request
        self._notify: asyncio.TimerHandle | None = None

    async def start(self) -> None:
        """Begin listening."""
        self._zc = _zeroconf(self._interfaces)
        self._browser = AsyncServiceBrowser(self._zc.zeroconf, [SERVICE_TYPE],
                                            handlers=[self._on_state])

    @property
    def resolving(self) -> int:
        """How many network requests are running (never more than `MAX_RESOLVING`)."""
        return len(self._tasks)

    @property
    def waiting(self) -> int:
        """How many names wait for a request (never more than `MAX_WAITING`)."""
        return len(self._waiting)

    def _on_state(self, zeroconf: Zeroconf, service_type: str, name: str,
                  state_change: ServiceStateChange) -> None:
        if service_type != SERVICE_TYPE:
            return
        if state_change is ServiceStateChange.Removed:
            self._forget(name)
            self._fill()
        else:
            self._heard(name)

    def _heard(self, name: str) -> None:
        """A name was announced or its records changed: list it, count it, or ask for it."""
        if name not in self.tables and len(self.tables) >= MAX_TABLES:
            self._unlist(name)
            return
        assert self._zc is not None
        info = _info(name)
        if info is None:
            return
        if info.load_from_cache(self._zc.zeroconf):  # all its records came with the announcement
            self._admit(name, info)
        else:
            self._ask(name)

    def _ask(self, name: str) -> None:
        if name in self._resolving or name in self._waiting:
            return
        if len(self._waiting) >= MAX_WAITING:
            self.dropped += 1
            if name not in self.tables:  # a listed one keeps what it said before
                self._unlist(name)
            return
        self._waiting[name] = None
        self._start_waiting()

    def _start_waiting(self) -> None:
        while self._waiting and len(self._tasks) < MAX_RESOLVING:
            name = next(iter(self._waiting))
            del self._waiting[name]
            if name not in self.tables and len(self.tables) >= MAX_TABLES:
                self._unlist(name)
                continue
            task = asyncio.ensure_future(self._resolve(name))
            self._tasks.add(task)
            self._resolving[name] = task
            task.add_done_callback(functools.partial(self._finished, name))

    def _finished(self, name: str, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if self._resolving.get(name) is task:
            del self._resolving[name]
        if self._zc is not None:
            self._start_waiting()
            self._fill()

    async def _resolve(self, name: str) -> None:
        info = _info(name)
        assert self._zc is not None and info is not None  # _heard asked for names it took only
        if await info.async_request(self._zc.zeroconf, RESOLVE_MS):
            self._admit(name, info)

    def _admit(self, name: str, info: AsyncServiceInfo) -> None:
        table = _table(name, info)
        if table is None:
            return
        if name in self.tables or len(self.tables) < MAX_TABLES:
            if self.tables.get(name) != table:
                self.tables[name] = table
                self._changed()
            if name in self.unlisted:
                self._drop_unlisted(name)
        else:
            self._unlist(name)

    def _unlist(self, name: str) -> None:
        if name in self.unlisted:
            return
        if len(self.unlisted) < MAX_UNLISTED:
            self.unlisted[name] = None
        elif self.unlisted_overflow:
            return
        else:
            self.unlisted_overflow = True
        self._changed()

    def _drop_unlisted(self, name: str) -> None:
        del self.unlisted[name]
        if not self.unlisted:
            self.unlisted_overflow = False
        self._changed()

    def _forget(self, name: str) -> None:
        """A name was withdrawn (or expired): drop everything held of it."""
        if self.tables.pop(name, None) is not None:
            self._changed()
        if name in self.unlisted:
            self._drop_unlisted(name)
        self._waiting.pop(name, None)
        task = self._resolving.pop(name, None)
        if task is not None:
            task.cancel()

    def _fill(self) -> None:
        """Take up names left out while the list has room: those zeroconf's cache holds whole at
        once, the others while the waiting line has room. Looks at `MAX_WAITING` names at most;
        those it cannot take go to the back of the line."""
        if len(self.tables) >= MAX_TABLES or not self.unlisted:
            return
        assert self._zc is not None
        before = len(self.unlisted)
        for name in list(itertools.islice(self.unlisted, MAX_WAITING)):
            if len(self.tables) >= MAX_TABLES:
                break
            del self.unlisted[name]
            info = _info(name)
            if info is None:
                continue
            if info.load_from_cache(self._zc.zeroconf):
                self._admit(name, info)
            elif name in self._resolving or name in self._waiting:
                pass
            elif len(self._waiting) < MAX_WAITING:
                self._ask(name)
            else:
                self.unlisted[name] = None  # to the back
        if not self.unlisted:
            self.unlisted_overflow = False
        if len(self.unlisted) != before:
            self._changed()

    def _changed(self) -> None:
        if self._notify is None and self.on_change is not None:
            self._notify = asyncio.get_running_loop().call_later(CHANGE_INTERVAL, self._fire)

    def _fire(self) -> None:
        self._notify = None
        if self.on_change is not None:
            self.on_change()

    async def close(self) -> None:
        """Stop listening."""
        zc, self._zc = self._zc, None
        if self._notify is not None:
            self._notify.cancel()
            self._notify = None
        self._waiting.clear()
        for task in list(self._tasks):
            task.cancel()
        browser, self._browser = self._browser, None
        if browser is not None:
            await browser.async_cancel()
        if zc is not None:
            await zc.async_close()
