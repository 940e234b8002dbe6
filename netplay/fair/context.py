"""What every mental-poker proof is bound to, and the Fiat-Shamir challenges derived from it.

A `ProofContext` names the table, the round and the shuffle epoch (0 is the deal, each
reshuffle the next). `challenge` hashes a proof's kind, its context, the party that made it,
the position it is about (a step in the chain of shuffles, or a deck position) and every input
and commitment of the proof, so a proof made for one table, round, epoch, party or position
fails everywhere else.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from netplay.fair.commit import LOCAL, encode_parts, require_text, require_uint
from netplay.fair.group import POINT_SIZE, Point, Scalar, hash_to_scalar

MAX_PARTY = 255
"""Parties are numbered 0..255: seats by their number, the host's key for its bots by BOT_PARTY."""
BOT_PARTY = MAX_PARTY


@dataclass(frozen=True)
class ProofContext:
    """The table, round and shuffle epoch a proof belongs to."""

    table: str
    round_no: int
    epoch: int

    def __post_init__(self) -> None:
        require_text(self.table, "table id", LOCAL)
        require_uint(self.round_no, "round number", LOCAL)
        require_uint(self.epoch, "shuffle epoch", LOCAL)

    def encode(self) -> bytes:
        """The unambiguous bytes hashed into every challenge."""
        return encode_parts("context", self.table, self.round_no, self.epoch)


def challenge(
    kind: str, context: ProofContext, party: int, position: int, items: Iterable[Point | Scalar]
) -> Scalar:
    """The Fiat-Shamir challenge of one proof: a hash of everything it is bound to."""
    require_uint(party, "party", LOCAL, MAX_PARTY)
    require_uint(position, "position", LOCAL)
    header = encode_parts(kind, party, position) + context.encode()
    return hash_to_scalar(kind, header, b"".join(item.data for item in items))


assert POINT_SIZE == 32  # items are fixed-size, so their plain concatenation is unambiguous
