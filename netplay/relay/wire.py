"""Room codes: how a relay names its rooms, and how people read and type them (PROTOCOL.md 2);
and the close codes that say a room is gone for good (PROTOCOL.md 6)."""

from __future__ import annotations

import hashlib
import secrets
from typing import Final

# Crockford base32: no I, L, O, U, so a code read aloud or copied by hand survives.
CROCKFORD_ALPHABET: Final = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ROOM_CODE_LENGTH: Final = 10  # 50 random bits
_CROCKFORD_ALIASES: Final = {"I": "1", "L": "1", "O": "0"}
_CROCKFORD_SET: Final = frozenset(CROCKFORD_ALPHABET)

# Why a relay removed a room, as opposed to 1001 (the relay stopping, a host reclaiming its
# room). After 4001 the room is gone for good: its seats need not try again.
CLOSE_HOST_GONE: Final = 4001  # its host did not come back within the grace
CLOSE_ROOM_IDLE: Final = 4002  # nobody used it for the idle limit (its host may open it again)
# Why a relay closed one conn at its host's word (`drop`): its seat came back on another
# connection. The client should not reconnect: it would take the seat from the newer one.
CLOSE_REPLACED: Final = 4003


def new_room_code() -> str:
    """A fresh room code of 50 random bits in canonical form (10 upper-case Crockford chars)."""
    return "".join(secrets.choice(CROCKFORD_ALPHABET) for _ in range(ROOM_CODE_LENGTH))


def room_code_for(host_secret: bytes) -> str:
    """The room code a host secret stands for: the first 50 bits of SHA-256("cardtui room" +
    secret), in canonical form. A relay that restarted (and forgot its rooms) recreates a room
    for whoever shows a secret its code stands for (docs/PROTOCOL.md 2)."""
    bits = int.from_bytes(hashlib.sha256(b"cardtui room" + host_secret).digest()[:7], "big") >> 6
    return "".join(CROCKFORD_ALPHABET[(bits >> (5 * i)) & 31]
                   for i in reversed(range(ROOM_CODE_LENGTH)))


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
