"""MessagePack framing, message validation and room codes shared by the relay and game layers."""

from __future__ import annotations

import secrets
from typing import Any, Final, TypeVar

import msgpack

PROTOCOL_VERSION: Final = 1

# Crockford base32: no I, L, O, U, so a code read aloud or copied by hand survives.
CROCKFORD_ALPHABET: Final = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ROOM_CODE_LENGTH: Final = 10  # 50 random bits
_CROCKFORD_ALIASES: Final = {"I": "1", "L": "1", "O": "0"}
_CROCKFORD_SET: Final = frozenset(CROCKFORD_ALPHABET)

T = TypeVar("T")

# One instance is reused: building a Packer per frame costs more than packing a small map.
_packer = msgpack.Packer(use_bin_type=True, autoreset=True)


class ProtocolError(Exception):
    """A message that breaks the protocol, with a machine-readable code and a readable reason."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def encode(msg: dict[str, Any]) -> bytes:
    """Pack one message map into MessagePack bytes (str as str, bytes as bin)."""
    return _packer.pack(msg)


def decode(data: bytes, max_size: int) -> dict[str, Any]:
    """Unpack one MessagePack message map with a string field `t`, or raise ProtocolError."""
    if len(data) > max_size:
        raise ProtocolError("too_big", f"frame is {len(data)} bytes; the limit is {max_size}")
    try:
        msg = msgpack.unpackb(data, raw=False, strict_map_key=True, use_list=True)
    except (ValueError, TypeError, OverflowError, msgpack.UnpackException) as exc:
        raise ProtocolError("bad_frame", f"not a MessagePack value: {exc}") from None
    if not isinstance(msg, dict):
        raise ProtocolError("bad_frame", "a message must be a MessagePack map")
    if not isinstance(msg.get("t"), str):
        raise ProtocolError("bad_frame", "a message needs a string field 't'")
    return msg


def field(msg: dict[str, Any], name: str, kind: type[T], optional: bool = False) -> T:
    """Return `msg[name]` checked to be of `kind` (None allowed when optional), else ProtocolError."""
    value = msg.get(name)
    if value is None:
        if optional:
            return None  # type: ignore[return-value]
        raise ProtocolError("bad_frame", f"'{msg.get('t')}' needs a field '{name}'")
    # bool is an int subclass; a True where a number belongs is a bug or an attack.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ProtocolError(
            "bad_frame",
            f"field '{name}' of '{msg.get('t')}' must be {kind.__name__}, "
            f"not {type(value).__name__}",
        )
    return value


def check_version(msg: dict[str, Any]) -> None:
    """Raise ProtocolError('version') unless the message carries `v` equal to PROTOCOL_VERSION."""
    version = msg.get("v")
    if version != PROTOCOL_VERSION or isinstance(version, bool):
        raise ProtocolError(
            "version",
            f"this relay speaks protocol version {PROTOCOL_VERSION}, the message says {version!r};"
            " update cardtui on both ends",
        )


def new_room_code() -> str:
    """A fresh room code of 50 random bits in canonical form (10 upper-case Crockford chars)."""
    return "".join(secrets.choice(CROCKFORD_ALPHABET) for _ in range(ROOM_CODE_LENGTH))


def format_room_code(code: str) -> str:
    """The grouped form people read and type, e.g. 'K7QX-M2RD-9A'."""
    return "-".join(code[i : i + 4] for i in range(0, len(code), 4))


def parse_room_code(text: str) -> str:
    """Canonical room code from what a person typed (any case, dashes or spaces), or ValueError."""
    cleaned = "".join(text.split()).replace("-", "").upper()
    cleaned = "".join(_CROCKFORD_ALIASES.get(ch, ch) for ch in cleaned)
    if len(cleaned) != ROOM_CODE_LENGTH or not _CROCKFORD_SET.issuperset(cleaned):
        raise ValueError(
            f"{text!r} is not a room code: expected {ROOM_CODE_LENGTH} letters and digits"
            " like K7QX-M2RD-9A"
        )
    return cleaned
