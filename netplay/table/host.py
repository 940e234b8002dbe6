"""The host: the dealer of a networked table, reached through a relay room as conn 0.

It seats players, shuffles verifiably (docs/FAIRNESS.md: a committed seed, every seat's nonce by
commit-then-reveal, a commitment for every deck position), deals cards sealed with their
openings, validates every proposed move and its card openings with the engine, and says
everything to the table in one signed hash chain per round, forwarding each seat's own signed
messages inside it. It plays bots, waits for absent players (then lets a bot play for them),
reveals its seeds at the end of each round, and saves after every step so
`cardtui host --resume` can continue.

This module holds the connection and the match flow; the seats and the lobby are in
netplay/table/lobby.py, the signed chain, shuffles and card openings in netplay/table/dealing.py,
and saving and resuming in netplay/table/store.py. They are mixins rather than collaborators
because they share one table's state (a new chain resets the shuffles a deal and a move read,
a save writes them all) and because a test double of a dishonest dealer is a `Host` subclass
that overrides any of their hooks. That state, and the methods one part calls on another, are
declared once, in netplay/table/state.py, which every part inherits.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import secrets
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from functools import partial
from typing import Any

from engine import zodiak
from engine.bots import Bot, make_bot
from engine.cards import Card
from engine.errors import IllegalMove
from engine.games import game_named
from engine.match import Match
from engine.records import Record
from engine.simulate import deal_winner
from netplay.fair import (
    TABLE,
    CardOpening,
    FairnessError,
    SignedMessage,
)
from netplay.messages import Departed, Frame, Propose, ProtocolError, Refused, RelayEvent, SeatSays
from netplay.protocol import (
    canonical_deck,
    card_of,
    deal_layout,
    draw_positions,
    pack,
    parse_move,
    wire_number,
    wire_numbers,
)
from netplay.relay.client import RelayClosed, RelayConnection
from netplay.relay.guard import TokenBucket
from netplay.relay.wire import format_room_code
from netplay.session.local import round_summary
from netplay.session.thinking import choose_off_loop
from netplay.table.dealing import HostDealing
from netplay.table.first_deck import HostFirstDeck
from netplay.table.inbound import read_body
from netplay.table.lobby import HostLobby
from netplay.table.mental import HostMental
from netplay.table.state import ConnBudget, Dropped, HostConfig, Seat
from netplay.table.store import HostStore

__all__ = ["Host", "HostConfig", "Seat"]

log = logging.getLogger("cardtui.host")
STRIKES_BEFORE_IGNORING = 20
SEEDS_PER_MESSAGE = 1000  # 34 KB of seeds: a round_end or a seeds message stays far under 60 KB
LINGER_SECONDS = 5.0


@dataclass
class Host(HostLobby, HostDealing, HostMental, HostFirstDeck, HostStore):
    """The dealer of one table (its state is declared in netplay/table/state.py)."""

    def __post_init__(self) -> None:
        game_named(self.config.game).check_players(self.config.players)
        if not 0 <= self.config.bots <= self.config.players:
            raise IllegalMove(f"--bots must be between 0 and {self.config.players}")
        self.seed = self.config.seed if self.config.seed is not None else secrets.randbits(32)
        if not self.seats:
            self.seats = [Seat() for _ in range(self.config.players)]
            for i in range(self.config.players - self.config.bots, self.config.players):
                self.seats[i] = self._bot_seat(i)

    # -- running --------------------------------------------------------------

    async def serve(self, relay: RelayConnection,
                    reopen: Callable[[RelayConnection], Awaitable[RelayConnection]] | None = None
                    ) -> None:
        """Serve the table through `relay` until the match ends or the relay closes.

        With `reopen`, a closed relay is not the end: the table goes on (everyone counts as
        away) while `reopen` gets the room back, on that relay or on it restarted.
        """
        self.relay = relay
        if not self.table:
            self.table = f"{relay.room}-{secrets.token_hex(8)}"
        if self.head is None:
            self._new_chain(self.round_number)
        self.on_event(f"room {format_room_code(relay.room)} open")
        self._bot_task = asyncio.create_task(self._play_loop())
        if self.config.mental:
            self._spawn(self._mental_watch())
        if not self.started:  # bots in every seat: nobody's join would start the match
            self._spawn(self._start_if_everyone_is_in())
        if self.started and self.match is not None and not self.match.over:
            if self.resume_epoch is not None:
                self._spawn(self._mental_resume(self.resume_epoch))  # it stopped mid-deal
                self.resume_epoch = None
            elif self.state is not None and self.state.round_over and not self.round_scored:
                self._spawn(self._locked(self._end_round))  # it stopped before scoring a round
            elif self.state is None or self.state.round_over:
                self._spawn(self._locked(self._deal))  # it stopped between two rounds
        listening = asyncio.create_task(self._listen(relay, reopen))
        finished = asyncio.create_task(self.done.wait())
        rematch = asyncio.create_task(self.rematched.wait())
        try:  # the match may end in a background task (a bot's move), not on a message
            while True:
                await asyncio.wait([listening, finished], return_when=asyncio.FIRST_COMPLETED)
                if not self.finished:
                    break
                if self.config.rematches > 0:
                    self.config.rematches -= 1
                    await self.offer_rematch(None)
                # Let the seats hear the end (the first one to leave says they did), and give the
                # owner the time to offer a rematch if the table allows one and someone is here.
                here = any(s.conn is not None for s in self.seats if s.bot is None)
                await asyncio.wait([listening, rematch], timeout=max(
                    LINGER_SECONDS, self.config.rematch_seconds if here else 0.0),
                    return_when=asyncio.FIRST_COMPLETED)
                if not self.rematched.is_set():
                    if self.config.rematch_seconds > 0:
                        # Seats waiting on the result for a rematch would be told only that
                        # the host is away, and go on offering one that can no longer begin.
                        await self.say_closing("the table closed: no rematch began in time")
                    break
                self.rematched.clear()
                finished = asyncio.create_task(self.done.wait())
                rematch = asyncio.create_task(self.rematched.wait())
        finally:
            for task in [listening, finished, rematch, self._bot_task, *self._tasks]:
                task.cancel()

    async def _listen(self, relay: RelayConnection,
                      reopen: Callable[[RelayConnection], Awaitable[RelayConnection]] | None
                      ) -> None:
        while True:
            async for msg in relay:
                await self._on_relay(msg)
                # After the end, seats that rejoin (a challenge, then a resync) still hear it;
                # the linger in `serve` bounds the wait.
                if self.finished and isinstance(msg, Departed) and all(
                        s.conn is None for s in self.seats if s.bot is None):
                    return
            if reopen is None or self.finished:
                return
            self._relay_lost()
            relay = self.relay = await reopen(relay)
            self.on_event(f"room {format_room_code(relay.room)} open again")

    def _relay_lost(self) -> None:
        """Every conn of the lost relay connection is gone: the next one numbers them anew."""
        conns = {s.conn for s in self.seats if s.conn is not None}
        conns |= self.spectators | set(self.challenges) | set(self.budgets) | set(self.strikes)
        for conn in conns:
            self._departed(conn)

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)  # keep a reference so the task is not collected mid-way
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("host task failed", exc_info=task.exception())

    async def _locked(self, action: Callable[[], Awaitable[None]]) -> None:
        async with self._game_lock:
            await action()

    async def _on_relay(self, msg: RelayEvent) -> None:
        if isinstance(msg, Frame):
            await self._on_frame(msg.sender, msg.body)
        elif isinstance(msg, Departed):
            self._departed(msg.conn)
        elif isinstance(msg, Refused):
            self.on_event(f"relay error: {msg.code}: {msg.message}")

    async def _on_frame(self, conn: int, body: bytes) -> None:
        refusals: TokenBucket | None = None  # charged if this signed message is refused
        try:
            msg = read_body(body)  # the one place a seat's body is decoded (table/inbound.py)
            now = self.budget_clock()
            index = self.seat_of(conn) if isinstance(msg, SeatSays) else None
            if index is not None:
                # A seated conn's signed messages are not rationed (an honest match sends many
                # in a burst), its refused ones are, before any signature or proof is checked.
                refusals = self._refusals(index)
                if refusals.refill(now) < 1.0:
                    refusals = None  # this refusal costs the host nothing: not charged
                    raise ProtocolError("rate_limited", "too many refused signed messages;"
                                        " slow down")
            elif not self._budget(conn).requests.take(now):
                raise ProtocolError("rate_limited", "too many requests; slow down")
            await self._handlers()[msg.t](conn, msg)
        except Dropped:
            self._charge(refusals)  # a copy of an accepted message: no answer, but not free
        except ProtocolError as exc:
            self._charge(refusals)
            await self._refuse(conn, exc.code, exc.message)
        except IllegalMove as exc:
            self._charge(refusals)
            await self._refuse(conn, "illegal", str(exc))
        except FairnessError as exc:
            self._charge(refusals)
            await self._refuse(conn, "bad_frame", exc.reason)

    def _refusals(self, seat: int) -> TokenBucket:
        """The allowance of `seat`'s signed messages the host may still refuse or drop."""
        return self._seat_budget(seat).refused

    def _charge(self, refusals: TokenBucket | None) -> None:
        """Spend one of a seat's refusals (checked before the message was, so one is there)."""
        if refusals is not None:
            refusals.take(self.budget_clock())

    def _handlers(self) -> dict[str, Callable[[int, Any], Awaitable[None]]]:
        return {"join": self._on_join, "s": self._on_signed, "chat": self._on_chat,
                "start": self._on_start, "sync": self._on_sync, "ready": self._on_ready,
                "seat_bot": self._on_seat_bot, "house": self._on_house,
                "rematch": self._on_rematch, "leave": self._on_leave}

    def _budget(self, conn: int) -> ConnBudget:
        budget = self.budgets.get(conn)
        if budget is None:
            budget = self.budgets[conn] = ConnBudget()
        return budget

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

    async def say_closing(self, why: str = "the host closed the table; `cardtui host --resume`"
                          " on the host's side opens it again") -> None:
        """Tell every seat and watcher here that the table is closing, and `why`, before the
        host stops: each then says so and stops, where it would try to reconnect without end."""
        here = {seat.conn for seat in self.seats if seat.conn is not None} | self.spectators
        for conn in sorted(here):
            await self._send(conn, pack("error", code="closing", message=why))

    # -- the match ------------------------------------------------------------

    async def start_match(self) -> None:
        """Start the match and deal its first round (in the background: seats must answer)."""
        if self.started:
            return
        self.started = True
        signs = game_named(self.config.game).signs_for([s.sign for s in self.seats])
        # A rematch draws its first dealer afresh (from the rounds played so far).
        dealer = random.Random(self.seed + self.round_base).randrange(self.config.players)
        self.match = Match(self.config.game, self.config.players, signs, dealer=dealer,
                           house=self.config.house)
        self.on_event("match started")
        await self._send_lobby(force=True)
        self._spawn(self._locked(self._deal))

    async def _deal(self) -> None:
        match = self.match
        assert match is not None
        number = self.round_base + match.rounds_played + 1
        if number != self.round_number:
            if number == 1:
                await self._await_first_commits()  # still in chain 0, where they are signed
                if self.config.mental:
                    await self._await_first_deck()  # shuffled in chain 0 too
            self._new_chain(number)
            # The chain opens with the seats, so that a watcher who comes mid-round and is sent
            # this chain knows everyone's name before the deal it retells.
            await self._send_lobby(force=True)
        if self.config.mental:
            await self._mental_deal(number)
            return
        deck = await self._shuffle(0, canonical_deck(self.config.game))
        if self.finished:
            return
        self.state = match.start_round([card_of(self.config.game, c) for c in deck.cards])
        self.round_scored = False
        self.record = Record.of_round(self.config.game, [s.name for s in self.seats], self.state,
                                      self.config.house)
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
            scores=wire_numbers(state.scores), players=self.config.players, cards=cards,
            signs=list(state.signs) if isinstance(state, zodiak.ZodiakRound) else None)
        self.on_event(f"round {self.round_number} dealt")
        self._wake.set()

    def _present(self, seat: int) -> bool:
        """Whether a person holds `seat` and is connected (the host never moves for them)."""
        occupant = self.seats[seat]
        return occupant.bot is None and occupant.conn is not None and occupant.away_since is None

    async def _on_seat_move(self, index: int, message: SignedMessage, body: Propose) -> None:
        state = self.state
        if state is None or state.round_over:
            raise ProtocolError("not_allowed", "no round is in play")
        n = body.n
        if body.round != self.round_number or n != len(state.history):
            raise ProtocolError("stale", "that move is for an earlier position; resync")
        move = parse_move(self.config.game, body.move)
        state.check(move, index)
        if body.open is None:
            raise ProtocolError("bad_frame", "'move' needs a field 'open'")
        try:
            openings = [CardOpening.from_wire(o, index) for o in body.open]
        except FairnessError as exc:
            raise ProtocolError("bad_opening", exc.reason) from None
        self._check_openings(index, move, openings)
        self._spawn(self._locked(lambda: self._apply(index, n, move, message, openings)))

    async def _apply(self, seat: int, n: int, move: Any, signed: SignedMessage | None = None,
                     openings: list[CardOpening] | None = None, timed_out: bool = False) -> None:
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
                state.reshuffles.append([Card.parse(c) for c in deck.cards])
        async with self._send_lock:  # nobody is resynced between the check and the news
            if signed is None and self._present(seat) and not timed_out:
                return  # its player is back: the move is theirs to make
            consumed = 1 + state.reshuffles_done if isinstance(state, zodiak.ZodiakRound) else 1
            stock_left = len(state.stock)
            effect = state.push(move)
            sizes = [len(ep.deck.cards) if ep.deck else 0 for ep in self.epochs]
            drawn = []
            for epoch, position in draw_positions(sizes, consumed, stock_left, len(effect.drawn)):
                self.epochs[epoch].owners.append(seat)
                dealt = self.epochs[epoch].deck
                assert dealt is not None  # draw_positions names only epochs with a deck
                drawn.append(self._seal(seat, self._delivered(dealt, position)))
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
                if timed_out:
                    fields["timeout"] = True
            await self._broadcast_locked("moved", round=self.round_number, n=n, seat=seat,
                                         drawn=drawn, **fields)
        self.on_event(f"move {self.moves_made}: {state.describe(effect)}")
        if state.round_over:
            await self._end_round()
        self._wake.set()

    async def _end_round(self) -> None:
        state, match = self.state, self.match
        assert state is not None and match is not None
        before = list(match.scores)  # the round's scores at its start, as the record's
        winner = deal_winner(before, state)
        points = (state.points() if isinstance(state, zodiak.ZodiakRound)
                  else max(b - a for a, b in zip(before, state.scores)))
        seeds = [] if self.mental is not None else [
            self._revealed_seed(e) for e in range(len(self.epochs))]
        # A round with very many reshuffles reveals its seeds in `seeds` messages first, so that
        # `round_end` stays bounded; sent before the round is scored, a restart sends them again.
        first = max(0, (len(seeds) - 1) // SEEDS_PER_MESSAGE * SEEDS_PER_MESSAGE)
        for start in range(0, first, SEEDS_PER_MESSAGE):
            await self._broadcast("seeds", round=self.round_number, first=start,
                                  seeds=seeds[start:start + SEEDS_PER_MESSAGE])
        match.end_round(state)  # before the broadcast saves, so a restart deals the next round
        self.round_scored = True
        infos = tuple(s.info() for s in self.seats)
        summary = round_summary(self.config.game, infos, state, winner, points)
        await self._broadcast("round_end", round=self.round_number, winner=winner,
                              points=wire_number(points), scores=wire_numbers(match.scores),
                              summary=summary, seeds=seeds[first:],
                              **({"first": first} if first else {}))
        self.on_event(f"round {self.round_number} over: {summary}")
        if match.over:
            await self._finish()
        else:
            await self._deal()

    async def _finish(self) -> None:
        result = self.result()
        await self._broadcast("match_end", **{**result, "scores": wire_numbers(result["scores"])})
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

    def make_bot(self, seat: int, kind: str | None) -> Bot:
        """The bot that plays `seat` (greedy unless `kind` names another), thinking as configured."""
        return make_bot(kind or "greedy", self.seed + seat, seconds=self.config.think)

    async def _play_loop(self) -> None:
        """Play for bots, and for people who have been away too long."""
        bots: dict[int, Any] = {}
        position: tuple[int, int] | None = None
        turn_began = time.monotonic()
        while not self.finished:
            self._wake.clear()
            state = self.state
            if state is None or state.round_over or state.turn is None:
                await self._wake.wait()
                continue
            seat = state.turn
            if position != (id(state), len(state.history)):
                position, turn_began = (id(state), len(state.history)), time.monotonic()
                self.turn_began = (position, turn_began)  # a seat catching up is told the rest
            occupant = self.seats[seat]
            timed_out = False
            play = self.mental
            if play is not None:
                if (play.seat_parties[seat] not in play.held or play.moves
                        or None in state.hands[seat]):
                    await self._wake.wait()  # only a person's key plays a person's cards
                    continue
            elif occupant.bot is None and occupant.away_since is None:
                limit = self.config.turn_seconds
                left = turn_began + limit - time.monotonic() if limit else 0.0
                if not limit or left > 0:
                    try:
                        await asyncio.wait_for(self._wake.wait(), left if limit else None)
                    except TimeoutError:
                        pass
                    continue
                timed_out = True  # the turn timer ran out: the seat's bot moves this once
                self.on_event(f"seat {seat} ({occupant.name}) ran out of time: its bot moves")
            elif occupant.bot is None and occupant.away_since is not None:
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
            bot = bots.setdefault(seat, self.make_bot(seat, occupant.bot))
            n = len(state.history)
            move = await choose_off_loop(bot, state.view(seat), self.config.thinkers)
            if self.state is not state or state.turn != seat or len(state.history) != n:
                continue  # the table moved on while the bot was thinking
            if self.mental is not None:
                await self._locked(partial(self._mental_bot_move, seat, move))
                continue
            await self._locked(partial(self._apply, seat, n, move, timed_out=timed_out))
