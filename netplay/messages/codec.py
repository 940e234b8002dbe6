"""How a message kind is declared, checked, decoded and encoded: the field types and the codec.

A message is one MessagePack map with a str field `t`, its kind. Each kind is a frozen
dataclass whose fields say their wire type and bound (`Annotated[int, Int(0, 7)]`).
`decode(data, FAMILY)` turns bytes into exactly one kind of that family or raises
ProtocolError: `too_big`, `bad_frame` (not a map; a field missing, of the wrong type, too long,
or one the kind does not have), `unknown_type` or `version`. `encode` checks the same bounds
before it packs, so what one side sends the other accepts, and `max_size` is the most bytes a
kind can take.

Each kind also has a compiled reader (`Spec.reader`) that checks the same bounds without the
words of an error: it gives the value `read` gives, or raises `Unusual`, and then the generic
walk reads the map again and says what is wrong. Every move takes the compiled path.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Final, Generic, TypeVar

import msgpack

PROTOCOL_VERSION: Final = 1
MAX_RELAY_BODY: Final = 4 * 1024 * 1024  # what a relay client reads at most; the relay's own
# frame limit (RelayLimits.max_frame_bytes) is checked before a frame is decoded
MAX_BODY_BYTES: Final = 60_000  # a game body, signed or not
MAX_SEATS: Final = 8
MAX_NAME: Final = 24  # what the host keeps of a name
MAX_NAME_WIRE: Final = 64  # a name as the host sends it (it keeps MAX_NAME characters)
MAX_RAW_NAME: Final = 1000  # a name as a join may carry it
MAX_CHAT: Final = 300
MAX_RAW_CHAT: Final = 1200  # a chat line as a seat may send it (the host keeps MAX_CHAT)
MAX_NUMBER_DIGITS: Final = 121  # a score beyond 64 bits travels as its digits
MAX_MOVE_TEXT: Final = 400
MAX_CARDS: Final = 64  # positions in one deck, cards in one deal, draw or move
MAX_SEEDS: Final = 1000  # seeds one `round_end` or `seeds` reveals (a round may shuffle more)
MAX_MENTAL_DECK: Final = 52  # cards in a deck dealt by mental poker (Zodiak's)
MAX_SEALED: Final = 256  # a sealed card: a box around [room, round, epoch, position, card, opening]
MAX_HOST_PAYLOAD: Final = MAX_BODY_BYTES - 200  # the host's, inside its `s` envelope
MAX_TABLE_ID: Final = 64
MAX_SUMMARY: Final = 1000
MAX_UINT32: Final = 2**32 - 1
SIGNED_MIN: Final = -(2**63)
SIGNED_MAX: Final = 2**63 - 1

M = TypeVar("M", bound="Message")
Reader = Callable[[Any], Any]

# One instance is reused: building a Packer per frame costs more than packing a small map.
_packer = msgpack.Packer(use_bin_type=True, autoreset=True)


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


def _wrong(spec: Spec, value: object, where: str) -> ProtocolError:
    return bad(f"{where} must be {spec.kind()}, not {type(value).__name__}")


@dataclass(frozen=True)
class Int(Spec):
    """An integer (never a boolean) from `lo` to `hi`."""

    lo: int = 0
    hi: int = MAX_UINT32

    def read(self, value: object, where: str) -> int:
        if type(value) is not int:
            raise _wrong(self, value, where)
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
            raise _wrong(self, value, where)
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
            raise _wrong(self, value, where)
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
            raise _wrong(self, value, where)
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
            raise _wrong(self, value, where)
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
            raise _wrong(self, value, where)
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
            raise _wrong(self, value, where)
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
            raise _wrong(self, value, where)
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
class Nested(Spec):
    """A map holding the fields of the dataclass `cls` and no others."""

    cls: type

    def read(self, value: object, where: str) -> Any:
        if type(value) is not dict:
            raise bad(f"{where} must be a map")
        return _read_fields(self.cls, value, where)

    def reader(self) -> Reader:
        fields_of = compiled_fields(self.cls, top=False)

        def checked(value: object) -> Any:
            if type(value) is dict:
                return fields_of(value)
            raise Unusual
        return checked

    def write(self, value: Any, where: str) -> object:
        if not isinstance(value, self.cls):
            raise _wrong(self, value, where)
        return _write_fields(value, where)

    def bound(self) -> int:
        return _fields_bound(self.cls)

    def kind(self) -> str:
        return "a map"

    def text(self) -> str:
        return f"map {self.cls.__name__} (its own table)"


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


# -- reading and writing maps --------------------------------------------------------------------


@dataclass(frozen=True)
class WireField:
    """One field of a kind: its Python name, its key on the wire, its type, whether required."""

    attr: str
    key: str
    spec: Spec
    required: bool


_SCHEMAS: dict[type, tuple[WireField, ...]] = {}
_KEYS: dict[type, frozenset[str]] = {}
_LABELS: dict[tuple[type, str], tuple[tuple[WireField, str], ...]] = {}


def schema(cls: type) -> tuple[WireField, ...]:
    """The fields of a kind (or of a nested map), read once from its annotations."""
    found = _SCHEMAS.get(cls)
    if found is None:
        hints = typing.get_type_hints(cls, include_extras=True)  # each class's own module
        found_list = []
        for f in fields(cls):
            extras = getattr(hints[f.name], "__metadata__", ())
            spec = next(m for m in extras if isinstance(m, Spec))
            key = next((m.name for m in extras if isinstance(m, Key)), f.name)
            found_list.append(WireField(f.name, key, spec, not isinstance(spec, Opt)))
        found = _SCHEMAS[cls] = tuple(found_list)
        _KEYS[cls] = frozenset(f.key for f in found)
    return found


def _labels(cls: type, where: str) -> tuple[tuple[WireField, str], ...]:
    """Each field of `cls` with its name in error messages, made once per place (a hot path)."""
    found = _LABELS.get((cls, where))
    if found is None:
        found = _LABELS[cls, where] = tuple((f, f"field '{f.key}' of {where}")
                                            for f in schema(cls))
    return found


_COMPILED: dict[tuple[type, bool], Reader] = {}


def compiled_fields(cls: type, top: bool) -> Reader:
    """The compiled reader of the fields of `cls` (with `t` beside them at the top), made once:
    the value the generic walk reads from a map, or `Unusual` where that walk refuses it."""
    found = _COMPILED.get((cls, top))
    if found is not None:
        return found
    plan = tuple((f.key, f.attr, f.required,
                  (f.spec.spec if isinstance(f.spec, Opt) else f.spec).reader())
                 for f in schema(cls))
    known = _KEYS[cls] | {"t"} if top else _KEYS[cls]

    def read(msg: dict[Any, Any]) -> Any:
        if not known.issuperset(msg):
            raise Unusual
        values = {}
        for key, attr, required, reader in plan:
            value = msg.get(key)
            if value is not None:
                values[attr] = reader(value)
            elif required:
                raise Unusual
            else:
                values[attr] = None
        return cls(**values)
    _COMPILED[cls, top] = read
    return read


def _read_fields(cls: type, msg: dict[Any, Any], where: str, top: bool = False) -> Any:
    reader = _COMPILED.get((cls, top)) or compiled_fields(cls, top)
    try:
        return reader(msg)
    except Unusual:
        return walk_fields(cls, msg, where, top)


def walk_fields(cls: type, msg: dict[Any, Any], where: str, top: bool = False) -> Any:
    """The generic walk over the fields of `cls`: the value, or the error that says what is
    wrong (field by field, then the keys `cls` does not have)."""
    values = {}
    for f, label in _labels(cls, where):
        value = msg.get(f.key)
        if value is None and f.required:
            raise ProtocolError(f.spec.missing_code, f"{where} needs a field '{f.key}'")
        values[f.attr] = f.spec.read(value, label)
    known = _KEYS[cls]
    for key in msg:  # unknown fields are refused, never carried along
        if key not in known and not (top and key == "t"):
            raise bad(f"{where} has no field {str(key)[:40]!r}")
    return cls(**values)


def _write_fields(value: Any, where: str) -> dict[str, object]:
    out: dict[str, object] = {}
    for f, label in _labels(type(value), where):
        item = getattr(value, f.attr)
        if item is None:
            if f.required:
                raise bad(f"{where} needs a field '{f.key}'")
            continue
        out[f.key] = f.spec.write(item, label)
    return out


def _fields_bound(cls: type) -> int:
    return 5 + sum(5 + len(f.key) + f.spec.bound() for f in schema(cls))


# -- messages and families -----------------------------------------------------------------------


class Message:
    """A message kind: a frozen dataclass with a class-level `t`."""

    t: ClassVar[str]


class Family(Generic[M]):
    """The kinds one receiver accepts, by their `t`."""

    def __init__(self, name: str, kinds: Iterable[type[M]]) -> None:
        self.name = name
        self.kinds: dict[str, type[M]] = {k.t: k for k in kinds}

    def fields(self) -> dict[str, frozenset[str]]:
        """The keys each kind may have on the wire, `t` among them, by kind."""
        return {t: frozenset({"t", *(f.key for f in schema(cls))}) for t, cls in self.kinds.items()}


def decode_map(data: bytes, max_size: int) -> dict[str, Any]:
    """Unpack one MessagePack map with a str field `t`, or raise ProtocolError."""
    if len(data) > max_size:
        raise ProtocolError("too_big", f"frame is {len(data)} bytes; the limit is {max_size}")
    try:
        msg = msgpack.unpackb(data, raw=False, strict_map_key=True, use_list=True)
    except (ValueError, TypeError, OverflowError, msgpack.UnpackException) as exc:
        raise bad(f"not a MessagePack value: {exc}") from None
    if type(msg) is not dict:
        raise bad("a message must be a MessagePack map")
    if type(msg.get("t")) is not str:
        raise bad("a message needs a string field 't'")
    return msg


def decode(data: object, family: Family[M], limit: int = MAX_BODY_BYTES) -> M:
    """The message `data` holds, one of `family`'s kinds, or ProtocolError."""
    if type(data) is not bytes:
        raise bad("a frame body must be bytes")
    return decode_mapped(decode_map(data, limit), data, family)


def decode_mapped(msg: dict[str, Any], data: bytes, family: Family[M]) -> M:
    """`decode`, for a caller that has unpacked `data` into `msg` with `decode_map` already."""
    cls = family.kinds.get(msg["t"])
    if cls is None:
        raise ProtocolError("unknown_type", f"no {family.name} of type {msg['t'][:40]!r}")
    if len(data) > max_size(cls):  # repeated keys or padding: longer than any such message
        raise bad(f"{len(data)} bytes is longer than any '{cls.t}' can be")
    result: M = _read_fields(cls, msg, f"'{cls.t}'", top=True)
    return result


def from_map(msg: dict[str, Any], family: Family[M]) -> M:
    """The message an unpacked map holds, one of `family`'s kinds, or ProtocolError."""
    kind = msg.get("t")
    if type(kind) is not str:
        raise bad("a message needs a string field 't'")
    cls = family.kinds.get(kind)
    if cls is None:
        raise ProtocolError("unknown_type", f"no {family.name} of type {kind[:40]!r}")
    result: M = _read_fields(cls, msg, f"'{cls.t}'", top=True)
    return result


def as_map(message: Message) -> dict[str, object]:
    """The message as the map it travels as, `t` first (for code that takes plain maps)."""
    out: dict[str, object] = {"t": message.t}
    out.update(_write_fields(message, f"'{message.t}'"))
    return out


def encode(message: Message) -> bytes:
    """The message as MessagePack bytes, after checking every field against its bounds."""
    out: dict[str, object] = {"t": message.t}
    out.update(_write_fields(message, f"'{message.t}'"))
    return _packer.pack(out)


def encode_frame(sender: int, body: bytes) -> bytes:
    """`encode(Frame(sender=sender, body=body))` for the relay's per-frame path, where `sender`
    is a conn it numbered and `body` came from a `send` it decoded: the same bytes, less work."""
    return _packer.pack({"t": "frame", "from": sender, "body": body})


def encode_map(msg: dict[str, Any]) -> bytes:
    """Pack any map as it is: for tests and tools that must send what no kind allows."""
    return _packer.pack(msg)


_MAX_SIZES: dict[type, int] = {}


def max_size(cls: type[Message]) -> int:
    """The most bytes a message of kind `cls` can take, packed in any valid way."""
    found = _MAX_SIZES.get(cls)
    if found is None:
        found = _MAX_SIZES[cls] = _fields_bound(cls) + 7 + 4 * len(cls.t)
    return found


@typing.dataclass_transform(frozen_default=True, kw_only_default=True)
def kind(cls: type[M]) -> type[M]:
    """Declare a message kind: a frozen, keyword-only dataclass."""
    return dataclass(frozen=True, kw_only=True, slots=True)(cls)

