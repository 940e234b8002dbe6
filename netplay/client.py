"""A seat at a networked table, as a `GameSession`: it checks everything the host says.

The client follows the host's signed chain of each round (netplay/transcript.py), takes its
part in every shuffle (commit, then reveal its nonce), opens its cards against the dealer's
commitments as they arrive, checks every card played face up, validates every move with its own
engine, and at the end of the round audits the whole deal (netplay/audit.py) and replays it
with the revealed decks. A host that sends an illegal move is named and no longer trusted; any
failed check is shown at once and in the round's verdict. The connection comes back by itself
after a loss, with the seat's secret token, keys and nonces kept in a small file.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from engine import hekata, zodiak
from engine.bots import BOT_KINDS
from engine.errors import IllegalMove
from engine.match import Round
from engine.zodiak import SIGN_CARDS
from netplay.fairness import (
    DEALER,
    RELAY,
    TABLE,
    CardOpening,
    Failure,
    FairnessError,
    Identity,
    PublicIdentity,
    SignedMessage,
    TranscriptChain,
    new_secret,
    nonce_commitment,
    open_card,
    verify_message,
)
from netplay.protocol import (
    HOST_SENDER,
    ChainHead,
    OpenShuffle,
    RoundLedger,
    canonical_deck,
    card_of,
    chain_room,
    clean_name,
    deal_layout,
    draw_positions,
    inner,
    nonce_sender,
    pack,
    parse_move,
    played_cards,
    public_identity,
    unpack,
)
from netplay.relay_client import RelayClosed, RelayConnection, RelayRefused
from netplay.session import (
    GameSession,
    MatchEnded,
    MatchStarted,
    Move,
    MoveMade,
    Notice,
    RoundEnded,
    RoundStarted,
    SeatInfo,
    SeatsChanged,
)
from netplay.wire import ProtocolError
from netplay.wire import field as get_field

log = logging.getLogger("cardtui.client")
BACKOFF_START = 0.2
BACKOFF_MAX = 5.0


@dataclass
class SeatIdentity:
    """What lets a seat come back: its token, its key seed and its nonces, in a small file."""

    token: bytes | None = None
    key: Identity = field(default_factory=Identity.generate)
    nonces: dict[str, str] = field(default_factory=dict)  # "round/epoch" -> hex

    @classmethod
    def load(cls, path: Path | None) -> SeatIdentity:
        """The identity stored at `path`, or a fresh one."""
        if path is not None and path.exists():
            try:
                data = json.loads(path.read_text())
                return cls(bytes.fromhex(data["token"]) if data.get("token") else None,
                           Identity(bytes.fromhex(data["key"])), dict(data.get("nonces", {})))
            except (ValueError, KeyError, TypeError, FairnessError):
                log.warning("ignoring unreadable seat file %s", path)
        return cls()

    def save(self, path: Path | None) -> None:
        """Store the identity at `path` (readable by its owner only)."""
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        # Written whole then renamed: a seat killed mid-write must still find its seat and key.
        tmp = path.with_name(path.name + ".tmp")
        tmp.touch(mode=0o600)  # never readable by others, not even before the first write
        tmp.chmod(0o600)
        tmp.write_text(json.dumps({"token": self.token.hex() if self.token else None,
                                   "key": self.key.seed.hex(), "nonces": self.nonces}))
        tmp.replace(path)


@dataclass
class RemoteSession(GameSession):
    """Your seat at a table served by a host through a relay."""

    url: str = ""
    room: str | None = None
    name: str = "player"
    sign: str | None = None
    watch: bool = False
    owner: bytes | None = None
    identity_path: Path | None = None
    result_path: Path | None = None
    identity: SeatIdentity = field(default_factory=SeatIdentity)
    view: Round | None = None
    round_number: int = 0
    seats: tuple[SeatInfo, ...] = ()
    target: int = 0
    trusted: bool = True
    result: dict[str, Any] | None = None
    moves_seen: int = 0
    table: str = ""
    host_id: PublicIdentity | None = None
    ids: list[PublicIdentity | None] = field(default_factory=list)
    chain: TranscriptChain | None = None
    chain_no: int = -1
    phase: str = "marker"  # marker: waiting for a resync; catchup: replaying; live
    ledger: RoundLedger | None = None
    failures: list[str] = field(default_factory=list)
    verdicts: list[str] = field(default_factory=list)
    _heads: dict[str, ChainHead] = field(default_factory=dict)
    _sent: set[tuple[str, int, int]] = field(default_factory=set)
    _digests: dict[int, bytes] = field(default_factory=dict)  # round -> transcript digest at its end
    _out: list[bytes] = field(default_factory=list)
    _conn: RelayConnection | None = None
    _http: aiohttp.ClientSession | None = None
    _task: asyncio.Task | None = None
    _started_match: bool = False
    is_owner: bool = False
    chat_log: list[str] = field(default_factory=list)
    _welcome: asyncio.Event = field(default_factory=asyncio.Event)

    async def start(self) -> None:
        """Connect, take a seat, and keep the connection alive in the background (once)."""
        if self._task is not None:
            return
        self.identity = SeatIdentity.load(self.identity_path)
        self._http = aiohttp.ClientSession()
        await self._connect()
        self._task = asyncio.create_task(self._run())

    async def wait_seated(self, timeout: float = 10.0) -> None:
        """Wait until the host has answered the join."""
        await asyncio.wait_for(self._welcome.wait(), timeout)

    async def _connect(self) -> None:
        assert self._http is not None
        self._conn = await RelayConnection.enter(self.url, self.room, session=self._http)
        self.room = self._conn.room
        await self._send_join()

    async def _send_join(self) -> None:
        join: dict[str, Any] = {"name": self.name, "id": self.identity.key.public.to_bytes(),
                                "watch": self.watch, "c": self.chain_no,
                                "n": self._have()}
        if self.sign:
            join["sign"] = self.sign
        if self.identity.token:
            join["token"] = self.identity.token
        if self.owner:
            join["owner"] = self.owner
        self.phase, self._sent = "marker", set()
        await self._send(pack("join", **join))

    async def _run(self) -> None:
        delay = BACKOFF_START
        while not self.closed and self.result is None:
            try:
                assert self._conn is not None
                async for msg in self._conn:
                    delay = BACKOFF_START
                    await self._on_relay(msg)
                    if self.result is not None:
                        break
            except (ProtocolError, ConnectionError, aiohttp.ClientError, RelayClosed) as exc:
                log.info("connection trouble: %s", exc)
            if self.closed or self.result is not None:
                break
            self.emit(Notice("connection lost; reconnecting…", "warning"))
            while not self.closed:
                await asyncio.sleep(delay)
                delay = min(delay * 2, BACKOFF_MAX)
                try:
                    await self._connect()
                    self.emit(Notice("reconnected"))
                    break
                except RelayRefused as exc:
                    self.emit(Notice(f"the relay refused: {exc.message}", "error"))
                except (ConnectionError, aiohttp.ClientError, OSError, ProtocolError):
                    continue
        await self._shutdown_connection()
        self.closed = True

    async def _on_relay(self, msg: dict[str, Any]) -> None:
        kind = msg.get("t")
        if kind == "frame":
            try:
                self._on_game_message(unpack(msg.get("body")))
            except ProtocolError as exc:
                self.emit(Notice(f"the host sent a bad message: {exc.message}", "error"))
            except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
                # Whatever a peer sends, this seat goes on; the message is not used.
                log.warning("unusable message from the host", exc_info=True)
                self.emit(Notice(f"the host sent a message this client cannot use: {exc}",
                                 "error"))
            outgoing, self._out = self._out, []
            for body in outgoing:
                await self._send(body)
        elif kind == "host_away":
            self.emit(Notice("the host is away; waiting for it to come back", "warning"))
        elif kind == "host_back":
            self.emit(Notice("the host is back"))
            await self._send_join()
        elif kind == "error":
            self.emit(Notice(f"relay: {msg.get('message')}", "error"))

    def _on_game_message(self, msg: dict[str, Any]) -> None:
        handler = {"welcome": self._on_welcome, "resync": self._on_resync,
                   "synced": self._on_synced, "s": self._on_signed,
                   "error": self._on_error}.get(msg["t"])
        if handler is None:
            raise ProtocolError("unknown_type", f"unknown message {msg['t']!r}")
        handler(msg)

    # -- the chain ---------------------------------------------------------------

    def _on_welcome(self, msg: dict[str, Any]) -> None:
        self.my_seat = get_field(msg, "seat", int, optional=True)
        token = get_field(msg, "token", bytes, optional=True)
        self.game = get_field(msg, "game", str)
        self.target = get_field(msg, "target", int)
        self.is_owner = msg.get("owner") is True
        host = public_identity(msg.get("host"))
        if self.host_id is not None and host != self.host_id:
            self._fault(FairnessError(DEALER, "the host now signs with another key"))
        self.table, self.host_id = get_field(msg, "table", str), host
        self.ids = [public_identity(i) if i is not None else None
                    for i in get_field(msg, "ids", list)]
        if token:
            self.identity.token = token
            self.identity.save(self.identity_path)
        self._welcome.set()

    def _on_resync(self, msg: dict[str, Any]) -> None:
        chain, start = get_field(msg, "c", int), get_field(msg, "n", int)
        if self.chain is None or chain != self.chain_no or start != self._have():
            if self.ledger is not None and self.ledger.number >= chain:
                self.ledger = None  # the round is sent again from its start
            self._begin_chain(chain)
        self.phase = "catchup"

    def _on_synced(self, msg: dict[str, Any]) -> None:
        self.phase = "live"
        self._duties()

    def _have(self) -> int:
        """How many of the host's messages of the current chain this client has accepted."""
        return self.chain.next_seq(HOST_SENDER) if self.chain is not None else 0

    def _begin_chain(self, number: int) -> None:
        if self.host_id is None:
            raise ProtocolError("bad_frame", "a resync before any welcome")
        keys: dict[int | str, PublicIdentity] = {HOST_SENDER: self.host_id}
        for seat, public in enumerate(self.ids):
            if public is not None:
                keys[seat] = keys[nonce_sender(seat)] = public
        room = chain_room(self.table, number)
        self.chain, self.chain_no = TranscriptChain(room, keys), number
        if self.my_seat is not None:
            self._heads = {"move": ChainHead.start(room, self.my_seat),
                           "nonce": ChainHead.start(room, nonce_sender(self.my_seat))}

    def _on_signed(self, msg: dict[str, Any]) -> None:
        if self.phase == "marker" or self.chain is None:
            return  # frames from before our join or sync: the resync sends them again
        chain = get_field(msg, "c", int)
        try:
            if chain < self.chain_no:
                raise FairnessError(RELAY, f"a message of round {chain} was replayed")
            after = None
            if chain > self.chain_no:
                if self.ledger is not None and not self.ledger.ended:
                    raise FairnessError(RELAY, f"the end of round {self.chain_no} was dropped")
                after = self._have() if chain == self.chain_no + 1 else None
                self._begin_chain(chain)
            payload = self.chain.append(HOST_SENDER, msg.get("m"))
            said = inner(payload).get("after") if after is not None else None
            if type(said) is int and said != after:
                raise FairnessError(RELAY, f"{said - after} message(s) at the end of round"
                                    f" {chain - 1} were dropped")
        except FairnessError as exc:
            self._fault(exc)
            if exc.blamed != RELAY:  # the host signed two histories: nothing it says holds now
                self.trusted = False
                self.emit(Notice("this host is no longer trusted", "error"))
                return
            self.phase = "marker"  # ask again from the last good message
            self._out.append(pack("sync", c=self.chain_no, n=self._have()))
            return
        try:
            self._on_host_message(inner(payload))
        except FairnessError as exc:
            self._fault(exc)
        if self.phase == "live":
            self._duties()

    def _fault(self, exc: FairnessError) -> None:
        """Show a failed check now and keep it for the round's verdict."""
        failure = Failure(exc.blamed, exc.reason)
        if self.ledger is not None and not self.ledger.ended:
            self.ledger.failures.append(failure)
        self.failures.append(str(failure))
        self.emit(Notice(f"check failed: {failure}", "error"))

    def _check(self, action: Any, *args: Any) -> bool:
        try:
            action(*args)
        except FairnessError as exc:
            self._fault(exc)
            return False
        return True

    def _on_host_message(self, msg: dict[str, Any]) -> None:
        handler = {
            "lobby": self._on_lobby, "chat": self._on_chat, "shuffle": self._on_shuffle,
            "reveal": self._on_reveal, "fwd": self._on_fwd, "deck": self._on_deck,
            "deal": self._on_deal, "moved": self._on_moved, "round_end": self._on_round_end,
            "match_end": self._on_match_end,
        }.get(msg["t"])
        if handler is None:
            raise ProtocolError("unknown_type", f"unknown message {msg['t']!r}")
        handler(msg)

    def _on_lobby(self, msg: dict[str, Any]) -> None:
        seats = []
        for s in get_field(msg, "seats", list):
            if not isinstance(s, dict):
                raise ProtocolError("bad_frame", "a lobby seat must be a map")
            sign, bot = s.get("sign"), s.get("bot")
            seats.append(SeatInfo(clean_name(s.get("name"), ""),
                                  sign if sign in SIGN_CARDS else None,
                                  bot if bot in BOT_KINDS else None,
                                  s.get("connected") is True, s.get("ready") is True))
            index, ident = s.get("seat"), s.get("id")
            if type(index) is int and 0 <= index < len(self.ids) and ident is not None:
                self.ids[index] = public_identity(ident)  # keys of the next chain
        self.seats = tuple(seats)
        self.emit(SeatsChanged(self.seats))

    def _on_chat(self, msg: dict[str, Any]) -> None:
        name = clean_name(msg.get("name"), "?")
        text = "".join(ch for ch in str(msg.get("text", ""))[:300] if ch.isprintable())
        self.chat_log.append(f"{name}: {text}")
        self.emit(Notice(f"{name}: {text}", "chat"))

    def _on_error(self, msg: dict[str, Any]) -> None:
        self.emit(Notice(f"the host refused: {msg.get('message')}", "warning"))

    # -- shuffles ----------------------------------------------------------------

    def _ledger(self, number: int) -> RoundLedger:
        ledger = self.ledger
        if ledger is not None and ledger.number == number:
            return ledger
        raise FairnessError(DEALER, f"spoke of round {number} while round "
                            f"{ledger.number if ledger else 'none'} is in play")

    def _on_shuffle(self, msg: dict[str, Any]) -> None:
        number, epoch = get_field(msg, "round", int), get_field(msg, "epoch", int)
        if number != self.chain_no:
            raise FairnessError(DEALER, f"shuffled for round {number} in round {self.chain_no}")
        if self.ledger is None or self.ledger.number != number:
            if self.ledger is not None and not self.ledger.ended:
                self.emit(Notice(f"round {self.ledger.number} could not be audited: this"
                                 " client missed its end", "warning"))
            self.ledger = RoundLedger(self.game, self.table, number, self.my_seat)
        ledger = self.ledger
        self._check(ledger.audit.seed_committed, epoch, msg.get("seed"))
        for item in get_field(msg, "commits", list):
            try:
                seat, commit = self._proof(item, number, epoch)
            except FairnessError as exc:
                self._fault(exc)
                continue
            if self._check(ledger.audit.nonce_committed, epoch, seat, commit):
                ledger.committed.setdefault(epoch, set()).add(seat)
        seats = [s for s in get_field(msg, "seats", list) if type(s) is int]
        missing = [s for s in get_field(msg, "missing", list) if type(s) is int]
        ledger.open = OpenShuffle(epoch, seats, missing, not missing)
        if self.phase == "live" and self.my_seat is not None and self.my_seat not in seats:
            raise FairnessError(DEALER, f"left this seat, which is connected, out of shuffle"
                                f" {epoch} of round {number}")

    def _proof(self, item: Any, number: int, epoch: int) -> tuple[int, bytes]:
        """The seat and commitment a seat-signed proof holds for this shuffle, or FairnessError."""
        if not (isinstance(item, list) and len(item) == 2 and type(item[0]) is int
                and 0 <= item[0] < len(self.ids) and self.ids[item[0]] is not None):
            raise FairnessError(DEALER, "a nonce commitment proof names no seat of the table")
        seat = item[0]
        message = verify_message(self.ids[seat], item[1], DEALER)
        try:
            body = inner(message.payload)
        except ProtocolError:
            body = {}
        if body.get("t") == "nonce_commit" and (body.get("round"), body.get("epoch")) == (
                number, epoch) and isinstance(body.get("commit"), bytes):
            return seat, body["commit"]
        upcoming = body.get("next") if body.get("t") == "nonce" else None
        for entry in upcoming if isinstance(upcoming, list) else []:
            if isinstance(entry, list) and len(entry) == 3 and entry[:2] == [number, epoch]:
                return seat, entry[2]
        raise FairnessError(DEALER, f"the proof of seat {seat}'s commitment for shuffle"
                            f" {epoch} does not hold one")

    def _append_inner(self, sender: int | str, wire: Any) -> bytes:
        """A seat's message carried in the host's envelope, checked against the seat's chain."""
        assert self.chain is not None
        try:
            return self.chain.append(sender, wire)
        except FairnessError as exc:  # the host signed the envelope: what it carries is its own
            raise FairnessError(DEALER if exc.blamed == RELAY else exc.blamed, exc.reason) from None

    def _on_reveal(self, msg: dict[str, Any]) -> None:
        ledger = self._ledger(get_field(msg, "round", int))
        epoch = get_field(msg, "epoch", int)
        if ledger.open is not None and ledger.open.epoch == epoch:
            ledger.open.seats = [s for s in get_field(msg, "seats", list) if type(s) is int]
            ledger.open.reveal_open = True
            if ("c", ledger.number, epoch) in self._sent and self.my_seat not in ledger.open.seats:
                raise FairnessError(DEALER, f"left out of shuffle {epoch} the commitment this"
                                    " seat sent (or it came after the host's timeout)")

    def _on_fwd(self, msg: dict[str, Any]) -> None:
        seat, wire = get_field(msg, "seat", int), msg.get("m")
        payload = self._append_inner(nonce_sender(seat), wire)
        if seat == self.my_seat:
            self._heads["nonce"].advance(SignedMessage.from_wire(wire))
        body = inner(payload)
        ledger = self._ledger(get_field(body, "round", int))
        epoch = get_field(body, "epoch", int)
        if body["t"] == "nonce_commit":
            if self._check(ledger.audit.nonce_committed, epoch, seat, body.get("commit")):
                ledger.committed.setdefault(epoch, set()).add(seat)
        elif body["t"] == "nonce" and self._check(ledger.audit.nonce_revealed, epoch, seat,
                                                 body.get("nonce")):
            ledger.nonces.setdefault(epoch, {})[seat] = body["nonce"]
            self._compare_transcripts(seat, body.get("seen"))

    def _compare_transcripts(self, seat: int, seen: Any) -> None:
        """Compare the digest a seat signed for an earlier round with this client's own."""
        if not (isinstance(seen, list) and len(seen) == 2 and type(seen[0]) is int):
            return
        mine = self._digests.get(seen[0])
        if mine is not None and seen[1] != mine and seat != self.my_seat:
            raise FairnessError(DEALER, f"showed seat {seat} a different transcript of round"
                                f" {seen[0]} than this client's")

    def _on_deck(self, msg: dict[str, Any]) -> None:
        ledger = self._ledger(get_field(msg, "round", int))
        epoch = get_field(msg, "epoch", int)
        if epoch == 0:
            canonical = canonical_deck(self.game)
        elif self.view is not None and isinstance(self.view, zodiak.ZodiakRound):
            canonical = [str(c) for c in self.view.pile[:-1]]
        else:
            raise FairnessError(DEALER, f"shuffled epoch {epoch} when nothing was to reshuffle")
        ledger.canonical[epoch] = canonical
        self._check(ledger.audit.deck_committed, epoch, canonical, msg.get("commitments"))
        ledger.open = None
        me = self.my_seat
        if ("n", ledger.number, epoch) in self._sent and me not in ledger.nonces.get(epoch, {}):
            raise FairnessError(DEALER, f"shuffled epoch {epoch} without the nonce this seat"
                                " revealed (or it came after the host's timeout)")

    def _duties(self) -> None:
        """Commit to or reveal this seat's nonce when a shuffle waits for it."""
        ledger, me = self.ledger, self.my_seat
        if me is None or ledger is None or ledger.open is None or me not in ledger.open.seats:
            return
        number, epoch = ledger.number, ledger.open.epoch
        if not ledger.open.reveal_open:
            if (me in ledger.open.missing and me not in ledger.committed.get(epoch, ())
                    and ("c", number, epoch) not in self._sent):
                self._sent.add(("c", number, epoch))
                self._sign("nonce", "nonce_commit", round=number, epoch=epoch,
                           commit=self._commitment(number, epoch))
        elif (me in ledger.committed.get(epoch, ()) and me not in ledger.nonces.get(epoch, {})
              and ("n", number, epoch) not in self._sent):
            nonce = self.identity.nonces.get(self._nonce_key(number, epoch))
            if nonce is None:
                return  # lost with an earlier process: this seat forfeits the shuffle
            self._sent.add(("n", number, epoch))
            upcoming = [(number, epoch + 1)] if self.game == "zodiak" else []
            seen = [number - 1, self._digests[number - 1]] if number - 1 in self._digests else None
            self._sign("nonce", "nonce", round=number, epoch=epoch, nonce=bytes.fromhex(nonce),
                       seen=seen,
                       next=[[r, e, self._commitment(r, e)] for r, e in upcoming + [(number + 1, 0)]])

    def _nonce_key(self, number: int, epoch: int) -> str:
        # The table is part of the key: a nonce revealed at one table is public, so reusing it
        # at another would let that dealer know this seat's share before committing its seed.
        return f"{self.table} {number}/{epoch}"

    def _commitment(self, number: int, epoch: int) -> bytes:
        key = self._nonce_key(number, epoch)
        if key not in self.identity.nonces:
            self.identity.nonces = {k: v for k, v in self.identity.nonces.items()
                                    if k.startswith(f"{self.table} ")
                                    and int(k.split(" ")[-1].split("/")[0]) >= number - 1}
            self.identity.nonces[key] = new_secret().hex()
            self.identity.save(self.identity_path)  # a restarted seat can still reveal it
        assert self.my_seat is not None
        return nonce_commitment(self.table, number, epoch, self.my_seat,
                                bytes.fromhex(self.identity.nonces[key]))

    def _sign(self, chain: str, t: str, **fields: Any) -> None:
        message = self._heads[chain].sign(self.identity.key, pack(t, **fields))
        self._out.append(pack("s", c=self.chain_no, m=message.to_wire()))

    # -- the deal and the moves ----------------------------------------------------

    def _open_mine(self, ledger: RoundLedger, blob: Any) -> CardOpening | None:
        assert self.host_id is not None
        try:
            card = open_card(self.identity.key, self.host_id, blob, self.table, ledger.number)
        except FairnessError as exc:
            self._fault(exc)
            return None
        self._check(ledger.audit.delivered, card)
        return card

    def _on_deal(self, msg: dict[str, Any]) -> None:
        ledger = self._ledger(get_field(msg, "round", int))
        players, dealer = get_field(msg, "players", int), get_field(msg, "dealer", int)
        if players != len(self.ids):
            raise FairnessError(DEALER, f"dealt for {players} players at a table of {len(self.ids)}")
        scores = get_field(msg, "scores", list)
        signs = get_field(msg, "signs", list, optional=True) or []
        layout = deal_layout(self.game, players)
        cards = get_field(msg, "cards", list)
        if len(cards) != len(layout):
            raise ProtocolError("bad_frame", f"a deal of {len(cards)} cards; expected {len(layout)}")
        hands: list[list] = [[] for _ in range(players)]
        table: list = []
        try:
            for position, (owner, item) in enumerate(zip(layout, cards, strict=True)):
                self._check(ledger.audit.dealt, 0, position, owner)
                if owner == TABLE:
                    opening = CardOpening.from_wire(item, DEALER)
                    self._check(ledger.audit.opened, TABLE, opening)
                    table.append(card_of(self.game, opening.card))
                elif owner == self.my_seat:
                    mine = self._open_mine(ledger, item)
                    if mine is None:
                        raise IllegalMove("a card dealt to this seat could not be opened")
                    ledger.mine.append(mine)
                    hands[owner].append(card_of(self.game, mine.card))
                else:
                    hands[int(owner)].append(None)
            stock = [None] * (len(canonical_deck(self.game)) - len(layout))
            if self.game == "zodiak":
                state: Round = zodiak.ZodiakRound.from_parts(hands, table, stock, signs, dealer,
                                                             scores)
                state.sees_stock = False
            else:
                state = hekata.HekataDeal.from_parts(hands, table, stock, dealer, scores)
        except (IllegalMove, TypeError, ValueError) as exc:
            self.trusted = False
            raise ProtocolError("bad_frame", f"impossible deal: {exc}") from None
        ledger.start = (dealer, list(scores), list(signs), players)
        self.view, self.round_number = state, ledger.number
        if not self._started_match:
            self._started_match = True
            self.emit(MatchStarted(self.game, self.seats, self.my_seat, self.target,
                                   tuple(state.scores)))
        self.emit(RoundStarted(self.round_number, state.copy(), tuple(state.scores)))

    def _on_moved(self, msg: dict[str, Any]) -> None:
        view, ledger = self.view, self._ledger(get_field(msg, "round", int))
        if view is None or not self.trusted:
            return
        n, seat = get_field(msg, "n", int), get_field(msg, "seat", int)
        if n != len(view.history) or not 0 <= seat < len(view.hands):
            raise FairnessError(DEALER, f"move {n} arrived while move {len(view.history)} was due")
        text, raw, blame = msg.get("move"), msg.get("open"), DEALER
        if msg.get("by") is not None:
            payload = self._append_inner(seat, msg["by"])
            body, blame = inner(payload), seat
            if seat == self.my_seat:
                self._heads["move"].advance(SignedMessage.from_wire(msg["by"]))
            if (body.get("round"), body.get("n")) != (ledger.number, n):
                self._fault(FairnessError(DEALER, f"signed move {body.get('n')} of seat {seat}"
                                          f" was replayed as move {n}"))
            text, raw = body.get("move"), body.get("open")
        elif seat == self.my_seat and self.phase == "live":
            self._fault(FairnessError(DEALER, f"played {text!r:.40} for this seat while it is"
                                      " here"))
        # Fairness faults are named and the move still follows the host's word: only the
        # engine's verdict stops this seat from following the game.
        move = parse_move(self.game, text)
        try:
            openings = [CardOpening.from_wire(o, blame) for o in (raw if isinstance(raw, list)
                                                                   else [None])]
            if [o.card for o in openings] != played_cards(move):
                raise FairnessError(blame, f"move {n} ({move}) does not open the cards it plays")
        except FairnessError as exc:
            self._fault(exc)
            openings = []
        for opening in openings:
            self._check(ledger.audit.opened, seat, opening)
        drawn_blobs = get_field(msg, "drawn", list)
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
            view.check(move, seat)
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
        name = self.seats[seat].name if seat < len(self.seats) else f"seat {seat}"
        description = view.describe(effect).replace(f"seat {seat}", name, 1)
        self.emit(MoveMade(seat, move, description, view.copy()))

    def _on_round_end(self, msg: dict[str, Any]) -> None:
        view, ledger = self.view, self._ledger(get_field(msg, "round", int))
        scores = get_field(msg, "scores", list)
        winner = get_field(msg, "winner", int, optional=True)
        if view is not None and self.trusted and (not view.round_over
                                                  or list(view.scores) != scores):
            self.trusted = False
            self.emit(Notice("the host ended the round, but this client's engine disagrees"
                             f" (its scores: {list(view.scores)}).", "error"))
        failures = ledger.verdict(get_field(msg, "seeds", list), scores)
        ledger.ended = True
        if self.chain is not None:
            self._digests[ledger.number] = self.chain.digest  # signed into our next reveal
        if failures:
            verdict = f"round {ledger.number} failed its audit: " + "; ".join(map(str, failures))
            self.failures += [str(f) for f in failures if str(f) not in self.failures]
        else:
            verdict = f"round {ledger.number} verified"
        self.verdicts.append(verdict)
        self.emit(Notice(verdict, "error" if failures else "info"))
        self.emit(RoundEnded(view.copy() if view else None, winner,  # type: ignore[arg-type]
                             get_field(msg, "points", int), tuple(scores),
                             str(msg.get("summary", ""))[:200]))

    def _on_match_end(self, msg: dict[str, Any]) -> None:
        self.result = {"game": self.game, "scores": get_field(msg, "scores", list),
                       "winner": get_field(msg, "winner", int, optional=True),
                       "moves": get_field(msg, "moves", int),
                       "verified": self.trusted and not self.failures,
                       "audit": self.verdicts, "failures": self.failures}
        if self.result_path is not None:
            self.result_path.write_text(json.dumps(self.result) + "\n")
        self.emit(MatchEnded(self.result["winner"], tuple(self.result["scores"]),
                             self.result["moves"]))

    # -- the session interface ---------------------------------------------------

    async def submit(self, move: Move) -> None:
        """Check `move` with this client's engine, then propose it, signed, with its openings."""
        view, ledger = self.view, self.ledger
        if view is None or view.round_over or ledger is None:
            raise IllegalMove("there is no round in play")
        if self.my_seat is None:
            raise IllegalMove("you are watching, not playing")
        view.check(move, self.my_seat)
        openings: list[CardOpening] = []
        for card in played_cards(move):
            found = next((o for o in ledger.mine if o.card == card and o not in openings), None)
            if found is None:
                raise IllegalMove(f"{card} was not dealt to you")
            openings.append(found)
        self._sign("move", "move", round=ledger.number, n=len(view.history), move=str(move),
                   open=[o.to_wire() for o in openings])
        outgoing, self._out = self._out, []
        for body in outgoing:
            await self._send(body)

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

    async def _send(self, body: bytes) -> None:
        if self._conn is not None and not self._conn.closed:
            try:
                await self._conn.send(body)
            except (ConnectionError, RelayClosed):
                pass

    async def close(self) -> None:
        """Leave the table."""
        self.closed = True
        if self._task is not None:
            self._task.cancel()
        await self._shutdown_connection()
        await super().close()

    async def _shutdown_connection(self) -> None:
        if self._conn is not None:
            await self._conn.close()
        if self._http is not None and not self._http.closed:
            await self._http.close()


async def play_as_bot(session: RemoteSession, kind: str, seed: int = 0) -> dict[str, Any] | None:
    """Play `session`'s seat with a bot until the match ends; return the result."""
    from engine.bots import make_bot

    bot = make_bot(kind, seed)
    await session.set_ready(True)
    answered: tuple[int, int] | None = None
    async for event in session.events():
        if isinstance(event, MatchEnded):
            break
        view = session.view
        if (view is None or view.round_over or view.turn != session.my_seat
                or not session.trusted or not session.queue.empty()):
            continue
        position = (session.round_number, len(view.history))
        if position == answered and not isinstance(event, Notice):
            continue
        answered = position
        try:
            await session.submit(bot.choose(view.view(session.my_seat)))
        except IllegalMove as exc:
            log.error("bot chose an illegal move: %s", exc)
    return session.result
