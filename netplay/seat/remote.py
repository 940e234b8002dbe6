"""A seat at a networked table, as a `GameSession`: it checks everything the host says.

The client follows the host's signed chain of each round (netplay/fair/transcript.py), takes its
part in every shuffle (commit, then reveal its nonce), opens its cards against the dealer's
commitments as they arrive, checks every card played face up, validates every move with its own
engine, and at the end of the round audits the whole deal (netplay/fair/audit.py) and replays it
with the revealed decks. A host that sends an illegal move is named and no longer trusted; any
failed check is shown at once and in the round's verdict. The connection comes back by itself
after a loss, with the seat's secret token, keys and nonces kept in a small file.

This module holds the connection, the lobby, the deal and the moves; the chain, the shuffles
and the round's audit are in netplay/seat/checks.py (a mixin: they read and set the same
view, ledger and chain as the moves do), and the seat file in netplay/seat/keyfile.py.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass
from typing import Any, ClassVar

import aiohttp

from engine import zodiak
from engine.bots import BOT_KINDS
from engine.errors import IllegalMove
from engine.games import GAMES
from engine.house import HouseRules
from engine.zodiak import SIGN_CARDS
from netplay.fair import (
    DEALER,
    CardOpening,
    FairnessError,
    PublicIdentity,
    SignedMessage,
)
from netplay.fair.absence import absence_clock, slept
from netplay.fair.fingerprint import host_matches, table_fingerprint
from netplay.messages import (
    HOST_BODIES,
    MOVE_PAYLOADS,
    Challenge,
    Deal,
    Deck,
    Forward,
    Frame,
    HostAway,
    HostBack,
    HostBody,
    HostPayload,
    HostSays,
    Lobby,
    MatchEnd,
    Moved,
    MpPrepare,
    MpVoid,
    ProtocolError,
    Refused,
    RelayEvent,
    Resync,
    Reveal,
    RoundEnd,
    Said,
    Seeds,
    Shuffle,
    Synced,
    Welcome,
    decode,
)
from netplay.protocol import (
    card_of,
    clean_name,
    draw_positions,
    join_proof_digest,
    pack,
    parse_move,
    played_cards,
    public_identity,
    read_number,
    read_numbers,
)
from netplay.relay.client import RelayClosed, RelayConnection, RelayRefused
from netplay.relay.wire import CLOSE_HOST_GONE, CLOSE_REPLACED
from netplay.seat.checks import ClientChecks
from netplay.seat.first_deck import SeatFirstDeck
from netplay.seat.keyfile import SeatIdentity
from netplay.seat.state import TIME_RAN_OUT
from netplay.session.events import (
    MatchEnded,
    Move,
    MoveMade,
    Notice,
    RematchOffered,
    SeatInfo,
    SeatsChanged,
)

__all__ = ["RemoteSession", "SeatIdentity"]

log = logging.getLogger("cardtui.client")
BACKOFF_START = 0.2
BACKOFF_MAX = 5.0
MAX_TURN_SECONDS = 86_400
RESYNC_RETRY_SECONDS = 10.0  # the host grants a conn a resync every 10 s (PROTOCOL.md G3)
ROOM_GONE_TRIES = 3  # `no_such_room` this many times running, for ROOM_GONE_SECONDS at least:
ROOM_GONE_SECONDS = 30.0  # the host is not coming back (a restarted relay gives it that long)
# A relay that removed the room because its host did not come back says so as it closes:
# nothing to try again (a lying relay could say it of a room still there, but it can as well
# stop forwarding: no new power). An idle room's host, still there, may open it again.
ROOM_GONE = "the room is gone: its host did not come back in time"
SEAT_ELSEWHERE = ("this seat is now played from another connection (its seat file joined"
                  " again): this one stops")
CHAT_KEPT = 500  # chat lines a session keeps (between this and twice as many)
HANDOVER_SECONDS = 3.0  # how long a leaving seat waits for the host to forward its handover


def dealing_line(dealing: str) -> str:
    """What a table's dealing means for a person's cards, in one line (FAIRNESS.md A9)."""
    if dealing == "mental":
        return ("dealt by mental poker: nobody, the host included, sees your cards before they"
                " are played face up; the host holds one key for its bots and sees only their"
                " cards")
    return "a trusted dealer: the host's program deals and can see every hand"


@dataclass
class RemoteSession(SeatFirstDeck, ClientChecks):
    """Your seat at a table served by a host through a relay (its state: netplay/seat/state.py)."""

    next_round_waits: ClassVar[bool] = False

    async def start(self) -> None:
        """Connect, take a seat, and keep the connection alive in the background (once)."""
        if self._task is not None:
            return
        if self.identity_path is not None:  # else the identity given (a fresh one by default)
            self.identity = SeatIdentity.load(self.identity_path)
        self._http = aiohttp.ClientSession()
        try:
            await self._connect()
        except BaseException:
            await self._shutdown_connection()
            raise
        self._task = asyncio.create_task(self._run())
        self._turn_task = asyncio.create_task(self._turn_clock())

    def fingerprint(self) -> str:
        """The table fingerprint of the keys this seat was shown ("" before the welcome)."""
        if self.host_id is None or not self.table:
            return ""
        seats = self.lobby_ids if self.lobby_ids is not None else self.ids
        return table_fingerprint(self.table, self.host_id, seats)

    async def wait_seated(self, timeout: float = 10.0) -> None:
        """Wait until the host has answered the join."""
        await asyncio.wait_for(self._welcome.wait(), timeout)

    async def _connect(self) -> None:
        assert self._http is not None
        self._conn = await RelayConnection.enter(self.url, self.room, session=self._http,
                                                 tls=self.tls)
        self.room = self._conn.room
        await self._send_join()

    async def _send_join(self) -> None:
        await self._send(self._join_body(None))

    def _join_body(self, proof: bytes | None) -> bytes:
        """A `join`; `proof` signs the host's challenge (docs/PROTOCOL.md G3)."""
        # With --expect, first only watch: take no seat from a host that is not the one expected.
        self._checking_host = self.expect is not None and self.host_id is None and not self.watch
        join: dict[str, Any] = {"name": self.name, "id": self.identity.key.public.to_bytes(),
                                "watch": self.watch or self._checking_host, "c": self.chain_no,
                                "n": self._have()}
        if self.sign:
            join["sign"] = self.sign
        if self.identity.token:
            join["token"] = self.identity.token
        if self.owner:
            join["owner"] = self.owner
        if proof is not None:
            join["proof"] = proof
        self.phase, self._sent = "marker", set()
        return pack("join", **join)

    async def _run(self) -> None:
        delay = BACKOFF_START
        while not self.closed and not self._match_done():
            try:
                assert self._conn is not None
                async for msg in self._conn:
                    delay = BACKOFF_START
                    await self._on_relay(msg)
                    if self._match_done() or self.closed or self.gone is not None:
                        break  # gone: a relay that outlives its host would keep the conn open
            except (ProtocolError, ConnectionError, aiohttp.ClientError, RelayClosed) as exc:
                log.info("connection trouble: %s", exc)
            if self.gone is None and self._conn is not None:
                self.gone = {CLOSE_HOST_GONE: ROOM_GONE,
                             CLOSE_REPLACED: SEAT_ELSEWHERE}.get(self._conn.close_code or 0)
            if self.closed or self._match_done() or self.gone is not None:
                break
            self.emit(Notice("connection lost; reconnecting…", "warning", state=True))
            if self._lost_at is None:  # else gone again before it was following live
                self._lost_at, self._slept_at_loss = absence_clock(), slept()
            if not await self._reconnect(delay):
                break
        await self._shutdown_connection()
        self.closed = True
        if self.gone is not None:
            # Kept: the screen has nothing else to say why (once: the session has ended).
            # Also a state: the screen stops inviting moves that can no longer count.
            self.emit(Notice(self.gone, "error", kept=True, state=True))  # wakes a waiting reader

    def _match_done(self) -> bool:
        """Whether the match is over and this seat waits for no rematch."""
        return self.result is not None and not self.after_match

    async def _reconnect(self, delay: float) -> bool:
        """Try to get back into the room, saying why each try failed; False: the room is gone."""
        missing, missing_since = 0, 0.0
        while not self.closed:
            await asyncio.sleep(delay)
            try:
                await self._connect()
                self.emit(Notice("reconnected", state=True))
                return True
            except RelayRefused as exc:
                missing = missing + 1 if exc.code == "no_such_room" else 0
                if missing == 1:
                    missing_since = time.monotonic()
                # A relay that restarted knows the room again once its host has reopened it.
                if (missing >= ROOM_GONE_TRIES
                        and time.monotonic() - missing_since >= ROOM_GONE_SECONDS):
                    self.gone = ROOM_GONE
                    return False
                why = f"the relay refused: {exc.message}"
            except (ConnectionError, aiohttp.ClientError, OSError, ProtocolError) as exc:
                why = f"reconnecting failed: {exc}"
            delay = min(delay * 2, BACKOFF_MAX)
            # Logged, not popped up: the status line already says the host is out of reach.
            self.emit(Notice(f"{why}; trying again in {delay:g} s"))
        return False

    async def _on_relay(self, msg: RelayEvent) -> None:
        if isinstance(msg, Frame):
            try:  # the one place a host's body is decoded; its handlers take the typed value
                self._on_game_message(decode(msg.body, HOST_BODIES))
            except ProtocolError as exc:
                self.emit(Notice(f"the host sent a bad message: {exc.message}", "error"))
            await self._send_out()
            if self._rejoin:
                self._rejoin = False
                await self._send_join()
        elif isinstance(msg, HostAway):
            self.emit(Notice("the host is away; waiting for it to come back", "warning",
                             state=True))
        elif isinstance(msg, HostBack):
            self.emit(Notice("the host is back", state=True))
            await self._send_join()
        elif isinstance(msg, Refused):
            self.emit(Notice(f"relay: {msg.message}", "error"))

    def _on_game_message(self, msg: HostBody) -> None:
        if isinstance(msg, HostSays):  # nearly every message: asked first
            self._on_signed(msg)
        elif isinstance(msg, Welcome):
            self._on_welcome(msg)
        elif isinstance(msg, Resync):
            self._on_resync(msg)
        elif isinstance(msg, Challenge):
            self._on_challenge(msg)
        elif isinstance(msg, Synced):
            self._on_synced(msg)
        else:
            self._on_error(msg)

    def _on_challenge(self, msg: Challenge) -> None:
        if msg.dealing is not None and msg.dealing != "mental" and self._refuses_trusted_dealer():
            return  # before the signed join: no seat is taken only to be left at once
        proof = self.identity.key.sign(join_proof_digest(msg.table, msg.nonce))
        self._out.append(self._join_body(proof))

    def _refuses_trusted_dealer(self) -> bool:
        """Refuse (and close) if the table has a trusted dealer and this seat does not allow one."""
        if self.allow_trusted or self.watch:
            return False
        self.refused = ("this table's host deals every card itself and can see every hand"
                        " (a trusted dealer, not mental poker): join with"
                        " --allow-trusted-dealer to play there anyway")
        self.closed = True
        self.emit(Notice(self.refused, "error", kept=True))
        self._welcome.set()
        return True

    def _on_welcome(self, msg: Welcome) -> None:
        if msg.game not in GAMES:
            raise ProtocolError("bad_frame", f"no game called {msg.game!r}")
        self.my_seat = msg.seat
        # Until its welcome the host counted this seat away: what its catch-up replays is
        # judged by the absence so far (it ends once the seat follows live, `synced`).
        self._time_absence(ended=False)
        token = msg.token
        self.game = msg.game
        self.target = read_number(msg.target, "'target'")
        try:
            self.house = HouseRules.parse(msg.house or "")
        except IllegalMove as exc:
            raise ProtocolError("bad_frame", f"the table's house rules: {exc}") from None
        self.is_owner = msg.owner is True
        self.rematch_any = msg.rematch_any is True
        away = msg.away_seconds
        self.away_seconds = float(away) if away is not None else None
        limit = msg.turn_seconds
        self.turn_seconds = limit if limit is not None and 0 < limit <= MAX_TURN_SECONDS else None
        host = public_identity(msg.host)
        dealing = "mental" if msg.dealing == "mental" else "trusted"
        if self.dealing == "mental" and dealing != "mental":
            self._fault(FairnessError(DEALER, "the table was dealt by mental poker and now has"
                                      " a trusted dealer"))
            self.trusted = False
        self.dealing = dealing
        if dealing != "mental" and self._refuses_trusted_dealer():
            return
        if self.expect is not None and not host_matches(self.expect, host):
            self.refused = (f"the host's fingerprint is {host.fingerprint()}, not {self.expect}:"
                            " this is not the table you were told to expect")
            self.closed = True
            self.emit(Notice(self.refused, "error", kept=True))
            self._welcome.set()
            return
        if self.host_id is not None and host != self.host_id:
            self._fault(FairnessError(DEALER, "the host now signs with another key"))
        self.table, self.host_id = msg.table, host
        self.ids = [public_identity(i) if i is not None else None for i in msg.ids]
        if self._checking_host and self.my_seat is None:
            self._rejoin = True  # the host is the expected one: now take a seat from it
            return
        if token:
            self.identity.token = token
            self.identity.save(self.identity_path)
        if not self._welcome.is_set():
            self.emit(Notice(dealing_line(dealing)))
        self._welcome.set()

    def _on_host_message(self, msg: HostPayload) -> None:
        """One of the host's signed messages, decoded, to the check that takes its kind."""
        if isinstance(msg, Moved):  # most of them: asked first
            self._on_moved(msg)
        elif isinstance(msg, Lobby):
            self._on_lobby(msg)
        elif isinstance(msg, Said):
            self._on_chat(msg)
        elif isinstance(msg, Shuffle):
            self._on_shuffle(msg)
        elif isinstance(msg, Reveal):
            self._on_reveal(msg)
        elif isinstance(msg, Forward):
            self._on_fwd(msg)
        elif isinstance(msg, Deck):
            self._on_deck(msg)
        elif isinstance(msg, Deal):
            self._on_deal(msg)
        elif isinstance(msg, RoundEnd):
            self._on_round_end(msg)
        elif isinstance(msg, Seeds):
            self._on_seeds(msg)
        elif isinstance(msg, MatchEnd):
            self._on_match_end(msg)
        elif isinstance(msg, MpVoid):
            self._on_mental_void(msg)
        elif isinstance(msg, MpPrepare):
            self._on_mp_prepare(msg)
        else:
            self._on_mental_host(msg)

    def _on_lobby(self, msg: Lobby) -> None:
        seats = []
        lobby_ids: list[PublicIdentity | None] = []
        for s in msg.seats:
            seats.append(SeatInfo(clean_name(s.name, ""),
                                  s.sign if s.sign in SIGN_CARDS else None,
                                  s.bot if s.bot in BOT_KINDS else None,
                                  s.connected, s.ready))
            lobby_ids.append(public_identity(s.id) if s.id is not None else None)
            if s.seat < len(self.ids) and s.id is not None:
                public = self.ids[s.seat] = public_identity(s.id)  # keys of the next chain
                self._check_lobby_key(s.seat, public)
                if msg.started is False:
                    self._rekey_lobby_seat(s.seat, public)
        self.lobby_ids = lobby_ids
        self.table_started = msg.started
        if msg.rounds_before is not None:
            self.rounds_before = msg.rounds_before
        if msg.house is not None and not self._started_match:
            # The host may change the house rules in the lobby: the match is checked by these.
            if msg.target is None:
                raise ProtocolError("bad_frame", "a lobby with house rules needs a 'target'")
            try:
                self.house = HouseRules.parse(msg.house)
            except IllegalMove as exc:
                raise ProtocolError("bad_frame", f"the table's house rules: {exc}") from None
            self.target = read_number(msg.target, "'target'")
        self.seats = tuple(seats)
        self.emit(SeatsChanged(self.seats))
        if msg.started is False and self.result is not None:
            # The table is back in its lobby after the match: the host offers a rematch, and
            # the next deal starts a new match (scores from zero) for whoever accepts.
            self.result, self._started_match, self.rematch_offered = None, False, True
            ready = [seat.name for seat in self.seats if seat.ready and seat.bot is None]
            self.emit(RematchOffered(ready[0] if len(ready) == 1 else None))

    def _on_chat(self, msg: Said) -> None:
        name = clean_name(msg.name, "?")
        text = "".join(ch for ch in msg.text[:300] if ch.isprintable())
        self.chat_log.append(f"{name}: {text}")
        self.chat_count += 1
        if len(self.chat_log) > 2 * CHAT_KEPT:  # a host may send chat without end: keep the last
            del self.chat_log[:-CHAT_KEPT]
        self.emit(Notice(f"{name}: {text}", "chat"))

    def _on_error(self, msg: Refused) -> None:
        if msg.code == "closing":  # the host is stopping: the reconnects would all fail
            self.gone = msg.message[:200]
            return
        self.emit(Notice(f"the host refused: {msg.message[:200]}", "warning"))
        if msg.code == "rate_limited" and self.phase == "marker" and self._retry is None:
            self._retry = asyncio.create_task(self._ask_again())

    async def _ask_again(self) -> None:
        """Join or sync again once the host's budget for us has refilled (PROTOCOL.md G3)."""
        try:
            await asyncio.sleep(RESYNC_RETRY_SECONDS)
            if self.phase == "marker" and not self.closed:
                # A join, not a sync: it also rebinds this conn to its seat if the refused
                # request was the join after a host came back.
                await self._send_join()
        finally:
            self._retry = None

    # -- the moves -----------------------------------------------------------------

    def _on_moved(self, msg: Moved) -> None:
        view, ledger = self.view, self._ledger(msg.round)
        if view is None or not self.trusted:
            return
        n, seat = msg.n, msg.seat
        if n != len(view.history) or not 0 <= seat < len(view.hands):
            raise FairnessError(DEALER, f"move {n} arrived while move {len(view.history)} was due")
        text, raw = msg.move, msg.open
        blame: int | str = DEALER  # or the seat, when the openings come in its signed move
        if msg.by is not None:
            body, blame = self._seat_payload(seat, msg.by, MOVE_PAYLOADS), seat
            if seat == self.my_seat:
                self._heads["move"].advance(SignedMessage.from_wire(msg.by))
            if (body.round, body.n) != (ledger.number, n):
                self._fault(FairnessError(DEALER, f"signed move {body.n} of seat {seat}"
                                          f" was replayed as move {n}"))
            text, raw = body.move, body.open
        timed_out = msg.by is None and msg.timeout is True and self._turn_ran_out()
        if msg.by is None and seat == self.my_seat and self.phase == "live" and not timed_out:
            self._fault(FairnessError(DEALER, f"played {text!r:.40} for this seat while it is"
                                      " here"))
        # Fairness faults are named and the move still follows the host's word: only the
        # engine's verdict stops this seat from following the game.
        move = parse_move(self.game, text)
        try:
            openings = [CardOpening.from_wire(o, blame) for o in (raw if raw is not None
                                                                   else [None])]
            if [o.card for o in openings] != played_cards(move):
                raise FairnessError(blame, f"move {n} ({move}) does not open the cards it plays")
        except FairnessError as exc:
            self._fault(exc)
            openings = []
        for opening in openings:
            self._check(ledger.audit.opened, seat, opening)
        drawn_blobs = msg.drawn
        consumed = 1 + view.reshuffles_done if isinstance(view, zodiak.ZodiakRound) else 1
        positions = draw_positions(ledger.sizes() + [0], consumed, len(view.stock),
                                   len(drawn_blobs))
        drawn: list | None = [] if seat == self.my_seat else None
        for (epoch, position), blob in zip(positions, drawn_blobs, strict=True):
            self._check(ledger.audit.dealt, epoch, position, seat)
            if drawn is not None:
                card = self._open_mine(ledger, blob)
                if card is None:
                    self.trusted = False
                    return
                ledger.mine.append(card)
                drawn.append(card_of(self.game, card.card))
        try:
            if seat != view.turn:
                view.check(move, seat)  # says whose turn it is; `push` checks the move itself
            effect = view.push(move, drawn)
        except IllegalMove as exc:
            self.trusted = False
            self.emit(Notice(f"the host broadcast an illegal move by seat {seat} ({move}): {exc}."
                             " It was not applied; this host is no longer trusted.", "error"))
            return
        if len(effect.drawn) != len(drawn_blobs):
            self.trusted = False
            self.emit(Notice(f"the host says {len(drawn_blobs)} cards were drawn; the rules say"
                             f" {len(effect.drawn)}. This host is no longer trusted.", "error"))
            return
        played = {(o.epoch, o.position) for o in openings}
        ledger.mine = [o for o in ledger.mine if (o.epoch, o.position) not in played]
        ledger.moves.append((seat, move))
        self.moves_seen += 1
        self.turn_since = time.monotonic()
        name = self.seats[seat].name if seat < len(self.seats) else f"seat {seat}"
        description = view.describe(effect).replace(f"seat {seat}", name, 1)
        self.emit(MoveMade(seat, move, description, view.copy()))
        if seat == self.my_seat and timed_out:  # a host's false claim is a fault, not news
            self.emit(Notice(TIME_RAN_OUT, "warning"))

    def _on_match_end(self, msg: MatchEnd) -> None:
        self.result = {"game": self.game, "scores": read_numbers(msg.scores,
                                                                   "'scores' of a match's end"),
                       "winner": msg.winner,
                       "moves": msg.moves,
                       "verified": self.trusted and not self.failures,
                       "audit": self.verdicts, "failures": self.failures}
        if self.result_path is not None:
            self.result_path.write_text(json.dumps(self.result) + "\n")
        self.emit(MatchEnded(self.result["winner"], tuple(self.result["scores"]),
                             self.result["moves"]))

    def _turn_ran_out(self) -> bool:
        """Whether this seat's turn has lasted the table's turn timer, as far as it can tell."""
        # The host started its clock before this seat heard of the turn: allow for the delay.
        limit = self.turn_seconds
        return (limit is not None and self.turn_since is not None
                and time.monotonic() - self.turn_since >= limit * 0.9 - 1)

    def plays_own_seat(self) -> bool:
        """Whether this person plays their seat in the round in play: not in a deal made
        without them (they were away) nor after handing their key over."""
        return self.mental is None or self.my_seat in self.mental.my_seats()

    def turn_left(self) -> float | None:
        """Seconds the player to move has left on the table's turn timer, if it has one."""
        view = self.view
        if (self.turn_seconds is None or self.turn_since is None or view is None
                or view.round_over):
            return None
        began = self.turn_since
        if self.turn_shown is not None and self.turn_shown[0] == began:
            began = self.turn_shown[1]  # the host's count, told as this seat caught up
        return max(0.0, began + self.turn_seconds - time.monotonic())

    # -- the session interface -----------------------------------------------------

    async def submit(self, move: Move) -> None:
        """Check `move` with this client's engine, then propose it, signed, with its openings."""
        view, ledger = self.view, self.ledger
        if view is None or view.round_over or ledger is None:
            raise IllegalMove("there is no round in play")
        if self.my_seat is None:
            raise IllegalMove("you are watching, not playing")
        if not self.plays_own_seat():
            raise IllegalMove("the host's bot plays your seat until this round is over")
        view.check(move, self.my_seat)
        if self.mental is not None:
            self._mental_submit(move)
            await self._send_out()
            return
        openings: list[CardOpening] = []
        for card in played_cards(move):
            found = next((o for o in ledger.mine if o.card == card and o not in openings), None)
            if found is None:
                raise IllegalMove(f"{card} was not dealt to you")
            openings.append(found)
        self._sign("move", "move", round=ledger.number, n=len(view.history), move=str(move),
                   open=[o.to_wire() for o in openings])
        await self._send_out()

    async def _send_out(self) -> None:
        """Send what this seat signed; then, with its own shuffle on its way, check a complete
        chain of shuffles and send what that brings (its shares)."""
        while True:
            outgoing, self._out = self._out, []
            for body in outgoing:
                await self._send(body)
            if not self._mental_check():
                return

    async def chat(self, text: str) -> None:
        """Say something to the table."""
        await self._send(pack("chat", text=text[:300]))

    @property
    def match_started(self) -> bool:
        """Whether the first deal has arrived."""
        return self._started_match

    async def start_match(self) -> None:
        """Ask the host to start, with bots in the empty seats (only the host's own seat may)."""
        await self._send(pack("start", owner=self.owner))

    async def set_ready(self, ready: bool) -> None:
        """Tell the table whether you are ready to begin."""
        await self._send(pack("ready", ready=ready))

    async def set_bot(self, seat: int, kind: str | None) -> None:
        """Put a bot of `kind` in an empty seat, or take it out with None (the host's seat only)."""
        await self._send(pack("seat_bot", owner=self.owner, seat=seat, kind=kind))

    @property
    def may_offer_rematch(self) -> bool:
        """Whether this seat may offer a rematch: the host's own, or any at a server's table."""
        return self.my_seat is not None and (self.is_owner or self.rematch_any)

    async def offer_rematch(self) -> None:
        """Offer the table a new match with the same seats (see `may_offer_rematch`)."""
        await self._send(pack("rematch", owner=self.owner))

    async def set_house(self, house: HouseRules) -> None:
        """Set the match's house rules before the start (the host's seat only)."""
        await self._send(pack("house", owner=self.owner, rules=str(house)))

    async def _send(self, body: bytes) -> None:
        if self._conn is not None and not self._conn.closed:
            try:
                await self._conn.send(body)
            except (ConnectionError, RelayClosed):
                pass

    async def close(self, leave: bool = False) -> None:
        """Leave the table; in a deal by mental poker, hand this seat's round key over first,
        so the round goes on with the host's bot in the seat; elsewhere, when the person chose
        to `leave`, say so: the bot plays the seat at once, not after the table's away time.
        A seat that `closes_table` does neither: nobody plays on."""
        plays_on = not self.closed and not self.closes_table
        if plays_on and self._handover():
            self._handing_over.clear()
            outgoing, self._out = self._out, []
            for body in outgoing:
                await self._send(body)
            try:  # until the host has forwarded it: then the round no longer needs this seat
                await asyncio.wait_for(self._handing_over.wait(), HANDOVER_SECONDS)
            except TimeoutError:
                log.info("the host did not forward this seat's handover in time")
        elif leave and plays_on and self.my_seat is not None and self.result is None:
            # Also before this client saw the deal (it may lag the host); in the lobby the host
            # refuses it, and frees the seat when the connection goes.
            await self._send(pack("leave"))
        self.closed = True
        for task in (self._task, self._retry, self._turn_task):
            if task is not None:
                task.cancel()
        await self._shutdown_connection()
        await super().close(leave)

    async def _shutdown_connection(self) -> None:
        if self._conn is not None:
            await self._conn.close()
        if self._http is not None and not self._http.closed:
            await self._http.close()
