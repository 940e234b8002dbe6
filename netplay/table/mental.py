"""The host's side of mental-poker dealing (FAIRNESS.md A8): it carries, never sees.

With `HostConfig.mental`, a round starts with a `deal` that names each seat's party and no
card; every party's `MentalPlay` messages then travel as signed payloads: a seat's in its own
chain, forwarded verbatim (`fwd`), the host's key for its bots (party 255) in the host's chain.
The host checks each with its own `MentalPlay` (party 255, or a keyless watcher when no bot
sits) before it forwards it, so its engine follows the round on what it may see, and plays its
bots from there. It never holds a person's key, unless that person hands it over on leaving.

A card opens only with every party's share, so nobody can play on for a person who is gone:
when a person stays away past the away time (at least 5 s, and a margin: `host_patience`), or a
connected one owes a key, shuffle or share that long (or a move past the turn timer and a
grace), the host voids the deal (`mp_void`) and
deals the round again, from a fresh epoch with fresh keys, with its bots' key in that seat.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Collection
from typing import Any

from nacl.exceptions import CryptoError

from netplay.fair import FairnessError, SignedMessage
from netplay.fair.absence import host_patience
from netplay.fair.context import BOT_PARTY
from netplay.fair.mental_lobby import FIRST_ROUND, LobbyDeck
from netplay.fair.mental_play import MentalPlay
from netplay.fair.mental_round import WATCHER, MentalRound
from netplay.messages import (
    MentalPayload,
    MpChecked,
    MpHandover,
    MpKey,
    MpLost,
    MpShares,
    MpShuffle,
    Propose,
    ProtocolError,
    as_map,
)
from netplay.protocol import wire_numbers
from netplay.table.state import Dropped, TableState

log = logging.getLogger("cardtui.host")

# A seat's signed payloads in such a round.
MENTAL_KINDS = (MpKey, MpShuffle, MpShares, Propose, MpHandover, MpLost, MpChecked)
TURN_GRACE = 5.0  # past the turn timer: a seat's own client moves for its player by then
WATCH_SECONDS = 0.5
STALL_SECONDS = 1.0  # a watch that wakes this late finds the host itself was held up


class HostMental(TableState):
    """The `Host` methods that carry a round dealt by mental poker."""

    def _seat_parties(self) -> tuple[int, ...]:
        return tuple(BOT_PARTY if seat.bot is not None or i in self.stand_ins else i
                     for i, seat in enumerate(self.seats))

    def _mental_play(self, number: int, first_epoch: int,
                     prepared: MentalRound | None = None) -> MentalPlay:
        """The host's view of a deal of round `number`: its bots' key, or a keyless watcher."""
        match = self.match
        assert match is not None
        parties = self._seat_parties()
        party = BOT_PARTY if BOT_PARTY in parties else WATCHER
        signs = tuple(match.signs) if self.config.game == "zodiak" else ()
        return MentalPlay(self.config.game, self.table, number, party, parties, signs,
                          match.dealer, tuple(match.scores), first_epoch,
                          house=self.config.house, defer_checks=True, prepared=prepared)

    def _prepared_deck(self, number: int) -> tuple[MentalRound, bytes] | None:
        """The deck of round `number` shuffled during the last round, with its digest, when
        every party of it is a party of this deal and every proof of it holds, and nobody
        handed a key over meanwhile (a person leaving hands over the key of the deal in play;
        its key of the next deck went with its program, so that deck can no longer open)."""
        last: MentalPlay | LobbyDeck | None = self.mental
        if number == FIRST_ROUND and self.round_base == 0:
            last = self._take_lobby_deck()
        if (last is None or last.round_no != number - 1
                or self.handed & set(last.next.parties)):
            return None
        digest = last.prepared_digest()
        if digest is None or last.next.parties != tuple(sorted(set(self._seat_parties()))):
            return None
        return last.next, digest

    async def _mental_deal(self, number: int) -> None:
        """Start round `number`: name the parties, then let the chain of shuffles run."""
        match = self.match
        assert match is not None
        # A person away for the host's patience when the round starts sits it out: the bots'
        # key plays it. One gone for less is dealt in (a seat believes being dealt out only
        # after an absence that long, netplay/fair/absence.py), and voided if they stay away.
        now, gone = time.monotonic(), host_patience(self.config.away_timeout)
        # One who handed their key over (or sat the last round out) and has not come back stays
        # out too: they left in good order, and their round key went with the last round.
        self.stand_ins = {i for i, s in enumerate(self.seats) if s.bot is None and s.conn is None
                          and (i in self.stand_ins or s.away_since is not None
                               and now - s.away_since >= gone)}
        # The deck shuffled during the last round deals this one at once (FAIRNESS.md A8,
        # "Prepared deck"); without one (the first round, parties changed, a proof pending or
        # a shuffle missing, a key handed over), this deal's own chain of shuffles runs now.
        prepared = self._prepared_deck(number)
        self.handed = set()
        self.deal_moves = self.deal_shown = 0
        self.mental = play = self._mental_play(
            number, 0, prepared[0] if prepared is not None else None)
        self.state = None
        self.round_scored = False
        ready = ({"prepared": prepared[1], "epoch": play.first_epoch}
                 if prepared is not None else {})
        await self._broadcast("deal", round=number, game=self.config.game,
                              dealer=match.dealer, players=self.config.players,
                              scores=wire_numbers(match.scores), signs=list(play.signs) or None,
                              parties=list(play.seat_parties), cards=None, **ready)
        self.mental_since = time.monotonic()
        await self._mental_flush()
        where = "in the lobby" if number == FIRST_ROUND else f"during round {number - 1}"
        self.on_event(f"round {number} dealing by mental poker"
                      + (f" from the deck shuffled {where}" if prepared is not None else ""))

    async def _mental_void(self, seats: Collection[int], why: str) -> None:
        """Void the deal in play and deal the round again, with the bots' key in `seats` (and
        in every seat handed over); nothing of the voided deal is ever opened."""
        play = self.mental
        if play is None or self.round_scored or self.finished:
            return
        away = sorted({s for s in seats if play.seat_parties[s] == s} | self.handed)
        self.stand_ins |= set(away)
        self.handed = set()
        self.moves_made -= self.deal_moves  # a voided deal's moves never happened
        self.deal_moves = self.deal_shown = 0
        epoch = play.mental.epoch
        await self._broadcast("mp_void", round=self.round_number, epoch=epoch, away=away)
        named = ", ".join(f"seat {s} ({self.seats[s].name})" for s in away) or "nobody"
        self.on_event(f"round {self.round_number} voided ({why}): dealt again from epoch"
                      f" {epoch + 1}, the host's bots play {named}")
        self.mental = self._mental_play(self.round_number, epoch + 1)
        self.state = None
        self.mental_since = time.monotonic()
        await self._mental_flush()
        # With only the bots' key left, no message of anyone else will come to check the chain.
        await self._mental_check(locked=True)

    async def _broadcast_each(self, messages: list[dict[str, Any]]) -> None:
        """Sign and send, in order, messages the host's key for its bots made (`t` names the
        kind)."""
        for msg in messages:
            body = dict(msg)
            await self._broadcast(body.pop("t"), **body)

    async def _mental_flush(self) -> None:
        """Sign and send what the host's key for its bots owes the table; follow its state."""
        play = self.mental
        if play is None:
            return
        await self._broadcast_each(play.drain())
        self.state = state = play.state
        if state is not None:  # each move as the host's engine applies it, once its cards open
            before = self.moves_made - self.deal_moves
            while self.deal_shown < len(state.history):
                effect = state.history[self.deal_shown]
                self.deal_shown += 1
                self.on_event(f"move {before + self.deal_shown}: {state.describe(effect)}")
        if play.settled() and not self.round_scored:
            await self._end_round()
        self._wake.set()

    async def _on_mental_signed(self, index: int, message: SignedMessage,
                                body: MentalPayload) -> None:
        """Check a seat's mental-poker message with the host's own view, then forward it."""
        async with self._send_lock:  # a void waits for this message, or this for the void
            head = self._seat_head(index, "move")
            if message.seq < head.seq:
                raise Dropped  # sent again after a reconnect; the first copy was accepted
            if not head.follows(message):
                # Also a message that waited for the lock while the next round was dealt: it
                # is of a chain that is over (its next round's key is not the new deal's own).
                raise ProtocolError("stale", "that message does not follow your last accepted"
                                    " one")
            play = self.mental
            # The next round's key and shuffle are made during this one (its prepared deck).
            ahead = (body.round == self.round_number + 1 and play is not None
                     and isinstance(body, MpKey | MpShuffle))
            if body.round != self.round_number and not ahead:
                raise ProtocolError("stale", "that message is for another round")
            if getattr(body, "party", None) is not None:
                raise ProtocolError("bad_frame", "only the host names a party")
            if isinstance(body, MpChecked):
                raise ProtocolError("stale", "a check of the lobby's deck, after the lobby")
            if play is None:  # sent for a deal the host lost when it stopped: carried, unread
                self._seat_head(index, "move").advance(message)
                await self._broadcast_locked("fwd", seat=index, m=message.to_wire())
                return
            # A loss of a deal voided since (another seat's loss voided it first) is carried.
            lost = (isinstance(body, MpLost) and play.seat_parties[index] == index
                    and body.epoch in (None, play.first_epoch) and index not in self.handed)
            try:
                if isinstance(body, MpHandover):
                    self._adopt(index, body.key)
                elif not isinstance(body, MpLost):
                    play.receive(index, as_map(body))
            except FairnessError as exc:
                raise ProtocolError("bad_frame", exc.reason) from None
            self._seat_head(index, "move").advance(message)
            await self._broadcast_locked("fwd", seat=index, m=message.to_wire())
        if not ahead:  # the next round's deck is no progress of this deal: no timer restarts
            self.mental_since = time.monotonic()
        if isinstance(body, Propose) and (body.epoch or 0) == play.first_epoch:
            self.moves_made += 1
            self.deal_moves += 1
        if lost:  # its process started again without its round key: the deal cannot go on
            await self._locked_void([index], f"seat {index} lost its round key", play)
            return
        await self._mental_flush()
        await self._mental_check()

    async def _mental_check(self, locked: bool = False) -> None:
        """Check a complete chain of shuffles once what came in is forwarded and what the
        bots' key owes is sent (FAIRNESS.md A8). A proof that fails voids the deal, before any
        card of it opens, with its shuffler's seat given to the bots. `locked`: the caller
        holds the game lock."""
        play = self.mental
        if play is None or not play.checks_due():
            return
        try:
            play.check()
        except FairnessError as exc:
            cheats = [i for i, party in enumerate(play.seat_parties) if party == exc.blamed]
            why = f"party {exc.blamed}'s shuffle failed its check: {exc.reason}"
            if locked:
                await self._mental_void(cheats, why)
            else:
                await self._locked_void(cheats, why, play)
            return
        await self._mental_flush()

    async def _locked_void(self, seats: Collection[int], why: str, deal: MentalPlay) -> None:
        """Void `deal` once the game lock is held, unless another deal (the next round's, or
        one made again) took its place meanwhile: a void is of the deal it was found in."""
        async with self._game_lock:
            if self.mental is deal:
                await self._mental_void(seats, why)

    def _adopt(self, index: int, sealed: bytes) -> None:
        """Take over a leaving person's round key (mp_handover); the bots play the seat."""
        play, seat = self.mental, self.seats[index]
        public = seat.public()
        if play is None or public is None or play.seat_parties[index] != index:
            raise FairnessError(index, "it handed over a key of no party of this deal")
        try:
            secret = self.identity.box_with(public, index).decrypt(sealed)
        except CryptoError:
            raise FairnessError(index, "its handed-over key is not sealed to this host") from None
        play.adopt(index, secret)
        self.handed.add(index)
        self.stand_ins.add(index)
        self.on_event(f"seat {index} ({seat.name}) left and handed its key over: its bot plays")

    async def _mental_bot_move(self, seat: int, move: Any) -> None:
        """Play `move` for a seat whose key the host holds (its bots', or one handed over)."""
        play = self.mental
        if play is None or play.state is None or play.moves or play.state.turn != seat:
            return
        try:
            play.play(move)
        except FairnessError as exc:  # the table moved on meanwhile (a void): nothing to play
            log.warning("a bot's move was not played: %s", exc.reason)
            return
        self.moves_made += 1
        self.deal_moves += 1
        self.mental_since = time.monotonic()
        await self._mental_flush()
        await self._mental_check(locked=True)

    def _overdue(self, now: float) -> tuple[list[int], str]:
        """The people the deal in play can no longer wait for, and why."""
        play = self.mental
        if play is None or self.round_scored:
            return [], ""
        people = [i for i, p in enumerate(play.seat_parties) if p == i and i not in self.handed]
        # The same patience for the away and for those who owe: a connected person's client
        # refuses a void naming it (it cannot tell a slow host from one dealing it out at
        # will), so a person is dealt out only once an honest client cannot be that slow.
        patience = host_patience(self.config.away_timeout)
        gone = {i: self.seats[i].away_since for i in people}
        away = [i for i, since in gone.items() if since is not None and now - since >= patience]
        if away:
            return away, "away past the away time"
        waiting = [i for i in play.waiting_for() if i in people]
        state = play.state
        moving = (state is not None and not state.round_over and not play.moves
                  and waiting == [state.turn] and play.seat_parties[state.turn] == state.turn)
        limit = self.config.turn_seconds
        if moving:
            if not limit:
                return [], ""  # no turn timer: a person may think as long as they like
            allowed, why = limit + max(TURN_GRACE, limit), "out of time"
        else:
            allowed, why = patience, "owed a key, shuffle or share past the away time"
        if waiting and now - self.mental_since >= allowed:
            return waiting, why
        return [], ""

    async def _mental_watch(self) -> None:
        """Void a deal that waits for someone who is gone (run alongside the play loop)."""
        woke = time.monotonic()
        while not self.finished:
            now = time.monotonic()
            if now - woke > WATCH_SECONDS + STALL_SECONDS:
                self._forgive_stall(woke + WATCH_SECONDS, now)
            woke = now
            deal = self.mental
            try:
                seats, why = self._overdue(time.monotonic())
            except FairnessError:
                seats, why = [], ""
            if seats and deal is not None:
                await self._locked_void(seats, why, deal)
            await asyncio.sleep(WATCH_SECONDS)

    def _forgive_stall(self, start: float, end: float) -> None:
        """This process was held up from `start` to `end` (a flood, a loaded machine): what the
        seats sent meanwhile, a rejoin among it, waited unread, so that time is not counted
        against a seat that owes something or is away. Only the part of it after each clock
        started counts, and each watch still counts its own half second, so no run of stalls
        puts a void off for ever."""
        def forgiven(since: float) -> float:
            return since + max(0.0, end - max(since, start))

        self.mental_since = forgiven(self.mental_since)
        for seat in self.seats:
            if seat.away_since is not None:
                seat.away_since = forgiven(seat.away_since)

    async def _mental_resume(self, epoch: int) -> None:
        """After a restart mid-deal (the host's bots' key is lost with the old process): void
        the deal and deal the round again with the same parties, but for those who handed
        their key over (the void names them, as it would have before the restart)."""
        async with self._game_lock:
            match = self.match
            assert match is not None
            self.round_scored = False
            self.mental = self._mental_play(self.round_number, epoch)
            self.mental.drain()  # a key that is never sent: only the void below matters
            await self._mental_void([], "the host started again")
