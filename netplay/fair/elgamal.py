"""ElGamal encryption of cards under the table's joint key, and re-encryption.

A card is the group element `card_point(card)` (a hash onto the group, so no card's point is a
known multiple of another's). A ciphertext of point M under joint key H with randomness r is
`(r*BASE, M + r*H)`; re-encrypting adds `(s*BASE, s*H)` for a fresh s, which changes every byte
while keeping the card. Decryption needs `x*A` for every party's secret x (see shares.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from netplay.fair.commit import Blame, FairnessError, require_bytes
from netplay.fair.group import BASE, POINT_SIZE, Point, Scalar, base_times, hash_to_point

CIPHERTEXT_SIZE = 2 * POINT_SIZE


@dataclass(frozen=True, slots=True)
class Ciphertext:
    """An encrypted card: `a = r*BASE` and `b = card + r*joint_key`."""

    a: Point
    b: Point

    def encode(self) -> bytes:
        """The 64-byte wire form: a then b."""
        return self.a.data + self.b.data

    @classmethod
    def decode(cls, data: object, blamed: Blame, name: str = "ciphertext") -> Ciphertext:
        """Parse 64 bytes from a peer, validating both points."""
        raw = require_bytes(data, name, blamed, CIPHERTEXT_SIZE)
        return cls(
            Point.decode(raw[:POINT_SIZE], blamed, name),
            Point.decode(raw[POINT_SIZE:], blamed, name),
        )

    def reencrypt(self, joint_key: Point, randomness: Scalar) -> Ciphertext:
        """The same card under fresh randomness."""
        return Ciphertext(self.a + base_times(randomness), self.b + joint_key * randomness)


@lru_cache(maxsize=256)
def card_point(card: str) -> Point:
    """The group element that stands for `card` (its text form, such as "QH" or "10S")."""
    return hash_to_point("card", card.encode())


def open_deck(cards: Sequence[str], joint_key: Point) -> tuple[Ciphertext, ...]:
    """The public starting point of a shuffle: each card encrypted with randomness 1."""
    return tuple(Ciphertext(BASE, card_point(card) + joint_key) for card in cards)


def encode_ciphertexts(ciphertexts: Sequence[Ciphertext]) -> bytes:
    """Ciphertexts one after another, 64 bytes each."""
    return b"".join(c.encode() for c in ciphertexts)


def decode_ciphertexts(data: object, count: int, blamed: Blame) -> tuple[Ciphertext, ...]:
    """Exactly `count` ciphertexts from `encode_ciphertexts` output, each validated."""
    raw = require_bytes(data, "ciphertexts", blamed, count * CIPHERTEXT_SIZE)
    return tuple(
        Ciphertext.decode(raw[i : i + CIPHERTEXT_SIZE], blamed)
        for i in range(0, len(raw), CIPHERTEXT_SIZE)
    )


class CardBook:
    """Recognises a decrypted point as one of a deck's cards (Hekata's copies share a point)."""

    def __init__(self, cards: Sequence[str]) -> None:
        self._cards = {card_point(card).data: card for card in set(cards)}

    def card(self, point: Point, blamed: Blame) -> str:
        """The card whose point is `point`, or FairnessError blaming whoever made it."""
        card = self._cards.get(point.data)
        if card is None:
            raise FairnessError(blamed, "a card opened to a value that is no card of this deck")
        return card
