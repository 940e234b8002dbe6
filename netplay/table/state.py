"""The state of one hosted table, declared once for all the host's parts.

`Host` is made of parts (netplay/table/lobby.py, dealing.py, mental.py, store.py and host.py
itself) that read and set one table's state. `TableState` declares that state, field by field,
and the methods one part calls on another, so each part is type-checked against the same
declaration instead of assuming what the others define.
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.games import GAMES
from engine.house import STANDARD, HouseRules
from engine.match import Match, Round
from engine.records import Record
from netplay.fair import DeckCommitment, Identity, PublicIdentity, SignedMessage
from netplay.fair.mental_lobby import LobbyDeck
from netplay.fair.mental_play import MentalPlay
from netplay.machine import DiskFlusher
from netplay.messages import MentalPayload, Propose
from netplay.protocol import ChainHead
from netplay.relay.client import RelayConnection
from netplay.relay.guard import TokenBucket
from netplay.session.events import SeatInfo
from netplay.session.thinking import Thinkers

# Resync answers, in bodies a second: for all who hold no seat together (watchers), and for
# each seat on its own, kept across its connections, so that neither strangers nor one seat
# coming back on fresh conns can spend what the others need to join or catch up. The game's
# own messages keep the rest of what the relay lets the host send (its connection paces itself
# under that).
RESYNC_RATE, RESYNC_BURST = 100.0, 2000.0
SEAT_RESYNC_RATE = 50.0
# Chat lines of one seat, kept across its connections: 20 at once and one every 2 s after,
# at most SEAT_CHAT_LINES in a chain, so one seat can neither silence the others (a chain
# takes chat up to its bound, dealing.MAX_CHAIN) nor make the host save a long chain often.
SEAT_CHAT_RATE, SEAT_CHAT_BURST, SEAT_CHAT_LINES = 0.5, 20.0, 300
# Signed messages of one seat that the host refused or dropped (docs/PROTOCOL.md G3,
# "Budgets"): each costs a signature check and perhaps a share's proof per position, and a
# refused one moves no chain on, so it could be sent again without end. A seat has this many
# at once and one more a second; accepted ones cost nothing, so an honest match never waits.
REFUSED_RATE, REFUSED_BURST = 1.0, 20.0


class Dropped(Exception):
    """A seat's signed message dropped without an answer: a copy of one already accepted."""


@dataclass
class Seat:
    """A seat at the table: who sits there and how to reach them."""

    name: str = ""
    sign: str | None = None
    bot: str | None = None
    token: str | None = None  # hex; the seat's secret for coming back after a lost connection
    ident: str | None = None  # hex of the seat's 64-byte public identity (signing and box keys)
    conn: int | None = None
    away_since: float | None = None
    ready: bool = False
    leaving: bool = False  # it said `leave`: once its connection goes, its bot plays at once

    @property
    def taken(self) -> bool:
        """Whether a bot or a person holds the seat."""
        return self.bot is not None or self.token is not None

    def info(self) -> SeatInfo:
        """Public facts about the seat."""
        present = self.bot is not None or self.conn is not None
        return SeatInfo(self.name, self.sign, self.bot, present, self.ready or self.bot is not None)

    def public(self) -> PublicIdentity | None:
        """The seat's public identity, if a person holds it."""
        return PublicIdentity.from_bytes(bytes.fromhex(self.ident)) if self.ident else None


@dataclass
class HostConfig:
    """How a table is set up."""

    game: str = "zodiak"
    players: int = 4
    bots: int = 0
    seed: int | None = None
    bot_kind: str = "greedy"
    bot_delay: float = 0.0
    think: float | None = None  # an expert bot's time limit per move; None: the default
    thinkers: Thinkers | None = None  # where an expert bot searches; None: a worker thread
    away_timeout: float = 60.0
    reveal_timeout: float = 10.0  # how long a connected seat may take to commit or reveal a nonce
    save_path: Path | None = None
    result_path: Path | None = None
    owner_secret: str | None = None  # the host's own app proves it is the owner with this
    require_ready: bool = False  # start only when every person has said they are ready
    # The first round's deck, shuffled in the lobby (table/first_deck.py): a new lineup begins
    # a new deck at most this often, and at most `lobby_decks` times a lobby.
    lobby_pause: float = 2.0
    lobby_decks: int = 8  # at most MAX_LOBBY_DECKS: a client refuses more
    turn_seconds: float | None = None  # then the seat's bot moves for a player who does not
    # Deal by mental poker (FAIRNESS.md A8): the host sees no person's card. `cardtui host`
    # sets it unless --trusted-dealer; `cardtui serve` runs every player's program and keeps
    # the trusted dealer (Part B).
    mental: bool = False
    house: HouseRules = STANDARD  # every seat checks moves by these (engine.house)
    rematch_seconds: float = 0.0  # how long a finished table waits for its owner's rematch; 0: none
    rematches: int = 0  # rematches the host offers by itself (a headless host has no owner)
    rematch_by_any_seat: bool = False  # any seated person may offer one (server tables)

    def __post_init__(self) -> None:
        if self.game in GAMES:  # a house rule the game has no use for is refused, not ignored
            GAMES[self.game].check_house(self.house)

@dataclass
class Epoch:
    """One shuffle of the round as the dealer runs it: seed, the seats' nonces, the deck."""

    seed: bytes
    seats: list[int] = field(default_factory=list)  # the seats asked for a nonce
    commits: dict[int, bytes] = field(default_factory=dict)
    nonces: dict[int, bytes] = field(default_factory=dict)
    reveal_open: bool = False
    canonical: list[str] | None = None
    deck: DeckCommitment | None = None
    owners: list[int | str] = field(default_factory=list)  # who got each position dealt so far
    opened: set[int] = field(default_factory=set)


@dataclass
class SeatBudget:
    """What one seat may make the host do, whichever conn it speaks from."""

    refused: TokenBucket = field(default_factory=lambda: TokenBucket(REFUSED_RATE,
                                                                      REFUSED_BURST))
    resyncs: TokenBucket = field(default_factory=lambda: TokenBucket(SEAT_RESYNC_RATE,
                                                                      RESYNC_BURST))
    chat: TokenBucket = field(default_factory=lambda: TokenBucket(SEAT_CHAT_RATE,
                                                                   SEAT_CHAT_BURST))
    chat_lines: dict[int, int] = field(default_factory=dict)  # chain number: lines said in it


@dataclass
class ConnBudget:
    """What one conn may make the host do: requests, and resyncs of the round's chain."""

    requests: TokenBucket = field(default_factory=lambda: TokenBucket(1.0, 20.0))
    resyncs: TokenBucket = field(default_factory=lambda: TokenBucket(0.1, 3.0))


@dataclass
class TableState(ABC):
    """One table's state, and the methods the host's parts call on one another."""

    config: HostConfig
    seats: list[Seat] = field(default_factory=list)
    match: Match | None = None
    state: Round | None = None
    record: Record | None = None
    round_number: int = 0  # also the number of the signed chain in use (0: the lobby)
    round_base: int = 0  # rounds of the table's earlier matches: a rematch numbers on from them
    round_scored: bool = True  # whether the match has taken the last round's scores
    moves_made: int = 0
    # The position whose turn the play loop last saw begin, and when (monotonic).
    turn_began: tuple[tuple[int, int], float] | None = None
    started: bool = False
    finished: bool = False
    seed: int = 0
    identity: Identity = field(default_factory=Identity.generate)
    table: str = ""  # unique per table session: bound into every hash and signature
    log: list[bytes] = field(default_factory=list)  # this chain's signed bodies, for resync
    head: ChainHead | None = None
    heads: dict[str, ChainHead] = field(default_factory=dict)  # each seat chain's accepted head
    epochs: list[Epoch] = field(default_factory=list)
    mental: MentalPlay | None = None  # the host's view of a round dealt by mental poker
    stand_ins: set[int] = field(default_factory=set)  # people's seats its bots play this round
    handed: set[int] = field(default_factory=set)  # seats whose round key was handed over
    mental_since: float = 0.0  # when the deal in play last moved on
    # The first round's deck shuffled in the lobby (table/first_deck.py), the people it was
    # begun for, the next lobby epoch, and when the next may begin.
    lobby_deck: LobbyDeck | None = None
    lobby_lineup: tuple[str, ...] = ()
    lobby_epoch: int = 0
    lobby_next_at: float = 0.0
    _lobby_pending: bool = False
    deal_moves: int = 0  # moves of the deal in play (not counted if it is voided)
    deal_shown: int = 0  # moves of the deal in play that the host's engine has applied
    resume_epoch: int | None = None  # a deal to void after a restart: its last epoch
    # "round/epoch/seat" -> [the seat's signed nonce_commit (wire form), the commitment]
    precommits: dict[str, list[Any]] = field(default_factory=dict)
    relay: RelayConnection | None = None
    on_event: Callable[[str], None] = print
    strikes: dict[int, int] = field(default_factory=dict)
    spectators: set[int] = field(default_factory=set)
    challenges: dict[int, bytes] = field(default_factory=dict)  # conn -> its join challenge
    budgets: dict[int, ConnBudget] = field(default_factory=dict)
    # What every budget is refilled by: a test holds it still to count exactly.
    budget_clock: Callable[[], float] = time.monotonic
    # Per seat, not per conn: a seat that connects again would otherwise start afresh. Per
    # seat number, not per person: one who takes a seat, leaves and takes it again in the
    # lobby does not start afresh either.
    seat_budgets: dict[int, SeatBudget] = field(default_factory=dict)
    lobbies: dict[int, int] = field(default_factory=dict)  # chain number: lobbies sent in it
    others_chat: dict[int, int] = field(default_factory=dict)  # chain: lines from non-seats
    resync_pace: TokenBucket = field(default_factory=lambda: TokenBucket(RESYNC_RATE,
                                                                          RESYNC_BURST))  # watchers
    done: asyncio.Event = field(default_factory=asyncio.Event)
    rematched: asyncio.Event = field(default_factory=asyncio.Event)
    _after: int = 0
    _prev_log: list[bytes] = field(default_factory=list)
    _bot_task: asyncio.Task[None] | None = None
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)
    _wake: asyncio.Event = field(default_factory=asyncio.Event)
    _nonce_wake: asyncio.Event = field(default_factory=asyncio.Event)
    _game_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _send_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _flusher: DiskFlusher = field(default_factory=DiskFlusher)

    def _seat_budget(self, seat: int) -> SeatBudget:
        """What seat number `seat` may still make the host do, from whichever conn."""
        budget = self.seat_budgets.get(seat)
        if budget is None:
            budget = self.seat_budgets[seat] = SeatBudget()
        return budget

    # -- netplay/table/host.py ------------------------------------------------

    @abstractmethod
    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run `coro` in the background, keeping a reference to it."""

    @abstractmethod
    def _budget(self, conn: int) -> ConnBudget:
        """What `conn` may still make the host do."""

    @abstractmethod
    async def _send(self, conn: int | None, body: bytes) -> None:
        """Send `body` to one conn, or to everyone with None."""

    @abstractmethod
    async def _play_loop(self) -> None:
        """Play for bots, and for people away too long, until the match ends."""

    @abstractmethod
    async def start_match(self) -> None:
        """Start the match and deal its first round."""

    @abstractmethod
    async def _on_seat_move(self, index: int, message: SignedMessage, body: Propose) -> None:
        """Check a seat's signed move and apply it."""

    @abstractmethod
    async def _end_round(self) -> None:
        """Score the round that just ended, then deal the next or finish the match."""

    @abstractmethod
    async def _locked(self, action: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run `action` holding the game lock."""

    # -- netplay/table/lobby.py -----------------------------------------------

    @abstractmethod
    def seat_of(self, conn: int) -> int | None:
        """The seat that `conn` speaks for, if any."""

    # -- netplay/table/dealing.py ---------------------------------------------

    @abstractmethod
    def _new_chain(self, number: int) -> None:
        """Start signed chain `number` (a round's, or 0 for the lobby)."""

    @abstractmethod
    async def _broadcast(self, t: str, **fields: Any) -> None:
        """Sign a message into this round's chain, keep it for resync, save, then send it."""

    @abstractmethod
    async def _broadcast_locked(self, t: str, **fields: Any) -> None:
        """`_broadcast`, for a caller that holds the send lock."""

    @abstractmethod
    def _afford_resync(self, conn: int, chain: int, have: int, seat: int | None) -> None:
        """Refuse (`rate_limited`) a resync over the conn's budget, or over the budget of the
        seat it is for (None: of all watchers)."""

    @abstractmethod
    async def _resync(self, conn: int, first: list[bytes], chain: int, have: int) -> None:
        """Send `first` (a welcome), then this chain from what the seat has, then `synced`."""

    @abstractmethod
    async def _until(self, ready: Callable[[], bool]) -> bool:
        """Whether `ready()` holds (or the match ended) before the reveal timeout runs out."""

    @abstractmethod
    def _seat_head(self, seat: int, kind: str) -> ChainHead:
        """The accepted head of a seat's own chain of moves or of nonces."""

    @abstractmethod
    def _forget_commits(self, index: int) -> None:
        """Drop a lobby seat's commitment and nonce chain."""

    # -- netplay/table/mental.py ----------------------------------------------

    @abstractmethod
    async def _on_mental_signed(self, index: int, message: SignedMessage,
                                body: MentalPayload) -> None:
        """Check a seat's mental-poker message with the host's own view, then forward it."""

    @abstractmethod
    async def _on_lobby_signed(self, index: int, message: SignedMessage,
                               body: MentalPayload) -> None:
        """Check a seat's key or shuffle of the first round's deck, then forward it."""

    @abstractmethod
    async def _broadcast_each(self, messages: list[dict[str, Any]]) -> None:
        """Sign and send, in order, messages the host's key for its bots made."""

    @abstractmethod
    def _take_lobby_deck(self) -> LobbyDeck | None:
        """The lobby's deck, for the first deal, if it was begun for the people seated now."""

    @abstractmethod
    async def _prepare_first_deck(self, now: bool = False) -> LobbyDeck | None:
        """The lobby's deck for the parties the table has now, begun if need be."""

    @abstractmethod
    async def _mental_watch(self) -> None:
        """Void a deal that waits for someone who is gone."""

    @abstractmethod
    async def _mental_resume(self, epoch: int) -> None:
        """After a restart mid-deal: void the deal and deal the round again."""

    # -- netplay/table/store.py -----------------------------------------------

    @abstractmethod
    def _save(self) -> None:
        """Save the table, if it has a save file."""
