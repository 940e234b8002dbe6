"""Round keys and the table's joint key, each public key with a Schnorr proof of knowledge.

Every party draws a fresh `RoundKey` per round and announces its public half with a proof that
it knows the secret, bound to the table, round and party (so nobody can announce a key derived
from others' keys, the rogue-key attack, or replay someone's announcement). The joint key is
the sum of every announced key: a card encrypted under it opens only with every party's share.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from netplay.fair.commit import LOCAL, Blame, FairnessError, require_bytes
from netplay.fair.context import ProofContext, challenge
from netplay.fair.group import POINT_SIZE, SCALAR_SIZE, Point, Scalar, base_times, point_sum

KEY_ANNOUNCEMENT_SIZE = POINT_SIZE + 2 * SCALAR_SIZE
_KIND = "round-key"


@dataclass(frozen=True)
class KeyAnnouncement:
    """A party's public round key and its proof of knowledge (challenge, response)."""

    public: Point
    proof_challenge: Scalar
    response: Scalar

    def encode(self) -> bytes:
        """The 96-byte wire form: public key, challenge, response."""
        return self.public.data + self.proof_challenge.data + self.response.data

    @classmethod
    def decode(cls, data: object, blamed: Blame) -> KeyAnnouncement:
        """Parse 96 bytes from a peer (the proof is checked by `verify`)."""
        raw = require_bytes(data, "key announcement", blamed, KEY_ANNOUNCEMENT_SIZE)
        return cls(
            Point.decode(raw[:32], blamed, "round key"),
            Scalar.decode(raw[32:64], blamed, "proof challenge"),
            Scalar.decode(raw[64:], blamed, "proof response"),
        )

    def verify(self, context: ProofContext, party: int) -> None:
        """Raise FairnessError blaming `party` unless the proof holds for this context and party."""
        commitment = base_times(self.response) - self.public * self.proof_challenge
        expected = challenge(_KIND, context, party, 0, [self.public, commitment])
        if expected != self.proof_challenge:
            raise FairnessError(party, "its round key's proof of knowledge does not hold")


@dataclass(frozen=True)
class RoundKey:
    """A party's secret round key and its public half."""

    secret: Scalar
    public: Point

    @classmethod
    def generate(cls) -> RoundKey:
        """A fresh random key."""
        secret = Scalar.random()
        return cls(secret, base_times(secret))

    def announce(self, context: ProofContext, party: int) -> KeyAnnouncement:
        """The public key with a Schnorr proof of knowledge bound to context and party."""
        nonce = Scalar.random()
        proof_challenge = challenge(_KIND, context, party, 0, [self.public, base_times(nonce)])
        return KeyAnnouncement(self.public, proof_challenge, nonce + proof_challenge * self.secret)

    def __repr__(self) -> str:
        return f"RoundKey(public={self.public.data.hex()[:16]}...)"


@dataclass(frozen=True)
class JointKey:
    """Every party's verified public round key, and their sum the cards are encrypted under."""

    publics: Mapping[int, Point]
    combined: Point

    @classmethod
    def from_announcements(
        cls, context: ProofContext, announcements: Mapping[int, KeyAnnouncement]
    ) -> JointKey:
        """Verify every party's announcement (bound to its party number) and add the keys."""
        if not announcements:
            raise FairnessError(LOCAL, "a joint key needs at least one party")
        for party, announcement in sorted(announcements.items()):
            announcement.verify(context, party)
        publics = {party: a.public for party, a in sorted(announcements.items())}
        return cls(publics, point_sum(list(publics.values())))
