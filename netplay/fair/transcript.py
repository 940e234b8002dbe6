"""Signed, numbered, hash-chained messages: nobody can forge, drop, replay or reorder a move.

Each sender numbers its own messages 0, 1, 2, ... and links each to the hash of its previous
one (the first links to `genesis_hash(room, sender)`), then signs (seq, prev_hash, payload)
with Ed25519. `MessageSigner` does this on the sending side; `TranscriptChain` checks every
sender's chain on the receiving side and keeps one running digest of everything it accepted,
which clients compare at the end of a round. Failures raise FairnessError naming the culprit:
a bad signature, a gap or a repeat is the relay's doing (only it stands between sender and
receiver); a correctly signed message that does not link is the sender's (it signed two
different histories).
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass

from netplay.fair.commit import (
    HASH_SIZE,
    LOCAL,
    RELAY,
    Blame,
    FairnessError,
    describe,
    encode_parts,
    require_bytes,
    require_text,
    require_uint,
    tagged_hash,
)
from netplay.fair.identity import SIGNATURE_SIZE, Identity, PublicIdentity

MAX_PAYLOAD = 1 << 20

Sender = int | str
"""A seat number or a named party such as "dealer"."""


def genesis_hash(room: str, sender: Sender) -> bytes:
    """The prev_hash of a sender's first message in a room (room must be unique per table)."""
    require_text(room, "room", RELAY)
    return tagged_hash("genesis", room, str(sender))


@dataclass(frozen=True)
class SignedMessage:
    """One message as sent: its number, the link to the previous one, the payload, the signature."""

    seq: int
    prev_hash: bytes
    payload: bytes
    signature: bytes

    def signed_bytes(self) -> bytes:
        """Exactly the bytes the signature covers."""
        return encode_parts("message", self.seq, self.prev_hash, self.payload)

    @property
    def digest(self) -> bytes:
        """The hash the sender's next message links to."""
        return tagged_hash("link", self.seq, self.prev_hash, self.payload)

    def to_wire(self) -> list[int | bytes]:
        """A MessagePack-friendly list form."""
        return [self.seq, self.prev_hash, self.payload, self.signature]

    @classmethod
    def from_wire(cls, obj: object, blamed: Blame = RELAY) -> SignedMessage:
        """Parse `to_wire` output from a peer, raising FairnessError for anything else."""
        if not isinstance(obj, (list, tuple)) or len(obj) != 4:
            raise FairnessError(blamed, "a signed message must be [seq, prev_hash, payload, sig]")
        seq, prev_hash, payload, signature = obj
        payload = require_bytes(payload, "payload", blamed)
        if len(payload) > MAX_PAYLOAD:
            raise FairnessError(blamed, f"a payload of {len(payload)} bytes is too large")
        return cls(
            require_uint(seq, "sequence number", blamed, 2**63 - 1),
            require_bytes(prev_hash, "previous hash", blamed, HASH_SIZE),
            payload,
            require_bytes(signature, "signature", blamed, SIGNATURE_SIZE),
        )


def sign_message(identity: Identity, seq: int, prev_hash: bytes, payload: bytes) -> SignedMessage:
    """Sign `payload` as message number `seq` following the message whose digest is prev_hash."""
    unsigned = SignedMessage.from_wire([seq, prev_hash, payload, bytes(SIGNATURE_SIZE)], LOCAL)
    return SignedMessage(seq, prev_hash, payload, identity.sign(unsigned.signed_bytes()))


def verify_message(sender: PublicIdentity, message: object, blamed: Blame = RELAY) -> SignedMessage:
    """Return `message` if it is well formed and signed by `sender`, else raise FairnessError."""
    if not isinstance(message, SignedMessage):
        message = SignedMessage.from_wire(message, blamed)
    else:
        SignedMessage.from_wire(message.to_wire(), blamed)
    if not isinstance(sender, PublicIdentity):
        raise FairnessError(blamed, "no public identity to check the signature with")
    if not sender.verify(message.signed_bytes(), message.signature):
        raise FairnessError(blamed, f"message {message.seq} was altered: its signature is wrong")
    return message


class MessageSigner:
    """The sending side of one chain: numbers, links and signs each payload in turn."""

    def __init__(self, identity: Identity, room: str, sender: Sender) -> None:
        self._identity = identity
        self._seq = 0
        self._head = genesis_hash(room, sender)

    def sign(self, payload: bytes) -> SignedMessage:
        """The next message of this chain carrying `payload`."""
        message = sign_message(self._identity, self._seq, self._head, payload)
        self._seq += 1
        self._head = message.digest
        return message


class TranscriptChain:
    """The receiving side: checks every sender's signatures, numbering and links in order."""

    def __init__(self, room: str, senders: Mapping[Sender, PublicIdentity]) -> None:
        self._room = require_text(room, "room", RELAY)
        self._keys = dict(senders)
        self._next_seq: dict[Sender, int] = {s: 0 for s in self._keys}
        self._heads = {s: genesis_hash(room, s) for s in self._keys}
        self._digest = tagged_hash("transcript", room)
        self._count = 0

    @property
    def digest(self) -> bytes:
        """A hash of every accepted message in acceptance order; equal views give equal digests."""
        return self._digest

    @property
    def count(self) -> int:
        """How many messages were accepted."""
        return self._count

    def next_seq(self, sender: Sender) -> int:
        """The sequence number expected next from `sender` (its message count so far)."""
        return self._next_seq[sender]

    def admit(self, sender: Sender, key: PublicIdentity) -> bool:
        """Accept messages from a new `sender`, signed by `key`, from now on; whether it is new.
        A sender already known keeps its key and its place: nobody is keyed twice."""
        if sender in self._keys:
            return False
        self._keys[sender] = key
        self._next_seq[sender] = 0
        self._heads[sender] = genesis_hash(self._room, sender)
        return True

    def rekey(self, sender: Sender, key: PublicIdentity) -> bool:
        """Key `sender` with `key` if it has sent nothing in this chain yet (a seat taken by
        someone new in a lobby); whether the key is `key` now."""
        if self._next_seq.get(sender, 0) != 0:
            return self._keys[sender] == key
        self._keys[sender] = key
        self._next_seq[sender] = 0
        self._heads[sender] = genesis_hash(self._room, sender)
        return True

    def append(self, sender: Sender, message: object) -> bytes:
        """Accept the next message from `sender` and return its payload, or raise FairnessError."""
        if not _is_sender(sender) or sender not in self._keys:
            raise FairnessError(RELAY, f"a message was stamped with unknown sender {sender!r:.40}")
        message = verify_message(self._keys[sender], message, RELAY)
        expected = self._next_seq[sender]
        who = describe(sender)
        if message.seq < expected:
            raise FairnessError(
                RELAY, f"message {message.seq} from {who} was replayed (next is {expected})"
            )
        if message.seq > expected:
            raise FairnessError(
                RELAY,
                f"{message.seq - expected} message(s) from {who} were dropped "
                f"(expected {expected}, got {message.seq})",
            )
        if not hmac.compare_digest(message.prev_hash, self._heads[sender]):
            raise FairnessError(
                sender, f"message {message.seq} does not link to its previous message"
            )
        self._next_seq[sender] = expected + 1
        link = message.digest  # a hash each time it is read: read once
        self._heads[sender] = link
        self._digest = tagged_hash("transcript", self._digest, str(sender), link)
        self._count += 1
        return message.payload


def _is_sender(value: object) -> bool:
    return isinstance(value, (int, str)) and not isinstance(value, bool)
