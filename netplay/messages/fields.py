"""The field types a message kind declares (`Annotated[int, Int(0, 7)]`): each checks a decoded
value, packs one, measures its worst case and says its type in words for docs/PROTOCOL.md."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from netplay.messages.limits import MAX_UINT32, PROTOCOL_VERSION, SIGNED_MAX, SIGNED_MIN

Reader = Callable[[Any], Any]


class ProtocolError(Exception):
    """A message that breaks the protocol, with a machine-readable code and a readable reason."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def bad(message: str) -> ProtocolError:
    """A `bad_frame` refusal saying what is wrong."""
    return ProtocolError("bad_frame", message)


class Unusual(Exception):
    """What a compiled reader raises at a value it does not take: the generic walk says why."""


# -- field types -----------------------------------------------------------------------------


class Spec:
    """A field's wire type and bounds: it checks a decoded value and measures the worst case."""

    missing_code = "bad_frame"

    def read(self, value: object, where: str) -> Any:
        """The value as the message holds it, or ProtocolError naming `where`."""
        raise NotImplementedError

    def write(self, value: Any, where: str) -> object:
        """The value as MessagePack packs it, checked against the same bounds as `read`."""
        self.read(value, where)
        return value

    def reader(self) -> Reader:
        """`read` without the words of its errors: the same value, or `Unusual` where `read`
        refuses. This one asks `read`; the kinds on every move's path have their own."""
        read = self.read

        def checked(value: object) -> Any:
            try:
                return read(value, "")
            except ProtocolError:
                raise Unusual from None
        return checked

    def bound(self) -> int:
        """The most bytes the value can take, packed."""
        raise NotImplementedError

    def kind(self) -> str:
        """What the value must be, for error messages."""
        raise NotImplementedError

    def text(self) -> str:
        """The type and bounds in words, as docs/PROTOCOL.md writes them."""
        raise NotImplementedError


def number_text(value: int) -> str:
    """A bound as docs/PROTOCOL.md writes it: powers of two by name."""
    names = {SIGNED_MIN: "-2**63", SIGNED_MAX: "2**63 - 1", MAX_UINT32: "2**32 - 1"}
    return names.get(value, str(value))


def wrong_type(spec: Spec, value: object, where: str) -> ProtocolError:
    """A `bad_frame` refusal of a value that is not of the spec's type."""
    return bad(f"{where} must be {spec.kind()}, not {type(value).__name__}")


@dataclass(frozen=True)
class Int(Spec):
    """An integer (never a boolean) from `lo` to `hi`."""

    lo: int = 0
    hi: int = MAX_UINT32

    def read(self, value: object, where: str) -> int:
        if type(value) is not int:
            raise wrong_type(self, value, where)
        if not self.lo <= value <= self.hi:
            raise bad(f"{where} is out of range: from {self.lo} to {self.hi}, not {value}")
        return value

    def reader(self) -> Reader:
        lo, hi = self.lo, self.hi

        def checked(value: object) -> int:
            if type(value) is int and lo <= value <= hi:
                return value
            raise Unusual
        return checked

    def bound(self) -> int:
        return 9

    def kind(self) -> str:
        return "int"

    def text(self) -> str:
        return f"int, {number_text(self.lo)} to {number_text(self.hi)}"


@dataclass(frozen=True)
class Real(Spec):
    """A number, int or float (never a boolean), from `lo` to `hi`."""

    lo: float
    hi: float

    def read(self, value: object, where: str) -> float:
        if type(value) is not int and type(value) is not float:
            raise wrong_type(self, value, where)
        if not self.lo <= value <= self.hi:
            raise bad(f"{where} must be from {self.lo:g} to {self.hi:g}, not {value!r:.20}")
        return value

    def bound(self) -> int:
        return 9

    def kind(self) -> str:
        return "a number"

    def text(self) -> str:
        return f"number (int or float), {self.lo:g} to {self.hi:g}"


@dataclass(frozen=True)
class Digits(Spec):
    """A whole number too big for 64 bits, as its decimal digits (a sign allowed), at most `most`."""

    most: int

    def read(self, value: object, where: str) -> str:
        if type(value) is not str:
            raise wrong_type(self, value, where)
        digits = value[1:] if value[:1] == "-" else value
        if not (0 < len(value) <= self.most and digits.isascii() and digits.isdigit()):
            raise bad(f"{where} must be decimal digits, at most {self.most}")
        return value

    def bound(self) -> int:
        return 5 + self.most

    def kind(self) -> str:
        return "decimal digits"

    def text(self) -> str:
        return f"str of decimal digits (a `-` allowed), at most {self.most}"


@dataclass(frozen=True)
class Bool(Spec):
    """true or false."""

    def read(self, value: object, where: str) -> bool:
        if type(value) is not bool:
            raise wrong_type(self, value, where)
        return value

    def reader(self) -> Reader:
        def checked(value: object) -> bool:
            if type(value) is bool:
                return value
            raise Unusual
        return checked

    def bound(self) -> int:
        return 1

    def kind(self) -> str:
        return "bool"

    def text(self) -> str:
        return "bool"


@dataclass(frozen=True)
class Text(Spec):
    """A str of at most `most` characters (and at least `least`)."""

    most: int
    least: int = 0

    def read(self, value: object, where: str) -> str:
        if type(value) is not str:
            raise wrong_type(self, value, where)
        if len(value) > self.most:
            raise bad(f"{where} is longer than {self.most} characters ({len(value)})")
        if len(value) < self.least:
            raise bad(f"{where} must have at least {self.least} characters")
        return value

    def reader(self) -> Reader:
        least, most = self.least, self.most

        def checked(value: object) -> str:
            if type(value) is str and least <= len(value) <= most:
                return value
            raise Unusual
        return checked

    def bound(self) -> int:
        return 5 + 4 * self.most  # UTF-8: at most four bytes a character

    def kind(self) -> str:
        return "str"

    def text(self) -> str:
        least = f"{self.least} to " if self.least else "at most "
        return f"str, {least}{self.most} characters"


@dataclass(frozen=True)
class Bin(Spec):
    """Raw bytes (MessagePack bin): exactly `size` of them, or at most `most`."""

    most: int
    size: int | None = None

    def read(self, value: object, where: str) -> bytes:
        if type(value) is not bytes:
            raise wrong_type(self, value, where)
        if self.size is not None and len(value) != self.size:
            raise bad(f"{where} must be {self.size} bytes, not {len(value)}")
        if len(value) > self.most:
            raise bad(f"{where} is longer than {self.most} bytes ({len(value)})")
        return value

    def reader(self) -> Reader:
        most, size = self.most, self.size

        def checked(value: object) -> bytes:
            if type(value) is bytes and len(value) <= most and (size is None
                                                               or len(value) == size):
                return value
            raise Unusual
        return checked

    def bound(self) -> int:
        return 5 + self.most

    def kind(self) -> str:
        return "bin"

    def text(self) -> str:
        return f"bin {self.size}" if self.size is not None else f"bin, at most {self.most} bytes"


def Exactly(size: int) -> Bin:
    """Exactly `size` raw bytes."""
    return Bin(size, size)


@dataclass(frozen=True)
class Opt(Spec):
    """`spec`, or nil; an absent field is nil too, and `encode` leaves nil fields out."""

    spec: Spec

    def read(self, value: object, where: str) -> Any:
        return None if value is None else self.spec.read(value, where)

    def write(self, value: Any, where: str) -> object:
        return None if value is None else self.spec.write(value, where)

    def reader(self) -> Reader:
        inner = self.spec.reader()

        def checked(value: object) -> Any:
            return None if value is None else inner(value)
        return checked

    def bound(self) -> int:
        return self.spec.bound()

    def kind(self) -> str:
        return f"{self.spec.kind()} or nil"

    def text(self) -> str:
        return f"{self.spec.text()}; or nil"


@dataclass(frozen=True)
class ListOf(Spec):
    """A list of at most `most` items of `item`; it reads as a tuple."""

    item: Spec
    most: int

    def read(self, value: object, where: str) -> tuple[Any, ...]:
        if type(value) is not list and type(value) is not tuple:
            raise wrong_type(self, value, where)
        if len(value) > self.most:
            raise bad(f"{where} must have at most {self.most} items, not {len(value)}")
        return tuple(self.item.read(v, f"{where}[{i}]") for i, v in enumerate(value))

    def reader(self) -> Reader:
        item, most = self.item.reader(), self.most

        def checked(value: object) -> tuple[Any, ...]:
            if (type(value) is list or type(value) is tuple) and len(value) <= most:
                return tuple([item(v) for v in value])
            raise Unusual
        return checked

    def write(self, value: Any, where: str) -> object:
        if type(value) is not list and type(value) is not tuple:
            raise wrong_type(self, value, where)
        if len(value) > self.most:
            raise bad(f"{where} must have at most {self.most} items, not {len(value)}")
        return [self.item.write(v, f"{where}[{i}]") for i, v in enumerate(value)]

    def bound(self) -> int:
        return 5 + self.most * self.item.bound()

    def kind(self) -> str:
        return "a list"

    def text(self) -> str:
        return f"list of at most {self.most} × ({self.item.text()})"


@dataclass(frozen=True)
class Row(Spec):
    """A list of exactly one value per spec, read into the NamedTuple `make`."""

    make: Callable[..., Any]
    specs: tuple[Spec, ...]

    def read(self, value: object, where: str) -> Any:
        if (type(value) is not list and type(value) is not tuple) or len(value) != len(
                self.specs):
            raise bad(f"{where} must be a list of {len(self.specs)} items")
        return self.make(*(s.read(v, f"{where}[{i}]")
                           for i, (s, v) in enumerate(zip(self.specs, value, strict=True))))

    def reader(self) -> Reader:
        make, readers = self.make, tuple(s.reader() for s in self.specs)
        size = len(readers)

        def checked(value: object) -> Any:
            if (type(value) is list or type(value) is tuple) and len(value) == size:
                return make(*[r(v) for r, v in zip(readers, value)])
            raise Unusual
        return checked

    def write(self, value: Any, where: str) -> object:
        if (type(value) is not list and not isinstance(value, tuple)) or len(value) != len(
                self.specs):
            raise bad(f"{where} must be a list of {len(self.specs)} items")
        return [s.write(v, f"{where}[{i}]")
                for i, (s, v) in enumerate(zip(self.specs, value, strict=True))]

    def bound(self) -> int:
        return 1 + sum(s.bound() for s in self.specs)

    def kind(self) -> str:
        return f"a list of {len(self.specs)} items"

    def text(self) -> str:
        name = getattr(self.make, "__name__", "row")
        return f"{name} [" + "; ".join(s.text() for s in self.specs) + "]"


@dataclass(frozen=True)
class Either(Spec):
    """The first of `specs` that reads the value."""

    specs: tuple[Spec, ...]

    def read(self, value: object, where: str) -> Any:
        for spec in self.specs:
            try:
                return spec.read(value, where)
            except ProtocolError:
                continue
        raise bad(f"{where} must be {self.kind()}")

    def write(self, value: Any, where: str) -> object:
        for spec in self.specs:
            try:
                return spec.write(value, where)
            except ProtocolError:
                continue
        raise bad(f"{where} must be {self.kind()}")

    def bound(self) -> int:
        return max(s.bound() for s in self.specs)

    def kind(self) -> str:
        return " or ".join(s.kind() for s in self.specs)

    def text(self) -> str:
        return " or ".join(f"({s.text()})" for s in self.specs)


@dataclass(frozen=True)
class Version(Spec):
    """The protocol version: exactly PROTOCOL_VERSION, else a `version` refusal."""

    missing_code = "version"

    def read(self, value: object, where: str) -> int:
        if type(value) is not int or value != PROTOCOL_VERSION:
            raise ProtocolError("version", f"this relay speaks protocol version"
                                f" {PROTOCOL_VERSION}, the message says {value!r:.20};"
                                " update cardtui on both ends")
        return value

    def bound(self) -> int:
        return 1

    def kind(self) -> str:
        return f"the int {PROTOCOL_VERSION}"

    def text(self) -> str:
        return f"int {PROTOCOL_VERSION}"


@dataclass(frozen=True)
class Key:
    """The field's name on the wire, where it is not a Python name (`from`)."""

    name: str

