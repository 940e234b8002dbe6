"""Hypothesis throws garbage and hostile-but-well-formed messages at one running relay."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from netplay.messages import PROTOCOL_VERSION, Frame, RelayEvent
from netplay.messages import decode_map as decode
from netplay.messages import encode_map as encode
from netplay.relay.client import RelayConnection
from netplay.relay.launch import RunningRelay, start_relay
from netplay.relay.limits import RelayLimits
from netplay.relay.server import Relay
from netplay.relay.wire import format_room_code

# Generous rate and strikes: these tests look for crashes and state changes, not for limits.
FUZZ_LIMITS = RelayLimits(
    max_frame_bytes=2048, messages_per_second=1e6, burst=10**6, strikes_before_close=10**6,
    connections_per_second_per_address=1e6, connection_burst_per_address=10**6,
    max_conns_per_address=10**6, max_pending_per_room=10**6, max_pending_per_address=10**6,
)
FUZZ_SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


class Table:
    """A running relay holding one honest room: a host and one honest seat."""

    def __init__(self, relay: RunningRelay, host: RelayConnection, seat: RelayConnection) -> None:
        self.relay = relay
        self.host = host
        self.seat = seat

    async def assert_honest_room_works(self) -> None:
        await self.seat.send(b"ping from seat")
        await self.host.send(b"ping from host", to=self.seat.conn)
        assert await next_frame(self.host) == Frame(sender=1, body=b"ping from seat")
        assert await next_frame(self.seat) == Frame(sender=0, body=b"ping from host")


async def next_frame(conn: RelayConnection) -> RelayEvent:
    """The next frame, skipping arrivals and departures of the fuzzing conns."""
    while (msg := await conn.recv()).t in ("arrived", "departed"):
        pass
    return msg


def snapshot(relay: Relay) -> list[tuple[Any, ...]]:
    return sorted(
        (code, room.host is not None, sorted(room.seats), room.next_conn, room.host_secret)
        for code, room in relay.rooms.items()
    )


@pytest.fixture
async def table() -> AsyncIterator[Table]:
    relay = await start_relay(limits=FUZZ_LIMITS)
    host = await RelayConnection.open_room(relay.url)
    seat = await RelayConnection.enter(relay.url, host.room)
    await host.admit(seat.conn)  # else dropped after admit_timeout_seconds: a slow run failed
    yield Table(relay, host, seat)
    await seat.close()
    await host.close()
    await relay.close()


async def drain_until_pong(
    ws: aiohttp.ClientWebSocketResponse, pings_sent: int = 0
) -> list[dict[str, Any]]:
    """Every answer but pongs up to the pong of a final ping: the relay answers in order."""
    await ws.send_bytes(encode({"t": "ping"}))
    answers = []
    pongs = 0
    while pongs <= pings_sent:
        msg = await ws.receive()
        assert msg.type is aiohttp.WSMsgType.BINARY, (msg.type, msg.extra)
        answer = decode(msg.data, 1 << 20)
        if answer == {"t": "pong"}:
            pongs += 1
        else:
            answers.append(answer)
    return answers


@FUZZ_SETTINGS
@given(frames=st.lists(st.binary(max_size=3000), max_size=8))
async def test_garbage_bytes_change_nothing(table: Table, frames: list[bytes]) -> None:
    before = snapshot(table.relay.relay)
    async with aiohttp.ClientSession() as session, session.ws_connect(table.relay.url) as ws:
        for frame in frames:
            await ws.send_bytes(frame)
        answers = await drain_until_pong(ws)
    # Garbage can spell a valid 'open' by chance; anything else must be an error.
    assert all(a["t"] in ("error", "opened") for a in answers)
    if not any(a["t"] == "opened" for a in answers):
        assert snapshot(table.relay.relay) == before
    await table.assert_honest_room_works()


_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=True),
    st.text(max_size=20),
    st.binary(max_size=64),
    st.lists(st.integers(min_value=-(2**63), max_value=2**64 - 1), max_size=3),
    st.dictionaries(st.text(max_size=5), st.booleans(), max_size=3),
)
_hostile_messages = st.fixed_dictionaries(
    {"t": st.sampled_from(["open", "enter", "send", "ping", "frame", "opened", "error", "x"])},
    optional={
        "v": st.one_of(st.just(1), _values),
        "room": _values,
        "to": st.one_of(st.sampled_from([0, 1, 2, 99]), _values),
        "from": _values,
        "body": _values,
        "host_secret": _values,
        "conn": _values,
    },
)


@FUZZ_SETTINGS
@given(messages=st.lists(_hostile_messages, max_size=10))
async def test_a_hostile_seat_can_only_talk_to_the_host_as_itself(
    table: Table, messages: list[dict[str, Any]]
) -> None:
    async with aiohttp.ClientSession() as session, session.ws_connect(table.relay.url) as ws:
        await ws.send_bytes(encode({"t": "enter", "v": 1, "room": table.host.room}))
        entered = decode((await ws.receive()).data, 1 << 20)
        hostile_conn = entered["conn"]
        before = snapshot(table.relay.relay)
        forwarded_before = table.relay.stats.frames_in
        for message in messages:
            await ws.send_bytes(encode(message))
        pings = sum(m == {"t": "ping"} for m in messages)  # a ping with fields is refused
        answers = await drain_until_pong(ws, pings)
        assert all(a["t"] == "error" for a in answers)
        assert snapshot(table.relay.relay) == before
        forwarded = table.relay.stats.frames_in - forwarded_before
        assert forwarded + len(answers) == len(messages) - pings
        # What reached the host came stamped with the hostile seat's own conn, nothing else.
        for _ in range(forwarded):
            frame = await next_frame(table.host)
            assert isinstance(frame, Frame) and frame.sender == hostile_conn
    await table.assert_honest_room_works()


HONEST_ROOM = "<the honest room's code>"
_stranger_messages = st.fixed_dictionaries(
    {"t": st.sampled_from(["open", "enter", "enter", "enter", "send", "send", "ping", "x"])},
    optional={
        "room": st.one_of(st.just(HONEST_ROOM), _values),
        "to": st.one_of(st.sampled_from([0, 1, 2, 99]), _values),
        "from": _values,
        "body": _values,
        "host_secret": _values,
    },
)


@FUZZ_SETTINGS
@given(messages=st.lists(_stranger_messages, max_size=10))
async def test_a_stranger_cannot_disturb_an_existing_room(
    table: Table, messages: list[dict[str, Any]]
) -> None:
    honest_code = table.host.room
    for message in messages:
        message["v"] = PROTOCOL_VERSION  # version mismatches close at once; tested elsewhere
        if message.get("room") == HONEST_ROOM:
            message["room"] = format_room_code(honest_code).lower()
    before = {code: rest for code, *rest in snapshot(table.relay.relay)}
    delivered_before = table.relay.stats.frames_out
    async with aiohttp.ClientSession() as session, session.ws_connect(table.relay.url) as ws:
        for message in messages:
            await ws.send_bytes(encode(message))
        pings = sum(m == {"t": "ping"} for m in messages)  # a ping with fields is refused
        answers = await drain_until_pong(ws, pings)
        successes = [a for a in answers if a["t"] != "error"]
        event(f"stranger {successes[0]['t'] if successes else 'refused'}")
        assert len(successes) <= 1 and all(s["t"] in ("opened", "entered") for s in successes)
        after = {code: rest for code, *rest in snapshot(table.relay.relay)}
        entered = successes[0] if successes and successes[0]["t"] == "entered" else None
        for code, state in before.items():
            if entered is None or code != honest_code:
                assert after[code] == state
            else:  # the stranger took the next seat and nothing else changed
                has_host, seats, next_conn, secret = state
                assert after[code] == [has_host, [*seats, entered["conn"]], next_conn + 1, secret]
        assert len(after) - len(before) == sum(s["t"] == "opened" for s in successes)
        # As a seat it reached only the honest host, stamped; as a new host nobody at all.
        for _ in range(table.relay.stats.frames_out - delivered_before):
            frame = await next_frame(table.host)
            assert entered is not None and isinstance(frame, Frame)
            assert frame.sender == entered["conn"]
    await table.assert_honest_room_works()
