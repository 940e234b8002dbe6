"""Prepared decks at a real table (FAIRNESS.md A8, "Prepared deck"; PROTOCOL.md G9): a relay,
a mental-poker host and people's clients on 127.0.0.1 in this process. Each round after the
first is dealt from the deck shuffled during the round before; a watcher who comes in during
such a deal is sent the last round's chain and follows it; a host that names a deck a seat
never saw shuffled gets `mp_lost` from that seat, which sits the round out, and play goes on."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from engine.bots import make_bot
from netplay.fair.mental_play import MentalPlay
from netplay.fair.mental_round import MentalRound
from netplay.relay.client import RelayConnection
from netplay.relay.launch import start_relay
from netplay.seat.remote import RemoteSession
from netplay.table.host import Host, HostConfig


async def until(check: Callable[[], bool], what: str, limit: float = 90.0) -> None:
    deadline = asyncio.get_running_loop().time() + limit
    while not check():
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


def next_deck_shuffled(play: MentalPlay) -> bool:
    """Whether the next round's deck is shuffled: a person thinking a few seconds a move
    gives it that time."""
    return play.prepared_digest(checked=False) is not None


async def patient_bot(session: RemoteSession, seed: int,
                      ready: Callable[[MentalPlay], bool] = next_deck_shuffled) -> None:
    """Play the seat with greedy, moving only once `ready` holds for its view of the round."""
    bot = make_bot("greedy", seed)
    await session.set_ready(True)
    while not session.closed and session.result is None:
        await asyncio.sleep(0.02)
        while not session.queue.empty():
            session.queue.get_nowait()
        play, view, me = session.mental, session.view, session.my_seat
        if (play is None or view is None or view.round_over or view.turn != me or play.moves
                or me not in play.my_seats() or not ready(play)):
            continue
        await session.submit(bot.choose(view.view(me)))


async def run_table(host: Host, rounds: int, watcher_at: int | None = None,
                    ready: Callable[[MentalPlay], bool] = next_deck_shuffled,
                    second: type[RemoteSession] = RemoteSession) -> tuple[
                        list[str], list[list[str]], RemoteSession | None]:
    """Two people (`patient_bot`, waiting for `ready`; the second person's client a `second`)
    and the host's bot play Zodiak until round `rounds` is dealt and played on; a watcher comes in once round `watcher_at` is dealt. The host's events,
    the faults each person's client recorded until then (leaving hands keys over: not
    counted), the watcher."""
    relay = await start_relay()
    events: list[str] = []
    host.on_event = events.append
    conn = await RelayConnection.open_room(relay.url)
    serving = asyncio.create_task(host.serve(conn))
    people = [kind(game="", url=relay.url, room=conn.room, name=f"p{i}")
              for i, kind in enumerate([RemoteSession, second])]
    watcher: RemoteSession | None = None
    tasks: list[asyncio.Task[None]] = []
    try:
        for i, person in enumerate(people):
            await person.start()
            await person.wait_seated()
            tasks.append(asyncio.create_task(patient_bot(person, i, ready)))
        if watcher_at is not None:
            await until(lambda: host.round_number >= watcher_at and host.state is not None,
                        f"round {watcher_at} dealt")
            watcher = RemoteSession(game="", url=relay.url, room=conn.room, name="w",
                                    watch=True)
            await watcher.start()
            await until(lambda: watcher is not None and watcher.view is not None
                        and watcher.round_number >= watcher_at, "the watcher follows the deal")
        await until(lambda: host.round_number >= rounds and host.state is not None
                    and len(host.state.history) >= 2, f"round {rounds} played")
        return list(events), [list(person.failures) for person in people], watcher
    finally:
        for task in tasks:
            task.cancel()
        for session in [*people, *([watcher] if watcher else [])]:
            await session.close()
        serving.cancel()
        await conn.close()
        await relay.close()


def zodiak_host(host_class: type[Host] = Host) -> Host:
    return host_class(HostConfig(game="zodiak", players=3, bots=1, seed=11, bot_delay=0.0,
                                 mental=True))


async def test_rounds_after_the_first_are_dealt_from_the_deck_shuffled_the_round_before() -> None:
    """Rounds 2 and 3 deal from the decks prepared in rounds 1 and 2, nothing is voided, no
    client records a fault, and a watcher who comes in during round 2 sees its deal."""
    events, faults, watcher = await run_table(zodiak_host(), rounds=3, watcher_at=2)
    deals = [line for line in events if "dealing by mental poker" in line]
    assert deals[0] == "round 1 dealing by mental poker from the deck shuffled in the lobby"
    assert "round 2 dealing by mental poker from the deck shuffled during round 1" in deals
    assert "round 3 dealing by mental poker from the deck shuffled during round 2" in deals
    assert not any("voided" in line for line in events)
    assert faults == [[], []]
    assert watcher is not None and not watcher.failures


class LyingHost(Host):
    """Names, for round 2, a deck by a digest nobody computed."""

    def _prepared_deck(self, number: int) -> tuple[MentalRound, bytes] | None:
        found = super()._prepared_deck(number)
        if found is None or number != 2:
            return found
        return found[0], bytes(32)


async def test_a_deck_a_seat_never_saw_shuffled_deals_that_seat_out_and_play_goes_on() -> None:
    """A host names round 2's deck by a digest no seat has: each person's client says mp_lost
    (it holds no key of such a deck), the host voids the deal with those seats given to its
    bots, and the match goes on to round 3, dealt as usual. Each client saw round 2's deck
    shuffled whole, so it also blames the host for the digest (tests/netplay/
    test_prepared_review.py)."""
    events, faults, _ = await run_table(zodiak_host(LyingHost), rounds=3)
    assert any(line.startswith("round 2 voided (seat ") and "lost its round key" in line
               for line in events)
    assert all(f.startswith("the dealer: named round 2's deck by a digest")
               for seat_faults in faults for f in seat_faults)


class RecordingHost(Host):
    """Keeps every deal it makes, and voids the first one once the next round is dealt, as its
    away-time watcher would if its void had waited for the game lock across the round's end."""

    deals: list[MentalPlay]
    stale_void_done = False

    def _mental_play(self, number: int, first_epoch: int,
                     prepared: MentalRound | None = None) -> MentalPlay:
        play = super()._mental_play(number, first_epoch, prepared)
        self.deals = [*getattr(self, "deals", []), play]
        return play

    async def _mental_deal(self, number: int) -> None:
        await super()._mental_deal(number)
        if number == 2:
            self._spawn(self._stale_void())

    async def _stale_void(self) -> None:
        await self._locked_void([0], "a void found in round 1", self.deals[0])
        self.stale_void_done = True


async def test_a_void_found_in_one_deal_never_lands_on_the_next() -> None:
    """A void worked out for round 1's deal that gets the game lock only after round 2 is
    dealt does nothing: it is of the deal it was found in (netplay/table/mental.py)."""
    host = zodiak_host(RecordingHost)
    events, faults, _ = await run_table(host, rounds=3)
    assert isinstance(host, RecordingHost) and host.stale_void_done
    assert host.deals[0].round_no == 1 and host.mental is not host.deals[0]
    assert not any("voided" in line for line in events)
    assert faults == [[], []]
