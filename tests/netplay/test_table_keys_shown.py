"""Keys a person can check (FAIRNESS.md A10) over a real relay on 127.0.0.1: every seat's lobby
shows the same table fingerprint, and a seat told to expect another host leaves at its welcome."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from netplay.fair.fingerprint import table_fingerprint
from netplay.relay.client import RelayConnection
from netplay.relay.launch import start_relay
from netplay.seat.remote import RemoteSession
from netplay.table.host import Host, HostConfig

WAIT = 30.0  # a hang guard only


async def until(condition: Callable[[], bool]) -> None:
    async with asyncio.timeout(WAIT):
        while not condition():
            await asyncio.sleep(0.01)


async def test_every_seat_shows_the_same_fingerprint_and_a_wrong_host_is_refused() -> None:
    relay = await start_relay("127.0.0.1", 0)
    url = f"ws://127.0.0.1:{relay.port}/ws"
    conn = await RelayConnection.open_room(url)
    host = Host(HostConfig(game="zodiak", players=3, bots=0, seed=1), on_event=lambda line: None)
    serving = asyncio.create_task(host.serve(conn))
    expected = host.identity.public.fingerprint()
    sessions: list[RemoteSession] = []
    try:
        for i, expect in enumerate([expected, expected.upper().replace("-", " ")]):
            seat = RemoteSession(game="", url=url, room=conn.room, name=f"p{i}", expect=expect)
            sessions.append(seat)
            await seat.start()
            await seat.wait_seated()
            assert seat.refused is None and seat.my_seat == i
        await until(lambda: all(
            s.lobby_ids is not None and sum(k is not None for k in s.lobby_ids) == 2
            for s in sessions))
        shown = {s.fingerprint() for s in sessions}
        ids = [sessions[0].identity.key.public, sessions[1].identity.key.public, None]
        assert shown == {table_fingerprint(host.table, host.identity.public, ids)}

        stranger = RemoteSession(game="", url=url, room=conn.room, name="p2",
                                 expect="0000-0000-0000-0000")
        sessions.append(stranger)
        await stranger.start()
        await stranger.wait_seated()
        assert stranger.refused is not None and expected in stranger.refused
        assert stranger.closed and stranger.identity.token is None  # it took nothing away
        assert not host.started  # the table still waits for its third person
    finally:
        for seat in sessions:
            await seat.close()
        serving.cancel()
        await conn.close()
        await relay.close()
