"""The state of one networked seat, declared once for all the seat's parts.

`RemoteSession` is made of parts (netplay/seat/remote.py, checks.py and mental.py) that read and
set one seat's view, ledger and chain. `SeatState` declares that state, field by field, and the
methods one part calls on another, so each part is type-checked against the same declaration
instead of assuming what the others define.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import aiohttp

from engine.house import STANDARD, HouseRules
from engine.match import Round
from netplay.fair import FairnessError, PublicIdentity, TranscriptChain
from netplay.fair.absence import absence_clock, slept
from netplay.fair.mental_lobby import LobbyDeck
from netplay.fair.mental_play import MentalPlay
from netplay.messages import (
    Deal,
    Family,
    HostPayload,
    Message,
    MpKey,
    MpShares,
    MpShuffle,
    MpVoid,
    Propose,
    Signed,
)
from netplay.protocol import ChainHead, RoundLedger
from netplay.relay.client import RelayConnection
from netplay.seat.keyfile import SeatIdentity
from netplay.session.events import GameSession, MatchStarted, RoundStarted, SeatInfo

M = TypeVar("M", bound=Message)

TIME_RAN_OUT = "your time ran out: your seat's bot moved for you"  # the turn timer (G4)


@dataclass
class SeatState(GameSession, ABC):
    """One seat's state, and the methods the seat's parts call on one another."""

    url: str = ""
    room: str | None = None
    name: str = "player"
    sign: str | None = None
    watch: bool = False
    owner: bytes | None = None
    identity_path: Path | None = None
    result_path: Path | None = None
    tls: ssl.SSLContext | None = None
    identity: SeatIdentity = field(default_factory=SeatIdentity)
    expect: str | None = None  # the host fingerprint a person was given (`join --expect`)
    refused: str | None = None  # why this seat left a table it did not expect
    _checking_host: bool = False
    _rejoin: bool = False  # joined as a watcher until the host's key is the expected one
    view: Round | None = None
    round_number: int = 0
    seats: tuple[SeatInfo, ...] = ()
    target: int = 0
    house: HouseRules = STANDARD  # the table's, from its welcome: every move is checked by them
    trusted: bool = True
    result: dict[str, Any] | None = None
    moves_seen: int = 0
    table: str = ""
    host_id: PublicIdentity | None = None
    ids: list[PublicIdentity | None] = field(default_factory=list)
    lobby_ids: list[PublicIdentity | None] | None = None  # each seat's key in the last lobby
    chain: TranscriptChain | None = None
    chain_no: int = -1
    phase: str = "marker"  # marker: waiting for a resync; catchup: replaying; live
    ledger: RoundLedger | None = None
    failures: list[str] = field(default_factory=list)  # the first MAX_FAILURES failed checks
    failures_dropped: int = 0  # failed checks past those, counted only
    verdicts: list[str] = field(default_factory=list)
    _heads: dict[str, ChainHead] = field(default_factory=dict)
    _sent: set[tuple[str, int, int]] = field(default_factory=set)
    _digests: dict[int, bytes] = field(default_factory=dict)  # round -> its transcript digest
    _out: list[bytes] = field(default_factory=list)
    _conn: RelayConnection | None = None
    _http: aiohttp.ClientSession | None = None
    _task: asyncio.Task[None] | None = None
    _started_match: bool = False
    rounds_before: int | None = None  # the table's rounds before this match, as its lobby says
    table_started: bool = False  # the lobby says the match is under way (maybe before our deal)
    rematch_offered: bool = False  # the host offered a rematch after the match: ready accepts
    after_match: bool = False  # keep listening once the match is over, for a rematch
    mental: MentalPlay | None = None  # this seat's side of a round dealt by mental poker
    lobby_deck: LobbyDeck | None = None  # its side of the first round's deck, in the lobby
    _lobby_lost: bool = False  # this process lost its key of that deck (it started again)
    _lobby_live: bool = False  # it heard that deck named live (not while catching up)
    _shown: int = 0  # the moves of that round shown so far
    dealing: str = ""  # "mental" or "trusted", as the welcome says (FAIRNESS.md A9)
    allow_trusted: bool = True  # `join` refuses a trusted dealer unless --allow-trusted-dealer
    _mental_mark: tuple[int, int] = (-1, 0)  # the last host message mental poker took
    _handed: set[int] = field(default_factory=set)  # seats whose key was handed to the host
    _lost: bool = False  # this process lost its round key (it started again mid-deal)
    _told_lost: bool = False
    _handed_before: int | None = None  # a round whose key an earlier program of this seat handed over
    _voided_empty: bool = False  # this round's deal was voided once naming nobody (a restart)
    _signed_here: set[bytes] = field(default_factory=set)  # digests this process signed
    _turn_task: asyncio.Task[None] | None = None
    _timed_out: tuple[int, int] | None = None  # the position whose timer this client answered
    _handing_over: asyncio.Event = field(default_factory=asyncio.Event)
    _refused_round: int | None = None  # a mental round this seat refused (netplay/seat/mental.py)
    _caught: MentalPlay | None = None  # a deal that failed a check: nothing more of it is checked
    ignored: int = 0  # mental-poker messages of caught deals left unchecked, in all
    _unforwarded: dict[int, tuple[bytes, bool]] = field(default_factory=dict)  # seq: (sent, again)
    away_seconds: float | None = None  # the table's away time, from its welcome
    away_for: float = 0.0  # how long this seat's last absence during the deal in play lasted
    # When this seat's connection went (`absence_clock`), until it follows the table live again,
    # and `slept()` then.
    _lost_at: float | None = None
    _slept_at_loss: float = 0.0
    _slept_at_deal: float = field(default_factory=slept)  # `slept()` as the deal in play began
    _ever_live: bool = False  # whether this process has followed the table live
    is_owner: bool = False
    # The host's own seat in `cardtui host`: its leaving stops the table, so it hands nothing
    # over (a resumed host deals the round in play again, this seat in it).
    closes_table: bool = False
    rematch_any: bool = False  # any seated person may offer a rematch here (a server's table)
    turn_seconds: int | None = None  # the table's turn timer (PROTOCOL.md G4), if it has one
    turn_since: float | None = None  # when this client saw the current turn begin
    # For the countdown only: (the turn_since it is of, when the host's timer began that turn).
    turn_shown: tuple[float, float] | None = None
    gone: str | None = None  # why the session ended for good without a result
    chat_log: list[str] = field(default_factory=list)  # the last CHAT_KEPT lines
    chat_count: int = 0  # every chat line heard, the ones no longer kept too
    _welcome: asyncio.Event = field(default_factory=asyncio.Event)
    _retry: asyncio.Task[None] | None = None

    def _time_absence(self, ended: bool) -> None:
        """Set `away_for` to the absence since the connection went, if it went; `ended`: this
        seat follows the table live again, so the absence is over."""
        if self._lost_at is not None:
            self.away_for = absence_clock() - self._lost_at
            if ended:
                self._lost_at = None

    def _show_round_start(self, state: Round) -> None:
        """Take `state` as the round's view and tell the screen a round (and the match) began."""
        self.view, self.turn_since = state, time.monotonic()
        if not self._started_match:
            self._started_match = True
            self.emit(MatchStarted(self.game, self.seats, self.my_seat, self.target,
                                   tuple(state.scores), self.rounds_before))
        self.emit(RoundStarted(self.round_number, state.copy(), tuple(state.scores)))

    # -- netplay/seat/remote.py -----------------------------------------------

    @abstractmethod
    def _on_host_message(self, msg: HostPayload) -> None:
        """Act on one message of the host's chain, accepted and in order."""

    @abstractmethod
    async def _send(self, body: bytes) -> None:
        """Send one body to the host through the relay (dropped while disconnected)."""

    # -- netplay/seat/checks.py -----------------------------------------------

    @abstractmethod
    def _fault(self, exc: FairnessError) -> None:
        """Show a failed check now and keep it for the round's verdict."""

    @abstractmethod
    def _append_inner(self, sender: int | str, wire: Signed) -> bytes:
        """A seat's message carried in the host's envelope, checked against the seat's chain."""

    @abstractmethod
    def _seat_payload(self, sender: int | str, wire: Signed, family: Family[M]) -> M:
        """A seat's signed message the host forwarded, checked in the seat's chain, decoded."""

    # -- netplay/seat/mental.py -----------------------------------------------

    @abstractmethod
    def _on_mental_deal(self, msg: Deal) -> None:
        """Start this seat's part in a round dealt by mental poker."""

    @abstractmethod
    def _on_lobby_fwd(self, seat: int, epoch: int, wire: Signed) -> None:
        """A seat's key or shuffle of the lobby's deck, forwarded by the host."""

    @abstractmethod
    def _on_mental_fwd(self, seat: int, wire: Signed) -> None:
        """A seat's own signed mental-poker message, forwarded by the host."""

    @abstractmethod
    def _on_mental_host(self, msg: MpKey | MpShuffle | MpShares | Propose) -> None:
        """A message of the host's key for its bots, or of a key handed over to the host."""

    @abstractmethod
    def _on_mental_void(self, msg: MpVoid) -> None:
        """The host voided the deal in play: deal the round again."""

    @abstractmethod
    def _lobby_from(self, sender: int, body: dict[str, object]) -> None:
        """A party's key or shuffle of the lobby's deck."""

    @abstractmethod
    def _lobby_check(self) -> bool:
        """Check the lobby deck's complete chain once what is owed is sent; whether it did."""

    @abstractmethod
    def _lobby_after(self) -> None:
        """Sign what this seat owes the lobby's deck."""

    @abstractmethod
    def _mental_synced(self) -> None:
        """Caught up: say a lost round key, or send what is owed now."""

    @abstractmethod
    def _mental_check(self) -> bool:
        """Check a complete chain of shuffles once what is owed is sent; whether it did."""

    @abstractmethod
    def _mental_submit(self, move: Any) -> None:
        """Make this seat's move in a round dealt by mental poker."""

    @abstractmethod
    def _handover(self) -> bool:
        """Sign this seat's round key, sealed to the host, into its chain, if a deal needs it."""

    @abstractmethod
    async def _turn_clock(self) -> None:
        """Move with the seat's bot when its own turn timer runs out on a mental table."""

    @abstractmethod
    async def submit(self, move: Any) -> None:
        """Check `move` with this client's engine, then propose it."""

    @abstractmethod
    def _resend_unforwarded(self) -> None:
        """After a (re)connection: send again what the host has not forwarded."""
