"""Hostile relay clients, run as their own processes by the end-to-end tests and benchmarks.

    python -m tests.e2e.attackers rooms URL --from 127.0.0.2
    python -m tests.e2e.attackers slowloris HOST PORT --from 127.0.0.2 --attempts 3000
    python -m tests.e2e.attackers slowloris HOST PORT --from 127.0.0.10-49  (40 addresses)
    python -m tests.e2e.attackers squat URL ROOM --from 127.0.0.2
    python -m tests.e2e.attackers flood URL --from 127.0.0.2 --conns 200 --rate 100
    python -m tests.e2e.attackers sshflood HOST PORT --from 127.0.0.2 --conns 10
    python -m tests.e2e.attackers webflood URL --from 127.0.0.2 --conns 4
    python -m tests.e2e.attackers pingflood HOST PORT --from 127.0.0.2 --conns 10

Each runs until its bound (attempts or --seconds) and prints what it got as `key value` lines,
so a test can read them from its log. Every socket is bound to a loopback source address.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import struct
import sys
from collections.abc import Coroutine
from typing import Any

import aiohttp

from netplay.messages import encode_map as encode
from netplay.relay.client import RelayConnection, RelayRefused


def report(key: str, value: object) -> None:
    """One `key value` line on stdout, for the test to find."""
    print(f"{key} {value}", flush=True)


def addresses(text: str) -> list[str]:
    """The source addresses `--from` names: one, or a range of last bytes (127.0.0.10-49)."""
    first, _, last = text.partition("-")
    if not last:
        return [first]
    stem, low = first.rsplit(".", 1)
    return [f"{stem}.{n}" for n in range(int(low), int(last) + 1)]


def session_from(address: str) -> aiohttp.ClientSession:
    """An HTTP session whose sockets leave from `address`."""
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(local_addr=(address, 0), force_close=True, limit=0))


async def rooms(args: argparse.Namespace) -> None:
    """Open rooms until the relay refuses, then hold them until the time is up; from a range
    of addresses, go round them opening rooms all the time (see `many_rooms`)."""
    if len(addresses(args.address)) > 1:
        await many_rooms(args)
        return
    held: list[RelayConnection] = []
    async with session_from(args.address) as session:
        refusal = "none"
        for _ in range(args.attempts):
            try:
                held.append(await RelayConnection.open_room(args.url, session=session))
            except RelayRefused as exc:
                refusal = exc.code
                break
        report("rooms", len(held))
        report("refused", refusal)
        await asyncio.sleep(args.seconds)
        for conn in held:
            await conn.close()


async def many_rooms(args: argparse.Namespace) -> None:
    """Round the addresses, each opening a room whenever the relay lets it, until the time is
    up; rooms the relay closes are opened again."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + args.seconds
    sessions = [session_from(a) for a in addresses(args.address)]
    held: list[RelayConnection] = []
    opened = refused = 0
    try:
        while loop.time() < deadline:
            for session in sessions:
                try:
                    conn = await RelayConnection.open_room(args.url, session=session)
                except (RelayRefused, ConnectionError, aiohttp.ClientError):
                    refused += 1
                else:
                    opened += 1
                    held.append(conn)
                    asyncio.create_task(drain(conn))
                await asyncio.sleep(args.pause)
            held = [c for c in held if not c.closed]
            report("holding", f"{len(held)} rooms; opened {opened}, refused {refused}")
    finally:
        for conn in held:
            await conn.close()
        for session in sessions:
            await session.close()


async def slowloris(args: argparse.Namespace) -> None:
    """Keep as many half-sent HTTP requests open as the relay lets through, re-opening them."""
    opened = dropped = 0
    loop = asyncio.get_running_loop()
    deadline = loop.time() + args.seconds

    sources = addresses(args.address)

    async def one() -> None:
        nonlocal opened, dropped
        try:
            reader, writer = await asyncio.open_connection(
                args.host, args.port, local_addr=(sources[opened % len(sources)], 0))
        except OSError:
            dropped += 1
            return
        opened += 1
        writer.write(b"GET /ws HTTP/1.1\r\nHost: relay\r\nUpgrade: websocket\r\n")
        try:
            async with asyncio.timeout(max(0.0, deadline - loop.time())):
                while await reader.read(1024) != b"":
                    pass
        except (TimeoutError, OSError):
            pass
        dropped += 1
        writer.close()

    running: set[asyncio.Task[None]] = set()
    for _ in range(args.attempts):
        if loop.time() >= deadline:
            break
        while len(running) >= args.concurrent:
            _, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
        running.add(asyncio.create_task(one()))
        await asyncio.sleep(args.pause)
    report("opened", opened)
    if running:
        await asyncio.wait(running)
    report("dropped", dropped)


async def squat(args: argparse.Namespace) -> None:
    """Enter a room over and over, holding every slot the relay gives, never joining."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + args.seconds
    entered = refused = 0
    codes: collections.Counter[str] = collections.Counter()
    held: list[RelayConnection] = []
    async with session_from(args.address) as session:
        while loop.time() < deadline and entered + refused < args.attempts:
            held = [c for c in held if not c.closed]
            try:
                conn = await RelayConnection.enter(args.url, args.room, session=session)
                held.append(conn)
                entered += 1
                asyncio.create_task(drain(conn))
            except RelayRefused as exc:
                refused += 1
                codes[exc.code] += 1
                if codes[exc.code] == 1:
                    report("holding", f"{len(held)} conns, then refused {exc.code}")
                await asyncio.sleep(args.pause)
            except (ConnectionError, aiohttp.ClientError):
                await asyncio.sleep(args.pause)
        report("entered", entered)
        report("refused", dict(codes))
        await asyncio.sleep(max(0.0, deadline - loop.time()))  # holding what it has
        for conn in held:
            await conn.close()


async def drain(conn: RelayConnection) -> None:
    """Read a squatting conn until the relay drops it, so that its close is noticed."""
    with contextlib.suppress(Exception):  # an attacker does not care why it was dropped
        async for _ in conn:
            pass


async def flood(args: argparse.Namespace) -> None:
    """`conns` connections each sending `rate` pings a second, for `seconds`.

    Each opens a room first, where the relay lets it (so that it is not dropped as a
    connection that never entered a room), and connects again whenever it is dropped.
    """
    ping, hello = encode({"t": "ping"}), encode({"t": "open", "v": 1})
    loop = asyncio.get_running_loop()
    deadline = loop.time() + args.seconds
    sent = refused_conns = connected = 0

    async def one(session: aiohttp.ClientSession, index: int) -> None:
        nonlocal sent, refused_conns, connected
        await asyncio.sleep(index / args.conns)  # spread the starts over a second
        while loop.time() < deadline:
            try:
                ws = await session.ws_connect(args.url)
            except (aiohttp.ClientError, OSError):
                refused_conns += 1
                await asyncio.sleep(1.0)
                continue
            connected += 1
            reader = asyncio.create_task(read_all(ws))
            tick = loop.time()
            try:
                await ws.send_bytes(hello)
                while loop.time() < deadline and not ws.closed:
                    await ws.send_bytes(ping)
                    sent += 1
                    # Never above the rate: a sender that fell behind does not catch up.
                    tick = max(tick + 1.0 / args.rate, loop.time())
                    await asyncio.sleep(tick - loop.time())
            except (aiohttp.ClientError, ConnectionError, RuntimeError):
                pass
            reader.cancel()
            await ws.close()
            connected -= 1

    async def progress() -> None:
        await asyncio.sleep(2.0)
        report("connected", f"{connected} of {args.conns} ({refused_conns} refused)")
        before = sent
        await asyncio.sleep(5.0)
        report("sending", f"{(sent - before) / 5.0:.0f} pings/s")

    async with session_from(args.address) as session:
        told = asyncio.create_task(progress())
        await asyncio.gather(*(one(session, i) for i in range(args.conns)))
        told.cancel()
    report("sent", sent)
    report("refused_conns", refused_conns)


def ssh_packet(payload: bytes) -> bytes:
    """`payload` as an SSH binary packet before any key is agreed: no cipher, no MAC."""
    pad = 8 - (5 + len(payload)) % 8
    pad += 8 if pad < 4 else 0
    return struct.pack(">IB", 1 + len(payload) + pad, pad) + payload + bytes(pad)


class Tally:
    """What a flood's connections have done so far: sent (in its unit), refused, connected."""

    def __init__(self) -> None:
        self.sent = self.refused = self.connected = 0


async def flooding(tally: Tally, conns: int, unit: str, per_unit: int,
                   workers: list[Coroutine[Any, Any, None]]) -> None:
    """Run a flood's connections to their end, saying every 5 s how fast they send; then
    report what they sent in all."""

    async def progress() -> None:
        while True:
            before = tally.sent
            await asyncio.sleep(5.0)
            report("sending", f"{(tally.sent - before) / 5.0 / per_unit:.0f} {unit} on"
                   f" {tally.connected} of {conns} ({tally.refused} refused)")

    told = asyncio.create_task(progress())
    try:
        await asyncio.gather(*workers)
    finally:
        told.cancel()
    report("sent", tally.sent)


async def sshflood(args: argparse.Namespace) -> None:
    """`conns` connections to an SSH server that never log in: each sends its version line,
    then SSH_MSG_IGNORE packets as fast as the server reads them (no key exchange: the
    packets cost the server a parse each and the sender nothing), and connects again
    whenever it is dropped, for `seconds`."""
    block = ssh_packet(b"\x02" + struct.pack(">I", 0)) * 4096
    loop = asyncio.get_running_loop()
    deadline = loop.time() + args.seconds
    tally = Tally()

    async def one(address: str) -> None:
        while loop.time() < deadline:
            try:
                _, writer = await asyncio.open_connection(args.host, args.port,
                                                          local_addr=(address, 0))
            except OSError:
                tally.refused += 1
                await asyncio.sleep(0.5)
                continue
            tally.connected += 1
            try:
                writer.write(b"SSH-2.0-OpenSSH_9.6\r\n")
                while loop.time() < deadline:
                    writer.write(block)
                    await writer.drain()
                    tally.sent += len(block)
            except OSError:
                pass
            writer.close()
            tally.connected -= 1

    await flooding(tally, args.conns, "KiB/s", 1024,
                   [one(address) for address in addresses(args.address)
                    for _ in range(args.conns)])


async def webflood(args: argparse.Namespace) -> None:
    """`conns` terminal WebSockets of a browser door (`cardtui serve --web-port`), each sending
    the page's `ping` as fast as the door reads it and reading every answer, connecting again
    whenever it is dropped, for `seconds`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + args.seconds
    tally = Tally()

    async def one(session: aiohttp.ClientSession) -> None:
        while loop.time() < deadline:
            try:
                ws = await session.ws_connect(args.url)
            except (aiohttp.ClientError, OSError):
                tally.refused += 1
                await asyncio.sleep(0.5)
                continue
            tally.connected += 1
            reader = asyncio.create_task(read_all(ws))
            try:
                while loop.time() < deadline and not ws.closed:
                    await ws.send_str('["ping", "x"]')
                    tally.sent += 1
            except (aiohttp.ClientError, ConnectionError, RuntimeError):
                pass
            reader.cancel()
            await ws.close()
            tally.connected -= 1

    async with session_from(args.address) as session:
        await flooding(tally, args.conns, "messages/s", 1,
                       [one(session) for _ in range(args.conns)])


def ws_frame(opcode: int, payload: bytes = b"") -> bytes:
    """A client's WebSocket frame (final, masked with zeros, so the payload reads as it is)."""
    assert len(payload) < 126
    return bytes([0x80 | opcode, 0x80 | len(payload)]) + bytes(4) + payload


async def pingflood(args: argparse.Namespace) -> None:
    """`conns` WebSockets to a relay, each opening a room, then sending WebSocket PING frames
    (which aiohttp answers by itself unless told not to) as fast as the relay reads them and
    reading every answer, connecting again whenever dropped, for `seconds`."""
    request = (f"GET /ws HTTP/1.1\r\nHost: {args.host}:{args.port}\r\nUpgrade: websocket\r\n"
               "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
               "Sec-WebSocket-Version: 13\r\n\r\n").encode()
    hello = ws_frame(0x2, encode({"t": "open", "v": 1}))
    block = ws_frame(0x9) * 8192
    loop = asyncio.get_running_loop()
    deadline = loop.time() + args.seconds
    tally = Tally()

    async def discard(reader: asyncio.StreamReader) -> None:
        while await reader.read(65536):
            pass

    async def one(address: str) -> None:
        while loop.time() < deadline:
            try:
                reader, writer = await asyncio.open_connection(args.host, args.port,
                                                               local_addr=(address, 0))
                writer.write(request)
                answer = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            except (OSError, asyncio.IncompleteReadError, TimeoutError):
                tally.refused += 1
                await asyncio.sleep(0.5)
                continue
            if not answer.startswith(b"HTTP/1.1 101"):
                tally.refused += 1
                writer.close()
                await asyncio.sleep(0.5)
                continue
            tally.connected += 1
            draining = asyncio.create_task(discard(reader))
            try:
                writer.write(hello)
                while loop.time() < deadline and not draining.done():
                    writer.write(block)
                    await writer.drain()
                    tally.sent += 8192
            except OSError:
                pass
            draining.cancel()
            writer.close()
            tally.connected -= 1

    await flooding(tally, args.conns, "pings/s", 1,
                   [one(address) for address in addresses(args.address)
                    for _ in range(args.conns)])


async def read_all(ws: aiohttp.ClientWebSocketResponse) -> None:
    """Read and forget everything, like a client that keeps up."""
    async for _ in ws:
        pass


def parse(argv: list[str]) -> argparse.Namespace:
    """The attack and its bounds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    kinds = parser.add_subparsers(dest="kind", required=True)
    for name in ("rooms", "slowloris", "squat", "flood", "sshflood", "webflood", "pingflood"):
        sub = kinds.add_parser(name)
        if name in ("slowloris", "sshflood", "pingflood"):
            sub.add_argument("host")
            sub.add_argument("port", type=int)
        else:
            sub.add_argument("url")
        if name == "squat":
            sub.add_argument("room")
        sub.add_argument("--from", dest="address", default="127.0.0.2")
        sub.add_argument("--seconds", type=float, default=60.0)
        sub.add_argument("--attempts", type=int, default=1000)
        sub.add_argument("--pause", type=float, default=0.01)
        sub.add_argument("--concurrent", type=int, default=500)
        sub.add_argument("--conns", type=int, default=200)
        sub.add_argument("--rate", type=float, default=100.0)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run one attack to its bound."""
    args = parse(sys.argv[1:] if argv is None else argv)
    attack: dict[str, Any] = {"rooms": rooms, "slowloris": slowloris, "squat": squat,
                              "flood": flood, "sshflood": sshflood, "webflood": webflood,
                              "pingflood": pingflood}
    asyncio.run(attack[args.kind](args))
    report("done", args.kind)
    return 0


if __name__ == "__main__":
    sys.exit(main())
