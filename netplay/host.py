"""The host: the dealer of a networked table, reached through a relay room as conn 0.

It seats players, shuffles verifiably (docs/FAIRNESS.md: a committed seed, every seat's nonce by
commit-then-reveal, a commitment for every deck position), deals cards sealed with their
openings, validates every proposed move and its card openings with the engine, and says
everything to the table in one signed hash chain per round, forwarding each seat's own signed
messages inside it. It plays bots, waits for absent players (then lets a bot play for them),
reveals its seeds at the end of each round, and saves after every step so
`cardtui host --resume` can continue.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import msgpack

from engine import zodiak
from engine.bots import BOT_KINDS, make_bot
from engine.errors import IllegalMove
from engine.match import Match, Round, check_players
from engine.records import Record
from engine.simulate import deal_winner
from netplay.fairness import (
    TABLE,
    CardOpening,
    DeckCommitment,
    FairnessError,
    Identity,
    PublicIdentity,
    SignedMessage,
    new_secret,
    nonce_commitment,
    seal_card,
    seed_commitment,
    verify_message,
)
from netplay.local import round_summary
from netplay.protocol import (
    HOST_SENDER,
    MAX_CHAT,
    ChainHead,
    canonical_deck,
    card_of,
    chain_room,
    clean_name,
    deal_layout,
    draw_positions,
    envelope,
    inner,
    pack,
    parse_move,
    played_cards,
    public_identity,
    unpack,
)
from netplay.relay_client import RelayClosed, RelayConnection
from netplay.session import SeatInfo
from netplay.wire import ProtocolError
from netplay.wire import field as get_field

log = logging.getLogger("cardtui.host")
STRIKES_BEFORE_IGNORING = 20
LINGER_SECONDS = 5.0
MAX_CHAIN = 2000  # chat stops here: every message of a round is kept and saved until it ends


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
    away_timeout: float = 60.0
    reveal_timeout: float = 10.0  # how long a connected seat may take to commit or reveal a nonce
    save_path: Path | None = None
    result_path: Path | None = None
    owner_secret: str | None = None  # the host's own app proves it is the owner with this
    require_ready: bool = False  # start only when every person has said they are ready


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
class Host:
    """The dealer of one table."""

    config: HostConfig
    seats: list[Seat] = field(default_factory=list)
    match: Match | None = None
    state: Round | None = None
    record: Record | None = None
    round_number: int = 0  # also the number of the signed chain in use (0: the lobby)
    round_scored: bool = True  # whether the match has taken the last round's scores
    moves_made: int = 0
    started: bool = False
    finished: bool = False
    seed: int = 0
    identity: Identity = field(default_factory=Identity.generate)
    table: str = ""  # unique per table session: bound into every hash and signature
    log: list[bytes] = field(default_factory=list)  # this chain's signed bodies, for resync
    head: ChainHead | None = None
    heads: dict[str, ChainHead] = field(default_factory=dict)  # each seat chain's accepted head
    epochs: list[Epoch] = field(default_factory=list)
    precommits: dict[str, list] = field(default_factory=dict)  # "round/epoch/seat" -> proof
    relay: RelayConnection | None = None
    on_event: Callable[[str], None] = print
    strikes: dict[int, int] = field(default_factory=dict)
    spectators: set[int] = field(default_factory=set)
    done: asyncio.Event = field(default_factory=asyncio.Event)
    _after: int = 0
    _prev_log: list[bytes] = field(default_factory=list)
    _bot_task: asyncio.Task | None = None
    _tasks: set[asyncio.Task] = field(default_factory=set)
    _wake: asyncio.Event = field(default_factory=asyncio.Event)
    _nonce_wake: asyncio.Event = field(default_factory=asyncio.Event)
    _game_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _send_lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def __post_init__(self) -> None:
        check_players(self.config.game, self.config.players)
        if not 0 <= self.config.bots <= self.config.players:
            raise IllegalMove(f"--bots must be between 0 and {self.config.players}")
        self.seed = self.config.seed if self.config.seed is not None else secrets.randbits(32)
        if not self.seats:
            self.seats = [Seat() for _ in range(self.config.players)]
            for i in range(self.config.players - self.config.bots, self.config.players):
                self.seats[i] = self._bot_seat(i)

    # -- running --------------------------------------------------------------

    async def serve(self, relay: RelayConnection) -> None:
        """Serve the table through `relay` until the match ends or the relay closes."""
        self.relay = relay
        if not self.table:
            self.table = f"{relay.room}-{secrets.token_hex(8)}"
        if self.head is None:
            self._new_chain(self.round_number)
        self.on_event(f"room {relay.room} open")
        self._bot_task = asyncio.create_task(self._play_loop())
        if self.started and self.match is not None and not self.match.over:
            if self.state is not None and self.state.round_over and not self.round_scored:
                self._spawn(self._locked(self._end_round))  # it stopped before scoring a round
            elif self.state is None or self.state.round_over:
                self._spawn(self._locked(self._deal))  # it stopped between two rounds
        listening = asyncio.create_task(self._listen(relay))
        finished = asyncio.create_task(self.done.wait())
        try:  # the match may end in a background task (a bot's move), not on a message
            await asyncio.wait([listening, finished], return_when=asyncio.FIRST_COMPLETED)
            if self.finished:  # let the seats hear the end: the first one to leave says they did
                await asyncio.wait([listening], timeout=LINGER_SECONDS)
        finally:
            for task in [listening, finished, self._bot_task, *self._tasks]:
                task.cancel()

    async def _listen(self, relay: RelayConnection) -> None:
        async for msg in relay:
            await self._on_relay(msg)
            if self.finished:
                break

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)  # keep a reference so the task is not collected mid-way
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("host task failed", exc_info=task.exception())

    async def _locked(self, action: Callable[[], Any]) -> None:
        async with self._game_lock:
            await action()

    async def _on_relay(self, msg: dict[str, Any]) -> None:
        kind = msg.get("t")
        if kind == "frame":
            conn = msg.get("from")
            if type(conn) is int:
                await self._on_frame(conn, msg.get("body"))
        elif kind == "departed":
            self._departed(msg.get("conn"))
        elif kind == "error":
            self.on_event(f"relay error: {msg.get('code')}: {msg.get('message')}")

    async def _on_frame(self, conn: int, body: Any) -> None:
        try:
            msg = unpack(body)
            handler = self._handlers().get(msg["t"])
            if handler is None:
                raise ProtocolError("unknown_type", f"unknown message type {msg['t']!r}")
            await handler(conn, msg)
        except ProtocolError as exc:
            await self._refuse(conn, exc.code, exc.message)
        except IllegalMove as exc:
            await self._refuse(conn, "illegal", str(exc))
        except FairnessError as exc:
            await self._refuse(conn, "bad_frame", exc.reason)

    def _handlers(self) -> dict[str, Callable[[int, dict[str, Any]], Any]]:
        return {"join": self._on_join, "s": self._on_signed, "chat": self._on_chat,
                "start": self._on_start, "sync": self._on_sync, "ready": self._on_ready,
                "seat_bot": self._on_seat_bot}

    async def _refuse(self, conn: int, code: str, message: str) -> None:
        self.strikes[conn] = self.strikes.get(conn, 0) + 1
        if self.strikes[conn] <= STRIKES_BEFORE_IGNORING:
            await self._send(conn, pack("error", code=code, message=message))

    async def _send(self, conn: int | None, body: bytes) -> None:
        if self.relay is not None and not self.relay.closed:
            try:
                await self.relay.send(body, to=conn)
            except (ConnectionError, RelayClosed):
                log.warning("relay send failed")

    # -- the signed chain -----------------------------------------------------

    def _new_chain(self, number: int) -> None:
        self._after = len(self.log)  # the next chain says how long this one was: no tail is lost
        self._prev_log = self.log  # a seat that fell behind at the end of a round still gets it
        self.round_number = number
        self.log, self.heads, self.epochs = [], {}, []
        self.head = ChainHead.start(chain_room(self.table, number), HOST_SENDER)

    async def _broadcast(self, t: str, **fields: Any) -> None:
        """Sign a message into this round's chain, keep it for resync, save, then send it."""
        async with self._send_lock:  # sign, log and send in one order for everyone
            await self._broadcast_locked(t, **fields)

    async def _broadcast_locked(self, t: str, **fields: Any) -> None:
        """`_broadcast`, for a caller that holds the send lock."""
        assert self.head is not None
        if self.head.seq == 0 and self.round_number > 0:
            fields = {**fields, "after": self._after}
        message = self.head.sign(self.identity, pack(t, **fields))
        self.head.advance(message)
        body = envelope(self.round_number, message)
        self.log.append(body)
        self._save()  # before anyone hears of it, so a restarted host signs on from here
        await self._send(None, body)

    async def _resync(self, conn: int, first: list[bytes], chain: Any, have: Any) -> None:
        """Send `first` (a welcome), then this chain from what the seat has, then `synced`."""
        async with self._send_lock:
            number, start, bodies = self.round_number, 0, self.log
            if type(have) is int and chain == number and 0 <= have <= len(self.log):
                start, bodies = have, self.log[have:]
            elif (type(have) is int and number >= 1 and chain == number - 1
                  and 0 <= have <= len(self._prev_log)):
                number, start, bodies = chain, have, self._prev_log[have:] + self.log
            for body in first:
                await self._send(conn, body)
            await self._send(conn, pack("resync", c=number, n=start))
            for body in bodies:
                await self._send(conn, body)
            await self._send(conn, pack("synced", c=self.round_number, n=len(self.log)))

    def _seat_head(self, seat: int, kind: str) -> ChainHead:
        sender: int | str = seat if kind == "move" else f"{seat}/nonce"
        return self.heads.setdefault(str(sender), ChainHead.start(
            chain_room(self.table, self.round_number), sender))

    async def _on_signed(self, conn: int, msg: dict[str, Any]) -> None:
        index = self.seat_of(conn)
        seat = self.seats[index] if index is not None else None
        if seat is None or seat.public() is None:
            raise ProtocolError("not_allowed", "only a seated player signs game messages")
        if get_field(msg, "c", int) != self.round_number:
            raise ProtocolError("stale", "that message is for another round; resync")
        try:
            message = verify_message(seat.public(), msg.get("m"), index)
        except FairnessError as exc:
            raise ProtocolError("bad_signature", exc.reason) from None
        body = inner(message.payload)
        kind = "move" if body["t"] == "move" else "nonce"
        head = self._seat_head(index, kind)
        if message.seq < head.seq:
            return  # sent again after a reconnect; the first copy was accepted
        if not head.follows(message):
            raise ProtocolError("stale", "that message does not follow your last accepted one")
        if kind == "move":
            await self._on_seat_move(index, message, body)
        elif body["t"] in ("nonce_commit", "nonce"):
            await self._on_nonce(index, message, body)
        else:
            raise ProtocolError("unknown_type", f"unknown signed message {body['t']!r}")

    # -- seats ----------------------------------------------------------------

    def seat_of(self, conn: int) -> int | None:
        """The seat that `conn` speaks for, if any."""
        for i, seat in enumerate(self.seats):
            if seat.conn == conn:
                return i
        return None

    async def _on_join(self, conn: int, msg: dict[str, Any]) -> None:
        ident = public_identity(msg.get("id")).to_bytes().hex()
        index = self.seat_of(conn)
        if index is None:
            index = await self._take_seat(conn, msg, ident)
        if index is None:
            self.spectators.add(conn)
            welcome = pack("welcome", seat=None, token=None, **self._table_facts())
            await self._resync(conn, [welcome], msg.get("c"), msg.get("n"))
            await self._send_lobby()
            return
        seat = self.seats[index]
        seat.conn, seat.away_since = conn, None
        self.on_event(f"seat {index} ({seat.name}) joined from conn {conn}")
        owner = msg.get("owner")
        is_owner = (isinstance(owner, bytes) and self.config.owner_secret is not None
                    and secrets.compare_digest(owner.hex(), self.config.owner_secret))
        welcome = pack("welcome", seat=index, token=bytes.fromhex(seat.token or ""),
                       owner=is_owner, **self._table_facts())
        await self._resync(conn, [welcome], msg.get("c"), msg.get("n"))
        await self._send_lobby()
        self._nonce_wake.set()
        await self._start_if_everyone_is_in()
        self._save()

    async def _start_if_everyone_is_in(self) -> None:
        if self.started or not all(s.taken for s in self.seats):
            return
        if self.config.require_ready and not all(s.ready or s.bot for s in self.seats):
            return
        await self.start_match()

    async def _take_seat(self, conn: int, msg: dict[str, Any], ident: str) -> int | None:
        token = get_field(msg, "token", bytes, optional=True)
        index = self._seat_for_token(token.hex()) if token else None
        if index is not None:
            seat = self.seats[index]
            if seat.ident != ident:
                if self.started:
                    raise ProtocolError("not_allowed", "this seat signs with another key: join"
                                        " with the seat file it was taken with")
                seat.ident = ident
            return index
        if msg.get("watch") or self.started:
            return None
        index = next((i for i, s in enumerate(self.seats) if not s.taken), None)
        if index is not None:
            sign = msg.get("sign")
            self.seats[index] = Seat(
                name=clean_name(msg.get("name"), f"player {index}"),
                sign=zodiak.parse_sign(sign) if self.config.game == "zodiak" and sign
                else (random.Random(self.seed - index).choice(zodiak.SIGNS)
                      if self.config.game == "zodiak" else None),
                token=secrets.token_hex(16), ident=ident)
        return index

    def _seat_for_token(self, token: str) -> int | None:
        for i, seat in enumerate(self.seats):
            if seat.token is not None and secrets.compare_digest(seat.token, token):
                return i
        return None

    def _table_facts(self) -> dict[str, Any]:
        return {"game": self.config.game, "players": self.config.players,
                "target": Match(self.config.game, self.config.players,
                                ("aries",) * self.config.players).target,
                "table": self.table, "host": self.identity.public.to_bytes(),
                "ids": [bytes.fromhex(s.ident) if s.ident else None for s in self.seats]}

    def _departed(self, conn: Any) -> None:
        self.spectators.discard(conn)
        index = self.seat_of(conn) if type(conn) is int else None
        if index is None:
            return
        seat = self.seats[index]
        seat.conn, seat.away_since = None, time.monotonic()
        self.on_event(f"seat {index} ({seat.name}) lost its connection")
        if not self.started:
            self.seats[index] = Seat()
        self._spawn(self._send_lobby())
        self._wake.set()

    async def _send_lobby(self) -> None:
        seats = [{**asdict(s.info()), "seat": i, "id": bytes.fromhex(s.ident) if s.ident else None}
                 for i, s in enumerate(self.seats)]
        await self._broadcast("lobby", seats=seats, started=self.started,
                              watching=len(self.spectators))

    async def _on_chat(self, conn: int, msg: dict[str, Any]) -> None:
        text = get_field(msg, "text", str)[:MAX_CHAT]
        if len(self.log) >= MAX_CHAIN:
            raise ProtocolError("not_allowed", "enough chat for this round")
        index = self.seat_of(conn)
        name = self.seats[index].name if index is not None else f"watcher {conn}"
        text = "".join(ch for ch in text if ch.isprintable())
        await self._broadcast("chat", seat=index, name=name, text=text)

    def _check_owner(self, conn: int, msg: dict[str, Any], what: str) -> None:
        if self.started:
            raise ProtocolError("not_allowed", "the match has started")
        owner = msg.get("owner")
        if (self.seat_of(conn) is None or self.config.owner_secret is None
                or not isinstance(owner, bytes)
                or not secrets.compare_digest(owner.hex(), self.config.owner_secret)):
            raise ProtocolError("not_allowed", f"only the host {what}")

    def _bot_seat(self, index: int) -> Seat:
        return Seat(name=f"bot {index}", bot=self.config.bot_kind,
                    sign=random.Random(self.seed + index).choice(zodiak.SIGNS))

    async def _on_start(self, conn: int, msg: dict[str, Any]) -> None:
        self._check_owner(conn, msg, "starts the match")
        for i, seat in enumerate(self.seats):
            if not seat.taken:
                self.seats[i] = self._bot_seat(i)
        await self.start_match()

    async def _on_ready(self, conn: int, msg: dict[str, Any]) -> None:
        index = self.seat_of(conn)
        if index is None or self.started:
            raise ProtocolError("not_allowed", "only a seated player says ready, before the start")
        self.seats[index].ready = get_field(msg, "ready", bool)
        await self._send_lobby()
        await self._start_if_everyone_is_in()

    async def _on_seat_bot(self, conn: int, msg: dict[str, Any]) -> None:
        self._check_owner(conn, msg, "seats and unseats bots")
        index = get_field(msg, "seat", int)
        kind = get_field(msg, "kind", str, optional=True)
        if not 0 <= index < len(self.seats):
            raise ProtocolError("bad_frame", f"there is no seat {index}")
        if self.seats[index].token is not None:
            raise ProtocolError("not_allowed", "a person sits there")
        if kind is not None and kind not in BOT_KINDS:
            raise ProtocolError("bad_frame", f"unknown bot {kind[:20]!r}: greedy or random")
        self.seats[index] = Seat() if kind is None else replace(self._bot_seat(index), bot=kind)
        await self._send_lobby()
        await self._start_if_everyone_is_in()

    async def _on_sync(self, conn: int, msg: dict[str, Any]) -> None:
        await self._resync(conn, [], msg.get("c"), msg.get("n"))

    # -- shuffling ------------------------------------------------------------

    def _new_seed(self, epoch: int) -> bytes:
        """The dealer's secret seed for one shuffle (test doubles override these hooks)."""
        return new_secret()

    def _build_deck(self, epoch: int, seed: bytes, nonces: list[bytes],
                    canonical: list[str]) -> DeckCommitment:
        """The committed deck: `canonical` shuffled by seed and nonces."""
        return DeckCommitment.build(self.table, self.round_number, epoch, seed, nonces, canonical)

    def _published_commitments(self, deck: DeckCommitment) -> list[bytes]:
        """The position commitments the table is shown."""
        return list(deck.commitments)

    def _delivered(self, deck: DeckCommitment, position: int) -> CardOpening:
        """The card and opening sealed to the seat that gets `position`."""
        return deck.opening(position)

    def _nonce_seats(self) -> list[int]:
        """The seats asked for a nonce: those held by a connected person (bots add none)."""
        return [i for i, s in enumerate(self.seats) if s.bot is None and s.ident
                and s.conn is not None]

    def _revealed_seed(self, epoch: int) -> bytes:
        """The seed shown at the end of the round for `epoch`."""
        return self.epochs[epoch].seed

    async def _shuffle(self, epoch: int, canonical: list[str]) -> DeckCommitment:
        """Run (or, after a restart, finish) shuffle `epoch` of this round; return its deck."""
        number = self.round_number
        if epoch == len(self.epochs):
            # Choose the seats under the send lock: a seat resynced meanwhile is either asked
            # for a nonce or hears of this shuffle in its resync, never neither.
            async with self._send_lock:
                ep = Epoch(self._new_seed(epoch), canonical=canonical)
                ep.seats = self._nonce_seats()
                proofs = []
                for seat in ep.seats:
                    proof = self.precommits.get(f"{number}/{epoch}/{seat}")
                    if proof is not None:
                        ep.commits[seat] = proof[1]
                        proofs.append([seat, proof[0]])
                missing = [s for s in ep.seats if s not in ep.commits]
                ep.reveal_open = not missing
                self.epochs.append(ep)
                await self._broadcast_locked(
                    "shuffle", round=number, epoch=epoch, seats=ep.seats, commits=proofs,
                    seed=seed_commitment(self.table, number, epoch, ep.seed), missing=missing)
        ep = self.epochs[epoch]
        if ep.deck is None:
            if not ep.reveal_open:
                await self._wait_for(lambda: all(s in ep.commits for s in ep.seats))
                ep.seats = [s for s in ep.seats if s in ep.commits]
                ep.reveal_open = True
                await self._broadcast("reveal", round=number, epoch=epoch, seats=ep.seats)
            await self._wait_for(lambda: all(s in ep.nonces for s in ep.seats))
            nonces = [ep.nonces[s] for s in sorted(ep.nonces)]
            ep.deck = self._build_deck(epoch, ep.seed, nonces, ep.canonical or canonical)
            await self._broadcast("deck", round=number, epoch=epoch,
                                  commitments=self._published_commitments(ep.deck))
        return ep.deck

    async def _wait_for(self, ready: Callable[[], bool]) -> None:
        """Wait until `ready()` or the reveal timeout; a seat that is late forfeits."""
        deadline = time.monotonic() + self.config.reveal_timeout
        while not ready() and not self.finished:
            left = deadline - time.monotonic()
            if left <= 0:
                self.on_event("a seat did not commit or reveal its nonce in time: it forfeits")
                return
            self._nonce_wake.clear()
            try:
                await asyncio.wait_for(self._nonce_wake.wait(), left)
            except TimeoutError:
                pass

    async def _on_nonce(self, index: int, message: SignedMessage, body: dict[str, Any]) -> None:
        number, epoch = get_field(body, "round", int), get_field(body, "epoch", int)
        ep = self.epochs[epoch] if number == self.round_number and 0 <= epoch < len(
            self.epochs) else None
        if ep is None or ep.deck is not None or index not in ep.seats:
            raise ProtocolError("stale", "no shuffle is waiting for your nonce")
        if body["t"] == "nonce_commit":
            commit = get_field(body, "commit", bytes)
            if ep.reveal_open or index in ep.commits or len(commit) != 32:
                raise ProtocolError("stale", "the commit phase of that shuffle is over")
            ep.commits[index] = commit
        else:
            nonce = get_field(body, "nonce", bytes)
            committed = ep.commits.get(index)
            if not ep.reveal_open or committed is None or index in ep.nonces:
                raise ProtocolError("stale", "that shuffle is not taking reveals from you")
            try:
                opens = nonce_commitment(self.table, number, epoch, index, nonce) == committed
            except FairnessError:
                opens = False
            if not opens:
                raise ProtocolError("bad_nonce", "that nonce does not open your commitment;"
                                    " you forfeit this shuffle")
            ep.nonces[index] = nonce
            self._keep_precommits(index, message, body)
        self._seat_head(index, "nonce").advance(message)
        await self._broadcast("fwd", seat=index, m=message.to_wire())
        self._nonce_wake.set()

    def _keep_precommits(self, index: int, message: SignedMessage, body: dict[str, Any]) -> None:
        """Keep a seat's commitments to its next nonces, with its signed message as proof."""
        items = body.get("next")
        for item in items if isinstance(items, list) else []:
            if (isinstance(item, list) and len(item) == 3 and all(type(v) is int for v in item[:2])
                    and isinstance(item[2], bytes) and len(item[2]) == 32
                    and (item[0], item[1]) > (self.round_number, len(self.epochs) - 1)):
                key = f"{item[0]}/{item[1]}/{index}"
                self.precommits.setdefault(key, [message.to_wire(), item[2]])
        self.precommits = {k: v for k, v in self.precommits.items()
                           if int(k.split("/")[0]) >= self.round_number}

    # -- the match ------------------------------------------------------------

    async def start_match(self) -> None:
        """Start the match and deal its first round (in the background: seats must answer)."""
        if self.started:
            return
        self.started = True
        signs = tuple(s.sign or "aries" for s in self.seats) if self.config.game == "zodiak" else ()
        dealer = random.Random(self.seed).randrange(self.config.players)
        self.match = Match(self.config.game, self.config.players, signs, dealer=dealer)
        self.on_event("match started")
        await self._send_lobby()
        self._spawn(self._locked(self._deal))

    async def _deal(self) -> None:
        match = self.match
        assert match is not None
        number = match.rounds_played + 1
        if number != self.round_number:
            self._new_chain(number)
        deck = await self._shuffle(0, canonical_deck(self.config.game))
        if self.finished:
            return
        self.state = match.start_round([card_of(self.config.game, c) for c in deck.cards])
        self.round_scored = False
        self.record = Record.of_round(self.config.game, [s.name for s in self.seats], self.state)
        layout = deal_layout(self.config.game, self.config.players)
        self.epochs[0].owners = list(layout)
        cards: list[Any] = []
        for position, owner in enumerate(layout):
            opening = self._delivered(deck, position)
            if owner == TABLE:
                self.epochs[0].opened.add(position)
                cards.append(opening.to_wire())
            else:
                cards.append(self._seal(int(owner), opening))
        state = self.state
        await self._broadcast(
            "deal", round=number, game=self.config.game, dealer=state.dealer,
            scores=list(state.scores), players=self.config.players, cards=cards,
            signs=list(state.signs) if isinstance(state, zodiak.ZodiakRound) else None)
        self.on_event(f"round {self.round_number} dealt")
        self._wake.set()

    def _present(self, seat: int) -> bool:
        """Whether a person holds `seat` and is connected (the host never moves for them)."""
        occupant = self.seats[seat]
        return occupant.bot is None and occupant.conn is not None and occupant.away_since is None

    def _seal(self, seat: int, opening: CardOpening) -> bytes | None:
        public = self.seats[seat].public()
        if public is None:
            return None  # a host-side bot: nobody else may see it, and it needs no delivery
        return seal_card(self.identity, public, self.table, self.round_number, opening)

    async def _on_seat_move(self, index: int, message: SignedMessage, body: dict[str, Any]) -> None:
        state = self.state
        if state is None or state.round_over:
            raise ProtocolError("not_allowed", "no round is in play")
        n = get_field(body, "n", int)
        if get_field(body, "round", int) != self.round_number or n != len(state.history):
            raise ProtocolError("stale", "that move is for an earlier position; resync")
        move = parse_move(self.config.game, body.get("move"))
        state.check(move, index)
        raw = get_field(body, "open", list)
        try:
            openings = [CardOpening.from_wire(o, index) for o in raw]
        except FairnessError as exc:
            raise ProtocolError("bad_opening", exc.reason) from None
        self._check_openings(index, move, openings)
        self._spawn(self._locked(lambda: self._apply(index, n, move, message, openings)))

    def _check_openings(self, seat: int, move: Any, openings: list[CardOpening]) -> None:
        """Refuse a move unless it opens exactly its cards, each dealt to `seat` and unplayed."""
        if [o.card for o in openings] != played_cards(move):
            raise ProtocolError("bad_opening", "open exactly the cards you play, in order")
        seen: set[tuple[int, int]] = set()
        for o in openings:
            ep = self.epochs[o.epoch] if o.epoch < len(self.epochs) else None
            where = f"{o.card} (position {o.position} of shuffle {o.epoch})"
            if (ep is None or ep.deck is None or o.position >= len(ep.owners)
                    or ep.owners[o.position] != seat):
                raise ProtocolError("not_dealt", f"{where} was not dealt to you")
            if o.position in ep.opened or (o.epoch, o.position) in seen:
                raise ProtocolError("not_dealt", f"{where} was played already")
            if ep.deck.opening(o.position) != o:
                raise ProtocolError("bad_opening", f"{where} does not open its commitment")
            seen.add((o.epoch, o.position))

    def _openings_for(self, seat: int, move: Any) -> list[CardOpening]:
        """The openings of the cards a host-played seat puts face up."""
        found: list[CardOpening] = []
        for card in played_cards(move):
            for epoch, ep in enumerate(self.epochs):
                if ep.deck is None:
                    continue
                position = next((p for p, owner in enumerate(ep.owners) if owner == seat
                                 and ep.deck.cards[p] == card and p not in ep.opened
                                 and (epoch, p) not in {(o.epoch, o.position) for o in found}),
                                None)
                if position is not None:
                    found.append(ep.deck.opening(position))
                    break
        return found

    async def _apply(self, seat: int, n: int, move: Any, signed: SignedMessage | None = None,
                     openings: list[CardOpening] | None = None) -> None:
        """Apply a move checked earlier, if the position is still the one it was made in."""
        state, record = self.state, self.record
        if (state is None or record is None or state.round_over or state.turn != seat
                or len(state.history) != n):
            return
        if openings is None:
            openings = self._openings_for(seat, move)
        if isinstance(state, zodiak.ZodiakRound) and isinstance(move, zodiak.Draw):
            pending = state.pending_reshuffle()
            if pending is not None:
                deck = await self._shuffle(1 + state.reshuffles_done, [str(c) for c in pending])
                if self.finished:
                    return
                state.reshuffles.append([card_of(self.config.game, c) for c in deck.cards])
        async with self._send_lock:  # nobody is resynced between the check and the news
            if signed is None and self._present(seat):
                return  # its player is back: the move is theirs to make
            consumed = 1 + state.reshuffles_done if isinstance(state, zodiak.ZodiakRound) else 1
            stock_left = len(state.stock)
            effect = state.push(move)
            sizes = [len(ep.deck.cards) if ep.deck else 0 for ep in self.epochs]
            drawn = []
            for epoch, position in draw_positions(sizes, consumed, stock_left, len(effect.drawn)):
                self.epochs[epoch].owners.append(seat)
                drawn.append(self._seal(seat, self._delivered(self.epochs[epoch].deck, position)))
            for o in openings:
                self.epochs[o.epoch].opened.add(o.position)
            record.add_move(seat, move)
            if isinstance(state, zodiak.ZodiakRound):
                record.set_reshuffles(state.reshuffles)
            self.moves_made += 1
            if signed is not None:
                self._seat_head(seat, "move").advance(signed)
                fields: dict[str, Any] = {"by": signed.to_wire()}
            else:
                fields = {"move": str(move), "open": [o.to_wire() for o in openings]}
            await self._broadcast_locked("moved", round=self.round_number, n=n, seat=seat,
                                         drawn=drawn, **fields)
        self.on_event(f"move {self.moves_made}: {state.describe(effect)}")
        if state.round_over:
            await self._end_round()
        self._wake.set()

    async def _end_round(self) -> None:
        state, record, match = self.state, self.record, self.match
        assert state is not None and record is not None and match is not None
        winner = deal_winner(record.scores, state)
        points = (state.points() if isinstance(state, zodiak.ZodiakRound)
                  else max(b - a for a, b in zip(record.scores, state.scores)))
        match.end_round(state)  # before the broadcast saves, so a restart deals the next round
        self.round_scored = True
        infos = tuple(s.info() for s in self.seats)
        summary = round_summary(self.config.game, infos, state, winner, points)
        await self._broadcast("round_end", round=self.round_number, winner=winner,
                              points=points, scores=list(match.scores), summary=summary,
                              seeds=[self._revealed_seed(e) for e in range(len(self.epochs))])
        self.on_event(f"round {self.round_number} over: {summary}")
        if match.over:
            await self._finish()
        else:
            await self._deal()

    async def _finish(self) -> None:
        result = self.result()
        await self._broadcast("match_end", **result)
        self.on_event(f"match over: {json.dumps(result)}")
        if self.config.result_path is not None:
            self.config.result_path.write_text(json.dumps(result) + "\n")
        self.finished = True
        self.state = None
        if self.config.save_path is not None and self.config.save_path.exists():
            self.config.save_path.unlink()
        self._nonce_wake.set()
        self.done.set()

    def result(self) -> dict[str, Any]:
        """The match result: game, scores, winner (seat or team) and number of moves."""
        assert self.match is not None
        return {"game": self.config.game, "scores": list(self.match.scores),
                "winner": self.match.winner, "moves": self.moves_made}

    async def _play_loop(self) -> None:
        """Play for bots, and for people who have been away too long."""
        bots: dict[int, Any] = {}
        while not self.finished:
            self._wake.clear()
            state = self.state
            seat = state.turn if state is not None and not state.round_over else None
            if seat is None:
                await self._wake.wait()
                continue
            occupant = self.seats[seat]
            if occupant.bot is None and occupant.away_since is None:
                await self._wake.wait()
                continue
            if occupant.bot is None:
                left = occupant.away_since + self.config.away_timeout - time.monotonic()
                if left > 0:
                    try:
                        await asyncio.wait_for(self._wake.wait(), left)
                    except TimeoutError:
                        pass
                    continue
            await asyncio.sleep(self.config.bot_delay)
            if self.state is not state or state.turn != seat:
                continue
            bot = bots.setdefault(seat, make_bot(occupant.bot or "greedy", self.seed + seat))
            move = bot.choose(state.view(seat))
            n = len(state.history)
            await self._locked(lambda s=seat, n=n, m=move: self._apply(s, n, m))

    # -- saving ---------------------------------------------------------------

    def _save(self) -> None:
        path = self.config.save_path
        if path is None or self.finished:
            return
        data = {
            "config": {"game": self.config.game, "players": self.config.players,
                       "bots": self.config.bots, "seed": self.seed,
                       "owner_secret": self.config.owner_secret},
            "seats": [{**asdict(s), "conn": None, "away_since": None} for s in self.seats],
            "started": self.started, "moves_made": self.moves_made,
            "match": None if self.match is None else {
                "dealer": self.match.dealer, "scores": self.match.scores,
                "rounds_played": self.match.rounds_played},
            "record": None if self.record is None else json.loads(self.record.dumps()),
            "room": self.relay.room if self.relay else None,
            "host_secret": self.relay.host_secret.hex() if self.relay and self.relay.host_secret
            else None,
            "fair": self._fair_json(),
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.touch(mode=0o600)  # it holds this round's seeds: whoever reads it knows the deck
        tmp.write_text(json.dumps(data))
        tmp.replace(path)

    def _fair_json(self) -> dict[str, Any]:
        return {
            "identity": self.identity.seed.hex(), "table": self.table,
            "round": self.round_number, "log": [b.hex() for b in self.log], "after": self._after,
            "scored": self.round_scored,
            "heads": {k: [h.seq, h.head.hex()] for k, h in self.heads.items()},
            "precommits": {k: msgpack.packb(v, use_bin_type=True).hex()
                           for k, v in self.precommits.items()},
            "epochs": [{"seed": ep.seed.hex(), "seats": ep.seats, "reveal_open": ep.reveal_open,
                        "commits": {str(s): c.hex() for s, c in ep.commits.items()},
                        "nonces": {str(s): c.hex() for s, c in ep.nonces.items()},
                        "canonical": ep.canonical, "dealt": ep.deck is not None,
                        "owners": ep.owners, "opened": sorted(ep.opened)} for ep in self.epochs],
        }

    def _restore_fair(self, data: dict[str, Any]) -> None:
        self.identity, self.table = Identity(bytes.fromhex(data["identity"])), data["table"]
        self._new_chain(data["round"])
        self._after, self.round_scored = data.get("after", 0), data.get("scored", True)
        self.log = [bytes.fromhex(b) for b in data["log"]]
        if self.log:
            last = SignedMessage.from_wire(unpack(self.log[-1])["m"])
            self.head = ChainHead(last.seq + 1, last.digest)
        self.heads = {k: ChainHead(v[0], bytes.fromhex(v[1])) for k, v in data["heads"].items()}
        self.precommits = {k: msgpack.unpackb(bytes.fromhex(v), raw=False)
                           for k, v in data["precommits"].items()}
        for saved in data["epochs"]:
            ep = Epoch(bytes.fromhex(saved["seed"]), saved["seats"],
                       {int(s): bytes.fromhex(c) for s, c in saved["commits"].items()},
                       {int(s): bytes.fromhex(c) for s, c in saved["nonces"].items()},
                       saved["reveal_open"], saved["canonical"], None, saved["owners"],
                       set(saved["opened"]))
            if saved["dealt"]:
                nonces = [ep.nonces[s] for s in sorted(ep.nonces)]
                ep.deck = DeckCommitment.build(self.table, self.round_number, len(self.epochs),
                                               ep.seed, nonces, ep.canonical or [])
            self.epochs.append(ep)

    @classmethod
    def resume(cls, config: HostConfig, path: Path) -> tuple[Host, str | None, bytes | None]:
        """The host saved at `path`, with its room code and host secret."""
        data = json.loads(path.read_text())
        if "fair" not in data:
            raise ValueError(f"{path} was saved by an older cardtui without verifiable dealing;"
                             " start a new game")
        saved = data["config"]
        config.game, config.players, config.bots = saved["game"], saved["players"], saved["bots"]
        config.seed, config.owner_secret = saved["seed"], saved.get("owner_secret")
        config.save_path = path
        host = cls(config, seats=[Seat(**s) for s in data["seats"]])
        host.started, host.moves_made = data["started"], data["moves_made"]
        for seat in host.seats:
            if seat.bot is None and seat.token is not None:
                seat.away_since = time.monotonic()
        if data["match"] is not None:
            signs = tuple(s.sign or "aries" for s in host.seats) if config.game == "zodiak" else ()
            host.match = Match(config.game, config.players, signs, **data["match"])
        if data["record"] is not None:
            host.record = Record.from_json(data["record"])
            host.state = host.record.replay().state
        host._restore_fair(data["fair"])
        secret = bytes.fromhex(data["host_secret"]) if data.get("host_secret") else None
        return host, data.get("room"), secret
