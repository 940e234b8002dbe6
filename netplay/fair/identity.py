"""Player identities (an Ed25519 signing key and a Curve25519 box key) and sealed cards.

`Identity` is a seat's or the dealer's secret keys, made from a 32-byte seed or generated;
`PublicIdentity` is the 64 bytes exchanged in the lobby. `seal_card` encrypts one card with its
opening from the dealer to one seat (a libsodium Box, so the relay sees only ciphertext and
nobody but the dealer can make one); `open_card` decrypts and checks it is for this room and
round. Bad input raises FairnessError, never another exception.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property

from nacl.exceptions import CryptoError
from nacl.public import Box, PrivateKey, PublicKey
from nacl.signing import SigningKey, VerifyKey

from netplay.fair.commit import (
    DEALER,
    LOCAL,
    RELAY,
    SECRET_SIZE,
    Blame,
    CardOpening,
    FairnessError,
    check_context,
    decode_parts,
    encode_parts,
    require_bytes,
    tagged_hash,
)

KEY_SIZE = 32
SIGNATURE_SIZE = 64
PUBLIC_IDENTITY_SIZE = 2 * KEY_SIZE

# nacl raises its own TypeError/ValueError subclasses besides CryptoError for malformed keys.
_NACL_ERRORS = (CryptoError, TypeError, ValueError)


@dataclass(frozen=True)
class PublicIdentity:
    """The public half of an Identity: what a seat announces in the lobby."""

    sign_key: bytes
    box_key: bytes

    def to_bytes(self) -> bytes:
        """The 64-byte wire form: signing key then box key."""
        return self.sign_key + self.box_key

    @classmethod
    def from_bytes(cls, data: object, blamed: Blame = RELAY) -> PublicIdentity:
        """Parse the 64-byte wire form, raising FairnessError for anything else."""
        raw = require_bytes(data, "public identity", blamed, PUBLIC_IDENTITY_SIZE)
        return cls(raw[:KEY_SIZE], raw[KEY_SIZE:])

    def fingerprint(self) -> str:
        """A short text people can compare aloud to know they see the same keys."""
        digest = tagged_hash("fingerprint", self.to_bytes()).hex()[:16]
        return "-".join(digest[i : i + 4] for i in range(0, 16, 4))

    @cached_property
    def verify_key(self) -> VerifyKey:
        """The Ed25519 key that checks this identity's signatures."""
        return VerifyKey(self.sign_key)

    def verify(self, data: bytes, signature: bytes) -> bool:
        """Whether `signature` is this identity's Ed25519 signature of `data`."""
        try:
            self.verify_key.verify(data, signature)
        except _NACL_ERRORS:
            return False
        return True


@dataclass(frozen=True)
class Identity:
    """A party's secret keys, both derived from one 32-byte seed so one secret is saved."""

    seed: bytes = field(repr=False)

    def __post_init__(self) -> None:
        require_bytes(self.seed, "identity seed", LOCAL, SECRET_SIZE)

    @classmethod
    def generate(cls) -> Identity:
        """A new identity from the operating system's CSPRNG."""
        return cls(PrivateKey.generate().encode())

    @cached_property
    def signing_key(self) -> SigningKey:
        """The Ed25519 signing key (separate from the box key by domain-separated derivation)."""
        return SigningKey(hashlib.sha256(b"cardtui/identity/sign" + self.seed).digest())

    @cached_property
    def box_key(self) -> PrivateKey:
        """The Curve25519 key that opens cards sealed to this identity."""
        return PrivateKey(hashlib.sha256(b"cardtui/identity/box" + self.seed).digest())

    @cached_property
    def public(self) -> PublicIdentity:
        """The public identity to announce in the lobby."""
        return PublicIdentity(
            self.signing_key.verify_key.encode(), self.box_key.public_key.encode()
        )

    def sign(self, data: bytes) -> bytes:
        """The 64-byte Ed25519 signature of `data`."""
        return self.signing_key.sign(data).signature

    def box_with(self, peer: PublicIdentity, blamed: Blame = RELAY) -> Box:
        """The authenticated encryption box between this identity and `peer` (cached)."""
        boxes: dict[bytes, Box] = self.__dict__.setdefault("_boxes", {})
        box = boxes.get(peer.box_key)
        if box is None:
            try:
                box = Box(self.box_key, PublicKey(peer.box_key))
            except _NACL_ERRORS:
                raise FairnessError(blamed, "the peer's box key is not a usable key") from None
            boxes[peer.box_key] = box
        return box


CARD_FIELD_SIZE = 16
"""A sealed card's text is padded to this many bytes, so no card is longer than another ("10S")."""


def seal_card(
    dealer: Identity, seat: PublicIdentity, room: str, round_no: int, card: CardOpening
) -> bytes:
    """Encrypt one card and its opening from the dealer to one seat, bound to room and round."""
    check_context(room, round_no, card.epoch, DEALER)
    text = card.card.encode("utf-8")
    if len(text) > CARD_FIELD_SIZE:
        raise FairnessError(LOCAL, f"a card's text must be at most {CARD_FIELD_SIZE} bytes")
    padding = bytes(CARD_FIELD_SIZE - len(text))
    # Signed inside the box: a Box key is shared by both ends, so without the dealer's
    # signature the seat could have made the box itself and it would prove nothing.
    signature = dealer.sign(_sealed_card_statement(seat, room, round_no, card))
    plaintext = encode_parts("sealed-card", room, round_no, *card.to_wire(), padding, signature)
    return bytes(dealer.box_with(seat, DEALER).encrypt(plaintext))


def _sealed_card_statement(
    seat: PublicIdentity, room: str, round_no: int, card: CardOpening
) -> bytes:
    """What the dealer signs inside a sealed card: the card, where it lies, and who gets it."""
    return encode_parts("sealed-card-signature", seat.to_bytes(), room, round_no, *card.to_wire())


def open_card(
    seat: Identity,
    dealer: PublicIdentity,
    sealed: object,
    room: str,
    round_no: int,
    blamed: Blame = DEALER,
) -> CardOpening:
    """Decrypt a sealed card from `dealer`, raising FairnessError unless it is sound and ours."""
    ciphertext = require_bytes(sealed, "sealed card", blamed)
    if not isinstance(dealer, PublicIdentity):
        raise FairnessError(blamed, "the dealer's public identity is missing")
    try:
        plaintext = seat.box_with(dealer, blamed).decrypt(ciphertext)
    except _NACL_ERRORS:
        raise FairnessError(
            blamed, "a sealed card could not be opened with the dealer's key"
        ) from None
    parts = decode_parts(plaintext, blamed)
    if (len(parts) != 9 or parts[0] != "sealed-card" or not _pads(parts[5], parts[7])
            or not isinstance(parts[8], bytes)):
        raise FairnessError(blamed, "a sealed card has the wrong layout")
    if parts[1] != room or parts[2] != round_no:
        raise FairnessError(
            blamed, f"a sealed card was for room {parts[1]!r:.40} round {parts[2]!r:.20}"
        )
    card = CardOpening.from_wire(parts[3:7], blamed)
    statement = _sealed_card_statement(seat.public, room, round_no, card)
    if not dealer.verify(statement, parts[8]):
        raise FairnessError(blamed, "a sealed card does not carry the dealer's signature")
    return card


def _pads(card: object, padding: object) -> bool:
    """Whether `padding` is the zero bytes that make `card`'s text CARD_FIELD_SIZE long."""
    return (isinstance(card, str) and isinstance(padding, bytes)
            and padding == bytes(CARD_FIELD_SIZE - len(card.encode("utf-8"))))
