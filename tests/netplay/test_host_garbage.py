"""A host keeps serving honest seats while a hostile conn in the same room sends anything at all."""

from __future__ import annotations

import asyncio

import msgpack
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netplay.protocol import pack
from netplay.relay.client import RelayConnection
from netplay.relay.launch import start_relay
from netplay.relay.limits import RelayLimits
from netplay.seat.bot_player import play_as_bot
from netplay.seat.remote import RemoteSession
from netplay.table.host import Host, HostConfig

# Values a MessagePack map may hold, nested a little.
leaf = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1), st.floats(),
                 st.text(max_size=40), st.binary(max_size=64))
values = st.recursive(leaf, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)
kinds = st.sampled_from(["join", "move", "chat", "start", "sync", "moved", "deal", "x", ""])
hostile_message = st.builds(
    lambda t, fields: msgpack.packb({"t": t, **fields}, use_bin_type=True),
    kinds, st.dictionaries(st.sampled_from(["name", "box", "token", "move", "n", "round",
                                            "text", "owner", "watch", "sign", "seat"]),
                           values, max_size=6))
garbage = st.one_of(st.binary(max_size=200), hostile_message)


async def play_match_under_attack(bodies: list[bytes]) -> tuple[dict, list[dict | None]]:
    """Run a two-seat Zodiak match with bots while a third conn sends `bodies`."""
    relay = await start_relay(limits=RelayLimits(messages_per_second=10_000, burst=10_000))
    try:
        host = Host(HostConfig(game="zodiak", players=2, seed=4), on_event=lambda _: None)
        host_conn = await RelayConnection.open_room(relay.url)
        serving = asyncio.create_task(host.serve(host_conn))
        seats = [RemoteSession(game="", url=relay.url, room=host_conn.room, name=f"p{i}")
                 for i in range(2)]
        for seat in seats:
            await seat.start()
            await seat.wait_seated()
        # The attacker arrives once both seats are taken, so even a well-formed join of its
        # own can only make it a spectator.
        attacker = await RelayConnection.enter(relay.url, host_conn.room)
        playing = [asyncio.create_task(play_as_bot(s, "greedy")) for s in seats]
        for body in bodies:
            await attacker.send(body)
            await asyncio.sleep(0)
        found = await asyncio.wait_for(asyncio.gather(*playing), 60)
        await asyncio.wait_for(serving, 10)
        for seat in seats:
            await seat.close()
        await attacker.close()
        await host_conn.close()
        return host.result(), found
    finally:
        await relay.close()


def test_hostile_join_move_and_chat_are_refused_without_effect() -> None:
    """Hand-written hostile sequences: impostor moves, replays, stale numbers, giant names."""
    hostile = [
        pack("move", round=1, n=0, move="draw"),  # not seated
        pack("join", name="x" * 5000, box=b"short"),  # bad key
        pack("start", owner=b"guess"),
        pack("move", round=True, n="0", move=None),
        pack("chat", text="\x1b[2J" * 100),
        pack("sync"),
        b"\xc1",  # never valid MessagePack
    ]
    host_result, results = asyncio.run(play_match_under_attack(hostile * 3))
    assert host_result["winner"] is not None
    for r in results:
        assert r is not None and r["scores"] == host_result["scores"] and r["verified"]


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(garbage, max_size=30))
def test_random_garbage_never_disturbs_the_honest_seats(bodies: list[bytes]) -> None:
    """Hypothesis garbage from a conn in the room changes nothing the honest seats see."""
    host_result, results = asyncio.run(play_match_under_attack(bodies))
    assert host_result["winner"] is not None
    for r in results:
        assert r is not None and r["scores"] == host_result["scores"] and r["verified"]
