"""Decryption shares with Chaum-Pedersen proofs, and opening a card from all of them.

To open ciphertext (a, b), every party i other than the card's owner publishes `d_i = x_i*a`
with a proof that log_BASE(X_i) = log_a(d_i) for its announced round key X_i, bound to the
table, round, epoch, party and deck position. The owner adds its own `x*a` privately, so only it
learns `b - sum(d_i)`, the card. A face-up card is opened with every party's share, public.
A process holding two views of one table checks each share once: `CHECKED` keeps a digest of
every share this process has verified and of everything its check depended on.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from netplay.fair.commit import LOCAL, Blame, FairnessError, encode_parts, require_bytes
from netplay.fair.context import ProofContext, challenge
from netplay.fair.elgamal import CardBook, Ciphertext
from netplay.fair.group import (
    POINT_SIZE,
    SCALAR_SIZE,
    InvalidPoint,
    Point,
    Scalar,
    base_times,
    point_sum,
)
from netplay.fair.keys import RoundKey

SHARE_SIZE = POINT_SIZE + 2 * SCALAR_SIZE
_KIND = "decryption-share"
CHECKED: OrderedDict[bytes, None] = OrderedDict()
CHECKED_KEPT = 4096


@dataclass(frozen=True)
class DecryptionShare:
    """One party's `x*a` for one ciphertext, with its Chaum-Pedersen proof."""

    value: Point
    proof_challenge: Scalar
    response: Scalar

    def encode(self) -> bytes:
        """The 96-byte wire form: share, challenge, response."""
        return self.value.data + self.proof_challenge.data + self.response.data

    @classmethod
    def decode(cls, data: object, blamed: Blame) -> DecryptionShare:
        """Parse 96 bytes from a peer (the proof is checked by `verify`)."""
        raw = require_bytes(data, "decryption share", blamed, SHARE_SIZE)
        return cls(  # `verify` multiplies the share, which refuses a point outside the group
            Point.decode_for_product(raw[:32], blamed, "decryption share"),
            Scalar.decode(raw[32:64], blamed, "proof challenge"),
            Scalar.decode(raw[64:], blamed, "proof response"),
        )

    def verify(
        self,
        public: Point,
        ciphertext: Ciphertext,
        context: ProofContext,
        party: int,
        position: int,
    ) -> None:
        """Raise FairnessError blaming `party` unless this is its true share of `ciphertext`."""
        statement = hashlib.sha256(encode_parts(
            _KIND, context.encode(), party, position, public.data, ciphertext.encode(),
            self.encode())).digest()
        if statement in CHECKED:
            return
        c, s = self.proof_challenge, self.response
        on_base = base_times(s) - public * c
        try:
            on_a = ciphertext.a * s - self.value * c
        except InvalidPoint:
            raise FairnessError(party, "its decryption share is not a valid group element"
                                ) from None
        items = [public, ciphertext.a, ciphertext.b, self.value, on_base, on_a]
        if challenge(_KIND, context, party, position, items) != c:
            raise FairnessError(
                party, f"its decryption share for deck position {position} does not hold"
            )
        CHECKED[statement] = None
        while len(CHECKED) > CHECKED_KEPT:
            CHECKED.popitem(last=False)


def make_share(
    key: RoundKey, ciphertext: Ciphertext, context: ProofContext, party: int, position: int
) -> DecryptionShare:
    """This party's share of `ciphertext` at `position`, with its proof."""
    value = ciphertext.a * key.secret
    nonce = Scalar.random()
    items = [key.public, ciphertext.a, ciphertext.b, value, base_times(nonce), ciphertext.a * nonce]
    c = challenge(_KIND, context, party, position, items)
    return DecryptionShare(value, c, nonce + c * key.secret)


def own_share(key: RoundKey, ciphertext: Ciphertext) -> Point:
    """A party's own share of `ciphertext`, which the card's owner never publishes."""
    return ciphertext.a * key.secret


def open_card(ciphertext: Ciphertext, shares: Sequence[Point], book: CardBook) -> str:
    """The card inside `ciphertext`, given every party's verified share, the opener's included."""
    return book.card(ciphertext.b - point_sum(list(shares)), LOCAL)
