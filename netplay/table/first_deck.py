"""The host's side of the first round's deck, shuffled in the lobby (FAIRNESS.md A8, "Lobby deck").

Every later round's deck is shuffled during the round before it; the first round's is shuffled
in the lobby, in chain 0, so that its deal too waits only for shares. Once every seat is taken
(and again whenever who sits changes) the host names each seat's party and a fresh lobby epoch
(`mp_prepare`); every party then sends its key and its shuffle, which the host checks with its
own view (its bots' key, or a keyless watcher's) and forwards in a `fwd` naming that epoch. The
first deal waits for that deck (at most the reveal timeout), and names it when it is shuffled,
every proof holds and its parties are the deal's; otherwise the round shuffles its own deck.

A lineup that changes again and again would make every client shuffle and check again: a new
lobby deck begins at most every `HostConfig.lobby_pause` seconds (2), and at most
`HostConfig.lobby_decks` times a lobby (8: each adds about 10 KB a party to chain 0, which
every newcomer is sent).
"""

from __future__ import annotations

import asyncio
import time

from netplay.fair import FairnessError, SignedMessage
from netplay.fair.context import BOT_PARTY
from netplay.fair.mental_lobby import FIRST_ROUND, MAX_LOBBY_DECKS, LobbyDeck
from netplay.fair.mental_round import WATCHER
from netplay.messages import (
    MentalPayload,
    MpChecked,
    MpKey,
    MpShuffle,
    ProtocolError,
    as_map,
)
from netplay.table.state import Dropped, TableState


class HostFirstDeck(TableState):
    """The `Host` methods that shuffle the first round's deck in the lobby."""

    def _lobby_lineup(self) -> tuple[str, ...]:
        """Who would hold each seat if the match began now: a person's key and connection
        (one who left and came back is seated anew), or nobody (the bots' key)."""
        return tuple(f"{s.ident}@{s.conn}" if s.bot is None and s.token is not None else ""
                     for s in self.seats)

    async def _prepare_first_deck(self, now: bool = False) -> LobbyDeck | None:
        """The lobby's deck for the people seated now, begun if need be: when every seat is
        taken, or `now` (the match starts). None once the lobby has made its last deck, or
        while it waits its pause (a task begins it then)."""
        while True:
            if not self.config.mental or self.round_number != 0 or self.finished:
                return None
            lineup, deck = self._lobby_lineup(), self.lobby_deck
            if deck is not None and lineup == self.lobby_lineup and not deck.failed:
                return deck
            if not now and (self.started or not all(
                    s.bot is not None or s.token is not None and s.conn is not None
                    for s in self.seats)):
                return None  # not every seat is taken by a bot or a person who is here
            if self.lobby_epoch >= min(self.config.lobby_decks, MAX_LOBBY_DECKS):
                return None
            wait = self.lobby_next_at - time.monotonic()
            if wait <= 0:
                return await self._begin_first_deck(lineup)
            if not now:
                self._spawn(self._prepare_later(wait))
                return None
            await asyncio.sleep(wait)  # the match starts: its deal waits that long at most

    async def _begin_first_deck(self, lineup: tuple[str, ...]) -> LobbyDeck:
        parties = tuple(i if person else BOT_PARTY for i, person in enumerate(lineup))
        epoch = self.lobby_epoch
        self.lobby_epoch += 1
        self.lobby_next_at = time.monotonic() + self.config.lobby_pause
        self.lobby_lineup = lineup
        self.lobby_deck = deck = LobbyDeck(self.config.game, self.table,
                                           BOT_PARTY if BOT_PARTY in parties else WATCHER,
                                           parties, epoch)
        await self._broadcast("mp_prepare", round=FIRST_ROUND, epoch=epoch,
                              parties=list(parties))
        self.on_event(f"shuffling the first round's deck in the lobby (lobby epoch {epoch})")
        await self._lobby_flush()
        return deck

    async def _prepare_later(self, wait: float) -> None:
        if self._lobby_pending:
            return
        self._lobby_pending = True
        try:
            await asyncio.sleep(wait)
        finally:
            self._lobby_pending = False
        await self._prepare_first_deck()

    async def _on_lobby_signed(self, index: int, message: SignedMessage,
                               body: MentalPayload) -> None:
        """Check a seat's key or shuffle of the lobby's deck with the host's own view, then
        forward it."""
        if not isinstance(body, MpKey | MpShuffle | MpChecked) or body.round != FIRST_ROUND:
            raise ProtocolError("not_allowed", "in the lobby a seat sends only its key, shuffle"
                                " and check of the first round's deck")
        async with self._send_lock:
            deck = self.lobby_deck
            if self.round_number != 0 or deck is None or body.epoch != deck.epoch:
                raise ProtocolError("stale", "that message is of a lobby deck that is over")
            if (getattr(body, "party", None) is not None or deck.seat_parties[index] != index
                    or self._lobby_lineup()[index] != self.lobby_lineup[index]):
                # Also whoever sits there since the deck began: its key is not the deck's.
                raise ProtocolError("not_allowed", "this seat is no party of the lobby's deck")
            head = self._seat_head(index, f"deck{deck.epoch}")
            if message.seq < head.seq:
                raise Dropped  # sent again after a reconnect; the first copy was accepted
            if not head.follows(message):
                raise ProtocolError("stale", "that message does not follow your last accepted"
                                    " one")
            if isinstance(body, MpChecked):
                if index in deck.checked_by:
                    raise ProtocolError("stale", "this seat said so already")
                if body.digest != deck.prepared_digest(checked=False):
                    raise ProtocolError("bad_frame", "that is not the digest of the lobby's deck")
                deck.checked_by.add(index)
            else:
                try:
                    deck.receive(index, as_map(body))
                except FairnessError as exc:
                    raise ProtocolError("bad_frame", exc.reason) from None
            head.advance(message)
            await self._broadcast_locked("fwd", seat=index, m=message.to_wire(),
                                         deck=deck.epoch)
        await self._lobby_flush()

    async def _lobby_flush(self) -> None:
        """Send what the bots' key owes the lobby's deck; check the chain once it is complete."""
        deck = self.lobby_deck
        if deck is None:
            return
        await self._broadcast_each(deck.drain())
        if deck.checks_due():
            try:
                deck.check()
            except FairnessError as exc:
                self.on_event(f"party {exc.blamed}'s shuffle of the first round's deck failed"
                              f" its check ({exc.reason}): the first round shuffles its own")
        self._nonce_wake.set()

    def _take_lobby_deck(self) -> LobbyDeck | None:
        """The lobby's deck, for the first deal, if it was begun for the people seated now
        (the deal checks that it is complete and its parties are the deal's); it is dropped."""
        deck, self.lobby_deck = self.lobby_deck, None
        if deck is None or deck.failed or self.lobby_lineup != self._lobby_lineup():
            return None
        return deck

    async def _await_first_deck(self) -> None:
        """Wait (at most the reveal timeout) for the lobby's deck of the first deal's parties."""
        deck = await self._prepare_first_deck(now=True)
        if deck is None:
            return
        # Every person's client says it checked the chain (mp_checked): the deal then waits
        # for no check, only for shares.
        if not await self._until(lambda: self.lobby_deck is not deck or deck.failed
                                 or deck.prepared_digest() is not None
                                 and deck.people <= deck.checked_by):
            waiting = sorted(deck.waiting_for() or deck.people - deck.checked_by)
            complete = deck.prepared_digest() is not None
            self.on_event(f"the lobby's deck still waits for {waiting}: the first round"
                          + (" is dealt from it anyway" if complete else " shuffles its own"))
