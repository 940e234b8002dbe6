"""Hypothesis: sequences of well-formed and ill-formed messages from a seated player and from a
watcher never change what the honest seats see: they finish with the host's result, verified.

Issue 10's "what must be true": the worst a hostile party can do is lose its own seat's moves to
its bot (the turn timer), be refused, or be disconnected.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netplay.relay.client import RelayConnection
from netplay.relay.server import start_relay
from netplay.seat.remote import RemoteSession, play_as_bot
from netplay.table.host import Host, HostConfig
from netplay.table.inbound import FIELDS, SIGNED_FIELDS

ints = st.integers(-3, 2**64 - 1) | st.integers(-2, 40)
leaf = st.one_of(st.none(), st.booleans(), ints, st.text(max_size=30), st.binary(max_size=80),
                 st.binary(min_size=32, max_size=32), st.binary(min_size=64, max_size=64))
values = st.recursive(leaf, lambda inner: st.lists(inner, max_size=3), max_leaves=8)


def message(kinds: dict[str, frozenset[str]]) -> st.SearchStrategy[dict[str, Any]]:
    """A map of a known type with some of its own fields (and now and then a stranger)."""
    return st.sampled_from(sorted(kinds)).flatmap(lambda t: st.builds(
        lambda fields, extra: {"t": t, **fields, **extra},
        st.dictionaries(st.sampled_from(sorted(kinds[t] - {"t"})), values, max_size=6),
        st.dictionaries(st.sampled_from(["pad", "x"]), st.binary(max_size=2000), max_size=1)))


# ("raw", bytes) goes out as it is; ("signed", payload) is signed by the hostile seat's own key
# as the next message of its chain, the way a seat that means harm but holds its key would.
actions = st.one_of(
    st.tuples(st.just("raw"), st.binary(max_size=100)),
    st.tuples(st.just("raw"), message(FIELDS).map(lambda m: msgpack.packb(m, use_bin_type=True))),
    st.tuples(st.just("signed"), message(SIGNED_FIELDS).map(
        lambda m: msgpack.packb(m, use_bin_type=True))),
)


async def attack(seat: RemoteSession, watcher: RelayConnection, plan: list[tuple[str, bytes]],
                 from_seat: bool) -> None:
    for kind, body in plan:
        if kind == "signed" and from_seat and seat.my_seat is not None and seat.table:
            head = seat._heads.get("nonce") if b"nonce" in body else seat._heads.get("move")
            if head is None:
                continue
            signed = head.sign(seat.identity.key, body)
            body = msgpack.packb({"t": "s", "c": seat.chain_no, "m": signed.to_wire()},
                                 use_bin_type=True)
        elif kind == "signed":
            continue
        if from_seat and seat._conn is not None and not seat._conn.closed:
            await seat._conn.send(body)
        elif not from_seat and not watcher.closed:
            await watcher.send(body)
        await asyncio.sleep(0.01)


async def match_under_attack(plan: list[tuple[str, bytes]], from_seat: bool) -> None:
    relay = await start_relay()
    try:
        host = Host(HostConfig(game="zodiak", players=3, seed=4, turn_seconds=1.0,
                               reveal_timeout=1.0), on_event=lambda _: None)
        host_conn = await RelayConnection.open_room(relay.url)
        serving = asyncio.create_task(host.serve(host_conn))
        seats = [RemoteSession(game="", url=relay.url, room=host_conn.room, name=f"p{i}")
                 for i in range(3)]
        for seat in seats:
            await seat.start()
            await seat.wait_seated()
        watcher = await RelayConnection.enter(relay.url, host_conn.room)
        playing = [asyncio.create_task(play_as_bot(s, "greedy")) for s in seats]
        attacking = asyncio.create_task(attack(seats[2], watcher, plan, from_seat))
        honest = await asyncio.wait_for(asyncio.gather(*playing[:2]), 240)
        await asyncio.wait_for(serving, 20)
        attacking.cancel()
        playing[2].cancel()
        for seat in seats:
            await seat.close()
        await watcher.close()
        await host_conn.close()
        expected = host.result()
        assert expected["winner"] is not None
        for found in honest:
            assert found is not None and found["verified"], found
            assert {k: found[k] for k in expected} == expected
    finally:
        await relay.close()


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(actions, max_size=40))
def test_a_seat_sending_anything_leaves_the_honest_seats_their_match(plan: list) -> None:
    """A seated player sends what Hypothesis makes up, signed with its own key or not."""
    asyncio.run(match_under_attack(plan, from_seat=True))


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(actions, max_size=40))
def test_a_watcher_sending_anything_leaves_the_honest_seats_their_match(plan: list) -> None:
    """A conn that is in the room but holds no seat sends what Hypothesis makes up."""
    asyncio.run(match_under_attack(plan, from_seat=False))

