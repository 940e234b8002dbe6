"""A seat's bot moves again after a reconnection, however its events are bunched up.

Found in tests/e2e/test_relay_restart.py, which stalled about once in six loaded runs: the relay
restarted on the seat's turn; the bot sent its move again on the `reconnected` notice, before
the host had seated the new connection, and the host refused it ("only a seated player signs
game messages"). The bot answers a notice only when no other event waits behind it, and the
rejoin's resync (lobbies: SeatsChanged) was already queued behind the refusal: it skipped the
notice, then skipped the resync's events as a position already answered, and never moved.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from engine.match import Match
from netplay.relay.client import RelayClosed, RelayConnection, RelayUnreachable
from netplay.relay.launch import start_relay
from netplay.seat.bot_player import play_as_bot
from netplay.session.events import (
    Event,
    GameSession,
    Notice,
    RoundStarted,
    SeatInfo,
    SeatsChanged,
)
from netplay.table.host import Host, HostConfig
from tests.netplay.test_fair_play import Seat

WAIT = 30.0  # a hang guard only


@dataclass
class ScriptedSeat(GameSession):
    """What `play_as_bot` reads of a RemoteSession, with events the test queues itself."""

    view: Any = None
    round_number: int = 1
    trusted: bool = True
    mental: Any = None
    after_match: bool = False
    result: dict[str, Any] | None = None
    may_offer_rematch: bool = False
    submitted: list[tuple[int, Any]] = field(default_factory=list)  # (position, move)

    async def set_ready(self, ready: bool) -> None:
        """Nothing to tell anyone."""

    async def submit(self, move: Any) -> None:
        """Keep the move, and the position it answers, without playing it."""
        self.submitted.append((len(self.view.history), move))


def seat_to_move() -> ScriptedSeat:
    """A seat whose turn it is, in a real Zodiak round (the bot needs a real view)."""
    match = Match("zodiak", 2, ("leo", "leo"), dealer=0)
    state = match.start_round(match.rules.shuffled_deck(random.Random(7)))
    assert state.turn is not None
    return ScriptedSeat(game="zodiak", my_seat=state.turn, view=state)


async def until_idle(seat: ScriptedSeat) -> None:
    """Return once the bot has read every queued event and is waiting for the next."""
    async with asyncio.timeout(WAIT):
        while not seat.queue.empty():
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)  # it thinks off the loop: give it the time to submit


async def test_a_refusal_with_the_resync_queued_behind_it_gets_the_move_sent_again() -> None:
    seat = seat_to_move()
    bot = asyncio.create_task(play_as_bot(seat, "greedy", 1))
    try:
        seat.emit(RoundStarted(1, seat.view, (0, 0)))
        await until_idle(seat)
        assert len(seat.submitted) == 1  # its move; then the relay restarts, the move is lost
        # The `reconnected` notice alone: the bot sends the move again at once (as before).
        seat.emit(Notice("reconnected"))
        await until_idle(seat)
        assert len(seat.submitted) == 2
        # The host refuses it (the new conn is not seated yet), and by the time the bot reads
        # the refusal, the rejoin's resync has arrived behind it.
        seat.emit(Notice("the host refused: only a seated player signs game messages",
                         "warning"))
        seat.emit(SeatsChanged((SeatInfo("p0"), SeatInfo("p1"))))
        seat.emit(SeatsChanged((SeatInfo("p0"), SeatInfo("p1"))))
        await until_idle(seat)
        assert len(seat.submitted) == 3, "the bot never sent its move again: the match stalls"
        assert {position for position, _ in seat.submitted} == {0}
        # Events with nothing new to say do not make it send the move yet again.
        seat.emit(SeatsChanged((SeatInfo("p0"), SeatInfo("p1"))))
        await until_idle(seat)
        assert len(seat.submitted) == 3
    finally:
        seat.closed = True
        bot.cancel()


# -- the same over a real relay that restarts, host and seats in this process -------------------


@dataclass
class LateSeat(Seat):
    """A seat whose bot reads a refusal late: only once the rejoin's resync is queued behind
    it (a busy machine does this by chance). `restart` is called, once, as the seat moves
    at `restart_at`: the relay goes down with the move."""

    restart: Callable[[], Awaitable[None]] | None = None
    restart_at: int = 2
    moves_sent: list[int] = field(default_factory=list)  # the position of every move it sent

    async def submit(self, move: Any) -> None:
        """Move; first restart the relay if this is the move it goes down with."""
        assert self.view is not None
        if self.restart is not None and len(self.view.history) >= self.restart_at:
            restart, self.restart = self.restart, None
            await restart()
        self.moves_sent.append(len(self.view.history))
        await super().submit(move)

    async def events(self) -> AsyncIterator[Event]:
        """Every event, the refusal of a move held back until another event has come."""
        async for event in super().events():
            if isinstance(event, Notice) and "only a seated player" in event.text:
                async with asyncio.timeout(WAIT):
                    while self.queue.empty():
                        await asyncio.sleep(0.01)
            yield event


async def test_a_move_lost_with_a_restarted_relay_is_made_in_the_reopened_room() -> None:
    relay = await start_relay("127.0.0.1", 0)
    port, relays = relay.port, [relay]
    url = f"ws://127.0.0.1:{port}/ws"

    async def restart() -> None:
        await relays[-1].close()  # every conn is closed; the room is forgotten
        relays.append(await start_relay("127.0.0.1", port))

    async def reopen(lost: RelayConnection) -> RelayConnection:
        while True:
            await asyncio.sleep(0.05)
            try:
                return await RelayConnection.open_room(url, lost.room, lost.host_secret)
            except (RelayUnreachable, RelayClosed):
                pass

    conn = await RelayConnection.open_room(url)
    lines: list[str] = []
    host = Host(HostConfig(game="zodiak", players=2, seed=7), on_event=lines.append)
    serving = asyncio.create_task(host.serve(conn, reopen))
    seats = [LateSeat(game="", url=url, room=conn.room, name=f"p{i}") for i in range(2)]
    for seat in seats:
        await seat.start()
        await seat.wait_seated()
    games = [asyncio.create_task(play_as_bot(s, "greedy", i)) for i, s in enumerate(seats)]
    try:
        async with asyncio.timeout(WAIT):
            while not any(s.view is not None for s in seats):
                await asyncio.sleep(0.01)
        late = next(s for s in seats if s.my_seat == 0)
        late.restart = restart
        async with asyncio.timeout(WAIT):  # the relay went down with its move: it moves again
            while not any("open again" in line for line in lines):
                await asyncio.sleep(0.01)
        lost = late.moves_sent[-1]
        async with asyncio.timeout(WAIT):
            while not late.told("only a seated player", "warning"):
                await asyncio.sleep(0.01)
        try:
            async with asyncio.timeout(15.0):
                while host.moves_made <= lost:
                    await asyncio.sleep(0.05)
        except TimeoutError:
            raise AssertionError(f"the move lost at {lost} was never made again: the match"
                                 f" stalls\n{lines[-8:]}\n{[n.text for n in late.notices]}"
                                 ) from None
    finally:
        for task in games:
            task.cancel()
        for seat in seats:
            await seat.close()
        serving.cancel()
        await (host.relay or conn).close()
        await relays[-1].close()
