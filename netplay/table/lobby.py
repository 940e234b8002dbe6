"""The host's seats and lobby: who sits where, joining and leaving, ready, bots, chat, start."""

from __future__ import annotations

import asyncio
import logging
import math
import random
import secrets
import time
from dataclasses import asdict, replace
from typing import Any

from engine import zodiak
from engine.bots import BOT_KINDS
from engine.errors import IllegalMove
from engine.games import game_named
from engine.house import HouseRules
from engine.match import Match
from netplay.fair import PublicIdentity, new_secret
from netplay.messages import (
    Chat,
    Join,
    Leave,
    ProtocolError,
    Ready,
    Rematch,
    SeatBot,
    SetHouse,
    Start,
    Sync,
)
from netplay.protocol import MAX_CHAT, clean_name, join_proof_digest, pack, public_identity
from netplay.table.dealing import MAX_CHAIN
from netplay.table.state import SEAT_CHAT_LINES, Seat, TableState

log = logging.getLogger("cardtui.host")

MAX_LOBBIES = 200  # per chain: an honest table sends a few dozen; every one is kept and saved
MAX_OTHERS_CHAT = 200  # chat lines per chain from all who hold no seat, together


class HostLobby(TableState):
    """The `Host` methods that seat people and bots and run the lobby before the match."""

    def seat_of(self, conn: int) -> int | None:
        """The seat that `conn` speaks for, if any."""
        for i, seat in enumerate(self.seats):
            if seat.conn == conn:
                return i
        return None

    async def _on_join(self, conn: int, msg: Join) -> None:
        public = public_identity(msg.id)
        ident = public.to_bytes().hex()
        index = self.seat_of(conn)
        proven = index is not None and self.seats[index].ident == ident
        wants_seat = msg.watch is not True or msg.token is not None
        if wants_seat and not proven and not await self._proves_key(conn, public, msg):
            return  # challenged: the join comes again, signed
        if index is None:
            index = self._seat_to_take(msg, ident)
        self._afford_resync(conn, msg.c, msg.n, index)
        if index is not None and not self.seats[index].taken:
            self.seats[index] = Seat(name=clean_name(msg.name, f"player {index}"),
                                     sign=self._sign_for(index, msg.sign),
                                     token=secrets.token_hex(16), ident=ident)
        await self._admit(conn, watch=index is None)
        if index is None:
            self.spectators.add(conn)
            welcome = pack("welcome", seat=None, token=None, **self._table_facts())
            await self._resync(conn, [welcome], msg.c, msg.n)
            # A watcher learns the seats from a lobby in this round's chain: the first one to come
            # puts one there, later ones find it in their resync, so watchers coming and going
            # add at most one message to each chain.
            if not self.lobbies.get(self.round_number):
                await self._send_lobby()
            return
        seat = self.seats[index]
        old = seat.conn
        seat.conn, seat.away_since, seat.leaving = conn, None, False
        if old is not None and old != conn:
            # The seat came back on a new conn: the relay would keep counting the old one as a
            # seat, and a seat re-joining from many conns would fill the room's seat slots.
            await self._drop(old)
        self.spectators.discard(conn)  # a watcher that checked the host's key, then sat down
        self.on_event(f"seat {index} ({seat.name}) joined from conn {conn}")
        is_owner = self._is_owner(msg.owner)
        welcome = pack("welcome", seat=index, token=bytes.fromhex(seat.token or ""),
                       owner=is_owner, **self._table_facts())
        await self._resync(conn, [welcome], msg.c, msg.n)
        await self._send_lobby()
        self._nonce_wake.set()
        await self._prepare_first_deck()
        await self._start_if_everyone_is_in()
        self._save()

    async def _proves_key(self, conn: int, public: PublicIdentity, msg: Join) -> bool:
        """Whether the join signs this conn's challenge; if not, send it a fresh one."""
        proof = msg.proof
        challenge = self.challenges.pop(conn, None)
        if (proof is not None and challenge is not None
                and public.verify(join_proof_digest(self.table, challenge), proof)):
            return True
        # A token alone is never enough: whoever sniffed it lacks the seat's key.
        self.challenges[conn] = new_secret()
        await self._send(conn, pack("challenge", nonce=self.challenges[conn], table=self.table,
                                    dealing="mental" if self.config.mental else "trusted"))
        return False

    async def _admit(self, conn: int, watch: bool) -> None:
        """Tell the relay this conn joined, so it keeps it (and counts it as a seat or watcher)."""
        if self.relay is not None and not self.relay.closed:
            try:
                await self.relay.admit(conn, watch)
            except ConnectionError:
                log.warning("relay admit failed")

    async def _drop(self, conn: int) -> None:
        """Have the relay close a conn that no longer speaks for anyone here."""
        self._departed(conn)
        if self.relay is not None and not self.relay.closed:
            try:
                await self.relay.drop(conn)
            except ConnectionError:
                log.warning("relay drop failed")

    async def _start_if_everyone_is_in(self) -> None:
        if self.started or not all(s.taken for s in self.seats):
            return
        # A rematch always waits for every person to accept it.
        wait_for_ready = self.config.require_ready or self.round_base > 0
        if wait_for_ready and not all(s.ready or s.bot for s in self.seats):
            return
        await self.start_match()

    def _seat_to_take(self, msg: Join, ident: str) -> int | None:
        """The seat a join from a conn without one would sit in (the token's, else the first
        free one before the start), None to watch; it changes nothing."""
        token = msg.token
        index = self._seat_for_token(token.hex()) if token else None
        if index is not None:
            if self.seats[index].ident != ident:
                # Even in the lobby: a token seen on plain ws:// plus the thief's own key must
                # not unseat the player who holds the seat.
                raise ProtocolError("not_allowed", "this seat signs with another key: join"
                                    " with the seat file it was taken with")
            return index
        if msg.watch or self.started:
            return None
        return next((i for i, s in enumerate(self.seats) if not s.taken), None)

    def _sign_for(self, index: int, asked: str | None) -> str | None:
        """The sign a new seat asked for, else one drawn from the table's seed; None without signs."""
        if not game_named(self.config.game).uses_signs:
            return None
        if asked:
            return zodiak.parse_sign(asked)
        return random.Random(self.seed - index).choice(zodiak.SIGNS)

    def _seat_for_token(self, token: str) -> int | None:
        for i, seat in enumerate(self.seats):
            if seat.token is not None and secrets.compare_digest(seat.token, token):
                return i
        return None

    def _table_facts(self) -> dict[str, Any]:
        return {"game": self.config.game, "players": self.config.players,
                **self._house_facts(),
                "dealing": "mental" if self.config.mental else "trusted",
                "table": self.table, "host": self.identity.public.to_bytes(),
                "away_seconds": self.config.away_timeout,
                "turn_seconds": (math.ceil(self.config.turn_seconds) if self.config.turn_seconds
                                 else None),
                "ids": [bytes.fromhex(s.ident) if s.ident else None for s in self.seats],
                **({"rematch_any": True} if self.config.rematch_by_any_seat else {})}

    def _departed(self, conn: Any) -> None:
        self.spectators.discard(conn)
        self.challenges.pop(conn, None)
        self.budgets.pop(conn, None)
        self.strikes.pop(conn, None)  # a conn that left has nothing more to be refused
        index = self.seat_of(conn) if type(conn) is int else None
        if index is None:
            return
        seat = self.seats[index]
        seat.conn, seat.away_since = None, time.monotonic()
        if seat.leaving:
            # Gone as it said: as if away for the whole away time, its bot plays from now on.
            seat.away_since -= self.config.away_timeout
            self.on_event(f"seat {index} ({seat.name}) left the match: its bot plays")
        else:
            self.on_event(f"seat {index} ({seat.name}) lost its connection")
        if not self.started:
            self.seats[index] = Seat()
            self._forget_commits(index)
        self._spawn(self._send_lobby())
        self._wake.set()
        self._nonce_wake.set()  # the first deal need not wait for its commitment any more

    async def _send_lobby(self, force: bool = False) -> None:
        # Seats taken and left again and again would otherwise grow the chain without bound.
        sent = self.lobbies.get(self.round_number, 0)
        if sent >= MAX_LOBBIES and not force:
            return
        self.lobbies = {self.round_number: sent + 1}
        seats = [{**asdict(s.info()), "seat": i, "id": bytes.fromhex(s.ident) if s.ident else None}
                 for i, s in enumerate(self.seats)]
        await self._broadcast("lobby", seats=seats, started=self.started,
                              watching=len(self.spectators), rounds_before=self.round_base,
                              **self._house_facts())

    def _house_facts(self) -> dict[str, Any]:
        """The house rules and the target they make, which the host may change in the lobby."""
        return {"target": Match(self.config.game, self.config.players,
                                ("aries",) * self.config.players, house=self.config.house).target,
                "house": str(self.config.house)}

    async def _on_house(self, conn: int, msg: SetHouse) -> None:
        """The host's own seat sets the house rules before the start; everyone is asked again."""
        self._check_owner(conn, msg, "sets the house rules")
        try:
            house = HouseRules.parse(msg.rules)
        except IllegalMove as exc:
            raise ProtocolError("bad_frame", f"house rules: {exc}") from None
        if house == self.config.house:
            return
        self.config.house = house
        # The people seated said ready to other rules: each says it again to these.
        for seat in self.seats:
            seat.ready = False
        self.on_event(f"house rules: {house}")
        await self._send_lobby(force=True)
        self._save()

    async def _on_chat(self, conn: int, msg: Chat) -> None:
        text = msg.text[:MAX_CHAT]
        if len(self.log) >= MAX_CHAIN:
            raise ProtocolError("not_allowed", "enough chat for this round")
        index = self.seat_of(conn)
        if index is None:
            # Watchers and strangers come and go with fresh budgets: they share a small quota,
            # so they can neither fill the chain the seats chat in nor make it costly to save.
            said = self.others_chat.get(self.round_number, 0)
            if said >= MAX_OTHERS_CHAT:
                raise ProtocolError("not_allowed", "enough chat from watchers for this round")
            self.others_chat = {self.round_number: said + 1}
        else:
            self._afford_seat_chat(index)
        name = self.seats[index].name if index is not None else f"watcher {conn}"
        text = "".join(ch for ch in text if ch.isprintable())
        await self._broadcast("chat", seat=index, name=name, text=text)

    def _afford_seat_chat(self, index: int) -> None:
        """Count a chat line of seat `index`, or refuse it over the seat's budget."""
        budget = self._seat_budget(index)
        said = budget.chat_lines.get(self.round_number, 0)
        if said >= SEAT_CHAT_LINES:
            raise ProtocolError("not_allowed", "you have said enough for this round")
        if not budget.chat.take(self.budget_clock()):
            raise ProtocolError("rate_limited", "chat is one line every 2 s; slow down")
        budget.chat_lines = {self.round_number: said + 1}

    def _is_owner(self, owner: bytes | None) -> bool:
        """Whether `owner` is the table's owner secret (the host's own app knows it)."""
        return (owner is not None and self.config.owner_secret is not None
                and secrets.compare_digest(owner.hex(), self.config.owner_secret))

    async def _on_rematch(self, conn: int, msg: Rematch) -> None:
        """The owner (at a server's table, any seated person) offers a rematch with the same
        seats once the match is over: the table goes back to its lobby, bots stay, people who
        left free their seats, and the match starts again when every person has accepted (said
        ready)."""
        offered = not self.started and self.round_base > 0  # a rematch waits in the lobby
        if self.config.rematch_seconds <= 0 or not (self.finished or offered):
            raise ProtocolError("not_allowed", "this table offers no rematch now")
        index = self.seat_of(conn)
        if not (self.config.rematch_by_any_seat and index is not None):
            self._check_owner(conn, msg, "offers a rematch", started_ok=True)
        if offered:
            await self._on_ready(conn, Ready(ready=True))  # two offered at once: this accepts
            return
        await self.offer_rematch(index)

    async def offer_rematch(self, owner: int | None) -> None:
        """Take the finished table back to its lobby for a rematch; `owner`'s seat accepts it."""
        assert self.match is not None
        self.round_base += self.match.rounds_played
        # The rematch has a chain of its own from its lobby on (it is dealt in it): a newcomer
        # in a seat freed below is sent the rematch, not the last round of a match that was
        # dealt to someone else, whose cards and nonces its checks would take for its own.
        self._new_chain(self.round_base + 1)
        self.match, self.state, self.record, self.mental = None, None, None, None
        self.started = self.finished = False
        self.moves_made = 0
        self.done.clear()
        for index, seat in enumerate(self.seats):
            if seat.bot is None and seat.conn is None:
                self.seats[index] = Seat()  # gone: the seat is free for anyone, or a bot (F3, F5)
                self._forget_commits(index)
            else:
                seat.ready = index == owner  # offering is accepting
        self.on_event("the host offers a rematch")
        self._bot_task = asyncio.create_task(self._play_loop())
        self.rematched.set()
        await self._send_lobby(force=True)
        self._save()
        await self._start_if_everyone_is_in()

    def _check_owner(self, conn: int, msg: Start | SeatBot | SetHouse | Rematch, what: str,
                     started_ok: bool = False) -> None:
        if self.started and not started_ok:
            raise ProtocolError("not_allowed", "the match has started")
        if self.seat_of(conn) is None or not self._is_owner(msg.owner):
            raise ProtocolError("not_allowed", f"only the host {what}")

    def _bot_seat(self, index: int) -> Seat:
        return Seat(name=f"bot {index}", bot=self.config.bot_kind,
                    sign=random.Random(self.seed + index).choice(zodiak.SIGNS))

    async def _on_start(self, conn: int, msg: Start) -> None:
        self._check_owner(conn, msg, "starts the match")
        for i, seat in enumerate(self.seats):
            if not seat.taken:
                self.seats[i] = self._bot_seat(i)
        await self.start_match()

    async def _on_ready(self, conn: int, msg: Ready) -> None:
        index = self.seat_of(conn)
        if index is None:
            raise ProtocolError("not_allowed", "only a seated player says ready")
        if self.started:
            # Nothing to do, and nothing wrong: a headless host or a server table starts as
            # soon as every seat is taken, so a seat's ready sent on sitting down crosses it.
            return
        self.seats[index].ready = msg.ready
        await self._send_lobby()
        await self._start_if_everyone_is_in()

    async def _on_leave(self, conn: int, msg: Leave) -> None:
        index = self.seat_of(conn)
        if index is None or not self.started:
            raise ProtocolError("not_allowed", "only a seated player leaves, once the match is on")
        if self.config.mental:
            # There a seat away for the away time voids the deal: a leave would let a seat
            # that leaves and comes back have every deal made again at once.
            raise ProtocolError("not_allowed", "at a mental-poker table a leaving seat hands"
                                " its round key over (mp_handover)")
        # Only a mark: the seat counts as left once its connection goes (an honest client closes
        # it at once). `leave` is not signed, so one a relay slipped in for a seat that stays
        # must not hand the seat to its bot while its person plays on; a join clears the mark.
        self.seats[index].leaving = True
        self.on_event(f"seat {index} ({self.seats[index].name}) says it is leaving")

    async def _on_seat_bot(self, conn: int, msg: SeatBot) -> None:
        self._check_owner(conn, msg, "seats and unseats bots")
        index, kind = msg.seat, msg.kind
        if not 0 <= index < len(self.seats):
            raise ProtocolError("bad_frame", f"there is no seat {index}")
        if self.seats[index].token is not None:
            raise ProtocolError("not_allowed", "a person sits there")
        if kind is not None and kind not in BOT_KINDS:
            raise ProtocolError("bad_frame",
                                f"unknown bot {kind[:20]!r}: {', '.join(BOT_KINDS)}")
        self.seats[index] = Seat() if kind is None else replace(self._bot_seat(index), bot=kind)
        await self._send_lobby()
        await self._prepare_first_deck()
        await self._start_if_everyone_is_in()

    async def _on_sync(self, conn: int, msg: Sync) -> None:
        index = self.seat_of(conn)
        if index is None and conn not in self.spectators:
            # A conn that never joined would spend the watchers' resyncs without being one.
            raise ProtocolError("not_allowed", "join the table before asking for a resync")
        self._afford_resync(conn, msg.c, msg.n, index)
        await self._resync(conn, [], msg.c, msg.n)
