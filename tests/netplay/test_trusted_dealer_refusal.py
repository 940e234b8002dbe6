"""A seat that will not play at a trusted dealer's table (issue 12: `join` refuses it unless
--allow-trusted-dealer) leaves before it takes a seat, and is not fooled by a challenge that lies."""

from __future__ import annotations

import asyncio

from netplay.protocol import pack, unpack
from netplay.relay.client import RelayConnection
from netplay.relay.launch import start_relay
from netplay.seat.remote import RemoteSession
from netplay.table.host import Host, HostConfig


class ChallengeSaysMental(Host):
    """A trusted dealer whose challenges claim mental-poker dealing (the welcome tells the truth)."""

    async def _send(self, conn: int | None, body: bytes) -> None:
        message = unpack(body)
        if message.get("t") == "challenge":
            body = pack(**{**message, "dealing": "mental"})
        await super()._send(conn, body)


async def refused_by(host: Host) -> tuple[RemoteSession, Host]:
    """Join host's table with a seat that refuses a trusted dealer; return it once answered."""
    relay = await start_relay()
    conn = await RelayConnection.open_room(relay.url)
    serving = asyncio.create_task(host.serve(conn))
    wary = RemoteSession(game="", url=relay.url, room=conn.room, name="wary")
    wary.allow_trusted = False
    try:
        await wary.start()
        await wary.wait_seated()
    finally:
        await wary.close()
        serving.cancel()
        await asyncio.gather(serving, return_exceptions=True)
        await relay.close()
    return wary, host


async def test_the_challenge_says_how_the_host_deals_so_no_seat_is_taken() -> None:
    wary, host = await refused_by(Host(HostConfig(game="zodiak", players=2, mental=False)))
    assert wary.refused is not None and "--allow-trusted-dealer" in wary.refused
    assert wary.my_seat is None
    assert not any(seat.name == "wary" for seat in host.seats)


async def test_a_challenge_that_lies_is_caught_by_the_welcome() -> None:
    wary, _ = await refused_by(ChallengeSaysMental(HostConfig(game="zodiak", players=2,
                                                              mental=False)))
    assert wary.my_seat is not None  # it was seated: the welcome, not the challenge, refused
    assert wary.refused is not None and "--allow-trusted-dealer" in wary.refused
