"""Item 3 with `host --resume`: a host that stops right after a 30-card Hekata trick (worth about
10^29, before it could announce the round's end) is resumed from its save file; it announces the
end, the seats prove their keys again to rejoin, and everyone agrees on the huge score."""

from __future__ import annotations

import asyncio
from pathlib import Path

from netplay.relay.client import RelayConnection
from netplay.relay.launch import start_relay
from netplay.seat.remote import RemoteSession
from netplay.table.host import Host, HostConfig
from tests.e2e.hostile_peer import lay_or_take, play


class StopsBeforeTheEnd(Host):
    """A host whose process stops the first time it would score a round."""

    async def _end_round(self) -> None:
        self.stopped.set()
        await asyncio.Event().wait()  # never returns: the test takes the host away

    stopped: asyncio.Event = asyncio.Event()


async def resume_after_the_big_trick(tmp: Path) -> tuple[dict, list]:
    relay = await start_relay()
    save = tmp / "hosted.json"
    try:
        first = StopsBeforeTheEnd(HostConfig(game="hekata", players=2, seed=4, save_path=save),
                                  on_event=lambda _: None)
        first.stopped = asyncio.Event()
        conn = await RelayConnection.open_room(relay.url)
        room, secret = conn.room, conn.host_secret
        serving = asyncio.create_task(first.serve(conn))
        seats = [RemoteSession(game="", url=relay.url, room=room, name=f"p{i}")
                 for i in range(2)]
        for seat in seats:
            await seat.start()
            await seat.wait_seated()
        playing = [asyncio.create_task(play(s, lay_or_take)) for s in seats]
        await asyncio.wait_for(first.stopped.wait(), 120)
        serving.cancel()
        await conn.close()
        assert max(first.state.scores) > 2**64  # the trick is in, its round not yet scored

        second, saved_room, saved_secret = Host.resume(HostConfig(), save)
        assert (saved_room, saved_secret) == (room, secret)
        second.on_event = lambda _: None
        conn = await RelayConnection.open_room(relay.url, room, secret)
        serving = asyncio.create_task(second.serve(conn))
        found = await asyncio.wait_for(asyncio.gather(*playing), 120)
        await asyncio.wait_for(serving, 20)
        for seat in seats:
            await seat.close()
        await conn.close()
        return second.result(), found
    finally:
        await relay.close()


def test_a_resumed_host_announces_a_trick_over_2_to_the_64(tmp_path: Path) -> None:
    expected, found = asyncio.run(resume_after_the_big_trick(tmp_path))
    assert max(expected["scores"]) > 10**28
    for result in found:
        assert result is not None and result["verified"], result
        assert {k: result[k] for k in expected} == expected
