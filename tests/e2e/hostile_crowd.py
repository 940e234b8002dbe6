"""Hostile peers that use many conns at once, for the end-to-end tests, each its own process.

    python -m tests.e2e.hostile_crowd MODE URL ROOM OUT SECONDS

They speak docs/PROTOCOL.md by hand (tests/e2e/hostile_peer.py's RawPeer) and stop after
SECONDS, writing what they saw to OUT as JSON:

- `seat-conns`: takes a free seat (its key proven), then joins that seat again with its token
  and key from 15 more conns, one every 0.05 s, holding every one open: a relay that kept
  counting each as a seat would have no seat slot left for anyone else. OUT (then it prints
  `holding` and holds its last conn, never moving): each conn's close code (None: open).
- `starve`: holds no seat. It fills the lobby's chain with the chat its watchers may say, then
  opens a fresh conn every 0.08 s from one of eight source addresses, each sending three
  `sync`s and a watcher's `join` (a newcomer pays for the whole chain): a shared budget for
  every resync would never have enough left for a seat's join. It prints `starving` as it
  begins that. OUT: the answers it got (written every 50 conns, and at the end).
- `chat-flood`: takes a free seat, then says long chat lines as fast as its conn may send,
  joining its seat again from a fresh conn (with a fresh conn budget) every 20 lines. OUT:
  how many of its lines the host signed into the chain, the refusals, and whether the match
  ended (its host gone) before SECONDS did.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp
import msgpack

from netplay.fair import Identity
from tests.e2e.attackers import session_from
from tests.e2e.hostile_peer import RawPeer, proof

SOURCES = [f"127.0.0.{n}" for n in range(10, 18)]  # the relay lets 4 conns of one address wait
LONG_LINE = "\U0001F0A1" * 300  # 300 characters of 4 bytes: the longest line the host keeps


async def sit(peer: RawPeer, identity: Identity, token: bytes | None = None) -> dict[str, Any]:
    """Join (with `token`, the seat it names; else a free seat), proving the key; the welcome."""
    join: dict[str, Any] = {"t": "join", "name": "crowd", "id": identity.public.to_bytes(),
                            "c": -1, "n": 0}
    if token is not None:
        join["token"] = token
    await peer.send(join)
    challenge = await peer.until({"challenge"}, 15)
    assert challenge is not None, peer.seen
    await peer.send({**join, "proof": proof(identity, challenge)})
    welcome = await peer.until({"welcome", "error"}, 15)
    assert welcome is not None and welcome["t"] == "welcome", (welcome, peer.seen)
    return welcome


async def drain(peer: RawPeer) -> None:
    """Read until the conn closes (a relay evicts a conn that does not read)."""
    with contextlib.suppress(Exception):
        while await peer.next_body(3600) is not None:
            pass


async def enter_again(http: aiohttp.ClientSession, url: str, room: str | None) -> RawPeer | str:
    """A fresh conn; or, when none opens for 3 s (the match over, its host gone), why not."""
    deadline = time.monotonic() + 3
    while True:
        try:
            return await RawPeer.enter(http, url, room)
        except (aiohttp.ClientError, OSError) as exc:
            if time.monotonic() > deadline:
                return repr(exc)
            await asyncio.sleep(0.2)


async def seat_conns(url: str, room: str | None, out: Path, seconds: float) -> None:
    identity = Identity.generate()
    stop = time.monotonic() + seconds
    async with aiohttp.ClientSession() as http:
        first = await RawPeer.enter(http, url, room)
        welcome = await sit(first, identity)
        token = welcome["token"]
        peers, readers = [first], [asyncio.create_task(drain(first))]
        for _ in range(15):
            await asyncio.sleep(0.05)
            peer = await RawPeer.enter(http, url, room)
            await sit(peer, identity, token)
            peers.append(peer)
            readers.append(asyncio.create_task(drain(peer)))
        closes = time.monotonic() + 5  # for the closes to arrive
        while sum(p.ws.closed for p in peers) < 15 and time.monotonic() < closes:
            await asyncio.sleep(0.05)
        out.write_text(json.dumps({"seat": welcome["seat"],
                                   "closed": [p.ws.close_code for p in peers]}))
        print("holding", flush=True)
        await asyncio.sleep(max(0.0, stop - time.monotonic()))
        for reader in readers:
            reader.cancel()
        for peer in peers:
            await peer.ws.close()


async def starve(url: str, room: str | None, out: Path, seconds: float) -> None:
    answers: Counter[str] = Counter()
    sessions = {address: session_from(address) for address in SOURCES}
    stop = time.monotonic() + seconds

    async def one_watcher(http: aiohttp.ClientSession, lines: int) -> None:
        peer = await RawPeer.enter(http, url, room)
        await peer.send({"t": "join", "name": "w", "id": Identity.generate().public.to_bytes(),
                         "watch": True, "c": -1, "n": 0})
        await peer.until({"synced", "error"}, 15)
        for _ in range(lines):
            await peer.send({"t": "chat", "text": LONG_LINE})
        await peer.until({"never"}, 2)
        await peer.ws.close()

    async def one_shot(http: aiohttp.ClientSession) -> None:
        try:
            peer = await RawPeer.enter(http, url, room)
        except (AssertionError, aiohttp.ClientError, OSError):
            answers["enter refused"] += 1
            return
        for _ in range(3):
            await peer.send({"t": "sync", "c": 0, "n": 0})
        await peer.send({"t": "join", "name": "w", "id": Identity.generate().public.to_bytes(),
                         "watch": True, "c": -1, "n": 0})
        await peer.until({"never"}, 1.5)
        for seen in peer.seen:
            answers[seen["code"] or seen["t"]] += 1
        await peer.ws.close()

    try:
        # The 200 lines those without a seat may say in a chain, together; side by side.
        await asyncio.gather(*(one_watcher(sessions[SOURCES[i % len(SOURCES)]], 20)
                               for i in range(10)))
        shots: set[asyncio.Task[None]] = set()
        sent = 0
        print("starving", flush=True)
        while time.monotonic() < stop:
            task = asyncio.create_task(one_shot(sessions[SOURCES[sent % len(SOURCES)]]))
            shots.add(task)
            task.add_done_callback(shots.discard)
            sent += 1
            if sent % 50 == 0:  # so far: a test may read it while the attack goes on
                out.write_text(json.dumps({"conns": sent, "answers": answers}))
            await asyncio.sleep(0.08)
        await asyncio.gather(*shots, return_exceptions=True)
        out.write_text(json.dumps({"conns": sent, "answers": answers}))
    finally:
        for http in sessions.values():
            await http.close()


async def chat_flood(url: str, room: str | None, out: Path, seconds: float) -> None:
    identity = Identity.generate()
    stop = time.monotonic() + seconds
    answers: Counter[str] = Counter()
    said: set[tuple[int, int]] = set()  # (chain, number) of each of its lines the host signed
    sent, ended = 0, ""
    async with aiohttp.ClientSession() as http:
        peer = await RawPeer.enter(http, url, room)
        welcome = await sit(peer, identity)
        seat, token = welcome["seat"], welcome["token"]
        while time.monotonic() < stop:
            for _ in range(20):
                await peer.send({"t": "chat", "text": LONG_LINE})
                sent += 1
            deadline = time.monotonic() + 1.0
            while (left := deadline - time.monotonic()) > 0:
                try:
                    body = await peer.next_body(left)
                except TimeoutError:
                    break
                if body is None:
                    break
                if body.get("t") == "error":
                    answers[body["code"]] += 1
                elif body.get("t") == "s":
                    seq, _prev, payload, _signature = body["m"]
                    line = msgpack.unpackb(payload, raw=False)
                    if line.get("t") == "chat" and line.get("seat") == seat:
                        said.add((body["c"], seq))
            old, fresh = peer, await enter_again(http, url, room)
            if isinstance(fresh, str):
                ended = fresh
                break
            peer = fresh
            await old.ws.close()
            await sit(peer, identity, token)
        await peer.ws.close()
    out.write_text(json.dumps({"seat": seat, "sent": sent, "said": len(said),
                               "answers": answers, "ended": ended}))


MODES = {"seat-conns": seat_conns, "starve": starve, "chat-flood": chat_flood}

if __name__ == "__main__":
    mode, url, room, out, seconds = sys.argv[1:]
    asyncio.run(MODES[mode](url, None if room == "-" else room, Path(out), float(seconds)))
