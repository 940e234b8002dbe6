"""Issue 13.1: `cardtui host --resume` gives the host its own seat back, by its seat file."""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

from netplay.relay.client import RelayConnection
from netplay.relay.launch import start_relay
from netplay.seat.remote import RemoteSession
from netplay.session.events import MatchStarted
from netplay.table.host import Host, HostConfig
from tui.commands.host import host_seat_file

WAIT = 30.0


async def first_match_started(session: RemoteSession) -> MatchStarted:
    """The session's MatchStarted event."""
    async with asyncio.timeout(WAIT):
        async for event in session.events():
            if isinstance(event, MatchStarted):
                return event
    raise AssertionError("the session closed before the match started")


async def test_the_resumed_host_seats_its_own_app_again(tmp_path: Path) -> None:
    relay = await start_relay("127.0.0.1", 0)
    url = f"ws://127.0.0.1:{relay.port}/ws"
    save = tmp_path / "hosted.json"

    def config() -> HostConfig:
        # What `cardtui host` builds on every run: a fresh owner secret, the same save file.
        return HostConfig(game="zodiak", players=2, bots=1, seed=3, save_path=save,
                          owner_secret=secrets.token_hex(16))

    first = config()
    owner = first.owner_secret or ""
    conn = await RelayConnection.open_room(url)
    host = Host(first, on_event=lambda line: None)
    serving = asyncio.create_task(host.serve(conn))
    mine = RemoteSession(game="", url=url, room=conn.room, name="Hana",
                         owner=bytes.fromhex(owner), identity_path=host_seat_file(save))
    again = None
    try:
        await mine.start()
        started = await first_match_started(mine)
        assert started.my_seat is not None
        seat = started.my_seat
        await mine.close()
        serving.cancel()
        await conn.close()

        resumed, room, secret = Host.resume(config(), save)
        resumed.on_event = lambda line: None
        conn = await RelayConnection.open_room(url, room, secret)
        serving = asyncio.create_task(resumed.serve(conn))
        again = RemoteSession(game="", url=url, room=room, name="Hana",
                              owner=bytes.fromhex(resumed.config.owner_secret or ""),
                              identity_path=host_seat_file(save))
        await again.start()
        await asyncio.wait_for(again.wait_seated(), WAIT)
        assert again.my_seat == seat  # not a watcher, not a fresh seat
        assert resumed.seats[seat].name == "Hana"
    finally:
        await mine.close()
        if again is not None:
            await again.close()
        serving.cancel()
        await conn.close()
        await relay.close()
