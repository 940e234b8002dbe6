"""Game messages between the host (the dealer) and the seats, and the dealing layout both share.

Every relay frame body is a MessagePack map with a string `t` (docs/PROTOCOL.md, "Game
messages"). Everything the host says to the table travels as a signed, numbered, hash-chained
`s` envelope (one chain per round, netplay/fair/transcript.py); a seat's moves and nonces travel the
same way inside it. Cards reach their seat sealed with their opening (docs/FAIRNESS.md), so the
relay sees only ciphertext and every card can be checked against the dealer's commitments.
`RoundLedger` is what a seat keeps of one round to check it, then audit and replay it.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, cast, overload

from engine import hekata, zodiak
from engine.cards import Card
from engine.errors import IllegalMove, RecordError
from engine.games import game_named
from engine.house import STANDARD
from netplay.fair import (
    DEALER,
    TABLE,
    CardOpening,
    Failure,
    FairnessError,
    Identity,
    Owner,
    PublicIdentity,
    RoundAudit,
    SignedMessage,
    genesis_hash,
    shuffle_order,
    sign_message,
    tagged_hash,
)
from netplay.fair.mental_play import played_texts
from netplay.messages import ProtocolError
from netplay.messages import decode_map as decode
from netplay.messages import encode_map as encode

MAX_BODY_BYTES = 60_000
T = TypeVar("T")


@overload
def field(msg: dict[str, Any], name: str, kind: type[T], optional: Literal[False] = False) -> T: ...


@overload
def field(msg: dict[str, Any], name: str, kind: type[T], optional: bool) -> T | None: ...


def field(msg: dict[str, Any], name: str, kind: type[T], optional: bool = False) -> T | None:
    """Return `msg[name]` checked to be of `kind` (None allowed when optional), else ProtocolError."""
    value = msg.get(name)
    if value is None:
        if optional:
            return None
        raise ProtocolError("bad_frame", f"'{msg.get('t')}' needs a field '{name}'")
    # bool is an int subclass; a True where a number belongs is a bug or an attack.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ProtocolError(
            "bad_frame",
            f"field '{name}' of '{msg.get('t')}' must be {kind.__name__}, "
            f"not {type(value).__name__}",
        )
    return value

SPECTATOR = 63  # the audit's "own seat" for a watcher: a seat no table has
MAX_NAME = 24
MAX_CHAT = 300
MAX_TABLE_ID = 64  # the host's table id: "ROOMCODE-" and 16 hex digits (27 characters)
HOST_SENDER = DEALER
MAX_NUMBER_DIGITS = 120  # a Hekata trick of all 50 cards has 50 digits; scores stay far below
WIRE_INT_LIMIT = 2**63  # a number outside [-2**63, 2**63) travels as its decimal digits


def pack(t: str, **fields: Any) -> bytes:
    """A game message as MessagePack bytes."""
    return encode({"t": t, **fields})


def unpack(body: Any) -> dict[str, Any]:
    """A game message from a frame body, or ProtocolError."""
    if not isinstance(body, bytes):
        raise ProtocolError("bad_frame", "a frame body must be bytes")
    return decode(body, MAX_BODY_BYTES)


def wire_number(value: int) -> int | str:
    """A score or total for the wire: an int inside signed 64 bits, else its decimal digits."""
    return value if -WIRE_INT_LIMIT <= value < WIRE_INT_LIMIT else str(value)


def wire_numbers(values: Any) -> list[int | str]:
    """Scores for the wire, each as `wire_number` writes it."""
    return [wire_number(v) for v in values]


def read_number(value: Any, what: str = "number") -> int:
    """A score or total from the wire (an int, or a str of decimal digits), or ProtocolError."""
    if type(value) is int:
        return value
    digits = value.removeprefix("-") if isinstance(value, str) else ""
    if (isinstance(value, str) and 0 < len(digits) <= MAX_NUMBER_DIGITS
            and digits.isascii() and digits.isdigit()):
        number = int(value)
        if str(number) == value and not -WIRE_INT_LIMIT <= number < WIRE_INT_LIMIT:
            return number
    raise ProtocolError("bad_frame", f"{what} must be an int, or a str of more than 18 decimal"
                        f" digits (at most {MAX_NUMBER_DIGITS})")


def read_numbers(value: Any, what: str, count: int | None = None) -> list[int]:
    """A list of scores from the wire (see `read_number`), of `count` items when given."""
    if not isinstance(value, list) or (count is not None and len(value) != count):
        raise ProtocolError("bad_frame", f"{what} must be a list of {count or 'some'} numbers")
    return [read_number(v, what) for v in value]


def join_proof_digest(table: str, challenge: bytes) -> bytes:
    """What a joiner signs to prove it holds its identity's key: the host's fresh challenge."""
    return tagged_hash("join", table, challenge)


def clean_name(value: Any, default: str) -> str:
    """A printable player name of at most MAX_NAME characters."""
    if not isinstance(value, str):
        return default
    text = "".join(ch for ch in value if ch.isprintable()).strip()[:MAX_NAME]
    return text or default


def public_identity(value: Any) -> PublicIdentity:
    """A 64-byte public identity (verify key, box key) from a message, or ProtocolError."""
    try:
        return PublicIdentity.from_bytes(value)
    except FairnessError:
        raise ProtocolError("bad_frame", "'id' must be a 64-byte public identity") from None


def parse_move(game: str, text: Any) -> zodiak.ZodiakMove | hekata.HekataMove:
    """A move from its text form, or ProtocolError saying why it is not one."""
    if not isinstance(text, str) or len(text) > 400:
        raise ProtocolError("bad_frame", "'move' must be a move in the notation of tui/RULES.md 3")
    try:
        return game_named(game).parse_move(text)
    except IllegalMove as exc:
        raise ProtocolError("bad_move", str(exc)) from None


def card_of(game: str, text: str) -> Card | int:
    """The engine's card for its text (`7H`, or a digit), raising IllegalMove if it is none."""
    return game_named(game).parse_card(text)


def played_cards(move: Any) -> list[str]:
    """The cards a move puts face up, as text (a Zodiak run's cards, the Hekata card laid)."""
    return played_texts(move)


# -- dealing layout ---------------------------------------------------------------------


def canonical_deck(game: str) -> list[str]:
    """Epoch 0's canonical deck: the game's cards in their fixed order, as text."""
    return [str(c) for c in game_named(game).deck()]


def deal_layout(game: str, players: int) -> list[Owner]:
    """Who gets each position dealt at once from epoch 0, matching the engine's `deal`.

    The engine deals consecutively: seat 0 gets the first hand-size positions, seat 1 the
    next, and so on; then the face-up card(s) go to the table; the rest is the stock.
    """
    return [TABLE if seat is None else seat for seat in game_named(game).deal_layout(players)]


def draw_positions(sizes: list[int], consumed: int, stock_left: int,
                   count: int) -> list[tuple[int, int]]:
    """The (epoch, position) of each of `count` cards drawn now, oldest stock first.

    `sizes` are the committed deck sizes by epoch, `consumed` how many epochs the round has
    reached (1 + reshuffles done) and `stock_left` the cards left in the current stock.
    Positions leave a stock strictly in order, so both sides derive them from the engine.
    """
    epoch = consumed - 1
    first = (sizes[epoch] if 0 <= epoch < len(sizes) else 0) - stock_left
    old = [(epoch, first + i) for i in range(min(stock_left, count))]
    return old + [(epoch + 1, i) for i in range(count - len(old))]


# -- signed chains ----------------------------------------------------------------------


def chain_room(table: str, chain: int) -> str:
    """The transcript context of one chain: the table id and the chain (round) number."""
    return f"{table}/{chain}"


def nonce_sender(seat: int) -> str:
    """The chain name of a seat's nonce messages, apart from its moves so neither waits."""
    return f"{seat}/nonce"


@dataclass
class ChainHead:
    """Where one sender's chain stands: the next number and the digest it must link to."""

    seq: int
    head: bytes

    @classmethod
    def start(cls, room: str, sender: int | str) -> ChainHead:
        """A chain with no message yet."""
        return cls(0, genesis_hash(room, sender))

    def sign(self, identity: Identity, payload: bytes) -> SignedMessage:
        """The next message carrying `payload`; the head moves only when it is accepted."""
        return sign_message(identity, self.seq, self.head, payload)

    def follows(self, message: SignedMessage) -> bool:
        """Whether `message` is exactly the next one of this chain."""
        return message.seq == self.seq and hmac.compare_digest(message.prev_hash, self.head)

    def advance(self, message: SignedMessage) -> None:
        """Record that `message` was accepted."""
        self.seq, self.head = message.seq + 1, message.digest


def envelope(chain: int, message: SignedMessage) -> bytes:
    """A signed message as a frame body of chain `chain`."""
    return pack("s", c=chain, m=message.to_wire())


def inner(payload: bytes) -> dict[str, Any]:
    """The game message inside a signed payload, or ProtocolError."""
    return decode(payload, MAX_BODY_BYTES)


# -- what a seat checks --------------------------------------------------------------------


@dataclass
class OpenShuffle:
    """A shuffle waiting for nonces: which seats take part, which must still commit."""

    epoch: int
    seats: list[int]
    missing: list[int]
    reveal_open: bool


class RoundLedger:
    """One round's dealing as this client saw it: the audit, the decks, its own cards, the moves."""

    def __init__(self, game: str, table: str, number: int, seat: int | None) -> None:
        self.game, self.table, self.number, self.seat = game, table, number, seat
        self.house = STANDARD  # the table's house rules, which the replay checks by
        self.audit = RoundAudit(table, number, SPECTATOR if seat is None else seat)
        self.canonical: dict[int, list[str]] = {}
        self.nonces: dict[int, dict[int, bytes]] = {}
        self.committed: dict[int, set[int]] = {}
        self.mine: list[CardOpening] = []  # openings of this seat's cards not yet played
        self.moves: list[tuple[int, Any]] = []
        self.start: tuple[int, list[int], list[str], int] | None = None
        self.failures: list[Failure] = []
        self.open: OpenShuffle | None = None
        self.early_seeds: list[Any] = []  # revealed in `seeds` messages before `round_end`
        self.ended = False

    def sizes(self) -> list[int]:
        """The size of each committed deck, by epoch."""
        return [len(self.canonical.get(e, ())) for e in range(max(self.canonical, default=-1) + 1)]

    def verdict(self, seeds: list[Any], scores: list[int]) -> list[Failure]:
        """Check every revealed seed, audit the round and replay it; return what failed."""
        for epoch, seed in enumerate(seeds):
            try:
                self.audit.seed_revealed(epoch, seed)
            except FairnessError:
                pass  # kept by the audit for its report
        failures = list(self.failures) + list(self.audit.verify().failures)
        if not failures:
            problem = self.replay(seeds, scores)
            if problem:
                failures.append(Failure(DEALER, problem))
        return list(dict.fromkeys(failures))

    def replay(self, seeds: list[bytes], scores: list[int]) -> str | None:
        """Replay the round with the engine from the revealed decks; say what disagrees, if any."""
        try:
            decks = []
            for epoch in range(len(self.canonical)):
                canonical = self.canonical[epoch]
                nonces = [n for _, n in sorted(self.nonces.get(epoch, {}).items())]
                order = shuffle_order(seeds[epoch], nonces, len(canonical))
                decks.append([card_of(self.game, canonical[i]) for i in order])
            assert self.start is not None
            dealer, start_scores, signs, players = self.start
            state = game_named(self.game).deal(decks[0], players, signs, dealer, start_scores,
                                               self.house)
            if isinstance(state, zodiak.ZodiakRound):
                state.reshuffles = cast(list[list[Card]], decks[1:])  # Zodiak's cards are Cards
            for number, (seat, move) in enumerate(self.moves):
                if state.turn != seat:
                    return f"replaying the revealed deck, move {number} was not seat {seat}'s"
                state.push(move)
        except (IllegalMove, RecordError, ValueError, TypeError, IndexError, KeyError,
                AssertionError) as exc:  # ValueError includes FairnessError
            return f"replaying the round with the revealed deck failed: {exc}"
        if not state.round_over or list(state.scores) != list(scores):
            return (f"replaying the revealed deck ends with scores {list(state.scores)},"
                    f" not {list(scores)}")
        return None
