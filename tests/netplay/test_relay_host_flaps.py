"""A host that comes back twice at once, or whose old link ends late: its seats never hear
`host_away` while it holds the room.

These were the suspects for tests/e2e/test_relay_restart.py's stall (every seat was told "the
host is away" after the host had its room back); they were not its cause (that was the seat's
bot: tests/netplay/test_bot_rejoin.py), and they hold: a reclaim forgets the old link before
it closes, and the relay's writes never wait (a slow reader is cut off at 1 MiB, below the
high-water mark), so nothing runs between `host_away` to one seat and to the next.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from netplay.messages import Arrived, Frame, HostAway
from netplay.relay.client import RelayClosed, RelayConnection
from netplay.relay.launch import RunningRelay, start_relay

WAIT = 30.0  # a hang guard only


@pytest.fixture
async def relay() -> AsyncIterator[RunningRelay]:
    running = await start_relay()
    yield running
    await running.close()


async def test_two_reopens_at_once_on_a_restarted_relay_leave_one_host(
        relay: RunningRelay) -> None:
    first = await start_relay()  # the relay before its restart: it made the room and secret
    made = await RelayConnection.open_room(first.url)
    await made.close()
    await first.close()
    assert made.host_secret is not None
    both = await asyncio.gather(*(RelayConnection.open_room(
        relay.url, room=made.room, host_secret=made.host_secret) for _ in range(2)))
    seat = await RelayConnection.enter(relay.url, made.room)
    try:
        await seat.send(b"back")
        # One of the two links holds the room; the relay closed the other.
        heard: list[object] = []
        for conn in both:
            try:
                async with asyncio.timeout(WAIT):
                    heard += [await conn.recv(), await conn.recv()]
            except RelayClosed:
                heard.append("closed")
        assert sorted(map(repr, heard)) == sorted(map(repr, [
            "closed", Arrived(conn=1), Frame(sender=1, body=b"back")])), heard
        holder = next(c for c in both if not c.closed)
        await holder.send(b"welcome", to=None)
        assert await asyncio.wait_for(seat.recv(), WAIT) == Frame(sender=0, body=b"welcome")
    finally:
        for conn in [*both, seat]:
            await conn.close()


async def test_an_old_host_link_ending_after_the_reclaim_does_not_say_host_away(
        relay: RunningRelay) -> None:
    old = await RelayConnection.open_room(relay.url)
    seat = await RelayConnection.enter(relay.url, old.room)
    assert await old.recv() == Arrived(conn=1)
    new = await RelayConnection.open_room(relay.url, room=old.room, host_secret=old.host_secret)
    with pytest.raises(RelayClosed):  # the relay closes the old link, then it is gone
        await asyncio.wait_for(old.recv(), WAIT)
    await old.close()
    async with asyncio.timeout(WAIT):  # the relay has seen the old link end
        while len(relay.relay.conns) > 2:
            await asyncio.sleep(0.01)
    await new.send(b"still here", to=None)
    try:
        said = []
        async with asyncio.timeout(WAIT):
            while not said or not isinstance(said[-1], Frame):
                said.append(await seat.recv())
        assert HostAway() not in said, said
        assert said[-1] == Frame(sender=0, body=b"still here")
        assert relay.relay.rooms[old.room].host is not None
    finally:
        for conn in [new, seat]:
            await conn.close()
