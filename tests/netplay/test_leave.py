"""A person who chooses to leave a match under way (`q` and yes in the app, or leaving a server's
table for its lobby) has the seat's bot play at once, as the quit question promises, not after
the table's away time; a watcher, or a seat before the start, cannot say it left. A relay and a
trusted-dealer host on 127.0.0.1, in this process."""

from __future__ import annotations

import asyncio

from engine.house import HouseRules
from netplay.protocol import pack
from netplay.seat.bot_player import play_as_bot
from netplay.seat.remote import RemoteSession
from netplay.session.events import Notice, RoundStarted
from netplay.table.host import Host, HostConfig
from tests.netplay.test_prepared_table import until
from tests.netplay.test_watcher_names import served, session_at


def short_table(**options: object) -> tuple[Host, list[str]]:
    """A two-seat Zodiak host played to 10, and the list its events go to."""
    host = Host(HostConfig(game="zodiak", players=2, seed=3, bot_delay=0.0,
                           house=HouseRules(target=10), **options))
    events: list[str] = []
    host.on_event = events.append
    return host, events


async def test_a_seat_that_leaves_is_played_by_its_bot_at_once() -> None:
    # An away time no test waits for: only the leave can let the bot move for seat 0.
    host, events = short_table(bots=0, away_timeout=3600.0, require_ready=True)
    async with served(host) as where:
        leaver, stayer = session_at(where, "leaver"), session_at(where, "stayer")
        watcher = session_at(where, "w", watch=True)
        tasks: list[asyncio.Task[None]] = []
        try:
            for person in (leaver, stayer):
                await person.start()
                await person.wait_seated()
            await leaver._send(pack("leave"))  # before the start: refused, nothing changes
            tasks.append(asyncio.create_task(play_as_bot(stayer, "greedy", 1)))
            await leaver.set_ready(True)
            await until(lambda: host.state is not None, "the deal")
            await watcher.start()
            await until(lambda: watcher.view is not None, "the watcher following")
            await watcher._send(pack("leave"))
            seat = leaver.my_seat
            await leaver.close(leave=True)
            # Only the leave lets the match end: its bot plays seat 0's turns from now on.
            await until(lambda: host.finished, "the match's end")
            left = events.index(f"seat {seat} (leaver) left the match: its bot plays")
            assert any(line.startswith("move ") and f": seat {seat} " in line
                       for line in events[left:])
            refusals = [e.text for e in drain(watcher) if isinstance(e, Notice)
                        and "only a seated player leaves" in e.text]
            assert refusals, "the watcher's leave is refused"
        finally:
            for task in tasks:
                task.cancel()
            for person in (leaver, stayer, watcher):
                await person.close()


def drain(session: RemoteSession) -> list[object]:
    found = []
    while not session.queue.empty():
        found.append(session.queue.get_nowait())
    return found


async def test_at_a_mental_poker_table_a_leave_is_refused_and_voids_nothing() -> None:
    """There a seat away for the away time has the deal made again: a `leave` that counted as
    such would let a seat that leaves and comes back void every deal at will."""
    host, events = short_table(bots=1, mental=True)
    async with served(host) as where:
        person = session_at(where, "p")
        try:
            await person.start()
            await person.wait_seated()
            await person.set_ready(True)
            await until(lambda: person.view is not None, "the deal")
            for _ in range(3):
                await person._send(pack("leave"))
            await until(lambda: any("hands its round key over" in e.text for e in drain(person)
                                    if isinstance(e, Notice)), "the refusal")
            assert not any("voided" in line or "left the match" in line for line in events)
            assert host.seats[person.my_seat or 0].away_since is None
        finally:
            await person.close()


async def test_a_leave_from_a_seat_that_stays_hands_nothing_to_its_bot() -> None:
    """`leave` is not signed: a relay could slip one in for a seat whose person plays on. It
    only marks the seat; the bot takes over when the connection goes, so here the person plays
    every move, and its client blames nobody (it blamed the host for the bot's moves)."""
    host, events = short_table(bots=0, away_timeout=3600.0, require_ready=True)
    async with served(host) as where:
        people = [session_at(where, f"p{i}") for i in range(2)]
        tasks: list[asyncio.Task[None]] = []
        slipped: list[asyncio.Task[None]] = []

        def slip_a_leave_in(event: object) -> None:
            # At seat 0's first deal, so that the leave reaches the host before seat 0's first
            # move: the whole match takes less than a tenth of a second here, too short to
            # catch by looking at the host from outside.
            if isinstance(event, RoundStarted) and not slipped:
                slipped.append(asyncio.create_task(people[0]._send(pack("leave"))))

        try:
            for person in people:
                await person.start()
                await person.wait_seated()
            tasks = [asyncio.create_task(play_as_bot(person, "greedy", i,
                                                     slip_a_leave_in if i == 0 else None))
                     for i, person in enumerate(people)]
            await until(lambda: host.finished, "the match's end")
            await until(lambda: all(p.result is not None for p in people), "every result")
            over = next(i for i, line in enumerate(events) if line.startswith("match over"))
            assert "seat 0 (p0) says it is leaving" in events[:over]
            assert not any("left the match" in line for line in events[:over])
            assert [p.failures for p in people] == [[], []]
            assert all(p.result and p.result["verified"] for p in people)
        finally:
            for task in tasks:
                task.cancel()
            for person in people:
                await person.close()
