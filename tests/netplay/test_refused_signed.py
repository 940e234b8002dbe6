"""PROTOCOL.md G3, "Budgets": the signed messages of a seat that the host refuses (or drops as
copies) cost that seat's refusal budget, the ones it accepts cost nothing, and past the budget
a seat's signed message is refused `rate_limited` before its signature or any proof is checked.
A real relay, host and client on 127.0.0.1 in this process, at a table dealt by mental poker;
the hostile frames are the seated client's own key's, handed to the host as its conn's."""

from __future__ import annotations

import time

from engine.bots import make_bot
from netplay.fair import Identity, sign_message
from netplay.fair.group import ORDER
from netplay.fair.shares import SHARE_SIZE, make_share
from netplay.protocol import pack
from netplay.seat.remote import RemoteSession
from netplay.table.host import Host, HostConfig
from netplay.table.state import REFUSED_BURST, REFUSED_RATE
from tests.netplay.test_mental_table import table_with, until


class RecordingHost(Host):
    """The real host, which also notes the code of every refusal it makes."""

    refused: list[tuple[int, str]]

    async def _refuse(self, conn: int, code: str, message: str) -> None:
        self.refused.append((conn, code))
        await super()._refuse(conn, code, message)


def bad_shares(me: RemoteSession) -> bytes:
    """A signed mp_shares frame of the seat's own unplayed cards, next in its chain, whose
    shares are all true but the last one's proof (its response changed, FAIRNESS.md A6): the
    host checks every proof before the last fails, and the seat's chain does not move on."""
    play = me.mental
    assert play is not None and me.my_seat is not None
    rnd, seat = play.mental, me.my_seat
    epoch = play.first_epoch
    mine = [q for q, owner in enumerate(rnd.owners[epoch])
            if owner == seat and (epoch, q) not in rnd.public]
    deck = rnd.decks[epoch]
    blob = bytearray(b"".join(make_share(rnd.key, deck.ciphertext(q), deck.context, seat,
                                         q).encode() for q in mine))
    end = len(blob)
    response = (int.from_bytes(blob[end - 32:end], "little") + 1) % ORDER
    blob[end - 32:end] = response.to_bytes(32, "little")
    assert len(blob) == SHARE_SIZE * len(mine)
    payload = pack("mp_shares", round=play.round_no, epoch=epoch, positions=mine,
                   shares=bytes(blob))
    return signed_frame(me, me.identity.key, payload)


def signed_frame(me: RemoteSession, key: Identity, payload: bytes, below: bool = False) -> bytes:
    """`payload` signed by `key` as the seat's next message (or, `below`, as its first: a copy
    of a message the host accepted long ago, dropped without an answer)."""
    head = me._heads["move"]
    message = (sign_message(key, 0, bytes(32), payload) if below
               else head.sign(key, payload))
    return pack("s", c=me.chain_no, m=message.to_wire())


async def test_refused_signed_messages_spend_the_seats_budget_and_accepted_ones_do_not() -> None:
    """The honest seat's key, shuffle and shares leave its budget full; a share with a bad proof
    and a copy of an accepted message each cost one; once the budget is spent, further signed
    messages (one with a bad signature too) are refused `rate_limited` with no check made, and
    the seat connecting again does not refill it; a second later the seat's honest move is
    accepted."""
    host = RecordingHost(HostConfig(game="zodiak", players=2, bots=1, seed=5, bot_delay=0.0,
                                    mental=True), on_event=lambda _: None)
    host.refused = []
    async with table_with(host, "Me") as me:
        seat = me.my_seat
        assert seat is not None

        def quiet() -> bool:  # the seat's turn, the next round's deck shuffled: it sends nothing
            play, view = host.mental, me.view
            return (play is not None and play.state is not None and view is not None
                    and view.turn == seat and play.waiting_for() == {seat}
                    and play.prepared_digest() is not None and not me._unforwarded)

        await until(quiet, "the seat's turn with nothing owed")
        conn = host.seats[seat].conn
        assert conn is not None
        # The host's budgets see time stand still from here, but for the steps made below.
        clock = [time.monotonic()]
        host.budget_clock = lambda: clock[0]
        budget = host._refusals(seat)
        assert budget.refill(clock[0]) == REFUSED_BURST  # every accepted one was free
        assert host.refused == []

        await host._on_frame(conn, signed_frame(me, Identity.generate(), pack(
            "mp_key", round=1, epoch=0, key=b"")))  # within budget: its signature is checked
        await host._on_frame(conn, bad_shares(me))
        assert [code for _, code in host.refused] == ["bad_signature", "bad_frame"]
        assert budget.refill(clock[0]) == REFUSED_BURST - 2
        await host._on_frame(conn, signed_frame(me, me.identity.key, pack(
            "mp_lost", round=1), below=True))  # a copy: dropped without an answer, charged
        assert len(host.refused) == 2
        assert budget.refill(clock[0]) == REFUSED_BURST - 3

        for _ in range(30):
            await host._on_frame(conn, bad_shares(me))
        codes = [code for _, code in host.refused[2:]]
        spent = codes.index("rate_limited")
        assert spent == REFUSED_BURST - 3 and set(codes[:spent]) == {"bad_frame"}, codes
        assert set(codes[spent:]) == {"rate_limited"}
        # Past the budget a bad signature is not even looked at: the answer is the same.
        await host._on_frame(conn, signed_frame(me, Identity.generate(), pack(
            "mp_key", round=1, epoch=0, key=b"")))
        assert host.refused[-1][1] == "rate_limited"
        assert budget.refill(clock[0]) == 0.0  # the cheap refusals cost nothing more

        # Connecting again starts nothing afresh: the budget is the seat's, not the conn's.
        assert me._conn is not None
        await me._conn.close()
        await until(lambda: host.seats[seat].conn not in (None, conn) and me.phase == "live",
                    "the seat back on a new conn")
        assert host._refusals(seat).refill(clock[0]) == 0.0

        # One refusal comes back each 1 / REFUSED_RATE s: the seat's move is then accepted.
        clock[0] += 1.0 / REFUSED_RATE
        before = len(host.refused)
        view = me.view
        assert view is not None
        history = len(view.history)
        await me.submit(make_bot("greedy", 1).choose(view.view(seat)))
        await until(lambda: me.view is not None and len(me.view.history) > history,
                    "the seat's move applied")
        assert len(host.refused) == before and not me.failures


async def test_signed_messages_from_a_conn_without_a_seat_spend_its_request_budget() -> None:
    """Only a seated conn's signed messages go by the refusal budget; a conn with no seat (a
    watcher, a stranger) pays for each like for any request (20 at once, PROTOCOL.md G3)."""
    host = RecordingHost(HostConfig(game="zodiak", players=2, seed=1), on_event=lambda _: None)
    host.refused = []
    host.budget_clock = lambda: 1000.0  # no request comes back while the 25 are counted
    host.table = "t"
    host._new_chain(0)
    message = sign_message(Identity.generate(), 0, bytes(32), pack("mp_key", round=1, epoch=0,
                                                                    key=b""))
    for _ in range(25):
        await host._on_frame(7, pack("s", c=0, m=message.to_wire()))
    assert [code for _, code in host.refused] == ["not_allowed"] * 20 + ["rate_limited"] * 5
    assert host.seat_budgets == {}
