"""Issue 10: a watcher that comes and goes, or a stranger that sits down and leaves again and
again, does not grow the host's signed chain (kept in memory, replayed on resync, written to
the save file on every message) without bound."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from netplay.fair import Identity
from netplay.fair.transcript import SignedMessage
from netplay.protocol import inner, join_proof_digest, pack, unpack
from netplay.relay.client import RelayConnection
from netplay.relay.server import RelayLimits, start_relay
from netplay.table.host import Host, HostConfig
from netplay.table.lobby import MAX_LOBBIES

WATCHER_VISITS = 30
SEAT_VISITS = MAX_LOBBIES // 2 + 20  # two lobbies a visit (sat down, left): past the cap


async def answer(conn: RelayConnection, kinds: set[str]) -> dict[str, Any]:
    """The host's next message to this conn of one of `kinds` (opened if it is signed)."""
    while True:
        frame = await conn.recv()
        if frame.get("t") != "frame":
            continue
        body = unpack(frame["body"])
        if body["t"] == "s":
            body = inner(SignedMessage.from_wire(body["m"]).payload)
        if body["t"] in kinds:
            return body


async def visit(url: str, room: str, host: Host, watch: bool) -> None:
    """Enter, join (watching, or taking a free seat with a fresh key), and leave.

    The visitor says it has the whole chain (as one that follows it would): its resync costs
    the host nothing, so the host's resync budget does not slow the flood down.
    """
    me = Identity.generate()
    conn = await RelayConnection.enter(url, room)
    try:
        join: dict[str, Any] = {"name": "visitor", "id": me.public.to_bytes(), "watch": watch,
                                "c": host.round_number, "n": len(host.log)}
        await conn.send(pack("join", **join), to=0)
        if not watch:
            challenge = await asyncio.wait_for(answer(conn, {"challenge"}), 30)
            proof = me.sign(join_proof_digest(challenge["table"], challenge["nonce"]))
            await conn.send(pack("join", **join, proof=proof), to=0)
        await asyncio.wait_for(answer(conn, {"synced"}), 30)
    finally:
        await conn.close()


def lobbies(host: Host) -> int:
    return sum(inner(SignedMessage.from_wire(unpack(b)["m"]).payload)["t"] == "lobby"
               for b in host.log)


async def flood(tmp_path: Path, watch: bool, visits: int) -> tuple[int, int]:
    # Loopback exempt from the relay's per-address limits: many addresses, one test machine.
    relay = await start_relay(limits=RelayLimits(exempt_addresses=frozenset({"127.0.0.1"})))
    host = Host(HostConfig(game="zodiak", players=3, seed=4, save_path=tmp_path / "t.json"),
                on_event=lambda _: None)
    host_conn = await RelayConnection.open_room(relay.url)
    serving = asyncio.create_task(host.serve(host_conn))
    try:
        await visit(relay.url, host_conn.room, host, watch=True)
        before = lobbies(host)
        for _ in range(visits):
            await visit(relay.url, host_conn.room, host, watch)
        # A last watcher's full answer: every departure before it has been handled by now.
        await visit(relay.url, host_conn.room, host, watch=True)
        return before, lobbies(host)
    finally:
        serving.cancel()
        await asyncio.gather(serving, return_exceptions=True)
        await host_conn.close()
        await relay.close()


def test_watchers_coming_and_going_add_nothing_to_the_chain(tmp_path: Path) -> None:
    """A watcher's arrival is not a lobby change: it is answered, not broadcast to everyone."""
    before, after = asyncio.run(flood(tmp_path, watch=True, visits=WATCHER_VISITS))
    assert after == before


def test_a_seat_taken_and_left_again_and_again_stops_growing_the_chain(tmp_path: Path) -> None:
    """Each round's chain holds at most MAX_LOBBIES lobbies (then the host's state still changes
    and its answers to each joiner say so, but nothing more is broadcast)."""
    _, after = asyncio.run(flood(tmp_path, watch=False, visits=SEAT_VISITS))
    assert after <= MAX_LOBBIES


async def refused_visits(visits: int) -> int:
    relay = await start_relay(limits=RelayLimits(exempt_addresses=frozenset({"127.0.0.1"})))
    host = Host(HostConfig(game="zodiak", players=3, seed=4), on_event=lambda _: None)
    host_conn = await RelayConnection.open_room(relay.url)
    serving = asyncio.create_task(host.serve(host_conn))
    try:
        for _ in range(visits):
            conn = await RelayConnection.enter(relay.url, host_conn.room)
            await conn.send(pack("sync", c=0, n=0, pad=b""), to=0)  # refused: no field 'pad'
            await asyncio.wait_for(answer(conn, {"error"}), 30)
            await conn.close()
        await visit(relay.url, host_conn.room, host, watch=True)
        return len(host.strikes)
    finally:
        serving.cancel()
        await asyncio.gather(serving, return_exceptions=True)
        await host_conn.close()
        await relay.close()


def test_conns_refused_once_and_gone_leave_nothing_behind() -> None:
    """The host counts refusals per conn; a conn that left is forgotten, so visitors that each
    send one bad message do not grow the host's memory without end."""
    assert asyncio.run(refused_visits(WATCHER_VISITS)) <= 1
