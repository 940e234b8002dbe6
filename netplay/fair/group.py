"""The prime-order group of mental-poker dealing: Ed25519 points and scalars, all from libsodium.

`Point` is an element of the prime-order subgroup of Edwards25519 (order `ORDER`, generator
`BASE`); `Scalar` is an integer modulo `ORDER`. Every group and scalar operation is a call to
libsodium through `nacl.bindings`; this module only names them and handles the identity, which
libsodium's scalar multiplication refuses to take or return. `Point.decode` is the one way a
peer's bytes become a point: it refuses anything but the canonical encoding of a non-identity
element of the prime-order subgroup, so small-order and mixed-order points never enter a
computation. `Point.decode_for_product` is the cheaper way for the many points of a shuffle's
proof that the proof's check multiplies anyway: libsodium's scalar multiplication refuses, with
the same tests, any point that is not a non-identity element of the subgroup, and says so with
`InvalidPoint`, which the check turns into blame. Hashes onto the group and onto scalars are
domain-separated by a label.

The calls go to PyNaCl's own cffi binding of libsodium (`nacl._sodium`), the functions
`nacl.bindings` wraps, without those wrappers' per-call argument checks: every argument here is
already a 32-byte value, and the wrappers were a tenth of the time of a shuffle's check.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from nacl import bindings as sodium
from nacl._sodium import ffi, lib

from netplay.fair.commit import Blame, FairnessError, require_bytes

ORDER = 2**252 + 27742317777372353535851937790883648493
POINT_SIZE = 32
SCALAR_SIZE = 32
_IDENTITY_BYTES = b"\x01" + bytes(31)
_DOMAIN = b"cardtui/mental-poker/v1"


class InvalidPoint(ValueError):
    """libsodium refused a point: not a canonical encoding of an element of the subgroup."""


def _call(function: Callable[..., int], *args: bytes) -> bytes | None:
    """libsodium's `function(out, *args)`: its 32-byte answer, or None when it refuses."""
    out = ffi.new("unsigned char[]", 32)
    if function(out, *args) != 0:
        return None
    return bytes(ffi.buffer(out, 32))


def _scalar_op(function: Callable[..., int], *args: bytes) -> bytes:
    """A scalar operation, which libsodium never refuses."""
    out = ffi.new("unsigned char[]", 32)
    function(out, *args)
    return bytes(ffi.buffer(out, 32))


@dataclass(frozen=True, slots=True)
class Scalar:
    """An integer modulo the group order, kept as its canonical 32-byte little-endian form."""

    data: bytes

    @classmethod
    def of(cls, value: int) -> Scalar:
        """The scalar `value mod ORDER` (for small public constants such as 0 and 1)."""
        return cls((value % ORDER).to_bytes(SCALAR_SIZE, "little"))

    @classmethod
    def random(cls) -> Scalar:
        """A uniformly random scalar from the operating system's CSPRNG."""
        return cls(sodium.crypto_core_ed25519_scalar_reduce(secrets.token_bytes(64)))

    @classmethod
    def decode(cls, data: object, blamed: Blame, name: str = "scalar") -> Scalar:
        """Parse a peer's 32 bytes, refusing any value that is not already reduced mod ORDER."""
        raw = require_bytes(data, name, blamed, SCALAR_SIZE)
        if int.from_bytes(raw, "little") >= ORDER:
            raise FairnessError(blamed, f"{name} is not a canonical scalar")
        return cls(raw)

    @property
    def is_zero(self) -> bool:
        """Whether this is the scalar 0."""
        return self.data == bytes(SCALAR_SIZE)

    def __add__(self, other: Scalar) -> Scalar:
        return Scalar(_scalar_op(lib.crypto_core_ed25519_scalar_add, self.data, other.data))

    def __sub__(self, other: Scalar) -> Scalar:
        return Scalar(_scalar_op(lib.crypto_core_ed25519_scalar_sub, self.data, other.data))

    def __mul__(self, other: Scalar) -> Scalar:
        return Scalar(_scalar_op(lib.crypto_core_ed25519_scalar_mul, self.data, other.data))

    def __neg__(self) -> Scalar:
        return Scalar(_scalar_op(lib.crypto_core_ed25519_scalar_negate, self.data))

    def __repr__(self) -> str:
        return "Scalar(...)"  # scalars are often secret: never print one by accident


@dataclass(frozen=True, slots=True)
class Point:
    """An element of the prime-order subgroup, kept as its canonical 32-byte encoding."""

    data: bytes

    @classmethod
    def decode(cls, data: object, blamed: Blame, name: str = "point") -> Point:
        """Parse a peer's 32 bytes, refusing the identity and anything outside the subgroup."""
        raw = require_bytes(data, name, blamed, POINT_SIZE)
        if not lib.crypto_core_ed25519_is_valid_point(raw):
            raise FairnessError(blamed, f"{name} is not a valid group element")
        return cls(raw)

    @classmethod
    def decode_for_product(cls, data: object, blamed: Blame, name: str = "point") -> Point:
        """Parse a peer's 32 bytes that the caller multiplies before trusting: only the identity
        is refused here; the multiplication refuses the rest with InvalidPoint (module doc)."""
        raw = require_bytes(data, name, blamed, POINT_SIZE)
        if raw == _IDENTITY_BYTES:
            raise FairnessError(blamed, f"{name} is not a valid group element")
        return cls(raw)

    @property
    def is_valid(self) -> bool:
        """Whether this is a non-identity element of the prime-order subgroup."""
        return bool(lib.crypto_core_ed25519_is_valid_point(self.data))

    @property
    def is_identity(self) -> bool:
        """Whether this is the neutral element (which no honest peer ever sends)."""
        return self.data == _IDENTITY_BYTES

    def __add__(self, other: Point) -> Point:
        total = _call(lib.crypto_core_ed25519_add, self.data, other.data)
        if total is None:
            raise InvalidPoint("a point to add is not on the curve")
        return Point(total)

    def __sub__(self, other: Point) -> Point:
        difference = _call(lib.crypto_core_ed25519_sub, self.data, other.data)
        if difference is None:
            raise InvalidPoint("a point to subtract is not on the curve")
        return Point(difference)

    def __mul__(self, scalar: Scalar) -> Point:
        # libsodium refuses a zero scalar and an identity input or result; in a prime-order
        # group those are exactly the cases whose answer is the identity. It refuses a point
        # outside the subgroup too, which is checked here when the scalar is zero.
        if self.is_identity:
            return IDENTITY
        if scalar.is_zero:
            if not lib.crypto_core_ed25519_is_valid_point(self.data):
                raise InvalidPoint("a point to multiply is not a valid group element")
            return IDENTITY
        product = _call(lib.crypto_scalarmult_ed25519_noclamp, scalar.data, self.data)
        if product is None:
            raise InvalidPoint("a point to multiply is not a valid group element")
        return Point(product)

    def __neg__(self) -> Point:
        return IDENTITY - self


IDENTITY = Point(_IDENTITY_BYTES)


def base_times(scalar: Scalar) -> Point:
    """`scalar` times the standard generator BASE."""
    if scalar.is_zero:
        return IDENTITY
    product = _call(lib.crypto_scalarmult_ed25519_base_noclamp, scalar.data)
    assert product is not None  # only a zero scalar is refused
    return Point(product)


BASE = base_times(Scalar.of(1))


def point_sum(points: list[Point]) -> Point:
    """The sum of `points` (the identity for none)."""
    total = IDENTITY
    for point in points:
        total = total + point
    return total


def weighted_sum(scalars: list[Scalar], points: list[Point]) -> Point:
    """The sum of scalars[i] * points[i]."""
    return point_sum([point * scalar for scalar, point in zip(scalars, points, strict=True)])


def hash_to_scalar(label: str, *chunks: bytes) -> Scalar:
    """A scalar from SHA-512 of the label and chunks, each length-prefixed (domain-separated)."""
    return Scalar(sodium.crypto_core_ed25519_scalar_reduce(_digest("sha512", label, chunks)))


def hash_to_point(label: str, *chunks: bytes) -> Point:
    """A group element nobody knows the logarithm of: Elligator 2 of a domain-separated hash."""
    counter = 0
    while True:
        uniform = _digest("sha256", label, (*chunks, counter.to_bytes(4, "big")))
        point = Point(sodium.crypto_core_ed25519_from_uniform(uniform))
        # from_uniform clears the cofactor; its answer is only refused in the negligible case
        # that it is the identity, and then the next counter is used.
        if sodium.crypto_core_ed25519_is_valid_point(point.data):
            return point
        counter += 1


def _digest(algorithm: str, label: str, chunks: tuple[bytes, ...]) -> bytes:
    hasher = hashlib.new(algorithm)
    for chunk in (_DOMAIN, label.encode(), *chunks):
        hasher.update(len(chunk).to_bytes(4, "big") + chunk)
    return hasher.digest()
