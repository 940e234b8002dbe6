"""A table dealt by mental poker with a real relay, host and clients on 127.0.0.1 in this
process (PROTOCOL.md G9): the turn timer, kept by the mover's own client since nobody else holds
its key, and a round sent again from its start, which a seat applies once."""

from __future__ import annotations

import asyncio

from engine.house import HouseRules
from netplay.protocol import pack
from netplay.relay.client import RelayConnection
from netplay.relay.server import start_relay
from netplay.seat.remote import RemoteSession, play_as_bot
from netplay.table.host import Host, HostConfig


async def until(check: object, what: str, limit: float = 60.0) -> None:
    deadline = asyncio.get_running_loop().time() + limit
    while not check():  # type: ignore[operator]
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


async def test_a_seat_that_does_not_move_is_moved_by_its_own_client_in_time() -> None:
    relay = await start_relay()
    events: list[str] = []
    host = Host(HostConfig(game="hekata", players=2, bots=1, seed=5, turn_seconds=1.0,
                           bot_delay=0.0, mental=True), on_event=events.append)
    conn = await RelayConnection.open_room(relay.url)
    serving = asyncio.create_task(host.serve(conn))
    me = RemoteSession(game="", url=relay.url, room=conn.room, name="Slow")
    try:
        await me.start()
        await me.wait_seated()
        assert me.dealing == "mental" and me.turn_seconds == 1
        # This client never submits a move itself: only its turn clock can.
        await until(lambda: me.view is not None and any(
            e.seat == me.my_seat for e in me.view.history), "this seat's first move")
        assert any(f"seat {me.my_seat} " in line for line in events if line.startswith("move "))
        assert not any("voided" in line for line in events)
        assert not me.failures
    finally:
        await me.close()
        serving.cancel()
        await conn.close()
        await relay.close()


async def test_a_round_sent_again_from_its_start_is_applied_once() -> None:
    """A seat asks for the round's chain from its first message in mid-round (as after losing
    its place): it takes nothing twice, announces no second key, and both seats finish the
    match with the host's result and no failed check."""
    relay = await start_relay()
    events: list[str] = []
    host = Host(HostConfig(game="hekata", players=2, seed=3, mental=True,
                           house=HouseRules.parse("target=2000")), on_event=events.append)
    conn = await RelayConnection.open_room(relay.url)
    serving = asyncio.create_task(host.serve(conn))
    seats = [RemoteSession(game="", url=relay.url, room=conn.room, name=f"p{i}")
             for i in range(2)]
    try:
        for seat in seats:
            await seat.start()
            await seat.wait_seated()
        playing = [asyncio.create_task(play_as_bot(seat, "greedy", seed=i))
                   for i, seat in enumerate(seats)]
        await until(lambda: host.moves_made >= 2 or host.finished, "two moves")
        assert not host.finished
        replayed = seats[0]
        await replayed._send(pack("sync", c=replayed.chain_no, n=0))
        results = await asyncio.wait_for(asyncio.gather(*playing), 240)
        assert all(r is not None and r["verified"] for r in results), results
        assert all(r["scores"] == list(host.match.scores) for r in results)  # type: ignore
        assert not any("voided" in line for line in events)
    finally:
        for seat in seats:
            await seat.close()
        serving.cancel()
        await conn.close()
        await relay.close()
