"""What a seat sends the host (PROTOCOL.md G3) and what it signs (G5, and G9's mental poker)."""

from __future__ import annotations

from typing import Annotated, Final

from netplay.messages.codec import Family, Message, kind, max_size
from netplay.messages.fields import Bin, Bool, ListOf, Opt, Row, Text
from netplay.messages.limits import MAX_CARDS, MAX_MOVE_TEXT, MAX_RAW_CHAT, MAX_RAW_NAME
from netplay.messages.mental import (
    LEAVING_KINDS,
    MENTAL_KINDS,
    PARTY,
    MpChecked,
    MpHandover,
    MpKey,
    MpLost,
    MpShares,
    MpShuffle,
)
from netplay.messages.shapes import (
    CHAIN,
    COUNT,
    DIGEST,
    EPOCH,
    IDENTITY,
    OPENING,
    ROUND,
    SEAT,
    SECRET,
    TOKEN,
    WORD,
    Opening,
    Pledge,
    Seen,
    Signed,
    signed_row,
)

# -- a seat's signed payloads (PROTOCOL.md G5) ---------------------------------------------------


@kind
class Propose(Message):
    """Move `n` of round `round`, with the openings of the cards it puts face up (a seat's);
    without `open` when mental poker opens them (the host's bots' moves, G9)."""

    t = "move"
    round: Annotated[int, ROUND]
    n: Annotated[int, COUNT]
    move: Annotated[str, Text(MAX_MOVE_TEXT)]
    open: Annotated[tuple[Opening, ...] | None, Opt(ListOf(OPENING, MAX_CARDS))] = None
    epoch: Annotated[int | None, Opt(EPOCH)] = None  # G9: its deal's first epoch, if not 0
    party: Annotated[int | None, Opt(PARTY)] = None  # G9, the host's: a key handed over to it


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
    next: Annotated[tuple[Pledge, ...], ListOf(Row(Pledge, (ROUND, EPOCH, DIGEST)), 2)]
    seen: Annotated[Seen | None, Opt(Row(Seen, (ROUND, DIGEST)))] = None


SeatPayload = (Propose | NonceCommit | NonceReveal | MpKey | MpShuffle | MpShares | MpHandover
               | MpLost | MpChecked)
SEAT_PAYLOADS: Final = Family[SeatPayload]("seat payload", [
    Propose, NonceCommit, NonceReveal, *MENTAL_KINDS, *LEAVING_KINDS, MpChecked])
NONCE_PAYLOADS: Final = Family[NonceCommit | NonceReveal]("nonce message",
                                                          [NonceCommit, NonceReveal])
MOVE_PAYLOADS: Final = Family[Propose]("signed move", [Propose])
MentalPayload = MpKey | MpShuffle | MpShares | Propose | MpHandover | MpLost | MpChecked
MENTAL_PAYLOADS: Final = Family[MentalPayload](
    "mental-poker message", [*MENTAL_KINDS, Propose, *LEAVING_KINDS, MpChecked])

NONCE_SIGNED: Final = signed_row(max(max_size(NonceCommit), max_size(NonceReveal)))
MOVE_SIGNED: Final = signed_row(max_size(Propose))
SEAT_SIGNED: Final = signed_row(max(max_size(k) for k in SEAT_PAYLOADS.kinds.values()))


# -- seat to host, unsigned (PROTOCOL.md G3) ------------------------------------------------------


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
class SetHouse(Message):
    """The host's own seat sets the house rules (engine.house's text form) before the start."""

    t = "house"
    rules: Annotated[str, Text(200)]
    owner: Annotated[bytes | None, Opt(SECRET)] = None


@kind
class SeatSays(Message):
    """A seat's signed message for chain `c` (its move, nonce commitment or nonce)."""

    t = "s"
    c: Annotated[int, CHAIN]
    m: Annotated[Signed, SEAT_SIGNED]


@kind
class Rematch(Message):
    """The host's own seat (any seat at a server's table) offers the same seats a new match once
    the match is over."""

    t = "rematch"
    owner: Annotated[bytes | None, Opt(SECRET)] = None


@kind
class Leave(Message):
    """A seated person leaves a match under way: the seat's bot plays it now, not after the
    table's away time, until they come back."""

    t = "leave"


SeatBody = Join | Sync | Chat | Start | Ready | SeatBot | SetHouse | Rematch | Leave | SeatSays
SEAT_BODIES: Final = Family[SeatBody]("seat message", [
    Join, Sync, Chat, Start, Ready, SeatBot, SetHouse, Rematch, Leave, SeatSays])
