"""PROTOCOL.md G8: a round with more shuffles than one `round_end` may reveal sends its seeds in
`seeds` messages first, so no host message grows with the number of reshuffles; the seats still
audit every round. Here a message holds one seed, so any round with a reshuffle splits."""

from __future__ import annotations

import asyncio

import pytest

from netplay.relay.client import RelayConnection
from netplay.relay.launch import start_relay
from netplay.seat.bot_player import play_as_bot
from netplay.seat.remote import RemoteSession
from netplay.table import host as host_module
from netplay.table.host import Host, HostConfig


class CountsSeeds(Host):
    """A host that counts the `seeds` messages it broadcasts."""

    seeds_sent = 0

    async def _broadcast(self, t: str, **fields) -> None:
        if t == "seeds":
            self.seeds_sent += 1
        await super()._broadcast(t, **fields)


MATCHES_TRIED = 4


async def match_with_split_seeds() -> tuple[CountsSeeds, list]:
    relay = await start_relay()
    try:
        host = CountsSeeds(HostConfig(game="zodiak", players=4, seed=7), on_event=lambda _: None)
        conn = await RelayConnection.open_room(relay.url)
        serving = asyncio.create_task(host.serve(conn))
        seats = [RemoteSession(game="", url=relay.url, room=conn.room, name=f"p{i}")
                 for i in range(4)]
        for seat in seats:
            await seat.start()
            await seat.wait_seated()
        found = await asyncio.wait_for(
            asyncio.gather(*(play_as_bot(s, "greedy") for s in seats)), 120)
        await asyncio.wait_for(serving, 20)
        for seat in seats:
            await seat.close()
        await conn.close()
        return host, found
    finally:
        await relay.close()


def test_seeds_revealed_ahead_of_round_end_are_audited(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(host_module, "SEEDS_PER_MESSAGE", 1)
    # Every seat's random nonce shapes the deck, so no seed makes a match reshuffle for sure;
    # almost every four-player match does, and a few more matches make a miss vanishingly rare.
    for _ in range(MATCHES_TRIED):
        host, found = asyncio.run(match_with_split_seeds())
        if host.seeds_sent:
            break
    assert host.seeds_sent > 0, f"none of {MATCHES_TRIED} matches reshuffled"
    expected = host.result()
    for result in found:
        assert result is not None and result["verified"], result
        assert {k: result[k] for k in expected} == expected
