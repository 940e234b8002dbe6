"""How a message kind is declared, decoded and encoded, from the field types of `fields`.

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
from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Generic, TypeVar

import msgpack

from netplay.messages.fields import (
    Key,
    Opt,
    ProtocolError,
    Reader,
    Spec,
    Unusual,
    bad,
    wrong_type,
)
from netplay.messages.limits import MAX_BODY_BYTES

M = TypeVar("M", bound="Message")

# One instance is reused: building a Packer per frame costs more than packing a small map.
_packer = msgpack.Packer(use_bin_type=True, autoreset=True)


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


# Nested reads a whole map of fields, so it lives beside the functions that read maps.
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
            raise wrong_type(self, value, where)
        return _write_fields(value, where)

    def bound(self) -> int:
        return _fields_bound(self.cls)

    def kind(self) -> str:
        return "a map"

    def text(self) -> str:
        return f"map {self.cls.__name__} (its own table)"


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

