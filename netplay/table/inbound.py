"""What the host takes from a conn: each message's fields, bounded by type and length.

Whatever a peer sends that the host copies into its own messages (a seat's signed move or nonce,
forwarded verbatim) passes these checks first, so every message the host builds has a size it
knows in advance (docs/PROTOCOL.md G1). Unknown fields are refused, not ignored: a field the
host would carry along unread is exactly how a peer could pad the host's messages.
"""

from __future__ import annotations

from typing import Any

from netplay.messages import ProtocolError

MAX_SIGNED_PAYLOAD = 4096  # a seat's move or nonce: a long Zodiak run's openings fit thrice
MAX_SHUFFLE_PAYLOAD = 10_400  # a 52-card mp_shuffle (deck and proof: 10,144 bytes), or the
# mp_shares of a whole deal (at most 64 positions of 96 bytes)
MAX_PROOF = 64
MAX_RAW_NAME = 1000  # kept: the first MAX_NAME printable characters
MAX_RAW_CHAT = 1200  # kept: MAX_CHAT printable characters
MAX_POSITION = 2**31 - 1

FIELDS: dict[str, frozenset[str]] = {
    "join": frozenset({"t", "name", "id", "watch", "sign", "token", "owner", "c", "n", "proof"}),
    "sync": frozenset({"t", "c", "n"}),
    "chat": frozenset({"t", "text"}),
    "start": frozenset({"t", "owner"}),
    "ready": frozenset({"t", "ready"}),
    "seat_bot": frozenset({"t", "owner", "seat", "kind"}),
    "s": frozenset({"t", "c", "m"}),
}
SIGNED_FIELDS: dict[str, frozenset[str]] = {
    "move": frozenset({"t", "round", "n", "move", "open", "epoch"}),
    "nonce_commit": frozenset({"t", "round", "epoch", "commit"}),
    "nonce": frozenset({"t", "round", "epoch", "nonce", "next", "seen"}),
    "mp_key": frozenset({"t", "round", "epoch", "key"}),
    "mp_shuffle": frozenset({"t", "round", "epoch", "step", "deck"}),
    "mp_shares": frozenset({"t", "round", "epoch", "positions", "shares"}),
    "mp_handover": frozenset({"t", "round", "key"}),
    "mp_lost": frozenset({"t", "round"}),
}
_LENGTHS = {"name": MAX_RAW_NAME, "sign": 20, "text": MAX_RAW_CHAT, "kind": 20,
            "token": 16, "owner": 64, "proof": MAX_PROOF, "id": 64, "key": 96}
_POSITIONS = ("c", "n", "seat", "round", "epoch")


def check_fields(msg: dict[str, Any], known: dict[str, frozenset[str]]) -> None:
    """Refuse a message with a field its type does not have, or a str/bin/int out of bounds."""
    allowed = known.get(msg["t"])
    if allowed is None:
        raise ProtocolError("unknown_type", f"unknown message type {msg['t'][:40]!r}")
    unknown = [k for k in msg if k not in allowed]
    if unknown:
        raise ProtocolError("bad_frame", f"'{msg['t']}' has no field {str(unknown[0])[:40]!r}")
    for name, limit in _LENGTHS.items():
        value = msg.get(name)
        if isinstance(value, (str, bytes)) and len(value) > limit:
            raise ProtocolError("bad_frame", f"field '{name}' is longer than {limit}")
    for name in _POSITIONS:
        value = msg.get(name)
        if type(value) is int and not -1 <= value <= MAX_POSITION:
            raise ProtocolError("bad_frame", f"field '{name}' is out of range")


def check_signed_payload(body: dict[str, Any]) -> None:
    """Refuse a seat's signed move or nonce unless every field has its type and size."""
    check_fields(body, SIGNED_FIELDS)
    kind = body["t"]
    if kind == "move":
        if not isinstance(body.get("move"), str) or not isinstance(body.get("open"), list):
            raise ProtocolError("bad_frame", "a move has a str 'move' and a list 'open'")
        return
    for name in ("commit", "nonce"):
        if name in SIGNED_FIELDS[kind] and not _is_bin32(body.get(name)):
            raise ProtocolError("bad_frame", f"'{name}' must be 32 bytes")
    if kind == "nonce":
        upcoming, seen = body.get("next"), body.get("seen")
        if not (isinstance(upcoming, list) and len(upcoming) <= 2 and all(
                isinstance(i, list) and len(i) == 3 and all(_is_position(v) for v in i[:2])
                and _is_bin32(i[2]) for i in upcoming)):
            raise ProtocolError("bad_frame", "'next' is at most two [round, epoch, commit]")
        if seen is not None and not (isinstance(seen, list) and len(seen) == 2
                                     and _is_position(seen[0]) and _is_bin32(seen[1])):
            raise ProtocolError("bad_frame", "'seen' is nil or [round, 32-byte digest]")


def _is_bin32(value: Any) -> bool:
    return isinstance(value, bytes) and len(value) == 32


def _is_position(value: Any) -> bool:
    return type(value) is int and 0 <= value <= MAX_POSITION
