"""The host's verifiable dealing: its signed chain, each shuffle's seed and nonces, card openings.

docs/FAIRNESS.md says what each step proves. The overridable hooks (`_new_seed`, `_build_deck`,
`_published_commitments`, `_delivered`, `_nonce_seats`, `_revealed_seed`, `_wait_for`) are where
the tests' dishonest dealers cheat, so each stays one small method.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from netplay.fair import (
    CardOpening,
    DeckCommitment,
    FairnessError,
    SignedMessage,
    new_secret,
    nonce_commitment,
    seal_card,
    seed_commitment,
    verify_message,
)
from netplay.messages import NonceCommit, NonceReveal, Propose, ProtocolError, SeatSays
from netplay.protocol import (
    HOST_SENDER,
    ChainHead,
    chain_room,
    envelope,
    pack,
    played_cards,
)
from netplay.table.inbound import read_payload
from netplay.table.mental import MENTAL_KINDS
from netplay.table.state import Dropped, Epoch, TableState

MAX_CHAIN = 2000  # chat stops here: every message of a round is kept and saved until it ends


class HostDealing(TableState):
    """The `Host` methods that sign the round's chain, run its shuffles and check card openings."""

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

    def _afford_resync(self, conn: int, chain: int, have: int, seat: int | None) -> None:
        """Refuse (`rate_limited`) a resync over the conn's budget, or over the budget of the
        seat it is for (None: of all watchers)."""
        # Checked before the join or sync changes anything. A resync may replay a whole round
        # (at most MAX_CHAIN bodies), so the bound is how often, per conn and per seat, and
        # for all watchers together.
        fresh = chain == self.round_number and 0 <= have <= len(self.log)
        cost = len(self.log) - have if fresh else len(self._prev_log) + len(self.log)
        now = self.budget_clock()
        if not self._budget(conn).resyncs.take(now):
            raise ProtocolError("rate_limited", "too many resyncs; sync again in a minute")
        pace = self.resync_pace if seat is None else self._seat_budget(seat).resyncs
        if not pace.take(now, min(cost, pace.burst)):
            raise ProtocolError("rate_limited", "the host is busy; sync again in a few seconds")

    async def _resync(self, conn: int, first: list[bytes], chain: int, have: int) -> None:
        """Send `first` (a welcome), then this chain from what the seat has, then `synced`."""
        async with self._send_lock:
            number, start, bodies = self.round_number, 0, self.log
            if chain == number and 0 <= have <= len(self.log):
                start, bodies = have, self.log[have:]
            elif (number >= 1 and chain == number - 1
                  and 0 <= have <= len(self._prev_log)):
                number, start, bodies = chain, have, self._prev_log[have:] + self.log
            elif (self._prev_log and self.mental is not None
                  and self.mental.prepared is not None):
                # This round's deck was shuffled in the last round's chain: a newcomer follows
                # the deal only after seeing that (FAIRNESS.md A8, "Prepared deck").
                number, bodies = number - 1, self._prev_log + self.log

            for body in first:
                await self._send(conn, body)
            await self._send(conn, pack("resync", c=number, n=start))
            for body in bodies:
                await self._send(conn, body)
            await self._send(conn, pack("synced", c=self.round_number, n=len(self.log),
                                        turn_left=self._turn_left()))

    def _turn_left(self) -> float | None:
        """The seconds the turn in play has left on the table's timer, if it has one."""
        limit, began, state = self.config.turn_seconds, self.turn_began, self.state
        if not limit or state is None or state.round_over:
            return None
        if began is None or began[0] != (id(state), len(state.history)):
            return float(limit)  # a turn the play loop has not woken for yet: it begins now
        return max(0.0, began[1] + limit - time.monotonic())

    def _seat_head(self, seat: int, kind: str) -> ChainHead:
        sender: int | str = seat if kind == "move" else f"{seat}/{kind}"
        return self.heads.setdefault(str(sender), ChainHead.start(
            chain_room(self.table, self.round_number), sender))

    async def _on_signed(self, conn: int, msg: SeatSays) -> None:
        index = self.seat_of(conn)
        public = self.seats[index].public() if index is not None else None
        if index is None or public is None:
            raise ProtocolError("not_allowed", "only a seated player signs game messages")
        if msg.c != self.round_number:
            raise ProtocolError("stale", "that message is for another round; resync")
        if not self.started and self.round_number > 0:
            # A rematch's lobby, in the chain its first round will be dealt in: nothing is
            # signed there before the deal, and a message kept there would tie the seat to
            # its key, so a newcomer in a seat freed meanwhile could not be keyed (G1).
            raise ProtocolError("not_allowed", "the rematch has not started: nothing to sign yet")
        try:
            message = verify_message(public, msg.m, index)
        except FairnessError as exc:
            raise ProtocolError("bad_signature", exc.reason) from None
        body = read_payload(message.payload, self.config.mental)
        if self.config.mental and isinstance(body, MENTAL_KINDS):
            # Checked against the seat's chain under the send lock (netplay/table/mental.py),
            # where the round cannot change between the check and the forward. In the lobby:
            # the first round's deck (netplay/table/first_deck.py).
            if msg.c == 0:
                await self._on_lobby_signed(index, message, body)
            else:
                await self._on_mental_signed(index, message, body)
            return
        head = self._seat_head(index, "move" if isinstance(body, Propose) else "nonce")
        if message.seq < head.seq:
            raise Dropped  # sent again after a reconnect; the first copy was accepted
        if not head.follows(message):
            raise ProtocolError("stale", "that message does not follow your last accepted one")
        if isinstance(body, Propose):
            await self._on_seat_move(index, message, body)
        elif isinstance(body, NonceCommit) and self.round_number == 0:
            self._on_first_commit(index, message, body)
        elif isinstance(body, NonceCommit | NonceReveal):
            await self._on_nonce(index, message, body)
        else:
            raise ProtocolError("unknown_type", f"unknown signed message {body.t!r}")

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
        if not await self._until(ready):
            self.on_event("a seat did not commit or reveal its nonce in time: it forfeits")

    async def _until(self, ready: Callable[[], bool]) -> bool:
        """Whether `ready()` holds (or the match ended) before the reveal timeout runs out."""
        deadline = time.monotonic() + self.config.reveal_timeout
        while not ready() and not self.finished:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._nonce_wake.clear()
            try:
                await asyncio.wait_for(self._nonce_wake.wait(), left)
            except TimeoutError:
                pass
        return True

    async def _await_first_commits(self) -> None:
        """Wait (at most the reveal timeout) for every seated person's lobby commitment."""
        # The match's first deal then asks only for reveals; a seat that is late is listed in
        # `missing` and commits in that shuffle instead, as a seat that came back does.
        if not await self._until(lambda: all(f"1/0/{s}" in self.precommits
                                             for s in self._nonce_seats())):
            self.on_event("a seat did not commit to its first nonce in the lobby: the first"
                          " deal asks it to commit")

    def _on_first_commit(self, index: int, message: SignedMessage, body: NonceCommit) -> None:
        """Keep a seat's lobby commitment to its nonce for round 1, epoch 0, with it as proof."""
        commit = body.commit
        if (body.round, body.epoch) != (1, 0):
            raise ProtocolError("stale", "in the lobby a seat commits only to its nonce for"
                                " round 1, epoch 0")
        # Not forwarded: chain 0 verifies only the keys known when a seat began following it,
        # while the first `shuffle` carries this proof when every seat's key is known.
        self.precommits.setdefault(f"1/0/{index}", [message.to_wire(), commit])
        self._seat_head(index, "nonce").advance(message)
        self._save()
        self._nonce_wake.set()

    def _forget_commits(self, index: int) -> None:
        """Drop a lobby seat's commitment and nonce chain: its next occupant or key starts anew."""
        self.heads.pop(f"{index}/nonce", None)
        self.precommits = {k: v for k, v in self.precommits.items()
                           if not k.endswith(f"/{index}")}

    async def _on_nonce(self, index: int, message: SignedMessage,
                        body: NonceCommit | NonceReveal) -> None:
        number, epoch = body.round, body.epoch
        ep = self.epochs[epoch] if number == self.round_number and 0 <= epoch < len(
            self.epochs) else None
        if ep is None or ep.deck is not None or index not in ep.seats:
            raise ProtocolError("stale", "no shuffle is waiting for your nonce")
        if isinstance(body, NonceCommit):
            if ep.reveal_open or index in ep.commits:
                raise ProtocolError("stale", "the commit phase of that shuffle is over")
            ep.commits[index] = body.commit
        else:
            nonce = body.nonce
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

    def _keep_precommits(self, index: int, message: SignedMessage, body: NonceReveal) -> None:
        """Keep a seat's commitments to its next nonces, with its signed message as proof."""
        for item in body.next:
            if (item.round, item.epoch) > (self.round_number, len(self.epochs) - 1):
                key = f"{item.round}/{item.epoch}/{index}"
                self.precommits.setdefault(key, [message.to_wire(), item.commit])
        self.precommits = {k: v for k, v in self.precommits.items()
                           if int(k.split("/")[0]) >= self.round_number}

    # -- card openings --------------------------------------------------------

    def _seal(self, seat: int, opening: CardOpening) -> bytes | None:
        public = self.seats[seat].public()
        if public is None:
            return None  # a host-side bot: nobody else may see it, and it needs no delivery
        return seal_card(self.identity, public, self.table, self.round_number, opening)

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
