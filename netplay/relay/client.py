"""A client connection to a relay room, as host (conn 0) or as a seat, over aiohttp."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import errno
import logging
import os
import ssl
from typing import NoReturn, Self

import aiohttp
from yarl import URL

from netplay.messages import (
    MAX_RELAY_BODY,
    RELAY_EVENTS,
    Admit,
    Drop,
    Enter,
    Entered,
    Open,
    Opened,
    Ping,
    Pong,
    ProtocolError,
    Refused,
    RelayEvent,
    decode_map,
    decode_mapped,
    encode,
    encode_send,
    read_frame,
)
from netplay.relay.guard import TokenBucket

log = logging.getLogger("cardtui.relay.client")

DEFAULT_PORT = 7777
# The relay forwards bodies up to its frame limit plus a small envelope; accept generously.
CLIENT_MAX_MESSAGE_BYTES = MAX_RELAY_BODY + 1024
CONNECT_SECONDS = 15.0
# An honest client stays well inside the relay's allowance, so that a few messages bunched
# up on the way (a busy network, a paused process) still arrive inside its burst.
PACE_RATE_SHARE = 0.8
PACE_BURST_SHARE = 0.5
DEFAULT_RATE, DEFAULT_BURST = 100.0, 200.0  # the relay's defaults, until it says otherwise
RESEND_LIMIT = 5  # times one refused message is sent again before its refusal is passed on
SENT_KEPT = 512  # messages remembered, so one the relay refused as rate_limited can be resent
# A link can fail without either end hearing of it (a laptop changes network, a NAT forgets
# the flow): a client waiting on a silent relay asks it for a pong, and counts the link gone
# when that goes unanswered, so that it reconnects, and times its absence, within
# SILENT_LINK_SECONDS of the last thing it heard (`netplay.fair.absence.HOST_MARGIN` is longer).
HEARTBEAT_SECONDS = 1.0
PONG_SECONDS = 2.0
CLOSE_SECONDS = 0.25  # a last look for the answer, and for the relay's reply to a close
SILENT_LINK_SECONDS = HEARTBEAT_SECONDS + PONG_SECONDS + 2 * CLOSE_SECONDS


class RelayRefused(ProtocolError):
    """The relay answered with an error message instead of doing what was asked."""


class RelayUnreachable(ConnectionError):
    """No relay answered at that address (name unknown, nothing listening, TLS refused...)."""


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


def client_tls(ca_file: str | None) -> ssl.SSLContext:
    """The TLS context for wss:// relays: the system's trusted roots, or those in `ca_file`."""
    context = ssl.create_default_context()
    if ca_file:
        context.load_verify_locations(cafile=ca_file)
    return context


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
        rate, burst = answer.rate, answer.burst
        if rate is None or burst is None or not (rate > 0 and burst >= 1):
            rate, burst = DEFAULT_RATE, DEFAULT_BURST
        self._rate = float(rate)
        self._pace = TokenBucket(rate * PACE_RATE_SHARE, max(1.0, burst * PACE_BURST_SHARE),
                                 stamp=asyncio.get_running_loop().time())
        self._sent = 1  # the hello was message 0
        self._kept: collections.deque[tuple[int, bytes, int]] = collections.deque(maxlen=SENT_KEPT)
        self.resent = 0  # messages sent again after a rate_limited refusal
        self._heard = asyncio.get_running_loop().time()  # when the relay was last heard
        self._pinged: float | None = None  # when an unanswered heartbeat ping went out
        # Per ping sent, whether it was a heartbeat's; bounded, for a relay that never answers.
        self._pongs: collections.deque[bool] = collections.deque(maxlen=64)

    @classmethod
    async def open_room(
        cls,
        url: str,
        room: str | None = None,
        host_secret: bytes | None = None,
        session: aiohttp.ClientSession | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> RelayConnection:
        """Open a new room as its host, or reclaim `room` with its `host_secret`."""
        hello = Open(room=room, host_secret=host_secret if room is not None else None)
        return await cls._connect(url, hello, Opened, session, tls)

    @classmethod
    async def enter(
        cls, url: str, code: str | None = None, session: aiohttp.ClientSession | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> RelayConnection:
        """Enter the room with `code` as a seat (None: the relay's only room, in host mode)."""
        return await cls._connect(url, Enter(room=code), Entered, session, tls)

    @classmethod
    async def _connect(
        cls,
        url: str,
        hello: Open | Enter,
        expected: type[Opened | Entered],
        session: aiohttp.ClientSession | None,
        tls: ssl.SSLContext | None,
    ) -> RelayConnection:
        owns_session = session is None
        session = session or aiohttp.ClientSession()
        ws: aiohttp.ClientWebSocketResponse | None = None
        target = relay_url(url)
        try:
            try:
                async with asyncio.timeout(CONNECT_SECONDS):
                    ws = await session.ws_connect(
                        target, max_msg_size=CLIENT_MAX_MESSAGE_BYTES, autoping=True,
                        ssl=tls if tls is not None else True,
                    )
                    await ws.send_bytes(encode(hello))
                    answer = await _receive(ws)
            except TimeoutError:
                raise RelayUnreachable(f"{target} did not answer within {CONNECT_SECONDS:g} s"
                                       ) from None
            except aiohttp.WSServerHandshakeError as exc:
                raise RelayUnreachable(f"{target} is not a relay, or refused us"
                                       f" (HTTP {exc.status}{': ' if exc.message else ''}"
                                       f"{exc.message})") from None
            except (aiohttp.ClientError, OSError) as exc:
                raise RelayUnreachable(f"cannot reach {target}: {describe(exc)}") from None
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
    def close_code(self) -> int | None:
        """The WebSocket close code, once closed."""
        return self._ws.close_code

    @property
    def closed(self) -> bool:
        """Whether the WebSocket is closed."""
        return self._ws.closed

    async def send(self, body: bytes, to: int | None = None) -> None:
        """Send an opaque body: a seat always reaches the host; the host one conn or all (None)."""
        await self._write(encode_send(body, to))

    async def ping(self) -> None:
        """Ask the relay for a pong (it arrives through recv)."""
        self._pongs.append(False)
        await self._write(encode(Ping()))

    async def admit(self, conn: int, watch: bool = False) -> None:
        """As the host: vouch for `conn` as a seat (or a watcher), so the relay keeps it."""
        await self._write(encode(Admit(conn=conn, watch=watch or None)))

    async def drop(self, conn: int) -> None:
        """As the host: have the relay close `conn` (a seat that came back on another conn)."""
        await self._write(encode(Drop(conn=conn)))

    async def _write(self, data: bytes, attempt: int = 0) -> None:
        # Paced under the relay's rate, so that an honest client is never refused for speed.
        delay = self._pace.wait(asyncio.get_running_loop().time())
        if delay > 0.0:
            await asyncio.sleep(delay)
        self._kept.append((self._sent, data, attempt))
        self._sent += 1
        await self._ws.send_bytes(data)

    async def recv(self) -> RelayEvent:
        """The next message from the relay (frame, arrived, departed, host_away, error, ...).

        A message the relay refused as `rate_limited` is sent again (paced) rather than
        reported, up to RESEND_LIMIT times.
        """
        while True:
            msg = await self._receive()
            if isinstance(msg, Pong) and self._pongs and self._pongs.popleft():
                continue  # a heartbeat's: the relay answers pings in order
            if not isinstance(msg, Refused) or msg.code != "rate_limited":
                return msg
            refused = next((kept for kept in self._kept if kept[0] == msg.seq), None)
            if refused is None or refused[2] >= RESEND_LIMIT:
                return msg
            log.info("the relay refused message %s for speed; sending it again", refused[0])
            self.resent += 1
            # The pacer let this one through, so it is wrong about the relay's allowance just
            # now (a paused process, a bunching network): wait a few of the relay's intervals.
            await asyncio.sleep(2 * (refused[2] + 1) / self._rate)
            await self._write_reading(refused[1], refused[2] + 1)

    async def _receive(self) -> RelayEvent:
        """The next message; while the relay is silent, ping it, and close a link that stays so."""
        loop = asyncio.get_running_loop()
        while True:
            if self._pinged is None:
                wait = self._heard + HEARTBEAT_SECONDS - loop.time()
            else:
                wait = self._pinged + PONG_SECONDS - loop.time()
                if wait <= 0.0:
                    # A last look first: a stalled event loop may have left the answer unread.
                    wait = CLOSE_SECONDS
            try:
                msg = await _receive(self._ws, max(wait, 0.001))
            except TimeoutError:
                now = loop.time()
                if self._pinged is None:
                    if now - self._heard >= HEARTBEAT_SECONDS:
                        self._pinged = now
                        self._pongs.append(True)
                        await self._write_reading(encode(Ping()))
                elif now - self._pinged >= PONG_SECONDS + CLOSE_SECONDS:
                    await self._abandon(now - self._heard)
                continue
            self._heard, self._pinged = loop.time(), None
            return msg

    async def _write_reading(self, data: bytes, attempt: int = 0) -> None:
        """Write from inside recv, whose callers expect a lost link as RelayClosed only."""
        try:
            await self._write(data, attempt)
        except ConnectionError as exc:  # aiohttp's "cannot write to closing transport" too
            raise RelayClosed(self._ws.close_code, describe(exc)) from None

    async def _abandon(self, silent: float) -> NoReturn:
        """Close a link the relay stopped answering on, without waiting for an answer."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(CLOSE_SECONDS):
                await self._ws.close(code=aiohttp.WSCloseCode.GOING_AWAY,
                                     message=b"the relay stopped answering")
        raise RelayClosed(self._ws.close_code, f"the relay did not answer for {silent:.1f} s")

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


def describe(exc: BaseException) -> str:
    """A network error in a few words, without the library's class names."""
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        return f"its TLS certificate is not trusted ({exc.certificate_error})"
    if isinstance(exc, aiohttp.ClientConnectorError):
        error = exc.os_error
        if error.errno == errno.ECONNREFUSED:
            return "connection refused (nothing listens at that address and port)"
        return (os.strerror(error.errno) if isinstance(error.errno, int) and error.errno > 0
                else error.strerror or str(error) or "connection failed")
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "the relay closed the connection"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


async def _receive(ws: aiohttp.ClientWebSocketResponse, timeout: float | None = None
                   ) -> RelayEvent:
    msg = await ws.receive(timeout)
    if msg.type is aiohttp.WSMsgType.BINARY:
        data = msg.data
        if type(data) is not bytes:
            raise ProtocolError("bad_frame", "a frame body must be bytes")
        mapped = decode_map(data, CLIENT_MAX_MESSAGE_BYTES)
        frame = read_frame(mapped, len(data))  # nearly every message: no generic walk for it
        return frame if frame is not None else decode_mapped(mapped, data, RELAY_EVENTS)
    if msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSING, aiohttp.WSMsgType.CLOSED):
        raise RelayClosed(ws.close_code, str(msg.extra or ""))
    if msg.type is aiohttp.WSMsgType.ERROR:
        raise RelayClosed(ws.close_code, str(msg.data))
    raise ProtocolError("bad_frame", f"the relay sent a {msg.type.name} frame; expected binary")
