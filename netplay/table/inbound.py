"""What the host takes from a conn: each body and each signed payload, decoded once into its kind.

Every seat-to-host body is decoded here into one of `SEAT_BODIES` (netplay/messages), and every
payload a seat signs into one of `SEAT_PAYLOADS`, before any handler sees it: a field missing,
of the wrong type, out of bounds or unknown is a `bad_frame` and changes nothing. Whatever a
peer sends that the host copies into its own messages (a seat's signed move or nonce, forwarded
verbatim) has passed these bounds, so every message the host builds has a size it knows in
advance (docs/PROTOCOL.md G8). Unknown fields are refused, not ignored: a field the host would
carry along unread is exactly how a peer could pad the host's messages.
"""

from __future__ import annotations

from typing import Any, Final

from netplay.messages import (
    SEAT_BODIES,
    SEAT_PAYLOADS,
    Family,
    Message,
    MpShares,
    MpShuffle,
    ProtocolError,
    SeatBody,
    SeatPayload,
    decode,
    from_map,
)

MAX_SIGNED_PAYLOAD: Final = 4096  # a seat's move or nonce: a long Zodiak run's openings fit thrice
MAX_SHUFFLE_PAYLOAD: Final = 10_600  # a 52-card mp_shuffle (deck and proof: 10,240 bytes), or
# the mp_shares of a whole deal (at most 64 positions of 96 bytes)


class KindFields(dict[str, frozenset[str]]):
    """The keys of each kind of a family (with `t`), and the family that decodes them."""

    def __init__(self, family: Family[Any]) -> None:
        super().__init__(family.fields())
        self.family = family


FIELDS: Final = KindFields(SEAT_BODIES)
SIGNED_FIELDS: Final = KindFields(SEAT_PAYLOADS)


def read_body(body: bytes) -> SeatBody:
    """A seat's frame body as its kind, or ProtocolError."""
    return decode(body, SEAT_BODIES)


def read_payload(payload: bytes, mental: bool) -> SeatPayload:
    """A seat's signed payload as its kind, within the size its kind may have, or ProtocolError."""
    size = len(payload)
    if size > (MAX_SHUFFLE_PAYLOAD if mental else MAX_SIGNED_PAYLOAD):
        raise ProtocolError("bad_frame", f"a signed payload is at most {MAX_SIGNED_PAYLOAD}"
                            f" bytes (a shuffle's, {MAX_SHUFFLE_PAYLOAD})")
    body = decode(payload, SEAT_PAYLOADS, MAX_SHUFFLE_PAYLOAD)
    if not isinstance(body, MpShuffle | MpShares) and size > MAX_SIGNED_PAYLOAD:
        raise ProtocolError("bad_frame", f"a signed payload is at most {MAX_SIGNED_PAYLOAD}"
                            " bytes")
    return body


def check_fields(msg: dict[str, Any], known: KindFields) -> Message:
    """An unpacked map as its kind of `known`'s family: unknown fields, types and bounds refused."""
    result: Message = from_map(msg, known.family)
    return result


def check_signed_payload(body: dict[str, Any]) -> SeatPayload:
    """An unpacked signed payload as its kind, or ProtocolError."""
    return from_map(body, SEAT_PAYLOADS)
