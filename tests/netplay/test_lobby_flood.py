"""Issue 10: a watcher that comes and goes, or a stranger that sits down and leaves again and
again, does not grow the host's signed chain (kept in memory, replayed on resync, written to
the save file on every message) without bound."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from netplay.fair import Identity
from netplay.fair.transcript import SignedMessage
from netplay.messages import Frame
from netplay.protocol import inner, join_proof_digest, pack, unpack
from netplay.relay.client import RelayConnection
from netplay.relay.launch import start_relay
from netplay.relay.limits import RelayLimits
from netplay.table.host import Host, HostConfig
from netplay.table.lobby import MAX_LOBBIES, MAX_OTHERS_CHAT

WATCHER_VISITS = 30
SEAT_VISITS = MAX_LOBBIES // 2 + 20  # two lobbies a visit (sat down, left): past the cap


async def answer(conn: RelayConnection, kinds: set[str]) -> dict[str, Any]:
    """The host's next message to this conn of one of `kinds` (opened if it is signed)."""
    while True:
        frame = await conn.recv()
        if not isinstance(frame, Frame):
            continue
        body = unpack(frame.body)
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


STRANGER_CHATS = 2100  # past MAX_CHAIN, the most chat a chain held from anyone


async def chat_flood() -> tuple[int, dict[str, Any]]:
    relay = await start_relay(limits=RelayLimits(exempt_addresses=frozenset({"127.0.0.1"})))
    host = Host(HostConfig(game="zodiak", players=3, seed=4), on_event=lambda _: None)
    host_conn = await RelayConnection.open_room(relay.url)
    serving = asyncio.create_task(host.serve(host_conn))
    me = Identity.generate()
    seat = await RelayConnection.enter(relay.url, host_conn.room)
    try:
        join: dict[str, Any] = {"name": "seat", "id": me.public.to_bytes(), "c": -1, "n": 0}
        await seat.send(pack("join", **join), to=0)
        challenge = await asyncio.wait_for(answer(seat, {"challenge"}), 30)
        proof = me.sign(join_proof_digest(challenge["table"], challenge["nonce"]))
        await seat.send(pack("join", **join, proof=proof), to=0)
        await asyncio.wait_for(answer(seat, {"synced"}), 30)
        sent = 0
        while sent < STRANGER_CHATS:  # strangers: entered, never joined, 20 lines each
            strangers = [await RelayConnection.enter(relay.url, host_conn.room) for _ in range(10)]
            for stranger in strangers:
                for _ in range(20):
                    await stranger.send(pack("chat", text="x" * 300), to=0)
                    sent += 1
            for stranger in strangers:
                await stranger.close()
            # The relay passes a conn's frames, then its departure: once the host has let go of
            # every stranger, it has handled all they said.
            for _ in range(1200):
                if set(host.budgets) <= {seat.conn}:
                    break
                await asyncio.sleep(0.05)
        await seat.send(pack("chat", text="still here"), to=0)
        while (heard := await asyncio.wait_for(answer(seat, {"chat", "error"}), 30))["t"] == \
                "chat" and heard["text"] != "still here":
            pass
        return len(host.log), heard
    finally:
        await seat.close()
        serving.cancel()
        await asyncio.gather(serving, return_exceptions=True)
        await host_conn.close()
        await relay.close()


def test_strangers_chatting_cannot_silence_the_seats() -> None:
    """Those without a seat share MAX_OTHERS_CHAT lines a chain; a seat still chats after (before:
    2000 lines from conns that never joined refused every seat's chat for the round, and each
    line rewrote a save file growing to megabytes)."""
    chain, heard = asyncio.run(chat_flood())
    assert heard["t"] == "chat" and heard["text"] == "still here"
    assert chain <= MAX_OTHERS_CHAT + 10
