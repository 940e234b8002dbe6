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


def host_seat(url: str, room: str | None, config: HostConfig, save: Path,
              **extra: bool) -> RemoteSession:
    """The host's own seat as `cardtui host` opens it: the owner secret, the seat file."""
    return RemoteSession(game="", url=url, room=room, name="Hana",
                         owner=bytes.fromhex(config.owner_secret or ""),
                         identity_path=host_seat_file(save), **extra)


async def resume_host(url: str, config: HostConfig, save: Path
                      ) -> tuple[Host, RelayConnection, asyncio.Task[None]]:
    """`cardtui host --resume`: the saved table, its room opened again, served."""
    resumed, room, secret = Host.resume(config, save)
    resumed.on_event = lambda line: None
    conn = await RelayConnection.open_room(url, room, secret)
    return resumed, conn, asyncio.create_task(resumed.serve(conn))


async def test_the_resumed_host_seats_its_own_app_again(tmp_path: Path) -> None:
    relay = await start_relay("127.0.0.1", 0)
    url = f"ws://127.0.0.1:{relay.port}/ws"
    save = tmp_path / "hosted.json"

    def config() -> HostConfig:
        # What `cardtui host` builds on every run: a fresh owner secret, the same save file.
        return HostConfig(game="zodiak", players=2, bots=1, seed=3, save_path=save,
                          owner_secret=secrets.token_hex(16))

    first = config()
    conn = await RelayConnection.open_room(url)
    host = Host(first, on_event=lambda line: None)
    serving = asyncio.create_task(host.serve(conn))
    mine = host_seat(url, conn.room, first, save)
    again = None
    try:
        await mine.start()
        started = await first_match_started(mine)
        assert started.my_seat is not None
        seat = started.my_seat
        await mine.close()
        serving.cancel()
        await conn.close()

        resumed, conn, serving = await resume_host(url, config(), save)
        again = host_seat(url, conn.room, resumed.config, save)
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


async def until(condition, what: str) -> None:
    """Wait for `condition()` to hold."""
    async with asyncio.timeout(WAIT):
        while not condition():
            await asyncio.sleep(0.02)


async def test_closing_the_table_hands_nothing_over_and_the_resumed_round_deals_the_host_in(
        tmp_path: Path) -> None:
    """The host's q, y closed the table by handing its seat's round key over, like a person
    leaving: the resumed host then dealt the round in play again without the host's seat (a
    void naming nobody, while every seat's view had that seat's key with the host's bots), and
    the seat's checks failed. Closing the table hands nothing over: the round is dealt again
    with the host's seat in it, every check holding."""
    relay = await start_relay("127.0.0.1", 0)
    url = f"ws://127.0.0.1:{relay.port}/ws"
    save = tmp_path / "hosted.json"

    def config() -> HostConfig:
        return HostConfig(game="zodiak", players=2, bots=1, seed=3, save_path=save,
                          owner_secret=secrets.token_hex(16), mental=True)

    first = config()
    conn = await RelayConnection.open_room(url)
    host = Host(first, on_event=lambda line: None)
    serving = asyncio.create_task(host.serve(conn))
    mine = host_seat(url, conn.room, first, save, closes_table=True)
    again = None
    try:
        await mine.start()
        await until(lambda: mine.view is not None, "the first deal")
        seat = mine.my_seat
        assert seat is not None
        await mine.close(leave=True)  # what the app's q, y does
        await asyncio.sleep(0.3)  # a handover, had one been sent, reaches the host
        assert not host.handed
        serving.cancel()
        await conn.close()

        resumed, conn, serving = await resume_host(url, config(), save)
        again = host_seat(url, conn.room, resumed.config, save, closes_table=True)
        await again.start()
        await until(lambda: again.view is not None and again.mental is not None, "the deal")
        assert again.round_number == 1 and again.mental.party == seat  # dealt in, not watching
        assert again.failures == []
    finally:
        await mine.close()
        if again is not None:
            await again.close()
        serving.cancel()
        await conn.close()
        await relay.close()
