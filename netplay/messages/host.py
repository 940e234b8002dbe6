"""What the host sends one seat (PROTOCOL.md G4) and signs for the whole table (G5, G9)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Final

from netplay.messages.codec import Family, Message, Nested, kind
from netplay.messages.fields import Bin, Bool, Either, Exactly, Int, ListOf, Opt, Real, Row, Text
from netplay.messages.limits import (
    MAX_CARDS,
    MAX_CHAT,
    MAX_MOVE_TEXT,
    MAX_NAME_WIRE,
    MAX_SEALED,
    MAX_SEATS,
    MAX_SEEDS,
    MAX_SUMMARY,
    MAX_TABLE_ID,
    SIGNED_MAX,
    SIGNED_MIN,
)
from netplay.messages.mental import (
    MENTAL_KINDS,
    PARTY,
    MpKey,
    MpPrepare,
    MpShares,
    MpShuffle,
    MpVoid,
)
from netplay.messages.relay import Refused
from netplay.messages.seat import MOVE_SIGNED, NONCE_SIGNED, SEAT_SIGNED, Propose
from netplay.messages.shapes import (
    CHAIN,
    COUNT,
    DIGEST,
    EPOCH,
    GAME,
    HOST_SIGNED,
    IDENTITY,
    OPENING,
    ROUND,
    SCORE,
    SCORES,
    SEAT,
    SEATS,
    TOKEN,
    WORD,
    Opening,
    Proof,
    Signed,
)

MAX_HOUSE: Final = 500  # a table's house rules in their text form


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
    turn_seconds: Annotated[int | None, Opt(Int(SIGNED_MIN, SIGNED_MAX))] = None  # the timer
    house: Annotated[str | None, Opt(Text(MAX_HOUSE))] = None  # docs/RECORDS.md "House rules"
    away_seconds: Annotated[float | None, Opt(Real(0.0, float("inf")))] = None  # before a bot plays
    dealing: Annotated[str | None, Opt(WORD)] = None  # G9: "mental" or "trusted" (nil: trusted)
    rematch_any: Annotated[bool | None, Opt(Bool())] = None  # any seat may offer a rematch


@kind
class Challenge(Message):
    """Prove you hold your identity's key: join again with `proof`, its signature of `nonce`."""

    t = "challenge"
    nonce: Annotated[bytes, Exactly(32)]
    table: Annotated[str, Text(MAX_TABLE_ID, 1)]
    # As in the welcome, so that a seat refusing a trusted dealer never takes a seat.
    dealing: Annotated[str | None, Opt(WORD)] = None


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
    # What the turn in play has left on the table's timer: a seat or watcher that catches up
    # counts down from there, not from a whole turn.
    turn_left: Annotated[float | None, Opt(Real(0.0, float("inf")))] = None


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
    house: Annotated[str | None, Opt(Text(200))] = None  # the house rules, set in the lobby
    target: Annotated[int | str | None, Opt(SCORE)] = None  # the target they make
    # The rounds the table played before this match (or the one offered): its rounds number on.
    rounds_before: Annotated[int | None, Opt(COUNT)] = None


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
    """A seat's signed nonce commitment or nonce (or, G9, mental-poker message), verbatim."""

    t = "fwd"
    seat: Annotated[int, SEAT]
    m: Annotated[Signed, SEAT_SIGNED]
    after: Annotated[int | None, AFTER] = None
    # In the lobby, the lobby epoch of the first round's deck it belongs to: the seat signs
    # those in a chain of their own, `seat/deck<epoch>` (FAIRNESS.md A8, "Lobby deck").
    deck: Annotated[int | None, Opt(EPOCH)] = None


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
    cards: Annotated[tuple[DealtCard, ...] | None,
                     Opt(ListOf(Opt(Either((Bin(MAX_SEALED), OPENING))), MAX_CARDS))] = None
    signs: Annotated[tuple[str, ...] | None, Opt(ListOf(WORD, MAX_SEATS))] = None
    parties: Annotated[tuple[int, ...] | None, Opt(ListOf(PARTY, MAX_SEATS))] = None  # G9
    after: Annotated[int | None, AFTER] = None
    # A deal by mental poker from the deck shuffled during the last round (FAIRNESS.md A8):
    # its digest, and the first epoch of that deck.
    prepared: Annotated[bytes | None, Opt(DIGEST)] = None
    epoch: Annotated[int | None, Opt(EPOCH)] = None


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
    timeout: Annotated[bool | None, Opt(Bool())] = None  # its turn timer ran out
    after: Annotated[int | None, AFTER] = None


@kind
class RoundEnd(Message):
    """A round is over: its winner, points, the match scores, and every seed it used."""

    t = "round_end"
    round: Annotated[int, ROUND]
    points: Annotated[int | str, SCORE]
    scores: Annotated[tuple[int | str, ...], SCORES]
    summary: Annotated[str, Text(MAX_SUMMARY)]
    seeds: Annotated[tuple[bytes, ...], ListOf(DIGEST, MAX_SEEDS)]
    winner: Annotated[int | None, Opt(SEAT)] = None
    first: Annotated[int | None, Opt(COUNT)] = None  # seeds revealed by `seeds` before
    after: Annotated[int | None, AFTER] = None


@kind
class Seeds(Message):
    """The seeds of shuffles `first` on, of a round that shuffled too often for one `round_end`."""

    t = "seeds"
    round: Annotated[int, ROUND]
    first: Annotated[int, COUNT]
    seeds: Annotated[tuple[bytes, ...], ListOf(DIGEST, MAX_SEEDS)]
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


HostPayload = (Lobby | Said | Shuffle | Reveal | Forward | Deck | Deal | Moved | Seeds
               | RoundEnd | MatchEnd | Propose | MpKey | MpShuffle | MpShares | MpVoid
               | MpPrepare)
HOST_PAYLOADS: Final = Family[HostPayload]("host payload", [
    Lobby, Said, Shuffle, Reveal, Forward, Deck, Deal, Moved, Seeds, RoundEnd, MatchEnd,
    Propose, *MENTAL_KINDS, MpVoid, MpPrepare])  # the last six: its bots' moves and mental
# poker (G9)
