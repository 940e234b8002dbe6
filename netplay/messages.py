"""Every message cardtui programs send each other, as typed values; docs/PROTOCOL.md mirrors it.

A message is one MessagePack map with a str field `t`, its kind. Each kind is a frozen
dataclass here whose fields say their wire type and bound (`Annotated[int, Int(0, 7)]`).
`decode(data, FAMILY)` turns bytes into exactly one kind of that family or raises
ProtocolError: `too_big`, `bad_frame` (not a map; a field missing, of the wrong type, too long,
or one the kind does not have), `unknown_type` or `version`. `encode` checks the same bounds
before it packs, so what one side sends the other accepts, and `max_size` is the most bytes a
kind can take. The families follow PROTOCOL.md: the relay layer (sections 3 and 4), the
unsigned game bodies (G3, G4), and the signed payloads (G5).
"""

from __future__ import annotations

import sys
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from typing import Annotated, Any, ClassVar, Final, Generic, NamedTuple, TypeVar

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
MAX_EPOCHS: Final = 64  # shuffles in one round (Zodiak reshuffles)
MAX_SEALED: Final = 256  # a sealed card: a box around [room, round, epoch, position, card, opening]
MAX_HOST_PAYLOAD: Final = MAX_BODY_BYTES - 200  # the host's, inside its `s` envelope
MAX_TABLE_ID: Final = 64
MAX_SUMMARY: Final = 1000
MAX_UINT32: Final = 2**32 - 1
SIGNED_MIN: Final = -(2**63)
SIGNED_MAX: Final = 2**63 - 1

M = TypeVar("M", bound="Message")

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

    def bound(self) -> int:
        """The most bytes the value can take, packed."""
        raise NotImplementedError

    def kind(self) -> str:
        """What the value must be, for error messages."""
        raise NotImplementedError


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
            raise bad(f"{where} must be from {self.lo} to {self.hi}, not {value}")
        return value

    def bound(self) -> int:
        return 9

    def kind(self) -> str:
        return "int"


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


@dataclass(frozen=True)
class Bool(Spec):
    """true or false."""

    def read(self, value: object, where: str) -> bool:
        if type(value) is not bool:
            raise _wrong(self, value, where)
        return value

    def bound(self) -> int:
        return 1

    def kind(self) -> str:
        return "bool"


@dataclass(frozen=True)
class Text(Spec):
    """A str of at most `most` characters (and at least `least`)."""

    most: int
    least: int = 0

    def read(self, value: object, where: str) -> str:
        if type(value) is not str:
            raise _wrong(self, value, where)
        if not self.least <= len(value) <= self.most:
            raise bad(f"{where} must be {self.least} to {self.most} characters, not {len(value)}")
        return value

    def bound(self) -> int:
        return 5 + 4 * self.most  # UTF-8: at most four bytes a character

    def kind(self) -> str:
        return "str"


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
            raise bad(f"{where} must be at most {self.most} bytes, not {len(value)}")
        return value

    def bound(self) -> int:
        return 5 + self.most

    def kind(self) -> str:
        return "bin"


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

    def bound(self) -> int:
        return self.spec.bound()

    def kind(self) -> str:
        return f"{self.spec.kind()} or nil"


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


@dataclass(frozen=True)
class Nested(Spec):
    """A map holding the fields of the dataclass `cls` and no others."""

    cls: type

    def read(self, value: object, where: str) -> Any:
        if type(value) is not dict:
            raise bad(f"{where} must be a map")
        return _read_fields(self.cls, value, where)

    def write(self, value: Any, where: str) -> object:
        if not isinstance(value, self.cls):
            raise _wrong(self, value, where)
        return _write_fields(value, where)

    def bound(self) -> int:
        return _fields_bound(self.cls)

    def kind(self) -> str:
        return "a map"


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
        hints = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]),
                                      include_extras=True)
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


def _read_fields(cls: type, msg: dict[Any, Any], where: str, top: bool = False) -> Any:
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


def encode(message: Message) -> bytes:
    """The message as MessagePack bytes, after checking every field against its bounds."""
    out: dict[str, object] = {"t": message.t}
    out.update(_write_fields(message, f"'{message.t}'"))
    return _packer.pack(out)


_SEND_KEYS: Final = frozenset({"t", "body", "to", "from"})
_FRAME_KEYS: Final = frozenset({"t", "body", "from"})


def _is_conn(value: object) -> bool:
    return type(value) is int and SIGNED_MIN <= value <= SIGNED_MAX


def read_send(msg: dict[str, Any], size: int) -> Send | None:
    """The `send` a decoded map holds when it is a well-formed one, else None: the relay's
    per-frame path, the same checks as `decode_mapped` without its generic walk (which then
    names what is wrong, or reads the other kinds). `size`: the bytes `msg` was unpacked from."""
    if msg["t"] != "send" or not _SEND_KEYS.issuperset(msg) or size > max_size(Send):
        return None
    body, to, claimed = msg.get("body"), msg.get("to"), msg.get("from")
    if (type(body) is not bytes or len(body) > MAX_RELAY_BODY
            or (to is not None and not _is_conn(to))
            or (claimed is not None and not _is_conn(claimed))):
        return None
    return Send(body=body, to=to, claimed=claimed)


def read_frame(msg: dict[str, Any], size: int) -> Frame | None:
    """The `frame` a decoded map holds when it is a well-formed one, else None (a client's
    per-frame path, as `read_send` is the relay's)."""
    if msg["t"] != "frame" or not _FRAME_KEYS.issuperset(msg) or size > max_size(Frame):
        return None
    sender, body = msg.get("from"), msg.get("body")
    if (type(sender) is not int or not 0 <= sender <= MAX_UINT32
            or type(body) is not bytes or len(body) > MAX_RELAY_BODY):
        return None
    return Frame(sender=sender, body=body)


def encode_send(body: bytes, to: int | None) -> bytes:
    """`encode(Send(body=body, to=to))` for a client's per-message path: the same bytes."""
    if type(body) is not bytes or len(body) > MAX_RELAY_BODY or (
            to is not None and not _is_conn(to)):
        return encode(Send(body=body, to=to))  # which says what is wrong
    return _packer.pack({"t": "send", "body": body} if to is None
                        else {"t": "send", "body": body, "to": to})


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


# -- shared shapes -------------------------------------------------------------------------------


class Signed(NamedTuple):
    """A signed message in its wire form (FAIRNESS.md, "Messages")."""

    seq: int
    prev_hash: bytes
    payload: bytes
    signature: bytes


class Opening(NamedTuple):
    """A card opening in its wire form: `[epoch, position, card, opening]`."""

    epoch: int
    position: int
    card: str
    opening: bytes


class Pledge(NamedTuple):
    """A seat's commitment to its nonce for a later shuffle: `[round, epoch, commit]`."""

    round: int
    epoch: int
    commit: bytes


class Seen(NamedTuple):
    """The transcript digest a seat saw at the end of a round: `[round, digest]`."""

    round: int
    digest: bytes


class Proof(NamedTuple):
    """A seat's signed message that holds its nonce commitment: `[seat, SIGNED]`."""

    seat: int
    message: Signed


def _signed(payload_most: int) -> Row:
    return Row(Signed, (Int(0, SIGNED_MAX), Exactly(32), Bin(payload_most), Exactly(64)))


HOST_SIGNED: Final = _signed(MAX_HOST_PAYLOAD)
OPENING: Final = Row(Opening, (Int(), Int(0, 4096), Text(8, 1), Exactly(32)))
ROUND: Final = Int(0, MAX_UINT32)
EPOCH: Final = Int(0, MAX_EPOCHS - 1)
SEAT: Final = Int(0, MAX_SEATS - 1)
SEATS: Final = ListOf(SEAT, MAX_SEATS)
CHAIN: Final = Int(-1, MAX_UINT32)
COUNT: Final = Int(0, MAX_UINT32)
SCORE: Final = Either((Int(SIGNED_MIN, SIGNED_MAX), Digits(MAX_NUMBER_DIGITS)))
SCORES: Final = ListOf(SCORE, MAX_SEATS)
IDENTITY: Final = Exactly(64)
DIGEST: Final = Exactly(32)
TOKEN: Final = Exactly(16)
SECRET: Final = Bin(64)  # an owner secret or a host secret as a peer sends it
GAME: Final = Text(16, 1)
WORD: Final = Text(16)  # a Zodiak sign, a bot kind
CODE: Final = Text(40, 1)
RATE: Final = Real(0.0, 1e12)

# -- a seat's signed payloads (PROTOCOL.md G5) ---------------------------------------------------


@kind
class Propose(Message):
    """A seat's move `n` of round `round`, with the openings of the cards it puts face up."""

    t = "move"
    round: Annotated[int, ROUND]
    n: Annotated[int, COUNT]
    move: Annotated[str, Text(MAX_MOVE_TEXT)]
    open: Annotated[tuple[Opening, ...], ListOf(OPENING, MAX_CARDS)]


@kind
class NonceCommit(Message):
    """A seat's commitment to its nonce for one shuffle."""

    t = "nonce_commit"
    round: Annotated[int, ROUND]
    epoch: Annotated[int, EPOCH]
    commit: Annotated[bytes, DIGEST]


@kind
class NonceReveal(Message):
    """A seat's nonce for one shuffle, its commitments to the next, and what it last saw."""

    t = "nonce"
    round: Annotated[int, ROUND]
    epoch: Annotated[int, EPOCH]
    nonce: Annotated[bytes, DIGEST]
    next: Annotated[tuple[Pledge, ...], ListOf(Row(Pledge, (ROUND, EPOCH, DIGEST)), 4)]
    seen: Annotated[Seen | None, Opt(Row(Seen, (ROUND, DIGEST)))] = None


SeatPayload = Propose | NonceCommit | NonceReveal
SEAT_PAYLOADS: Final = Family[SeatPayload]("seat payload", [Propose, NonceCommit, NonceReveal])
NONCE_PAYLOADS: Final = Family[NonceCommit | NonceReveal]("nonce message",
                                                          [NonceCommit, NonceReveal])

NONCE_SIGNED: Final = _signed(max(max_size(NonceCommit), max_size(NonceReveal)))
MOVE_SIGNED: Final = _signed(max_size(Propose))
SEAT_SIGNED: Final = _signed(max(max_size(k) for k in SEAT_PAYLOADS.kinds.values()))

# -- the relay layer (PROTOCOL.md sections 3 and 4) ----------------------------------------------


@kind
class Open(Message):
    """Open a new room as its host, or reclaim `room` with its `host_secret`."""

    t = "open"
    v: Annotated[int, Version()] = PROTOCOL_VERSION
    room: Annotated[str | None, Opt(Text(40))] = None
    host_secret: Annotated[bytes | None, Opt(SECRET)] = None


@kind
class Enter(Message):
    """Enter `room` as a seat (nil: the only room of a single-room relay)."""

    t = "enter"
    v: Annotated[int, Version()] = PROTOCOL_VERSION
    room: Annotated[str | None, Opt(Text(40))] = None


@kind
class Send(Message):
    """Pass `body` on: a seat's always reaches the host; the host's reaches `to` or every seat."""

    t = "send"
    body: Annotated[bytes, Bin(MAX_RELAY_BODY)]
    to: Annotated[int | None, Opt(Int(SIGNED_MIN, SIGNED_MAX))] = None
    # The relay stamps the sender itself; a `from` a sender writes is read and ignored.
    claimed: Annotated[int | None, Opt(Int(SIGNED_MIN, SIGNED_MAX)), Key("from")] = None


@kind
class Admit(Message):
    """The host vouches for conn `conn`: a seat, or (with `watch`) a watcher; no answer."""

    t = "admit"
    conn: Annotated[int, Int(SIGNED_MIN, SIGNED_MAX)]
    watch: Annotated[bool | None, Opt(Bool())] = None


@kind
class Ping(Message):
    """Ask for a pong."""

    t = "ping"


@kind
class Opened(Message):
    """The relay's answer to `open`."""

    t = "opened"
    room: Annotated[str, Text(40, 1)]
    conn: Annotated[int, Int()]
    host_secret: Annotated[bytes, Exactly(32)]
    rate: Annotated[float | None, Opt(RATE)] = None  # messages a second this conn may send
    burst: Annotated[float | None, Opt(RATE)] = None


@kind
class Entered(Message):
    """The relay's answer to `enter`."""

    t = "entered"
    room: Annotated[str, Text(40, 1)]
    conn: Annotated[int, Int()]
    rate: Annotated[float | None, Opt(RATE)] = None
    burst: Annotated[float | None, Opt(RATE)] = None


@kind
class Frame(Message):
    """A body addressed to this conn, stamped with its sender's conn."""

    t = "frame"
    sender: Annotated[int, Int(), Key("from")]
    body: Annotated[bytes, Bin(MAX_RELAY_BODY)]


@kind
class Arrived(Message):
    """To the host: a seat entered."""

    t = "arrived"
    conn: Annotated[int, Int()]


@kind
class Departed(Message):
    """To the host: a seat's connection closed."""

    t = "departed"
    conn: Annotated[int, Int()]


@kind
class HostAway(Message):
    """To every seat: the host's connection closed."""

    t = "host_away"


@kind
class HostBack(Message):
    """To every seat: the host reclaimed the room."""

    t = "host_back"


@kind
class Pong(Message):
    """The answer to `ping`."""

    t = "pong"


@kind
class Refused(Message):
    """A refused message: `code` for programs, `message` for people (relay and host alike)."""

    t = "error"
    code: Annotated[str, CODE]
    message: Annotated[str, Text(1000)]
    seq: Annotated[int | None, Opt(Int(-1, SIGNED_MAX))] = None  # the refused message's number


RelayRequest = Open | Enter | Send | Admit | Ping
RelayEvent = Opened | Entered | Frame | Arrived | Departed | HostAway | HostBack | Pong | Refused
RELAY_REQUESTS: Final = Family[RelayRequest]("relay message", [Open, Enter, Send, Admit, Ping])
RELAY_EVENTS: Final = Family[RelayEvent]("relay answer", [
    Opened, Entered, Frame, Arrived, Departed, HostAway, HostBack, Pong, Refused])

# -- seat to host (PROTOCOL.md G3) ---------------------------------------------------------------


@kind
class Join(Message):
    """Take a seat (or the seat `token` names), or watch; then be resynced from `c`, `n`."""

    t = "join"
    name: Annotated[str, Text(MAX_RAW_NAME)]
    id: Annotated[bytes, IDENTITY]
    c: Annotated[int, CHAIN]
    n: Annotated[int, COUNT]
    watch: Annotated[bool | None, Opt(Bool())] = None
    sign: Annotated[str | None, Opt(WORD)] = None
    token: Annotated[bytes | None, Opt(TOKEN)] = None
    owner: Annotated[bytes | None, Opt(SECRET)] = None
    proof: Annotated[bytes | None, Opt(Bin(64))] = None  # its key's signature of the challenge


@kind
class Sync(Message):
    """Resend the host's chain `c` from message `n` on."""

    t = "sync"
    c: Annotated[int, CHAIN]
    n: Annotated[int, COUNT]


@kind
class Chat(Message):
    """Say something to the table."""

    t = "chat"
    text: Annotated[str, Text(MAX_RAW_CHAT)]


@kind
class Start(Message):
    """The host's own seat starts the match, with bots in the empty seats."""

    t = "start"
    owner: Annotated[bytes | None, Opt(SECRET)] = None


@kind
class Ready(Message):
    """A seated person is (or is no longer) ready to begin."""

    t = "ready"
    ready: Annotated[bool, Bool()]


@kind
class SeatBot(Message):
    """The host's own seat puts a bot of `kind` in an empty seat, or takes it out (nil)."""

    t = "seat_bot"
    seat: Annotated[int, SEAT]
    owner: Annotated[bytes | None, Opt(SECRET)] = None
    kind: Annotated[str | None, Opt(WORD)] = None


@kind
class SeatSays(Message):
    """A seat's signed message for chain `c` (its move, nonce commitment or nonce)."""

    t = "s"
    c: Annotated[int, CHAIN]
    m: Annotated[Signed, SEAT_SIGNED]


SeatBody = Join | Sync | Chat | Start | Ready | SeatBot | SeatSays
SEAT_BODIES: Final = Family[SeatBody]("seat message", [
    Join, Sync, Chat, Start, Ready, SeatBot, SeatSays])

# -- host to one seat (PROTOCOL.md G4) -----------------------------------------------------------


@kind
class Welcome(Message):
    """The host's answer to `join`: the seat (nil: watching), its token and the table's facts."""

    t = "welcome"
    game: Annotated[str, GAME]
    players: Annotated[int, Int(1, MAX_SEATS)]
    target: Annotated[int | str, SCORE]
    table: Annotated[str, Text(MAX_TABLE_ID, 1)]
    host: Annotated[bytes, IDENTITY]
    ids: Annotated[tuple[bytes | None, ...], ListOf(Opt(IDENTITY), MAX_SEATS)]
    seat: Annotated[int | None, Opt(SEAT)] = None
    token: Annotated[bytes | None, Opt(TOKEN)] = None
    owner: Annotated[bool | None, Opt(Bool())] = None


@kind
class Challenge(Message):
    """Prove you hold your identity's key: join again with `proof`, its signature of `nonce`."""

    t = "challenge"
    nonce: Annotated[bytes, Exactly(32)]
    table: Annotated[str, Text(MAX_TABLE_ID, 1)]


@kind
class Resync(Message):
    """The host's chain `c` follows from message `n`."""

    t = "resync"
    c: Annotated[int, CHAIN]
    n: Annotated[int, COUNT]


@kind
class Synced(Message):
    """The resync is over: chain `c` has `n` messages."""

    t = "synced"
    c: Annotated[int, CHAIN]
    n: Annotated[int, COUNT]


@kind
class HostSays(Message):
    """One of the host's signed messages, of chain `c`."""

    t = "s"
    c: Annotated[int, CHAIN]
    m: Annotated[Signed, HOST_SIGNED]


HostBody = Welcome | Challenge | Resync | Synced | Refused | HostSays
HOST_BODIES: Final = Family[HostBody]("host message", [
    Welcome, Challenge, Resync, Synced, Refused, HostSays])

# -- the host's signed payloads (PROTOCOL.md G5) -------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class LobbySeat:
    """One seat as the lobby shows it."""

    seat: Annotated[int, SEAT]
    name: Annotated[str, Text(MAX_NAME_WIRE)]
    connected: Annotated[bool, Bool()]
    ready: Annotated[bool, Bool()]
    sign: Annotated[str | None, Opt(WORD)] = None
    bot: Annotated[str | None, Opt(WORD)] = None
    id: Annotated[bytes | None, Opt(IDENTITY)] = None


AFTER: Final = Opt(COUNT)


@kind
class Lobby(Message):
    """Who sits where, whether the match has started, how many watch."""

    t = "lobby"
    seats: Annotated[tuple[LobbySeat, ...], ListOf(Nested(LobbySeat), MAX_SEATS)]
    started: Annotated[bool, Bool()]
    watching: Annotated[int, COUNT]
    after: Annotated[int | None, AFTER] = None


@kind
class Said(Message):
    """A chat line, from a seat or (nil) a watcher."""

    t = "chat"
    name: Annotated[str, Text(MAX_NAME_WIRE)]
    text: Annotated[str, Text(MAX_CHAT)]
    seat: Annotated[int | None, Opt(SEAT)] = None
    after: Annotated[int | None, AFTER] = None


@kind
class Shuffle(Message):
    """A shuffle begins: the dealer's seed commitment, who gives a nonce, the commitments held."""

    t = "shuffle"
    round: Annotated[int, ROUND]
    epoch: Annotated[int, EPOCH]
    seed: Annotated[bytes, DIGEST]
    seats: Annotated[tuple[int, ...], SEATS]
    commits: Annotated[tuple[Proof, ...], ListOf(Row(Proof, (SEAT, NONCE_SIGNED)), MAX_SEATS)]
    missing: Annotated[tuple[int, ...], SEATS]
    after: Annotated[int | None, AFTER] = None


@kind
class Reveal(Message):
    """Every commitment of `seats` is out: they reveal their nonces."""

    t = "reveal"
    round: Annotated[int, ROUND]
    epoch: Annotated[int, EPOCH]
    seats: Annotated[tuple[int, ...], SEATS]
    after: Annotated[int | None, AFTER] = None


@kind
class Forward(Message):
    """A seat's signed nonce commitment or nonce, verbatim."""

    t = "fwd"
    seat: Annotated[int, SEAT]
    m: Annotated[Signed, NONCE_SIGNED]
    after: Annotated[int | None, AFTER] = None


@kind
class Deck(Message):
    """The commitment of every position of a shuffled deck."""

    t = "deck"
    round: Annotated[int, ROUND]
    epoch: Annotated[int, EPOCH]
    commitments: Annotated[tuple[bytes, ...], ListOf(DIGEST, MAX_CARDS)]
    after: Annotated[int | None, AFTER] = None


DealtCard = bytes | Opening | None  # sealed to its seat, opened on the table, or a bot's


@kind
class Deal(Message):
    """A round's deal: a seat's cards sealed to it, the table's opened, bots' nil."""

    t = "deal"
    round: Annotated[int, ROUND]
    dealer: Annotated[int, SEAT]
    players: Annotated[int, Int(1, MAX_SEATS)]
    game: Annotated[str, GAME]
    scores: Annotated[tuple[int | str, ...], SCORES]
    cards: Annotated[tuple[DealtCard, ...],
                     ListOf(Opt(Either((Bin(MAX_SEALED), OPENING))), MAX_CARDS)]
    signs: Annotated[tuple[str, ...] | None, Opt(ListOf(WORD, MAX_SEATS))] = None
    after: Annotated[int | None, AFTER] = None


@kind
class Moved(Message):
    """A move accepted: the seat's signed `by`, or (a bot's, an absent seat's) `move` and `open`."""

    t = "moved"
    round: Annotated[int, ROUND]
    n: Annotated[int, COUNT]
    seat: Annotated[int, SEAT]
    drawn: Annotated[tuple[bytes | None, ...], ListOf(Opt(Bin(MAX_SEALED)), MAX_CARDS)]
    by: Annotated[Signed | None, Opt(MOVE_SIGNED)] = None
    move: Annotated[str | None, Opt(Text(MAX_MOVE_TEXT))] = None
    open: Annotated[tuple[Opening, ...] | None, Opt(ListOf(OPENING, MAX_CARDS))] = None
    after: Annotated[int | None, AFTER] = None


@kind
class RoundEnd(Message):
    """A round is over: its winner, points, the match scores, and every seed it used."""

    t = "round_end"
    round: Annotated[int, ROUND]
    points: Annotated[int | str, SCORE]
    scores: Annotated[tuple[int | str, ...], SCORES]
    summary: Annotated[str, Text(MAX_SUMMARY)]
    seeds: Annotated[tuple[bytes, ...], ListOf(DIGEST, MAX_EPOCHS)]
    winner: Annotated[int | None, Opt(SEAT)] = None
    after: Annotated[int | None, AFTER] = None


@kind
class MatchEnd(Message):
    """The match is over."""

    t = "match_end"
    game: Annotated[str, GAME]
    scores: Annotated[tuple[int | str, ...], SCORES]
    moves: Annotated[int, COUNT]
    winner: Annotated[int | None, Opt(SEAT)] = None
    after: Annotated[int | None, AFTER] = None


HostPayload = (Lobby | Said | Shuffle | Reveal | Forward | Deck | Deal | Moved | RoundEnd
               | MatchEnd)
HOST_PAYLOADS: Final = Family[HostPayload]("host payload", [
    Lobby, Said, Shuffle, Reveal, Forward, Deck, Deal, Moved, RoundEnd, MatchEnd])

FAMILIES: Final[tuple[Family[Any], ...]] = (
    RELAY_REQUESTS, RELAY_EVENTS, SEAT_BODIES, HOST_BODIES, HOST_PAYLOADS, SEAT_PAYLOADS)
