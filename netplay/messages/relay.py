"""The relay layer's messages (PROTOCOL.md sections 3 and 4): rooms, conns, frames, refusals."""

from __future__ import annotations

from typing import Annotated, Any, Final

from netplay.messages.codec import Family, Message, encode, encode_map, kind, max_size
from netplay.messages.fields import Bin, Bool, Exactly, Int, Key, Opt, Text, Version
from netplay.messages.limits import (
    MAX_RELAY_BODY,
    MAX_UINT32,
    PROTOCOL_VERSION,
    SIGNED_MAX,
    SIGNED_MIN,
)
from netplay.messages.shapes import CODE, RATE, SECRET


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
class Drop(Message):
    """The host has the relay close conn `conn` (its seat came back on another); no answer."""

    t = "drop"
    conn: Annotated[int, Int(SIGNED_MIN, SIGNED_MAX)]


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


RelayRequest = Open | Enter | Send | Admit | Drop | Ping
RelayEvent = Opened | Entered | Frame | Arrived | Departed | HostAway | HostBack | Pong | Refused
RELAY_REQUESTS: Final = Family[RelayRequest]("relay message",
                                                 [Open, Enter, Send, Admit, Drop, Ping])
RELAY_EVENTS: Final = Family[RelayEvent]("relay answer", [
    Opened, Entered, Frame, Arrived, Departed, HostAway, HostBack, Pong, Refused])

# -- the per-frame paths: the same checks and bytes as decode and encode, less work ----------

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
    return encode_map({"t": "send", "body": body} if to is None
                      else {"t": "send", "body": body, "to": to})
