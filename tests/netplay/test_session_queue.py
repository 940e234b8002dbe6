"""A session's queue of events for the screen stays bounded when notices come without end and
nobody drains it (the lobby screen does not): notices past the bound are counted and said,
seat changes kept as the latest, and every other event kept in order."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from netplay.relay.client import RelayConnection
from netplay.relay.launch import start_relay
from netplay.relay.limits import RelayLimits
from netplay.seat import remote
from netplay.seat.checks import MAX_FAILURES
from netplay.seat.remote import RemoteSession
from netplay.session.events import (
    MAX_QUEUED_NOTES,
    GameSession,
    Notice,
    RematchOffered,
    SeatInfo,
    SeatsChanged,
)
from netplay.table.host import Host, HostConfig
from tests.netplay.test_prepared_table import until


@asynccontextmanager
async def lying_host(limits: RelayLimits | None = None,
                     reopen: bool = False) -> AsyncIterator[tuple[Host, RemoteSession]]:
    """A real relay and host with one seat taken; the test makes the host lie. With `reopen`,
    a host that loses the relay opens its room again."""
    relay = await start_relay(limits=limits) if limits else await start_relay()
    host = Host(HostConfig(game="zodiak", players=2, seed=4), on_event=lambda _: None)
    conn = await RelayConnection.open_room(relay.url)

    async def again(_old: RelayConnection) -> RelayConnection:
        return await RelayConnection.open_room(relay.url, room=conn.room,
                                               host_secret=conn.host_secret)

    serving = asyncio.create_task(host.serve(conn, again) if reopen else host.serve(conn))
    seat = RemoteSession(game="", url=relay.url, room=conn.room, name="victim")
    try:
        await seat.start()
        await seat.wait_seated()
        yield host, seat
    finally:
        await seat.close()
        serving.cancel()
        if host.relay is not None:
            await host.relay.close()
        await relay.close()


async def queued_events(seat: RemoteSession) -> list[object]:
    """Every event waiting in the seat's queue, read as a screen reads them."""
    events: list[object] = []
    stream = seat.events()
    while not seat.queue.empty():
        events.append(await anext(stream))
    return events


def seats(name: str) -> SeatsChanged:
    return SeatsChanged((SeatInfo(name),))


def test_notices_past_the_bound_are_counted_and_the_latest_seats_kept() -> None:
    session = GameSession(game="zodiak")
    for i in range(3 * MAX_QUEUED_NOTES):
        session.emit(Notice(f"n{i}"))
        if i % 100 == 0:
            session.emit(RematchOffered(by=f"r{i}"))  # not a note: never dropped
            session.emit(seats(f"s{i}"))
    assert session.queue.qsize() <= MAX_QUEUED_NOTES + 30  # 30 rematch offers

    async def drain() -> list[object]:
        session.closed = True
        return [event async for event in session.events()]

    events = asyncio.run(drain())
    offers = [e.by for e in events if isinstance(e, RematchOffered)]
    assert offers == [f"r{i}" for i in range(0, 3 * MAX_QUEUED_NOTES, 100)]
    notices = [e.text for e in events if isinstance(e, Notice)]
    left_out = [t for t in notices if "left out" in t]
    kept = [t for t in notices if "left out" not in t]
    assert kept == [f"n{i}" for i in range(len(kept))], "the first ones, in order"
    assert left_out and sum(int(t.split()[0]) for t in left_out) == 3 * MAX_QUEUED_NOTES \
        - len(kept)
    last_seats = [e for e in events if isinstance(e, SeatsChanged)][-1]
    assert last_seats == seats(f"s{3 * MAX_QUEUED_NOTES - 100}"), "the latest seat change"
    assert session._notes_queued == 0


def test_a_drained_queue_drops_nothing() -> None:
    session = GameSession(game="zodiak")

    async def run() -> list[str]:
        events = session.events()
        got: list[str] = []
        for i in range(5 * MAX_QUEUED_NOTES):
            session.emit(Notice(f"n{i}"))
            event = await anext(events)
            assert isinstance(event, Notice)
            got.append(event.text)
        return got

    assert asyncio.run(run()) == [f"n{i}" for i in range(5 * MAX_QUEUED_NOTES)]


async def test_a_host_flooding_chat_cannot_bury_a_failed_check() -> None:
    """A lying host (the real host, sending what an honest one never does) floods a seat whose
    events nobody reads with chat, then signs 150 messages that break the protocol: the client
    keeps and queues the first MAX_FAILURES failed checks whatever the chat did, and counts the
    rest."""
    async with lying_host() as (host, seat):
        for i in range(3 * MAX_QUEUED_NOTES):
            await host._broadcast("chat", seat=None, name="host", text=f"line {i}")
        bad = MAX_FAILURES + 50
        for _ in range(bad):
            await host._broadcast("round_end", round=1)  # its fields missing
        async with asyncio.timeout(30):
            while seat.failures_dropped < bad - MAX_FAILURES:
                await asyncio.sleep(0.02)
        assert len(seat.failures) == MAX_FAILURES
        assert seat.chat_count == 3 * MAX_QUEUED_NOTES
        queued = [seat.queue.get_nowait() for _ in range(seat.queue.qsize())]
        failed = [e for e in queued if isinstance(e, Notice) and e.text.startswith("check failed")]
        assert len(failed) == MAX_FAILURES and all(e.kept for e in failed)
        assert "breaks the protocol" in failed[0].text
        assert len(queued) <= MAX_QUEUED_NOTES + MAX_FAILURES + 20


def connection_state(events: list[object]) -> str:
    """What a screen that reads the notices in order (tui/screens/game.py `halted`,
    tui/commands/join.py) last heard of the host: "" once it is back."""
    halted = ""
    for event in events:
        if isinstance(event, Notice) and event.state:
            halted = event.text if event.level == "warning" else ""
    return halted


async def test_a_full_queue_still_tells_the_screen_the_host_is_back() -> None:
    """A host fills a seat's queue to one short of the bound with chat (the seat sits in the
    lobby, or at a round's summary, where nobody drains it), then leaves the relay and comes
    back at once: "the host is away" is queued, "the host is back" would be dropped, and the
    screen would say the host is away, and refuse moves, for good."""
    async with lying_host(reopen=True) as (host, seat):
        # The lobby is the last the host sends a seat that joins a trusted dealer's table:
        # its notices and seat changes are queued with it.
        await until(lambda: any(s.name == "victim" for s in seat.seats), "the lobby")
        lines = MAX_QUEUED_NOTES - 1 - seat._notes_queued
        for i in range(lines):
            await host._broadcast("chat", seat=None, name="host", text=f"line {i}")
        async with asyncio.timeout(30):
            while seat.chat_count < lines:
                await asyncio.sleep(0.02)
        assert seat._notes_queued == MAX_QUEUED_NOTES - 1
        first = host.relay
        assert first is not None
        await first.close()  # the host leaves the relay and reopens its room
        async with asyncio.timeout(30):
            while host.relay is first or host.relay is None or host.relay.closed:
                await asyncio.sleep(0.02)
        await host._broadcast("chat", seat=None, name="host", text="back")
        async with asyncio.timeout(30):
            while seat.chat_count <= lines:
                await asyncio.sleep(0.02)
        events = await queued_events(seat)
        texts = [e.text for e in events if isinstance(e, Notice)]
        assert any("host is away" in t for t in texts), texts[-5:]
        assert connection_state(events) == "", texts[-5:]


async def test_a_full_queue_still_says_why_the_session_ended() -> None:
    """A host fills a seat's queue with chat, then leaves for good: the session ends, and the
    one notice saying why ("the room is gone ...") must reach the screen, not be counted among
    the left-out chat (the game screen has nothing else to show it)."""
    async with lying_host(limits=RelayLimits(host_grace_seconds=0.2)) as (host, seat):
        for i in range(MAX_QUEUED_NOTES):
            await host._broadcast("chat", seat=None, name="host", text=f"line {i}")
        async with asyncio.timeout(30):
            while seat.chat_count < MAX_QUEUED_NOTES:
                await asyncio.sleep(0.02)
        assert host.relay is not None
        await host.relay.close()  # the host leaves; the relay closes its room after the grace
        async with asyncio.timeout(30):
            while not seat.closed:
                await asyncio.sleep(0.05)
        assert seat.gone is not None and seat.gone.startswith("the room is gone")
        texts = [e.text for e in await queued_events(seat) if isinstance(e, Notice)]
        assert seat.gone in texts, texts[-3:]


async def test_a_room_removed_for_good_ends_the_session_without_trying_again() -> None:
    """A relay closes the room of a host that did not come back with a code of its own
    (PROTOCOL.md 6): the seat says the room is gone at once. It used to try again for
    ROOM_GONE_SECONDS, as after a relay's restart, and then say the same."""
    async with lying_host(limits=RelayLimits(host_grace_seconds=0.2)) as (host, seat):
        assert host.relay is not None
        await host.relay.close()
        async with asyncio.timeout(30):
            while not seat.closed:
                await asyncio.sleep(0.05)
        assert seat.gone == remote.ROOM_GONE
        texts = [e.text for e in await queued_events(seat) if isinstance(e, Notice)]
        assert not any("reconnect" in t for t in texts), texts
        assert seat.gone in texts


async def test_a_room_a_restarted_relay_forgot_is_given_up_after_some_tries(monkeypatch) -> None:
    """A relay that stops closes with 1001 and forgets its rooms when it starts again: the
    seat tries again (its host may reopen the room there) and says the room is gone only
    after ROOM_GONE_TRIES refusals in a row, ROOM_GONE_SECONDS apart at least."""
    monkeypatch.setattr(remote, "ROOM_GONE_SECONDS", 0.0)  # the tries alone decide here
    relay = await start_relay()
    port = relay.port
    conn = await RelayConnection.open_room(relay.url)
    host = Host(HostConfig(game="zodiak", players=2, seed=4), on_event=lambda _: None)
    serving = asyncio.create_task(host.serve(conn))  # no reopen: this host never comes back
    seat = RemoteSession(game="", url=relay.url, room=conn.room, name="p")
    try:
        await seat.start()
        await seat.wait_seated()
        await relay.close()
        relay = await start_relay(port=port)
        async with asyncio.timeout(60):
            while not seat.closed:
                await asyncio.sleep(0.05)
        texts = [e.text for e in await queued_events(seat) if isinstance(e, Notice)]
        assert any("reconnecting" in t for t in texts), texts
        assert any("no room with that code" in t for t in texts), texts
        assert seat.gone == remote.ROOM_GONE
    finally:
        await seat.close()
        serving.cancel()
        await conn.close()
        await relay.close()
