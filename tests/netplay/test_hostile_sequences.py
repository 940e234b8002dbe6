"""Hypothesis: sequences of well-formed and ill-formed messages from a seated player and from a
watcher never change what the honest seats see: they finish with the host's result, verified.

Issue 10's "what must be true": the worst a hostile party can do is lose its own seat's moves to
its bot (the turn timer), be refused, or be disconnected.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import msgpack
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.house import HouseRules
from netplay.relay.client import RelayConnection
from netplay.relay.launch import start_relay
from netplay.seat.bot_player import play_as_bot
from netplay.seat.remote import RemoteSession
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
        st.dictionaries(st.sampled_from(sorted(kinds[t] - {"t"})), values, max_size=6)
        if kinds[t] - {"t"} else st.just({}),  # a kind with no fields of its own (`leave`)
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


async def finished_under_attack(config: HostConfig, attack_with: Callable[
        [RemoteSession, RelayConnection], Awaitable[None]], verified: bool = True) -> None:
    """Three seats play a match at a host of `config` while `attack_with(seat 2, a watcher's
    conn)` runs; the two honest seats finish with the host's result."""
    relay = await start_relay()
    try:
        host = Host(config, on_event=lambda _: None)
        host_conn = await RelayConnection.open_room(relay.url)
        serving = asyncio.create_task(host.serve(host_conn))
        seats = [RemoteSession(game="", url=relay.url, room=host_conn.room, name=f"p{i}")
                 for i in range(3)]
        for seat in seats:
            await seat.start()
            await seat.wait_seated()
        watcher = await RelayConnection.enter(relay.url, host_conn.room)
        attacking = asyncio.create_task(attack_with(seats[2], watcher))
        playing = [asyncio.create_task(play_as_bot(s, "greedy")) for s in seats]
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
            assert found is not None and (found["verified"] or not verified), found
            assert {k: found[k] for k in expected} == expected
    finally:
        await relay.close()


async def match_under_attack(plan: list[tuple[str, bytes]], from_seat: bool) -> None:
    await finished_under_attack(
        HostConfig(game="zodiak", players=3, seed=4, turn_seconds=1.0, reveal_timeout=1.0),
        lambda seat, watcher: attack(seat, watcher, plan, from_seat))


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



# In a mental-poker lobby: kinds a seat signs there, with made-up fields (FAIRNESS.md A8,
# "Lobby deck"), signed in the chain of the lobby deck in play or in its move chain.
LOBBY_KINDS = {t: fields for t, fields in SIGNED_FIELDS.items()
               if t in ("mp_key", "mp_shuffle", "mp_checked", "mp_shares", "mp_lost")}
lobby_actions = st.tuples(st.sampled_from(["deck", "move"]), message(LOBBY_KINDS).map(
    lambda m: msgpack.packb(m, use_bin_type=True)))


async def lobby_attack(seat: RemoteSession, plan: list[tuple[str, bytes]]) -> None:
    """Sign each body as the next message of the seat's lobby-deck chain (or move chain) and
    send it, while the lobby's deck is made and after."""
    for chain, body in plan:
        deck = seat.lobby_deck
        name = f"deck{deck.epoch}" if chain == "deck" and deck is not None else "move"
        head = seat._heads.get(name)
        if head is not None and seat._conn is not None and not seat._conn.closed:
            signed = head.sign(seat.identity.key, body)
            await seat._conn.send(msgpack.packb({"t": "s", "c": seat.chain_no,
                                                 "m": signed.to_wire()}, use_bin_type=True))
        await asyncio.sleep(0.01)


async def mental_lobby_under_attack(plan: list[tuple[str, bytes]]) -> None:
    await finished_under_attack(
        HostConfig(game="zodiak", players=3, seed=4, turn_seconds=1.0, reveal_timeout=1.0,
                   away_timeout=5.0, mental=True, require_ready=True,
                   house=HouseRules(target=20)),  # the attack is on the lobby: a short match
        lambda seat, _: lobby_attack(seat, plan), verified=False)


@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(lobby_actions, min_size=1, max_size=30))
def test_a_seat_signing_anything_in_a_mental_lobby_leaves_the_honest_seats_their_match(
        plan: list) -> None:
    """A seated player of a mental-poker table signs, in its own chains, made-up keys,
    shuffles, checks, shares and losses while the lobby's deck is made: the two honest seats
    still finish the match with the host's result."""
    asyncio.run(mental_lobby_under_attack(plan))
