"""A client connection to a relay room, as host (conn 0) or as a seat, over aiohttp."""

from __future__ import annotations

from typing import Self

import aiohttp
from yarl import URL

from netplay.messages import (
    MAX_RELAY_BODY,
    RELAY_EVENTS,
    Enter,
    Entered,
    Open,
    Opened,
    Ping,
    ProtocolError,
    Refused,
    RelayEvent,
    Send,
    decode,
    encode,
)

DEFAULT_PORT = 7777
# The relay forwards bodies up to its frame limit plus a small envelope; accept generously.
CLIENT_MAX_MESSAGE_BYTES = MAX_RELAY_BODY + 1024


class RelayRefused(ProtocolError):
    """The relay answered with an error message instead of doing what was asked."""


class RelayClosed(ConnectionError):
    """The WebSocket to the relay is closed; `close_code` says why when the relay said so."""

    def __init__(self, close_code: int | None, reason: str = "") -> None:
        super().__init__(f"relay connection closed (code {close_code}){': ' if reason else ''}"
                         f"{reason}")
        self.close_code = close_code


def relay_url(text: str) -> str:
    """The relay WebSocket URL from 'HOST', 'HOST:PORT', 'ws://HOST:PORT' or 'ws://HOST:PORT/ws'."""
    text = text.strip()
    if not text:
        raise ValueError("empty relay address: give HOST:PORT or ws://HOST:PORT")
    if "://" not in text:
        text = "ws://" + text
    try:
        url = URL(text)
    except ValueError as exc:
        raise ValueError(f"{text!r} is not a relay address: {exc}") from None
    if url.scheme not in ("ws", "wss") or not url.host:
        raise ValueError(f"{text!r} is not a relay address: expected ws://HOST:PORT")
    port = url.explicit_port or (DEFAULT_PORT if url.scheme == "ws" else 443)
    path = url.path if url.path not in ("", "/") else "/ws"
    return str(URL.build(scheme=url.scheme, host=url.host, port=port, path=path))


class RelayConnection:
    """One conn in one relay room: send bodies, receive stamped frames and room events."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        ws: aiohttp.ClientWebSocketResponse,
        url: str,
        answer: Opened | Entered,
        owns_session: bool,
    ) -> None:
        self._session = session
        self._ws = ws
        self._owns_session = owns_session
        self.url = url
        self.room: str = answer.room
        self.conn: int = answer.conn
        self.host_secret: bytes | None = answer.host_secret if isinstance(answer, Opened) else None

    @classmethod
    async def open_room(
        cls,
        url: str,
        room: str | None = None,
        host_secret: bytes | None = None,
        session: aiohttp.ClientSession | None = None,
    ) -> RelayConnection:
        """Open a new room as its host, or reclaim `room` with its `host_secret`."""
        hello = Open(room=room, host_secret=host_secret if room is not None else None)
        return await cls._connect(url, hello, Opened, session)

    @classmethod
    async def enter(
        cls, url: str, code: str | None = None, session: aiohttp.ClientSession | None = None
    ) -> RelayConnection:
        """Enter the room with `code` as a seat (None: the relay's only room, in host mode)."""
        return await cls._connect(url, Enter(room=code), Entered, session)

    @classmethod
    async def _connect(
        cls,
        url: str,
        hello: Open | Enter,
        expected: type[Opened | Entered],
        session: aiohttp.ClientSession | None,
    ) -> RelayConnection:
        owns_session = session is None
        session = session or aiohttp.ClientSession()
        ws: aiohttp.ClientWebSocketResponse | None = None
        try:
            ws = await session.ws_connect(
                relay_url(url), max_msg_size=CLIENT_MAX_MESSAGE_BYTES, autoping=True
            )
            await ws.send_bytes(encode(hello))
            answer = await _receive(ws)
            if isinstance(answer, Refused):
                raise RelayRefused(answer.code, answer.message)
            if not isinstance(answer, expected):
                raise ProtocolError("bad_frame", f"expected '{expected.t}', got '{answer.t}'")
            return cls(session, ws, url, answer, owns_session)
        except BaseException:
            if ws is not None:
                await ws.close()
            if owns_session:
                await session.close()
            raise

    @property
    def is_host(self) -> bool:
        """Whether this conn is the room's host (conn 0)."""
        return self.conn == 0

    @property
    def closed(self) -> bool:
        """Whether the WebSocket is closed."""
        return self._ws.closed

    async def send(self, body: bytes, to: int | None = None) -> None:
        """Send an opaque body: a seat always reaches the host; the host one conn or all (None)."""
        await self._ws.send_bytes(encode(Send(body=body, to=to)))

    async def ping(self) -> None:
        """Ask the relay for a pong (it arrives through recv)."""
        await self._ws.send_bytes(encode(Ping()))

    async def recv(self) -> RelayEvent:
        """The next message from the relay (frame, arrived, departed, host_away, error, ...)."""
        return await _receive(self._ws)

    def __aiter__(self) -> RelayConnection:
        return self

    async def __anext__(self) -> RelayEvent:
        try:
            return await self.recv()
        except RelayClosed:
            raise StopAsyncIteration from None

    async def close(self) -> None:
        """Close the WebSocket (and the session if this connection made it)."""
        await self._ws.close()
        if self._owns_session:
            await self._session.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def _receive(ws: aiohttp.ClientWebSocketResponse) -> RelayEvent:
    msg = await ws.receive()
    if msg.type is aiohttp.WSMsgType.BINARY:
        return decode(msg.data, RELAY_EVENTS, CLIENT_MAX_MESSAGE_BYTES)
    if msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSING, aiohttp.WSMsgType.CLOSED):
        raise RelayClosed(ws.close_code, str(msg.extra or ""))
    if msg.type is aiohttp.WSMsgType.ERROR:
        raise RelayClosed(ws.close_code, str(msg.data))
    raise ProtocolError("bad_frame", f"the relay sent a {msg.type.name} frame; expected binary")
