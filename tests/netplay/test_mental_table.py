"""A table dealt by mental poker with a real relay, host and clients on 127.0.0.1 in this
process (PROTOCOL.md G9): the turn timer, kept by the mover's own client since nobody else holds
its key."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from netplay.fair.absence import HOST_MARGIN, host_patience, long_enough_away
from netplay.relay.client import SILENT_LINK_SECONDS, RelayConnection
from netplay.relay.launch import start_relay
from netplay.seat.remote import RemoteSession
from netplay.session.events import Notice, RoundStarted
from netplay.table.host import Host, HostConfig


async def until(check: object, what: str, limit: float = 60.0) -> None:
    deadline = asyncio.get_running_loop().time() + limit
    while not check():  # type: ignore[operator]
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


@asynccontextmanager
async def table_with(host: Host, name: str) -> AsyncIterator[RemoteSession]:
    """`host` serving a room on a real relay, and a person's client called `name` seated there;
    all of it closed afterwards."""
    relay = await start_relay()
    conn = await RelayConnection.open_room(relay.url)
    serving = asyncio.create_task(host.serve(conn))
    me = RemoteSession(game="", url=relay.url, room=conn.room, name=name)
    try:
        await me.start()
        await me.wait_seated()
        yield me
    finally:
        await me.close()
        serving.cancel()
        await conn.close()
        await relay.close()


async def test_a_seat_that_does_not_move_is_moved_by_its_own_client_in_time() -> None:
    events: list[str] = []
    host = Host(HostConfig(game="hekata", players=2, bots=1, seed=5, turn_seconds=1.0,
                           bot_delay=0.0, mental=True), on_event=events.append)
    async with table_with(host, "Slow") as me:
        assert me.dealing == "mental" and me.turn_seconds == 1
        # This client never submits a move itself: only its turn clock can.
        await until(lambda: me.view is not None and any(
            e.seat == me.my_seat for e in me.view.history), "this seat's first move")
        assert any(f"seat {me.my_seat} " in line for line in events if line.startswith("move "))
        assert not any("voided" in line for line in events)
        assert not me.failures


@given(away=st.floats(0.0, 86_400.0), late=st.floats(0.0, HOST_MARGIN - 1e-6))
def test_an_absence_the_host_waits_out_is_believed_by_the_persons_client(
        away: float, late: float) -> None:
    """FAIRNESS.md A8: whatever the away time, an honest host waits longer than any absence the
    person's client would refuse, even when that client saw its connection go up to
    `HOST_MARGIN` after the host did; and the margin covers a link that failed silently, which
    the client notices within `SILENT_LINK_SECONDS` of the last thing it heard (with half a
    second to spare for a busy event loop)."""
    assert SILENT_LINK_SECONDS + 0.5 <= HOST_MARGIN
    assert long_enough_away(host_patience(away) - late, away)
    assert not long_enough_away(4.99, away)  # never dealt out for less than 5 s


def seat_to_move(host: Host, seat: int | None) -> bool:
    play = host.mental
    return (play is not None and play.state is not None and not play.state.round_over
            and play.waiting_for() == {seat})


async def test_a_person_away_is_dealt_out_only_after_the_hosts_patience() -> None:
    """FAIRNESS.md A8: at a 2 s away time the host voids a deal for a person away only after
    5 s and a margin (`host_patience`), never at 2 s, when that person's client, back, would
    refuse the void as a lie about a person who is here (seen once under load)."""
    host = Host(HostConfig(game="zodiak", players=2, bots=1, seed=3, bot_delay=0.0,
                           mental=True, away_timeout=2.0), on_event=lambda line: None)
    async with table_with(host, "Gone") as me:
        seat = me.my_seat
        await until(lambda: seat_to_move(host, seat), "this seat's turn, all else sent")
        me.closes_table = True  # its program stops: no key handed over
        await me.close()
        await until(lambda: host.seats[seat].away_since is not None, "the host seeing it gone")
        since = host.seats[seat].away_since
        assert since is not None
        for absence in (2.0, 5.0, host_patience(2.0) - 0.01):
            assert host._overdue(since + absence) == ([], ""), absence
        patience = host_patience(2.0)
        assert host._overdue(since + patience) == ([seat], "away past the away time")
        # The host's own stalls are forgiven, only as far as they fall after the seat went:
        # its rejoin may have waited unread meanwhile.
        host._forgive_stall(since - 5.0, since - 1.0)
        assert host.seats[seat].away_since == since
        host._forgive_stall(since - 2.0, since + 1.0)
        host._forgive_stall(since + 2.0, since + 4.0)
        assert host.seats[seat].away_since == pytest.approx(since + 3.0)
        assert host._overdue(since + 3.0 + patience - 0.01) == ([], "")
        assert host._overdue(since + 3.0 + patience + 0.01)[0] == [seat]


def hold_reconnection(me: RemoteSession) -> asyncio.Event:
    """Keep `me` from getting back into the room (each try waits) until the event is set."""
    honest_connect, let_back = me._connect, asyncio.Event()

    async def when_let_back() -> None:
        await let_back.wait()
        await honest_connect()

    me._connect = when_let_back  # type: ignore[method-assign]
    return let_back


REFUSED = "naming this seat as gone while its person is here"


def short_away_host() -> Host:
    return Host(HostConfig(game="zodiak", players=2, bots=1, seed=3, bot_delay=0.0,
                           mental=True, away_timeout=2.0), on_event=lambda line: None)


async def test_a_persons_absence_lasts_until_it_follows_live_and_counts_for_one_deal() -> None:
    """FAIRNESS.md A8: the client times its absence from when its connection went until it
    follows the table live again, and a deal begun while it is here starts that count again:
    an old absence no longer lets the host deal it out."""
    host = short_away_host()
    async with table_with(host, "Back") as me:
        await until(lambda: me.view is not None, "round 1 dealt")
        assert me.away_for == 0.0 and not me._was_away()
        assert me._conn is not None
        await me._conn.close()  # the network drops it; the client comes back on its own
        await until(lambda: me._lost_at is None and me.phase == "live", "live again")
        assert 0.0 < me.away_for < 5.0 and not me._was_away()  # back within the second
        # As if this machine had slept 10 s since the deal began (a laptop closed): the
        # monotonic clock stops meanwhile, the person was gone all the same.
        me._slept_at_deal -= 10.0
        assert me._was_away()
        assert host.mental is not None
        await host._locked_void([], "the host started again", host.mental)  # a new deal
        await until(lambda: me.mental is not None and me.mental.first_epoch >= 1, "the deal")
        assert me.away_for == 0.0 and not me._was_away()


async def test_a_welcome_held_back_does_not_make_a_present_person_away() -> None:
    """A host that answers a rejoin with the round and `synced` but holds the `welcome` back,
    sends it 6 s later, then voids the deal naming the seat: the person was here, live, all
    along, so the client refuses the void (found by an attacker's review: the absence ended
    at the welcome)."""
    host = short_away_host()
    async with table_with(host, "Here") as me:
        await until(lambda: me.view is not None, "round 1 dealt")
        honest_resync = host._resync
        held: list[tuple[int, bytes]] = []

        async def without_welcome(conn: int, first: list[bytes], chain: int,
                                  have: int) -> None:
            held.append((conn, first[0]))
            await honest_resync(conn, [], chain, have)

        host._resync = without_welcome  # type: ignore[method-assign]
        assert me._conn is not None
        await me._conn.close()
        await until(lambda: held and me.phase == "live", "live again without a welcome")
        host._resync = honest_resync  # type: ignore[method-assign]
        await asyncio.sleep(6.0)
        conn, welcome = held[0]
        await host._send(conn, welcome)
        assert host.mental is not None
        await host._locked_void([me.my_seat], "a lie", host.mental)
        await until(lambda: me.failures, "the void judged")
        assert any(REFUSED in f for f in me.failures), me.failures


async def test_sleep_before_the_connection_went_does_not_carry_into_a_deal_made_meanwhile(
        ) -> None:
    """The machine slept 10 s early in the deal and the person has been here since; the
    host drops the connection, deals again meanwhile (a void naming nobody), and once the
    client follows live voids naming the seat: refused (the sleep was in an earlier deal)."""
    host = short_away_host()
    async with table_with(host, "Slept") as me:
        await until(lambda: me.view is not None, "round 1 dealt")
        me._slept_at_deal -= 10.0  # as if it had slept 10 s since the deal began
        reopened = hold_reconnection(me)  # until the new deal
        assert me._conn is not None and host.mental is not None
        await me._conn.close()
        await until(lambda: me._lost_at is not None, "the connection gone")
        await host._locked_void([], "the host started again", host.mental)
        reopened.set()
        await until(lambda: me.phase == "live" and me.mental is not None
                    and me.mental.first_epoch >= 1, "live in the new deal")
        assert not me._was_away()
        await host._locked_void([me.my_seat], "a lie", host.mental)
        await until(lambda: me.failures, "the void judged")
        assert any(REFUSED in f for f in me.failures), me.failures


async def test_a_second_drop_during_the_catch_up_keeps_the_first_absence() -> None:
    """FAIRNESS.md A8: a person whose connection goes at its turn, away past the host's
    patience, is dealt out; its client comes back, and the connection goes again just after
    the `welcome`, before it follows live. The absence is still timed from the first loss, so
    the void its next catch-up replays is believed and the person plays the new deal (timed
    from the second loss it would be a fraction of a second, and the void refused as a lie)."""
    events: list[str] = []
    # The bots think 1 s a move: the deal made again is still in play when the client is back.
    host = Host(HostConfig(game="zodiak", players=2, bots=1, seed=3, bot_delay=1.0,
                           mental=True, away_timeout=2.0), on_event=events.append)
    async with table_with(host, "Twice") as me:
        seat = me.my_seat
        await until(lambda: seat_to_move(host, seat), "this seat's turn, all else sent")
        honest_welcome = me._on_welcome
        back = hold_reconnection(me)
        dropped: list[object] = []

        def welcome_then_gone(msg: Any) -> None:
            honest_welcome(msg)
            if not dropped:  # the connection dies right after its first welcome
                dropped.append(me._conn)
                assert me._conn is not None
                asyncio.create_task(me._conn.close())
                raise ConnectionError("gone again during the catch-up")

        me._on_welcome = welcome_then_gone  # type: ignore[method-assign]
        assert me._conn is not None
        await me._conn.close()
        await until(lambda: any("voided" in line for line in events), "dealt out", 30.0)
        back.set()
        voided = [line for line in events if "voided" in line]
        await until(lambda: me.failures or me.phase == "live" and me.mental is not None
                    and me.mental.first_epoch >= 1, "live in the deal made again, or a refusal")
        assert dropped and not me.failures, me.failures
        assert voided[0].startswith(f"round {me.round_number} voided"), (voided, me.round_number)
        assert me.away_for >= host_patience(2.0)


async def test_time_the_host_itself_was_held_up_is_not_counted_against_a_seat() -> None:
    """A host whose process stalls past a seat's whole allowance (here the turn timer and its
    grace) does not deal that seat out for it: the seat's answer waited unread meanwhile."""
    events: list[str] = []
    host = Host(HostConfig(game="zodiak", players=2, bots=1, seed=3, bot_delay=0.0,
                           mental=True, turn_seconds=0.2), on_event=events.append)
    async with table_with(host, "Held up") as me:
        await until(lambda: seat_to_move(host, me.my_seat), "this seat's turn, all else sent")
        allowed = 0.2 + 5.0
        time.sleep(allowed + 1.0)  # noqa: ASYNC251 -- the whole process held up, on purpose
        await until(lambda: me.view is not None and any(
            e.seat == me.my_seat for e in me.view.history), "the seat's clock moving for it")
        await asyncio.sleep(1.0)
        assert not any("voided" in line for line in events), events


async def voided_by_a_lying_host(away: list[int], times: int) -> tuple[list[str], bool]:
    """A table of one person and one bot; once the person's client shows round 1, the host voids
    the deal `times` times naming `away` (as a modified host would, with nobody gone)."""
    events: list[str] = []
    host = Host(HostConfig(game="zodiak", players=2, bots=1, seed=3, bot_delay=0.0,
                           mental=True), on_event=events.append)
    async with table_with(host, "Here") as me:
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


async def test_after_a_failed_share_proof_a_seat_checks_and_takes_nothing_more_of_the_deal(
) -> None:
    """The host sends, as its bots' party in its own signed chain, 200 shares of its bots' own
    unplayed cards whose proofs fail, then a true share of one: the seat checks the first,
    blames the host and says once that it checks nothing more of that deal; the other 199 and
    the true share are left unchecked and none is taken (the card stays closed to it). A void
    then deals the round again, and the seat checks and follows the new deal."""
    from netplay.fair.context import BOT_PARTY
    from netplay.fair.group import Scalar
    from netplay.fair.shares import DecryptionShare, make_share

    host = Host(HostConfig(game="zodiak", players=2, bots=1, seed=3, bot_delay=0.0,
                           mental=True))
    async with table_with(host, "Here") as me:
        await until(lambda: me.view is not None, "round 1 dealt")
        async with host._game_lock:  # the host's bot plays no card meanwhile
            play = host.mental
            assert play is not None
            mental, epoch = play.mental, play.first_epoch
            deck = mental.decks[epoch]
            bots = [q for q, owner in enumerate(mental.owners[epoch])
                    if owner == BOT_PARTY and (epoch, q) not in play.played]
            caught = me.mental
            for i in range(200):
                q = bots[i % len(bots)]
                true = make_share(mental.key, deck.ciphertext(q), deck.context, BOT_PARTY, q)
                bad = DecryptionShare(true.value, true.proof_challenge, Scalar.random())
                await host._broadcast("mp_shares", round=1, epoch=epoch, positions=[q],
                                      shares=bad.encode())
            q = bots[0]
            true = make_share(mental.key, deck.ciphertext(q), deck.context, BOT_PARTY, q)
            await host._broadcast("mp_shares", round=1, epoch=epoch, positions=[q],
                                  shares=true.encode())
            await until(lambda: me.ignored >= 200, "every share heard")
            assert me.mental is caught and caught is not None
            assert BOT_PARTY not in caught.mental.shares.get((epoch, q), {})
            assert BOT_PARTY not in caught.mental.unchecked.get((epoch, q), {})
            assert (epoch, q) not in caught.mental.known
        bad_proofs = [f for f in me.failures if "decryption share for deck position" in f]
        assert len(bad_proofs) == 1 and bad_proofs[0].startswith("the dealer"), me.failures
        told = []
        while not me.queue.empty():
            event = me.queue.get_nowait()
            if isinstance(event, Notice) and "checks and takes nothing more" in event.text:
                told.append(event)
        assert len(told) == 1 and told[0].kept
        assert host.mental is not None
        await host._locked_void((), "started again", host.mental)
        await until(lambda: me.mental is not caught and me.view is not None, "dealt again")
        left = me.ignored  # the 201 above, and what the bot did in that deal before the void
        await asyncio.sleep(0.5)
        assert me.ignored == left  # nothing of the new deal is left unchecked
        assert me.mental is not None and me.mental.mental.known  # its cards opened
