"""Tables on the local network: a host announces its relay over mDNS, a joiner lists them.

Service type `_cardtui._tcp.local.`; the TXT record says the game, the seats and the
host's name. What a record says is a hint from an unauthenticated stranger: the join
screen shows it as text only and connects with the same checks as a typed address.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from dataclasses import dataclass

from zeroconf import IPVersion, ServiceStateChange, Zeroconf
from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

SERVICE_TYPE = "_cardtui._tcp.local."
MAX_FIELD = 40  # characters kept of any announced text


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
    raw = (value or b"").decode("utf-8", "replace")
    return "".join(ch for ch in raw if ch.isprintable())[:MAX_FIELD]


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
    """The tables announced on the LAN, kept up to date; `on_change` hears of every change."""

    def __init__(self, on_change: Callable[[], None] | None = None,
                 interfaces: list[str] | None = None) -> None:
        self.tables: dict[str, LanTable] = {}
        self.on_change = on_change
        self._interfaces = interfaces
        self._zc: AsyncZeroconf | None = None
        self._browser: AsyncServiceBrowser | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        """Begin listening."""
        self._zc = _zeroconf(self._interfaces)
        self._browser = AsyncServiceBrowser(self._zc.zeroconf, [SERVICE_TYPE],
                                            handlers=[self._on_state])

    def _on_state(self, zeroconf: Zeroconf, service_type: str, name: str,
                  state_change: ServiceStateChange) -> None:
        if state_change is ServiceStateChange.Removed:
            if self.tables.pop(name, None) is not None and self.on_change:
                self.on_change()
            return
        task = asyncio.ensure_future(self._resolve(service_type, name))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _resolve(self, service_type: str, name: str) -> None:
        assert self._zc is not None
        info = AsyncServiceInfo(service_type, name)
        if not await info.async_request(self._zc.zeroconf, 3000):
            return
        addresses = info.parsed_addresses(IPVersion.V4Only)
        props = info.properties or {}
        try:
            players = int(_text(props.get(b"players")) or 0)
        except ValueError:
            players = 0
        if not addresses or not info.port:
            return
        self.tables[name] = LanTable(
            name=_text(name.removesuffix("." + SERVICE_TYPE).encode()),
            address=addresses[0], port=info.port, game=_text(props.get(b"game")),
            players=players, host=_text(props.get(b"host")))
        if self.on_change:
            self.on_change()

    async def close(self) -> None:
        """Stop listening."""
        for task in list(self._tasks):
            task.cancel()
        if self._browser is not None:
            await self._browser.async_cancel()
        if self._zc is not None:
            await self._zc.async_close()
