"""Every wire message decodes once at the boundary: a typed value, or a clear refusal (PROTOCOL.md)."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netplay.messages import (
    FAMILIES,
    HOST_BODIES,
    HOST_PAYLOADS,
    MAX_BODY_BYTES,
    MAX_HOST_PAYLOAD,
    RELAY_EVENTS,
    RELAY_REQUESTS,
    SEAT_BODIES,
    SEAT_PAYLOADS,
    Bin,
    Bool,
    Digits,
    Either,
    Family,
    Frame,
    Int,
    ListOf,
    Message,
    Nested,
    Opt,
    ProtocolError,
    Real,
    Row,
    Send,
    Spec,
    Text,
    Version,
    decode,
    decode_map,
    encode,
    encode_frame,
    encode_map,
    encode_send,
    max_size,
    read_frame,
    read_send,
    schema,
)
from netplay.messages.codec import compiled_fields, walk_fields
from netplay.messages.fields import Unusual
from netplay.relay.limits import RelayLimits

KINDS = [(family, cls) for family in FAMILIES for cls in family.kinds.values()]
KIND_IDS = [f"{family.name}:{cls.t}" for family, cls in KINDS]
REFUSALS = {"bad_frame", "too_big", "unknown_type", "version"}


def values_of(spec: Spec) -> st.SearchStrategy[Any]:
    """Values a field of `spec` may hold, from the smallest to its bounds."""
    if isinstance(spec, Version):
        return st.just(1)
    if isinstance(spec, Digits):
        return st.integers(-(10**40), 10**40).map(str)
    if isinstance(spec, Real):
        return st.integers(0, 10**6) | st.floats(spec.lo, spec.hi)
    if isinstance(spec, Int):
        return st.integers(spec.lo, spec.hi)
    if isinstance(spec, Bool):
        return st.booleans()
    if isinstance(spec, Text):
        return st.text(min_size=spec.least, max_size=min(spec.most, 50))
    if isinstance(spec, Bin):
        if spec.size is not None:
            return st.binary(min_size=spec.size, max_size=spec.size)
        return st.binary(max_size=min(spec.most, 300))
    if isinstance(spec, Opt):
        return st.none() | values_of(spec.spec)
    if isinstance(spec, ListOf):
        return st.lists(values_of(spec.item), max_size=min(spec.most, 5)).map(tuple)
    if isinstance(spec, Row):
        return st.tuples(*(values_of(s) for s in spec.specs)).map(lambda v: spec.make(*v))
    if isinstance(spec, Either):
        return st.one_of(*(values_of(s) for s in spec.specs))
    if isinstance(spec, Nested):
        return instances_of(spec.cls)
    raise AssertionError(f"no strategy for {spec}")


def instances_of(cls: type) -> st.SearchStrategy[Any]:
    """Valid values of a kind (or a nested map's class)."""
    return st.fixed_dictionaries({f.attr: values_of(f.spec) for f in schema(cls)}).map(
        lambda kw: cls(**kw))


# Anything MessagePack can hold, nested a little: the stuff of well-formed but wrong maps.
leaf = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1), st.floats(),
                 st.text(max_size=30), st.binary(max_size=70))
anything = st.recursive(leaf, lambda inner: st.lists(inner, max_size=4)
                        | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=10)


@st.composite
def wrong_maps(draw: st.DrawFn, cls: type[Message]) -> dict[str, Any]:
    """A map of kind `cls`: its own keys (and strangers) holding anything at all."""
    keys = [f.key for f in schema(cls)] + ["x", "from", "pad", "t2"]
    fields = draw(st.dictionaries(st.sampled_from(keys), anything, max_size=len(keys)))
    return {"t": cls.t, **fields}


@st.composite
def mutated(draw: st.DrawFn, cls: type[Message]) -> dict[str, Any]:
    """A valid message of kind `cls` with one field replaced, dropped or added."""
    msg = msgpack.unpackb(encode(draw(instances_of(cls))), raw=False)
    keys = [f.key for f in schema(cls)]
    how = draw(st.sampled_from(["replace", "drop", "add"] if keys else ["add"]))
    if how == "add":
        msg[draw(st.sampled_from(["x", "pad", "t2", ""]))] = draw(anything)
    elif how == "drop":
        msg.pop(draw(st.sampled_from(keys)), None)
    else:
        msg[draw(st.sampled_from(keys))] = draw(anything)
    return msg


def refused_or_kind(data: bytes, family: Family[Any], cls: type[Message] | None) -> None:
    """Decoding `data` gives a value of `cls` that encodes back, or refuses with a clear code."""
    try:
        msg = decode(data, family, 1 << 22)
    except ProtocolError as err:
        assert err.code in REFUSALS, err
        if cls is not None:  # a map of a known kind is a bad frame, or a bad version
            assert err.code in ({"bad_frame", "version"} if any(
                isinstance(f.spec, Version) for f in schema(cls)) else {"bad_frame"}), err
        return
    assert cls is None or type(msg) is cls
    assert decode(encode(msg), family, 1 << 22) == msg


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=400), family=st.sampled_from(FAMILIES))
def test_random_bytes_decode_to_a_kind_or_a_clear_refusal(data: bytes, family: Family[Any]) -> None:
    refused_or_kind(data, family, None)


@pytest.mark.parametrize(("family", "cls"), KINDS, ids=KIND_IDS)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_wrong_maps_of_every_kind_are_bad_frames(family: Family[Any], cls: type[Message],
                                                 data: st.DataObject) -> None:
    msg = data.draw(st.one_of(wrong_maps(cls), mutated(cls)))
    refused_or_kind(encode_map(msg), family, cls)


@pytest.mark.parametrize(("family", "cls"), KINDS, ids=KIND_IDS)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_every_kind_round_trips_within_its_size_bound(family: Family[Any], cls: type[Message],
                                                      data: st.DataObject) -> None:
    msg = data.draw(instances_of(cls))
    packed = encode(msg)
    assert decode(packed, family, 1 << 22) == msg
    assert len(packed) <= max_size(cls)


@given(sender=st.integers(0, 2**31), body=st.binary(max_size=300))
def test_the_relays_frame_shortcut_packs_what_encode_packs(sender: int, body: bytes) -> None:
    assert encode_frame(sender, body) == encode(Frame(sender=sender, body=body))


@settings(max_examples=300, deadline=None)
@given(data=st.data(), cls=st.sampled_from([Send, Frame]))
def test_the_per_frame_shortcuts_read_what_decode_reads(data: st.DataObject,
                                                        cls: type[Message]) -> None:
    # The relay's `send` and a client's `frame` skip the generic walk; on any map they give
    # the value decode gives, or None, and then decode refuses it or reads another kind.
    msg = data.draw(st.one_of(wrong_maps(cls), mutated(cls), instances_of(cls).map(
        lambda m: msgpack.unpackb(encode(m), raw=False))))
    packed = encode_map(msg)
    family, shortcut = ((RELAY_REQUESTS, read_send) if cls is Send
                        else (RELAY_EVENTS, read_frame))
    fast = shortcut(decode_map(packed, 1 << 22), len(packed))
    try:
        slow = decode(packed, family, 1 << 22)
    except ProtocolError:
        assert fast is None
        return
    assert fast is None or fast == slow


@pytest.mark.parametrize(("family", "cls"), KINDS, ids=KIND_IDS)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_the_compiled_readers_take_exactly_what_the_generic_walk_takes(
        family: Family[Any], cls: type[Message], data: st.DataObject) -> None:
    # Every decode reads a map with its kind's compiled reader first; what that reader does not
    # take goes through the generic walk, which says what is wrong. So the two must agree: the
    # same value for a map the walk reads, `Unusual` for every map the walk refuses.
    msg = data.draw(st.one_of(wrong_maps(cls), mutated(cls), instances_of(cls).map(
        lambda m: msgpack.unpackb(encode(m), raw=False))))
    try:
        slow = walk_fields(cls, msg, f"'{cls.t}'", top=True)
    except ProtocolError as err:
        with pytest.raises(Unusual):
            compiled_fields(cls, top=True)(msg)
        with pytest.raises(ProtocolError) as decoded:  # and decode says what the walk says
            decode(encode_map(msg), family, 1 << 22)
        too_long = f"{len(encode_map(msg))} bytes is longer than any '{cls.t}' can be"
        assert (decoded.value.code, decoded.value.message) in {
            (err.code, err.message), ("bad_frame", too_long)}
        return
    assert compiled_fields(cls, top=True)(msg) == slow


@given(body=st.binary(max_size=300), to=st.none() | st.integers(-(2**63), 2**63 - 1))
def test_the_clients_send_shortcut_packs_what_encode_packs(body: bytes, to: int | None) -> None:
    assert encode_send(body, to) == encode(Send(body=body, to=to))


def test_unknown_fields_are_refused_not_carried_along() -> None:
    padded = msgpack.unpackb(encode(HOST_PAYLOADS.kinds["reveal"](round=1, epoch=0, seats=(0,))))
    for pad in (b"x", b"x" * 40_000):  # issue 10: a padded reveal must not reach a shuffle
        padded["pad"] = pad
        with pytest.raises(ProtocolError, match="has no field 'pad'|longer than any") as info:
            decode(encode_map(padded), HOST_PAYLOADS)
        assert info.value.code == "bad_frame"


def test_repeated_keys_cannot_pad_a_message_past_its_bound() -> None:
    body = encode(SEAT_PAYLOADS.kinds["nonce_commit"](round=1, epoch=0, commit=bytes(32)))
    # A map that names `round` thousands of times still decodes to one small value.
    padded = b"\xdf" + (3 + 5000).to_bytes(4, "big") + body[1:] + b"\xa5round\x01" * 5000
    with pytest.raises(ProtocolError) as info:
        decode(padded, SEAT_PAYLOADS)
    assert info.value.code == "bad_frame"


def test_every_message_the_host_builds_fits_the_relay() -> None:
    """Issue 10: the host knows the size of each of its messages in advance."""
    for cls in HOST_PAYLOADS.kinds.values():
        assert max_size(cls) <= MAX_HOST_PAYLOAD, cls.t
    for family in (HOST_BODIES, SEAT_BODIES):
        for cls in family.kinds.values():
            assert max_size(cls) <= MAX_BODY_BYTES, cls.t
    send_envelope = 30  # {"t": "send", "to": ..., "body": bin32 header}
    assert MAX_BODY_BYTES + send_envelope <= RelayLimits().max_frame_bytes
