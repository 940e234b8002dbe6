"""The wire format: MessagePack framing, field validation and room codes."""

from __future__ import annotations

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from netplay.messages import PROTOCOL_VERSION, RELAY_REQUESTS, Open, ProtocolError, Send
from netplay.messages import decode as decode_message
from netplay.messages import decode_map as decode
from netplay.messages import encode_map as encode
from netplay.relay.wire import format_room_code, new_room_code, parse_room_code


def test_round_trip_keeps_str_and_bytes_apart() -> None:
    msg = {"t": "send", "to": None, "body": b"\x00\xff"}
    assert decode(encode(msg), 1000) == msg


@given(st.binary(max_size=300))
def test_any_bytes_decode_or_raise_protocol_error(data: bytes) -> None:
    try:
        msg = decode(data, 200)
    except ProtocolError as err:
        assert err.code in {"bad_frame", "too_big"}
    else:
        assert isinstance(msg, dict) and isinstance(msg["t"], str)


def test_too_big_is_refused_before_parsing() -> None:
    with pytest.raises(ProtocolError) as info:
        decode(encode({"t": "x", "pad": b"a" * 100}), 50)
    assert info.value.code == "too_big"


@pytest.mark.parametrize(
    "value",
    [[1, 2], {"x": 1}, {"t": 5}, {1: 2}, {(1,): 2}],
    ids=["list", "no-t", "t-not-str", "int-key", "tuple-key"],
)
def test_non_messages_are_bad_frames(value: object) -> None:
    data = msgpack.packb(value, strict_types=False, use_bin_type=True)
    with pytest.raises(ProtocolError) as info:
        decode(data, 1000)
    assert info.value.code == "bad_frame"


def test_deep_nesting_is_a_bad_frame_not_a_crash() -> None:
    data = b"\x91" * 100_000 + b"\xc0"
    with pytest.raises(ProtocolError):
        decode(data, len(data))


def test_field_checks_type_and_presence() -> None:
    def read(msg: dict[str, object]) -> object:
        return decode_message(encode(msg), RELAY_REQUESTS)

    assert read({"t": "send", "to": 3, "body": b"x"}) == Send(to=3, body=b"x")
    assert read({"t": "send", "body": b"x"}) == Send(to=None, body=b"x")
    with pytest.raises(ProtocolError, match="needs a field 'body'"):
        read({"t": "send", "to": 3})
    with pytest.raises(ProtocolError, match="must be int, not bool"):
        read({"t": "send", "to": True, "body": b"x"})
    with pytest.raises(ProtocolError, match="must be str"):
        read({"t": "open", "v": 1, "room": b"x"})


def test_version_must_match() -> None:
    assert decode_message(encode({"t": "open", "v": PROTOCOL_VERSION}), RELAY_REQUESTS) == Open()
    for bad in ({"t": "open"}, {"t": "open", "v": 2}, {"t": "open", "v": True}):
        with pytest.raises(ProtocolError) as info:
            decode_message(encode(bad), RELAY_REQUESTS)
        assert info.value.code == "version"


def test_room_codes_are_typeable_in_any_form() -> None:
    code = new_room_code()
    assert len(code) == 10
    shown = format_room_code(code)
    assert shown.count("-") == 2 and shown.replace("-", "") == code
    assert parse_room_code(shown.lower()) == code
    assert parse_room_code(f"  {code[:5]} {code[5:]} ") == code
    assert parse_room_code("o1li-0000-00") == "0111000000"


@pytest.mark.parametrize("text", ["", "ABC", "K7QX-M2RD-9AZ", "UUUU-UUUU-UU", "K7QX!M2RD9A"])
def test_bad_room_codes_say_what_a_code_looks_like(text: str) -> None:
    with pytest.raises(ValueError, match="like K7QX-M2RD-9A"):
        parse_room_code(text)


def test_room_codes_differ() -> None:
    assert len({new_room_code() for _ in range(1000)}) == 1000
