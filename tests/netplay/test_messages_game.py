"""The game's decoders, at both ends: whatever arrives becomes one typed kind or the one decode
error (ProtocolError), and the host's and the seat's handlers, given any well-typed message,
answer or refuse it and never raise anything else (issue 9; issue 10's hostile peers)."""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netplay.fair import Identity
from netplay.messages import (
    HOST_PAYLOADS,
    SEAT_BODIES,
    SEAT_PAYLOADS,
    Frame,
    HostSays,
    Message,
    ProtocolError,
    Resync,
    Synced,
    Welcome,
    decode,
    encode,
    encode_map,
)
from netplay.protocol import HOST_SENDER, ChainHead, chain_room
from netplay.seat.remote import RemoteSession
from netplay.table.host import Host, HostConfig
from netplay.table.inbound import SIGNED_FIELDS, check_fields, read_body, read_payload
from tests.netplay.test_messages import anything, instances_of, mutated, wrong_maps

TABLE = "K7QXM2RD9A-3f09c2d4a1b87e65"
SEAT_KINDS = sorted(SEAT_BODIES.kinds.values(), key=lambda k: k.t)
PAYLOAD_KINDS = sorted(SEAT_PAYLOADS.kinds.values(), key=lambda k: k.t)
HOST_KINDS = sorted(HOST_PAYLOADS.kinds.values(), key=lambda k: k.t)


def maps_of(kinds: list[type[Message]]) -> st.SearchStrategy[dict[str, Any]]:
    """Maps of these kinds: valid, one field wrong, or any fields holding anything."""
    return st.sampled_from(kinds).flatmap(
        lambda cls: st.one_of(instances_of(cls).map(lambda m: msgpack.unpackb(encode(m))),
                              mutated(cls), wrong_maps(cls)))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300) | maps_of(SEAT_KINDS).map(encode_map))
def test_the_hosts_boundary_reads_a_seat_body_or_refuses_it(data: bytes) -> None:
    try:
        msg = read_body(data)
    except ProtocolError as err:
        assert err.code in {"bad_frame", "too_big", "unknown_type"}
        return
    assert type(msg) in SEAT_KINDS and decode(encode(msg), SEAT_BODIES) == msg


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300) | maps_of(PAYLOAD_KINDS).map(encode_map), st.booleans())
def test_the_hosts_boundary_reads_a_signed_payload_or_refuses_it(data: bytes,
                                                                 mental: bool) -> None:
    try:
        body = read_payload(data, mental)
    except ProtocolError as err:
        assert err.code in {"bad_frame", "too_big", "unknown_type"}
        return
    assert type(body) in PAYLOAD_KINDS


@settings(max_examples=200, deadline=None)
@given(maps_of(PAYLOAD_KINDS) | st.dictionaries(st.text(max_size=6), anything, max_size=5))
def test_a_map_already_unpacked_is_read_the_same_way(msg: dict[str, Any]) -> None:
    try:
        body = check_fields(msg, SIGNED_FIELDS)
    except ProtocolError:
        return
    assert decode(encode(body), SEAT_PAYLOADS) == body


async def host_takes(bodies: list[bytes]) -> None:
    host = Host(HostConfig(game="zodiak", players=2, seed=1), on_event=lambda _: None)
    host.table = TABLE
    host._new_chain(0)
    for conn, body in enumerate(bodies):
        await host._on_frame(1 + conn % 3, body)  # refused or answered; never raises


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(maps_of(SEAT_KINDS).map(encode_map) | st.binary(max_size=80), max_size=12))
def test_the_hosts_handlers_answer_or_refuse_any_seat_message(bodies: list[bytes]) -> None:
    asyncio.run(host_takes(bodies))


async def seat_takes(payloads: list[bytes]) -> None:
    host, me = Identity.generate(), Identity.generate()
    seat = RemoteSession(game="", url="")
    seat.identity.key = me
    welcome = Welcome(game="zodiak", players=2, target=100, table=TABLE,
                      host=host.public.to_bytes(), ids=(me.public.to_bytes(), None), seat=0,
                      token=bytes(16))
    for msg in (welcome, Resync(c=1, n=0), Synced(c=1, n=0)):
        await seat._on_relay(Frame(sender=0, body=encode(msg)))
    assert seat.phase == "live" and seat.chain_no == 1  # what follows reaches the handlers
    head = ChainHead.start(chain_room(TABLE, 1), HOST_SENDER)
    for payload in payloads:
        signed = head.sign(host, payload)
        head.advance(signed)
        says = HostSays(c=1, m=signed.to_wire())  # type: ignore[arg-type]
        await seat._on_relay(Frame(sender=0, body=encode(says)))  # never raises


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(maps_of(HOST_KINDS).map(encode_map) | st.binary(max_size=80), max_size=12))
def test_the_seats_handlers_check_or_refuse_any_signed_host_message(payloads: list[bytes]) -> None:
    """Signed by the host's real key, so every payload reaches the seat's handlers."""
    asyncio.run(seat_takes(payloads))
