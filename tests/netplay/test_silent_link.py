"""A link that fails without a word (a laptop changes network, a NAT forgets the flow): neither
end hears a close, so both must notice the silence themselves. A real relay, host and client on
127.0.0.1 in this process, the client's traffic through a TCP proxy that can cut every link it
carries without closing a socket (FAIRNESS.md A8)."""

from __future__ import annotations

import asyncio
import contextlib

from netplay.fair.absence import host_patience
from netplay.messages import Departed
from netplay.relay.client import SILENT_LINK_SECONDS, RelayClosed, RelayConnection
from netplay.relay.launch import start_relay
from netplay.relay.limits import RelayLimits
from netplay.seat.remote import RemoteSession
from netplay.table.host import Host, HostConfig
from tests.netplay.test_mental_table import seat_to_move, until

WAIT = 60.0
RELAY_HEARTBEAT = 1.0  # the relay's default is 10 s; the client's own heartbeat is fixed


class Partition:
    """A TCP proxy to one port that can fail silently: `cut` stops every link it carries, and
    holds new ones unanswered, until `heal`, when new links go through again (the old stay
    dead, as after a change of network)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.healed = asyncio.Event()
        self.healed.set()
        self._pipes: list[asyncio.Task[None]] = []
        self._sockets: list[asyncio.StreamWriter] = []
        self._server: asyncio.Server | None = None

    async def start(self) -> str:
        """Listen on a free port; the ws:// URL of the relay through it."""
        self._server = await asyncio.start_server(self._link, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        return f"ws://127.0.0.1:{port}/ws"

    def cut(self) -> None:
        """Stop carrying anything, on every link, without closing one."""
        self.healed.clear()
        for pipe in self._pipes:
            pipe.cancel()

    def heal(self) -> None:
        """Let new links through (and those held meanwhile)."""
        self.healed.set()

    async def close(self) -> None:
        """Stop listening and close every socket."""
        for pipe in self._pipes:
            pipe.cancel()
        for writer in self._sockets:
            writer.close()
        if self._server is not None:
            self._server.close()

    async def _link(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._sockets.append(writer)
        await self.healed.wait()  # a link made while cut: held, as a SYN retried until it gets through
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.port)
        self._sockets.append(up_writer)
        self._pipes += [asyncio.create_task(self._pipe(reader, up_writer)),
                        asyncio.create_task(self._pipe(up_reader, writer))]

    @staticmethod
    async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
        sink.close()


async def test_a_relay_that_goes_silent_is_left_and_hears_the_seat_gone() -> None:
    """The client pings a silent relay and, unanswered, closes the link itself (so that it
    reconnects); the relay pings the silent seat and closes it, and tells the host it left."""
    relay = await start_relay(limits=RelayLimits(heartbeat_seconds=RELAY_HEARTBEAT))
    partition = Partition(relay.port)
    try:
        host = await RelayConnection.open_room(relay.url)
        seat = await RelayConnection.enter(await partition.start(), host.room)
        heard: list[object] = []
        hearing = asyncio.create_task(read_into(host, heard))  # a host reads all the time
        partition.cut()
        async with asyncio.timeout(WAIT):
            try:
                while True:
                    await seat.recv()
            except RelayClosed as gone:
                assert "did not answer" in str(gone)
            assert seat.closed
            while Departed(conn=seat.conn) not in heard:
                await asyncio.sleep(0.05)
        assert not host.closed  # it was heard all along
        hearing.cancel()
        await host.close()
    finally:
        await partition.close()
        await relay.close()


async def read_into(conn: RelayConnection, heard: list[object]) -> None:
    """Read `conn` until it closes, keeping what it hears."""
    with contextlib.suppress(RelayClosed):
        async for msg in conn:
            heard.append(msg)


async def test_a_person_whose_link_dies_silently_is_dealt_out_and_believes_it() -> None:
    """FAIRNESS.md A8: the link of a person at its turn fails silently. The relay notices first
    (its heartbeat here is 1 s) and the host deals the person out after its patience; the
    client notices up to `SILENT_LINK_SECONDS` later, and its reconnection, held by the broken
    network, gets through the moment the host deals again. Its absence, timed from when it
    noticed, is then the host's patience less that lateness, and the margin keeps it over the
    away time: the client believes the void and plays the new deal. (With the margin of 1 s
    that came before the heartbeat, it refused the void as a lie; without the client's
    heartbeat it never noticed the link gone.)"""
    events: list[str] = []
    # The bots think 1 s a move: the deal made again is still in play when the client is back.
    host = Host(HostConfig(game="zodiak", players=2, bots=1, seed=3, bot_delay=1.0,
                           mental=True, away_timeout=2.0), on_event=events.append)
    relay = await start_relay(limits=RelayLimits(heartbeat_seconds=RELAY_HEARTBEAT))
    partition = Partition(relay.port)
    conn = await RelayConnection.open_room(relay.url)
    serving = asyncio.create_task(host.serve(conn))
    me = RemoteSession(game="", url=await partition.start(), room=conn.room, name="Cut")
    try:
        await me.start()
        await me.wait_seated()
        seat = me.my_seat
        await until(lambda: seat_to_move(host, seat), "this seat's turn, all else sent")
        partition.cut()
        await until(lambda: any("voided" in line for line in events), "dealt out", WAIT)
        partition.heal()
        assert me._lost_at is not None  # it noticed the silence before the void
        await until(lambda: me.failures or me.phase == "live" and me.mental is not None
                    and me.mental.first_epoch >= 1, "live in the deal made again, or a refusal")
        assert not me.failures, me.failures
        assert me.away_for >= host_patience(2.0) - SILENT_LINK_SECONDS
    finally:
        await me.close()
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await serving
        await conn.close()
        await partition.close()
        await relay.close()
