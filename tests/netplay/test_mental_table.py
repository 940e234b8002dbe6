"""A table dealt by mental poker with a real relay, host and clients on 127.0.0.1 in this
process (PROTOCOL.md G9): the turn timer, kept by the mover's own client since nobody else holds
its key."""

from __future__ import annotations

import asyncio

from netplay.relay.client import RelayConnection
from netplay.relay.server import start_relay
from netplay.seat.remote import RemoteSession
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

