"""The shapes and field types many kinds share: signed messages, card openings, seats, scores."""

from __future__ import annotations

from typing import Final, NamedTuple

from netplay.messages.fields import Bin, Digits, Either, Exactly, Int, ListOf, Real, Row, Text
from netplay.messages.limits import (
    MAX_HOST_PAYLOAD,
    MAX_NUMBER_DIGITS,
    MAX_SEATS,
    MAX_UINT32,
    SIGNED_MAX,
    SIGNED_MIN,
)


class Signed(NamedTuple):
    """A signed message in its wire form (FAIRNESS.md, "Messages")."""

    seq: int
    prev_hash: bytes
    payload: bytes
    signature: bytes


class Opening(NamedTuple):
    """A card opening in its wire form: `[epoch, position, card, opening]`."""

    epoch: int
    position: int
    card: str
    opening: bytes


class Pledge(NamedTuple):
    """A seat's commitment to its nonce for a later shuffle: `[round, epoch, commit]`."""

    round: int
    epoch: int
    commit: bytes


class Seen(NamedTuple):
    """The transcript digest a seat saw at the end of a round: `[round, digest]`."""

    round: int
    digest: bytes


class Proof(NamedTuple):
    """A seat's signed message that holds its nonce commitment: `[seat, SIGNED]`."""

    seat: int
    message: Signed


def signed_row(payload_most: int) -> Row:
    """A signed message whose payload is at most `payload_most` bytes."""
    return Row(Signed, (Int(0, SIGNED_MAX), Exactly(32), Bin(payload_most), Exactly(64)))


HOST_SIGNED: Final = signed_row(MAX_HOST_PAYLOAD)
OPENING: Final = Row(Opening, (Int(), Int(0, 4096), Text(8, 1), Exactly(32)))
ROUND: Final = Int(0, MAX_UINT32)
EPOCH: Final = Int(0, MAX_UINT32)  # a Zodiak round reshuffles as often as its stock runs out
SEAT: Final = Int(0, MAX_SEATS - 1)
SEATS: Final = ListOf(SEAT, MAX_SEATS)
CHAIN: Final = Int(-1, MAX_UINT32)
COUNT: Final = Int(0, MAX_UINT32)
SCORE: Final = Either((Int(SIGNED_MIN, SIGNED_MAX), Digits(MAX_NUMBER_DIGITS)))
SCORES: Final = ListOf(SCORE, MAX_SEATS)
IDENTITY: Final = Exactly(64)
DIGEST: Final = Exactly(32)
TOKEN: Final = Exactly(16)
SECRET: Final = Bin(64)  # an owner secret or a host secret as a peer sends it
GAME: Final = Text(16, 1)
WORD: Final = Text(20)  # a Zodiak sign, a bot kind
CODE: Final = Text(40, 1)
RATE: Final = Real(0.0, 1e12)

