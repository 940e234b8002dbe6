"""Game messages between the host (the dealer) and the seats, carried as relay frame bodies.

Every body is a MessagePack map with a string `t`; docs/PROTOCOL.md lists
them all. Private cards travel sealed (libsodium sealed boxes) to the seat's
public key, so the relay and the other seats see only ciphertext.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nacl.exceptions import CryptoError
from nacl.public import PrivateKey, PublicKey, SealedBox

from engine import hekata, zodiak
from engine.cards import Card, parse_digit
from engine.errors import IllegalMove
from engine.match import Round
from netplay.wire import ProtocolError, decode, encode, field

MAX_BODY_BYTES = 60_000
MAX_NAME = 24
MAX_CHAT = 300
KEY_BYTES = 32


def pack(t: str, **fields: Any) -> bytes:
    """A game message as MessagePack bytes."""
    return encode({"t": t, **fields})


def unpack(body: Any) -> dict[str, Any]:
    """A game message from a frame body, or ProtocolError."""
    if not isinstance(body, bytes):
        raise ProtocolError("bad_frame", "a frame body must be bytes")
    return decode(body, MAX_BODY_BYTES)


def clean_name(value: Any, default: str) -> str:
    """A printable player name of at most MAX_NAME characters."""
    if not isinstance(value, str):
        return default
    text = "".join(ch for ch in value if ch.isprintable()).strip()[:MAX_NAME]
    return text or default


def public_key(msg: dict[str, Any]) -> bytes:
    """The seat's 32-byte Curve25519 public key from a `join`."""
    key = field(msg, "box", bytes)
    if len(key) != KEY_BYTES:
        raise ProtocolError("bad_frame", f"'box' must be a {KEY_BYTES}-byte public key")
    return key


def seal(cards: Sequence[Card | int | None], key: bytes | None) -> bytes | None:
    """Cards as text, sealed to `key` (None when the seat has no key, such as a host-side bot)."""
    if key is None:
        return None
    text = " ".join(str(c) for c in cards)
    return SealedBox(PublicKey(key)).encrypt(text.encode())


def unseal(blob: Any, private: PrivateKey, game: str, count: int) -> list[Card] | list[int]:
    """Open sealed cards meant for this seat, checking there are `count` of them."""
    if not isinstance(blob, bytes):
        raise ProtocolError("bad_frame", "sealed cards must be bytes")
    try:
        text = SealedBox(private).decrypt(blob).decode()
    except (CryptoError, UnicodeDecodeError):
        raise ProtocolError("bad_frame", "sealed cards do not open with this seat's key") from None
    try:
        cards: list = ([Card.parse(t) for t in text.split()] if game == "zodiak"
                       else [parse_digit(t) for t in text.split()])
    except IllegalMove as exc:
        raise ProtocolError("bad_frame", f"sealed cards: {exc}") from None
    if len(cards) != count:
        raise ProtocolError("bad_frame", f"expected {count} sealed cards, got {len(cards)}")
    return cards


def parse_move(game: str, text: Any) -> zodiak.ZodiakMove | hekata.HekataMove:
    """A move from its text form, or ProtocolError saying why it is not one."""
    if not isinstance(text, str) or len(text) > 400:
        raise ProtocolError("bad_frame", "'move' must be a move in RULES.md notation")
    try:
        return zodiak.parse_move(text) if game == "zodiak" else hekata.HekataMove.parse(text)
    except IllegalMove as exc:
        raise ProtocolError("bad_move", str(exc)) from None


def deal_message(game: str, number: int, state: Round, seat: int | None,
                 key: bytes | None) -> bytes:
    """The public facts of a fresh deal, plus `seat`'s own hand sealed to it."""
    fields: dict[str, Any] = {
        "game": game, "round": number, "dealer": state.dealer, "scores": list(state.scores),
        "sizes": state.hand_sizes(), "stock": len(state.stock), "seat": seat,
        "hand": seal(state.hands[seat], key) if seat is not None else None,
    }
    if isinstance(state, zodiak.ZodiakRound):
        fields |= {"signs": list(state.signs), "pile": [str(c) for c in state.pile]}
    else:
        fields |= {"table": [str(c) for c in state.table]}
    return pack("deal", **fields)


def view_from_deal(msg: dict[str, Any], private: PrivateKey | None) -> Round:
    """Build this seat's view of a fresh deal from a `deal` message, or raise ProtocolError."""
    game = field(msg, "game", str)
    sizes = field(msg, "sizes", list)
    stock = field(msg, "stock", int)
    dealer = field(msg, "dealer", int)
    scores = field(msg, "scores", list)
    seat = field(msg, "seat", int, optional=True)
    if not all(type(n) is int and 0 <= n <= 60 for n in sizes) or not 0 <= stock <= 60:
        raise ProtocolError("bad_frame", "hand sizes and stock must be small counts")
    hands: list[list] = [[None] * n for n in sizes]
    if seat is not None:
        if not 0 <= seat < len(sizes) or private is None:
            raise ProtocolError("bad_frame", "'seat' is not a seat of this table")
        hands[seat] = unseal(msg.get("hand"), private, game, sizes[seat])
    try:
        if game == "zodiak":
            pile = [Card.parse(c) for c in field(msg, "pile", list)]
            state: Round = zodiak.ZodiakRound.from_parts(
                hands, pile, [None] * stock, field(msg, "signs", list), dealer, scores)
            state.sees_stock = False
        elif game == "hekata":
            table = [parse_digit(c) for c in field(msg, "table", list)]
            state = hekata.HekataDeal.from_parts(hands, table, [None] * stock, dealer, scores)
        else:
            raise ProtocolError("bad_frame", f"unknown game {game!r}")
    except (IllegalMove, TypeError) as exc:
        raise ProtocolError("bad_frame", f"impossible deal: {exc}") from None
    return state
