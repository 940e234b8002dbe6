"""A table dealt by mental poker with a real relay, host and clients on 127.0.0.1 in this
process (PROTOCOL.md G9): the turn timer, kept by the mover's own client since nobody else holds
its key."""

from __future__ import annotations

import asyncio

from netplay.relay.client import RelayConnection
from netplay.relay.server import start_relay
from netplay.seat.remote import RemoteSession
from netplay.session.events import Notice, RoundStarted
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



async def voided_by_a_lying_host(away: list[int], times: int) -> tuple[list[str], bool]:
    """A table of one person and one bot; once the person's client shows round 1, the host voids
    the deal `times` times naming `away` (as a modified host would, with nobody gone)."""
    relay = await start_relay()
    events: list[str] = []
    host = Host(HostConfig(game="zodiak", players=2, bots=1, seed=3, bot_delay=0.0,
                           mental=True), on_event=events.append)
    conn = await RelayConnection.open_room(relay.url)
    serving = asyncio.create_task(host.serve(conn))
    me = RemoteSession(game="", url=relay.url, room=conn.room, name="Here")
    try:
        await me.start()
        await me.wait_seated()
        await until(lambda: me.view is not None, "round 1 dealt")
        for _ in range(times):
            assert host.mental is not None
            await host._locked_void(away, "a lie", host.mental)
        await until(lambda: me.failures or me.mental is not None and me.mental.first_epoch
                    >= times and me.view is not None, "the void followed or refused")
        await asyncio.sleep(0.5)  # what else the void brings
        # Refused: once the failed check is shown, no deal of round 1 is (a deal left with the
        # host's bots alone is played on meanwhile, and the client follows the next round).
        failed = shown = False
        while not me.queue.empty():
            event = me.queue.get_nowait()
            failed = failed or isinstance(event, Notice) and event.text.startswith(
                "check failed")
            shown = shown or failed and isinstance(event, RoundStarted) and event.number == 1
        return list(me.failures), failed and not shown
    finally:
        await me.close()
        serving.cancel()
        await conn.close()
        await relay.close()


async def test_a_void_dealing_out_a_person_who_is_here_is_refused() -> None:
    """FAIRNESS.md A8: a host that voids the deal naming a connected person (a forced reconnect
    is no absence either) is refused by that person's client, which blames it and shows no card
    of the round."""
    failures, refused = await voided_by_a_lying_host([0], 1)
    assert any(f.startswith("the dealer: voided round 1's deal naming this seat as gone")
               for f in failures), failures
    assert refused


async def test_one_void_naming_nobody_is_followed_a_second_is_refused() -> None:
    """A void naming nobody (a host that started again) is followed once per round: a host
    voiding again and again could keep the deal its bots like best."""
    failures, refused = await voided_by_a_lying_host([], 1)
    assert failures == [] and not refused
    failures, refused = await voided_by_a_lying_host([], 2)
    assert any("a second time naming nobody" in f for f in failures), failures
    assert refused
