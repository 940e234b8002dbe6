"""Commitments and the provably fair shuffle: hashes, seed and nonce commitments, deck order.

Everything here is a pure function of its arguments (no I/O, no clock); the only randomness
is `new_secret()`. Every function that reads data a peer sent answers bad input with
`FairnessError(blamed, reason)`, never with another exception. See docs/FAIRNESS.md.

- `tagged_hash(tag, *parts)` is SHA-256 over an unambiguous, domain-separated encoding.
- `commit(data)`, `seed_commitment(...)`, `nonce_commitment(...)` hide a secret until revealed.
- `shuffle_order(seed, nonces, n)` is an unbiased Fisher-Yates shuffle driven by HMAC-SHA256.
- `card_commitment(...)` binds a card to its deck position; `DeckCommitment` is the dealer's
  secret side of one shuffle epoch and `verify_opening` the check any seat runs.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

SECRET_SIZE = 32
HASH_SIZE = 32
MAX_UINT32 = 2**32 - 1
MAX_DECK = 4096
MAX_TEXT = 256

DEALER = "dealer"
RELAY = "relay"
TABLE = "table"
LOCAL = "local"

Blame = str | int
"""Who is at fault: a seat number, DEALER, RELAY, or LOCAL (this process passed bad arguments)."""

_PREFIX = "cardtui/fairness/v1"


class FairnessError(ValueError):
    """A check that failed, naming who is to blame and what went wrong in words."""

    def __init__(self, blamed: Blame, reason: str) -> None:
        super().__init__(f"{describe(blamed)}: {reason}")
        self.blamed = blamed
        self.reason = reason


def describe(who: Blame) -> str:
    """Name a party for a person: 'seat 2', 'the dealer', 'the relay'."""
    if isinstance(who, int) and not isinstance(who, bool):
        return f"seat {who}"
    return f"the {who}"


def require_bytes(value: object, name: str, blamed: Blame, size: int | None = None) -> bytes:
    """Return `value` if it is bytes (of exactly `size` when given), else raise FairnessError."""
    if not isinstance(value, bytes):
        raise FairnessError(blamed, f"{name} must be bytes, got {type(value).__name__}")
    if size is not None and len(value) != size:
        raise FairnessError(blamed, f"{name} must be {size} bytes, got {len(value)}")
    return value


def require_uint(value: object, name: str, blamed: Blame, limit: int = MAX_UINT32) -> int:
    """Return `value` if it is an int in 0..limit (bool excluded), else raise FairnessError."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= limit:
        raise FairnessError(blamed, f"{name} must be a whole number 0 to {limit}: {value!r:.40}")
    return value


def require_text(value: object, name: str, blamed: Blame) -> str:
    """Return `value` if it is a non-empty str of at most MAX_TEXT characters, else raise."""
    if not isinstance(value, str) or not 0 < len(value) <= MAX_TEXT:
        raise FairnessError(blamed, f"{name} must be text of 1 to {MAX_TEXT} characters")
    return value


def encode_parts(*parts: bytes | str | int) -> bytes:
    """Encode parts with a type byte and a length so no two different part lists collide."""
    out = bytearray()
    for part in parts:
        if isinstance(part, bytes):
            out += b"b" + len(part).to_bytes(4, "big") + part
        elif isinstance(part, str):
            data = part.encode("utf-8")
            out += b"s" + len(data).to_bytes(4, "big") + data
        else:
            out += b"i" + part.to_bytes(8, "big", signed=True)
    return bytes(out)


def decode_parts(data: bytes, blamed: Blame) -> list[bytes | str | int]:
    """Invert `encode_parts`, raising FairnessError on anything it could not have produced."""
    parts: list[bytes | str | int] = []
    i = 0
    try:
        while i < len(data):
            kind, i = data[i : i + 1], i + 1
            if kind == b"i" and i + 8 <= len(data):
                parts.append(int.from_bytes(data[i : i + 8], "big", signed=True))
                i += 8
                continue
            if kind not in (b"b", b"s") or i + 4 > len(data):
                raise ValueError("bad part header")
            size, i = int.from_bytes(data[i : i + 4], "big"), i + 4
            if i + size > len(data):
                raise ValueError("truncated part")
            chunk, i = data[i : i + size], i + size
            parts.append(chunk if kind == b"b" else chunk.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise FairnessError(blamed, f"malformed encoded data ({exc})") from None
    return parts


def tagged_hash(tag: str, *parts: bytes | str | int) -> bytes:
    """SHA-256 of the parts under a purpose tag, so a hash made for one use fits no other."""
    return hashlib.sha256(encode_parts(_PREFIX, tag, *parts)).digest()


def new_secret() -> bytes:
    """A fresh random 32-byte seed or nonce from the operating system's CSPRNG."""
    return secrets.token_bytes(SECRET_SIZE)


def commit(data: bytes) -> bytes:
    """A hiding, binding commitment to `data` (which must carry its own 32 random bytes)."""
    return tagged_hash("commit", require_bytes(data, "committed data", DEALER))


def check_context(room: object, round_no: object, epoch: object, blamed: Blame) -> None:
    """Raise FairnessError unless room is text and round_no and epoch are whole numbers."""
    require_text(room, "room", blamed)
    require_uint(round_no, "round number", blamed)
    require_uint(epoch, "shuffle epoch", blamed)


def seed_commitment(room: str, round_no: int, epoch: int, seed: bytes) -> bytes:
    """The dealer's commitment to its secret seed for one shuffle epoch of one round."""
    check_context(room, round_no, epoch, DEALER)
    require_bytes(seed, "seed", DEALER, SECRET_SIZE)
    return commit(encode_parts("seed", room, round_no, epoch, seed))


def nonce_commitment(room: str, round_no: int, epoch: int, seat: int, nonce: bytes) -> bytes:
    """A seat's commitment to its random nonce for one shuffle epoch of one round."""
    check_context(room, round_no, epoch, DEALER)
    require_uint(seat, "seat", DEALER)
    require_bytes(nonce, "nonce", DEALER, SECRET_SIZE)
    return commit(encode_parts("nonce", room, round_no, epoch, seat, nonce))


class _WordStream:
    """Big-endian 32-bit words from HMAC-SHA256(seed, nonces || block counter) blocks."""

    def __init__(self, seed: bytes, nonces: Sequence[bytes]) -> None:
        self._mac = hmac.new(seed, encode_parts(_PREFIX, "shuffle", *nonces), hashlib.sha256)
        self._counter = 0
        self._block = b""
        self._offset = 0

    def word(self) -> int:
        if self._offset == len(self._block):
            mac = self._mac.copy()
            mac.update(self._counter.to_bytes(8, "big"))
            self._block, self._offset = mac.digest(), 0
            self._counter += 1
        value = int.from_bytes(self._block[self._offset : self._offset + 4], "big")
        self._offset += 4
        return value

    def below(self, bound: int) -> int:
        # Rejection sampling: words at or above the largest multiple of bound are discarded,
        # so every result in range(bound) is exactly equally likely (no modulo bias).
        limit = 2**32 - (2**32 % bound)
        while True:
            value = self.word()
            if value < limit:
                return value % bound


def shuffle_order(seed: bytes, nonces: Sequence[bytes], n: int) -> list[int]:
    """The permutation of range(n) that seed and nonces (in seat order) fix, by Fisher-Yates."""
    require_bytes(seed, "seed", DEALER, SECRET_SIZE)
    if not isinstance(nonces, (list, tuple)):
        raise FairnessError(DEALER, "nonces must be a list of 32-byte values")
    for index, nonce in enumerate(nonces):
        require_bytes(nonce, f"nonce {index}", DEALER, SECRET_SIZE)
    require_uint(n, "deck size", DEALER, MAX_DECK)
    stream = _WordStream(seed, nonces)
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = stream.below(i + 1)
        order[i], order[j] = order[j], order[i]
    return order


def derive_opening(seed: bytes, room: str, round_no: int, epoch: int, position: int) -> bytes:
    """The secret opening of one deck position, derived from the seed so the audit needs no list."""
    check_context(room, round_no, epoch, DEALER)
    require_bytes(seed, "seed", DEALER, SECRET_SIZE)
    require_uint(position, "position", DEALER, MAX_DECK)
    data = encode_parts(_PREFIX, "opening", room, round_no, epoch, position)
    return hmac.new(seed, data, hashlib.sha256).digest()


def card_commitment(
    room: str, round_no: int, epoch: int, position: int, card: str, opening: bytes
) -> bytes:
    """The public commitment that deck `position` of this epoch holds `card`."""
    check_context(room, round_no, epoch, DEALER)
    require_uint(position, "position", DEALER, MAX_DECK)
    require_text(card, "card", DEALER)
    require_bytes(opening, "opening", DEALER, SECRET_SIZE)
    return tagged_hash("card", room, round_no, epoch, position, card, opening)


@dataclass(frozen=True)
class CardOpening:
    """What opens one position's commitment: the epoch, the position, the card and its secret."""

    epoch: int
    position: int
    card: str
    opening: bytes

    def to_wire(self) -> list[int | str | bytes]:
        """A MessagePack-friendly list form."""
        return [self.epoch, self.position, self.card, self.opening]

    @classmethod
    def from_wire(cls, obj: object, blamed: Blame = DEALER) -> CardOpening:
        """Parse `to_wire` output from a peer, raising FairnessError for anything else."""
        if not isinstance(obj, (list, tuple)) or len(obj) != 4:
            raise FairnessError(blamed, "a card opening must be [epoch, position, card, opening]")
        epoch, position, card, opening = obj
        return cls(
            require_uint(epoch, "epoch", blamed),
            require_uint(position, "position", blamed, MAX_DECK),
            require_text(card, "card", blamed),
            require_bytes(opening, "opening", blamed, SECRET_SIZE),
        )


def verify_opening(
    commitment: bytes, room: str, round_no: int, opening: CardOpening, blamed: Blame
) -> None:
    """Raise FairnessError blaming `blamed` unless `opening` opens `commitment`."""
    if not isinstance(opening, CardOpening):
        raise FairnessError(blamed, "expected a card opening")
    CardOpening.from_wire(opening.to_wire(), blamed)
    check_context(room, round_no, opening.epoch, blamed)
    require_bytes(commitment, "commitment", DEALER, HASH_SIZE)
    expected = card_commitment(
        room, round_no, opening.epoch, opening.position, opening.card, opening.opening
    )
    if not hmac.compare_digest(expected, commitment):
        raise FairnessError(
            blamed,
            f"card {opening.card} does not match the commitment for position "
            f"{opening.position} of shuffle epoch {opening.epoch}",
        )


@dataclass(frozen=True)
class DeckCommitment:
    """The dealer's secret side of one shuffle epoch: the ordered cards and their openings."""

    room: str
    round_no: int
    epoch: int
    seed: bytes
    cards: tuple[str, ...]
    openings: tuple[bytes, ...]
    commitments: tuple[bytes, ...]

    @classmethod
    def build(
        cls,
        room: str,
        round_no: int,
        epoch: int,
        seed: bytes,
        nonces: Sequence[bytes],
        canonical: Sequence[str],
    ) -> DeckCommitment:
        """Shuffle `canonical` by seed and nonces and commit to every resulting position."""
        check_context(room, round_no, epoch, DEALER)
        if not isinstance(canonical, (list, tuple)):
            raise FairnessError(DEALER, "the cards to shuffle must be a list")
        texts = [require_text(card, "card", DEALER) for card in canonical]
        order = shuffle_order(seed, nonces, len(texts))
        cards = tuple(texts[i] for i in order)
        openings = tuple(
            derive_opening(seed, room, round_no, epoch, p) for p in range(len(cards))
        )
        commitments = tuple(
            card_commitment(room, round_no, epoch, p, card, opening)
            for p, (card, opening) in enumerate(zip(cards, openings, strict=True))
        )
        return cls(room, round_no, epoch, seed, cards, openings, commitments)

    @property
    def seed_commitment(self) -> bytes:
        """The commitment to publish before any seat reveals its nonce."""
        return seed_commitment(self.room, self.round_no, self.epoch, self.seed)

    def opening(self, position: int) -> CardOpening:
        """The card at `position` with its opening, to seal to its seat or publish face up."""
        return CardOpening(self.epoch, position, self.cards[position], self.openings[position])
