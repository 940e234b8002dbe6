"""A watcher who comes in mid-round knows every seat's name before the moves it is retold,
because each round's chain opens with the seats (PROTOCOL.md "Watching"); and a table with a
bot in every seat starts by itself (nobody's join would start it). A relay and a host on
127.0.0.1, in this process."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from engine.house import HouseRules
from netplay.messages import Synced
from netplay.relay.client import RelayConnection
from netplay.relay.launch import start_relay
from netplay.seat.remote import RemoteSession
from netplay.session.events import Event, MatchStarted, MoveMade, RoundStarted
from netplay.table.host import Host, HostConfig
from tests.netplay.test_prepared_table import until


@asynccontextmanager
async def served(host: Host) -> AsyncIterator[tuple[str, str]]:
    """Serve `host` through a relay on 127.0.0.1; yield the relay's URL and the room's code."""
    relay = await start_relay()
    conn = await RelayConnection.open_room(relay.url)
    serving = asyncio.create_task(host.serve(conn))
    try:
        yield relay.url, conn.room
    finally:
        serving.cancel()
        await conn.close()
        await relay.close()


def session_at(where: tuple[str, str], name: str, watch: bool = False) -> RemoteSession:
    url, room = where
    return RemoteSession(game="", url=url, room=room, name=name, watch=watch)


async def watch_once(host: Host, ready: Callable[[], bool], what: str) -> list[Event]:
    """The events of a watcher who comes in once `ready` holds, until it is told of a move."""
    async with served(host) as where:
        watcher = session_at(where, "w", watch=True)
        events: list[Event] = []
        try:
            await until(ready, what)
            await watcher.start()
            await until(lambda: drain(watcher, events), "the watcher to be told of a move")
            return events
        finally:
            await watcher.close()


async def watch_from_round(host: Host, number: int) -> list[Event]:
    """The events of a watcher who comes in once round `number` has had a few moves."""
    return await watch_once(host, lambda: host.round_number >= number and host.state is not None
                            and len(host.state.history) >= 3, f"round {number} under way")


def drain(session: RemoteSession, into: list[Event]) -> bool:
    """Move the session's queued events `into` the list; whether a move is among them."""
    while not session.queue.empty():
        into.append(session.queue.get_nowait())
    return any(isinstance(e, MoveMade) for e in into)


def bots_only(mental: bool) -> Host:
    return Host(HostConfig(game="zodiak", players=3, bots=3, seed=5, bot_delay=0.05,
                           mental=mental))


async def test_a_watcher_coming_mid_round_is_told_the_names_before_the_round() -> None:
    for mental in (False, True):
        events = await watch_from_round(bots_only(mental), 2)
        started = [e for e in events if isinstance(e, MatchStarted)]
        rounds = [e for e in events if isinstance(e, RoundStarted)]
        assert started and rounds, events
        assert events.index(started[0]) < events.index(rounds[0])
        assert [s.name for s in started[0].seats] == ["bot 0", "bot 1", "bot 2"], mental
        assert started[0].my_seat is None


async def test_one_who_comes_after_a_rematch_began_numbers_its_rounds_from_one() -> None:
    """The lobby says how many rounds the table played before this match (`rounds_before`): a
    seat or watcher that comes once a rematch is under way numbers its rounds as the others do,
    from 1, not from the table's count (it showed round 5 where the others showed round 1)."""
    host = Host(HostConfig(game="zodiak", players=3, bots=3, seed=5, bot_delay=0.1,
                           mental=False, rematches=1, house=HouseRules(target=1)))
    # The watcher comes at the rematch's second move: one round of bots 0.1 s a move
    # lasts a second or more, where at 0.05 s it could end between two looks at the host.
    events = await watch_once(host, lambda: host.round_base >= 1 and host.started
                              and host.state is not None and len(host.state.history) >= 2,
                              "the rematch under way")
    started = next(e for e in events if isinstance(e, MatchStarted))
    first = next(e for e in events if isinstance(e, RoundStarted))
    assert started.rounds_before == host.round_base >= 1
    assert host.match is not None
    assert first.number - host.round_base == host.match.rounds_played + 1 >= 1


async def test_one_who_comes_mid_turn_counts_down_what_the_turn_has_left() -> None:
    """`synced` says what the turn in play has left on the table's timer: a watcher arriving
    five seconds into a turn showed the whole turn again."""
    host = Host(HostConfig(game="zodiak", players=2, bots=0, seed=5, bot_delay=0.0,
                           mental=False, turn_seconds=60.0))
    async with served(host) as where:
        people = [session_at(where, f"p{i}") for i in range(2)]  # neither moves: the turn runs on
        watcher = session_at(where, "w", watch=True)
        try:
            for person in people:
                await person.start()
                await person.wait_seated()
                await person.set_ready(True)
            await until(lambda: host._turn_left() is not None, "the first turn")
            await asyncio.sleep(5)
            await watcher.start()
            await until(lambda: watcher.turn_left() is not None and watcher.phase == "live",
                        "the watcher caught up")
            told, kept = watcher.turn_left(), host._turn_left()
            assert told is not None and kept is not None and abs(told - kept) < 1.0, (told, kept)
            # `synced` is not signed: one a relay slips in while the seat is live (turn_left 0)
            # changes nothing, and no figure of it ever decides that a seat's time ran out.
            seat = people[0]
            before = seat.turn_left()
            seat._on_game_message(Synced(c=seat.chain_no, n=seat._have(), turn_left=0.0))
            after = seat.turn_left()
            assert before is not None and after is not None and before - after < 1.0
            assert not seat._turn_ran_out()
        finally:
            for session in (*people, watcher):
                await session.close()
