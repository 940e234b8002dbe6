"""A seat's side of mental-poker dealing (FAIRNESS.md A8): its key, shuffles and shares.

A `deal` that names each seat's party and no card starts a `MentalPlay` for this seat (or a
keyless watcher's view). Every mental-poker message of the round then reaches it in the host's
chain: the host's key for its bots speaks in the host's own messages, every other seat's inside
a `fwd`, signed by that seat. What this seat owes (its key, its shuffle in turn, its shares, its
moves) is signed into its own chain and sent. The engine's view is `MentalPlay.state`; each
move applied is shown as it would be with the trusted dealer.

What the host could do to a seat without breaking a signature is checked here too (FAIRNESS.md
A8, "Blame"): a deal that hands this person's seat to the host's bots while the person is here
is refused, so no round is dealt without this person's shuffle; a message of the host's key for
its bots that fails is blamed on the host; and each message this seat signs must come back
forwarded in the host's chain: one that does not is sent again, then blamed on the host.

What this seat's `MentalPlay` has already taken is never applied twice. A process started again
has lost its round key: it tells the host (`mp_lost`), which voids the deal. On leaving in good order the
seat hands its round key over, sealed to the host (`mp_handover`), so the round goes on.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from engine.errors import IllegalMove
from netplay.fair import DEALER, FairnessError, SignedMessage
from netplay.fair.absence import long_enough_away, slept
from netplay.fair.context import BOT_PARTY
from netplay.fair.mental_lobby import FIRST_ROUND, LobbyDeck
from netplay.fair.mental_play import MentalPlay
from netplay.fair.mental_round import WATCHER, MentalRound
from netplay.messages import (
    MENTAL_PAYLOADS,
    SEAT_BODIES,
    SEAT_PAYLOADS,
    Deal,
    MentalPayload,
    MpHandover,
    MpKey,
    MpLost,
    MpShares,
    MpShuffle,
    MpVoid,
    Propose,
    ProtocolError,
    SeatSays,
    Signed,
    as_map,
    decode,
)
from netplay.protocol import HOST_SENDER, pack, read_numbers
from netplay.seat.state import TIME_RAN_OUT, SeatState
from netplay.session.events import MoveMade, Notice

FORWARD_SECONDS = 10.0
"""How long a signed message may wait to come back forwarded before it is sent again; after as
long again it is blamed on the host. An honest host forwards each at once, after its checks."""
CLOCK_SECONDS = 0.25  # how often a seat looks at its own turn timer


class SeatMental(SeatState):
    """The `RemoteSession` methods that take part in a round dealt by mental poker."""

    def _mental_fresh(self) -> bool:
        """Whether the host message being read is new to this seat's mental poker (a round
        sent again from its start repeats what `MentalPlay` has taken): note it as taken."""
        assert self.chain is not None
        at = (self.chain_no, self.chain.next_seq(HOST_SENDER))
        if at <= self._mental_mark:
            return False
        self._mental_mark = at
        return True

    def _on_mental_deal(self, msg: Deal) -> None:
        if not self._mental_fresh():
            return
        number, players, dealer = msg.round, msg.players, msg.dealer
        parties = msg.parties or ()
        if (players != len(self.ids) or len(parties) != players
                or any(p not in (i, BOT_PARTY) for i, p in enumerate(parties))):
            raise FairnessError(DEALER, "its deal names parties that are not the table's seats")
        scores = read_numbers(msg.scores, "'scores' of a deal")
        signs = tuple(msg.signs or ())
        me = self.my_seat if self.my_seat is not None and self.my_seat < players else None
        dealt = self.mental
        if dealt is not None and dealt.round_no == number:
            # Dealing a round again lets the host pick, among decks, one its bots like; an
            # honest host deals a round again only by a void (mp_void), never by a deal.
            raise FairnessError(DEALER, f"dealt round {number} a second time: this seat keeps"
                                " the first deal")
        if me is not None and parties[me] != me and not self._was_away():
            self.mental, self.view, self.round_number = None, None, number
            self._refused_round = number
            raise FairnessError(DEALER, f"dealt round {number} with this seat played by its"
                                " bots while its person is here: the round is refused, and no"
                                " card of it is shown")
        self._refused_round = None
        self._voided_empty = False
        party = self._party(parties)
        prepared = self._prepared(msg, number, party, parties)
        if msg.prepared is not None and prepared is None:
            if self._followed_last_round(number):
                # This client has every message of that deck's chain: an honest host names a
                # deck only once its whole chain is sent, by the digest and first epoch of what
                # it sent, for the same parties. Anything else (a chain not all sent) deals
                # this seat out of the round (its cards to the host's bots) without waiting
                # for it to be away.
                self._fault(FairnessError(DEALER, f"named round {number}'s deck by a digest"
                                          " (or first epoch, or parties) that is not of the"
                                          f" deck shuffled during round {number - 1} in its"
                                          " chain, which this client followed"))
            # The deal is of the deck shuffled during the last round, and this client did not
            # see that deck shuffled (it came in since, or missed that round's chain).
            self._mental_start(MentalPlay(self.game, self.table, number, party, tuple(parties),
                                          signs, dealer, tuple(scores), msg.epoch or 0,
                                          house=self.house, defer_checks=True, blind=True))
            if party != WATCHER:  # it holds no key of that deck: the host deals the round again
                self._lost = True
                if self.phase == "live":
                    self._mental_synced()
            else:
                self.emit(Notice(f"round {number} was dealt from a deck shuffled before this"
                                 " client came in: the table shows from the next deal",
                                 round=number))
            return
        self._mental_start(MentalPlay(self.game, self.table, number, party, tuple(parties),
                                      signs, dealer, tuple(scores), house=self.house,
                                      defer_checks=True, prepared=prepared))

    def _prepared(self, msg: Deal, number: int, party: int,
                  parties: list[int] | tuple[int, ...]) -> MentalRound | None:
        """The deck this client saw shuffled during the last round, if it is the one `msg`
        names (FAIRNESS.md A8, "Prepared deck")."""
        last = self._last_deck(number)
        if (msg.prepared is None or last is None or last.round_no != number - 1
                or last.next.first_epoch != msg.epoch
                or last.next.party != party
                or last.next.parties != tuple(sorted(set(parties)))):
            return None
        return last.next if last.prepared_digest(checked=False) == msg.prepared else None

    def _followed_last_round(self, number: int) -> bool:
        """Whether this client followed the last round's deal in play (its latest deal or
        void) from its start with its own key: it then has every message the host sent of
        the deck prepared during it, of the same first epoch and parties as the host's."""
        last = self.mental
        if last is None and number == FIRST_ROUND:
            # Heard live, the first deal can name no deck this client did not follow: an
            # honest host begins a new lobby deck whenever a person sits down or comes back on
            # another connection, and that deck's whole chain comes after their catch-up
            # (FAIRNESS.md A8, "Lobby deck"). A deal read while catching up may be older than
            # this process: then it only sits the round out.
            return self.phase == "live"
        return (last is not None and not last.blind and not self._lost
                and self._caught is not last
                and not self._handing_over.is_set() and last.round_no == number - 1)

    def _last_deck(self, number: int) -> MentalPlay | LobbyDeck | None:
        """What shuffled the deck a deal of round `number` may name: the last round's play,
        or for the first round the lobby's deck (unless this process lost its key of it)."""
        if self.mental is None and number == FIRST_ROUND and self.chain_no <= 1:
            return None if self._lobby_lost else self.lobby_deck
        return self.mental

    def _party(self, parties: list[int] | tuple[int, ...]) -> int:
        me = self.my_seat
        return me if me is not None and parties[me] == me else WATCHER

    def _mental_start(self, play: MentalPlay) -> None:
        if self.mental is None or self.mental.round_no != play.round_no:
            self._signed_here = set()
        self.mental, self._handed, self._lost, self._told_lost = play, set(), False, False
        self.view, self.round_number, self._shown = None, play.round_no, 0
        if self.phase == "live":
            # A deal begun while this person is here: an absence before it no longer lets the
            # host deal them out (one replayed on rejoining is judged as it was).
            self.away_for, self._slept_at_deal = 0.0, slept()
        elif self._lost_at is not None:
            # A deal begun while this client was gone: sleep before it went does not count.
            self._slept_at_deal = self._slept_at_loss
        self._mental_after()

    def _on_mental_void(self, msg: MpVoid) -> None:
        """The host voided the deal in play: deal the round again, its bots' key in `away`."""
        play = self.mental
        if not self._mental_fresh():
            return
        if play is None:
            if self._refused_round is not None and msg.round == self._refused_round:
                return  # a round this seat refused: its voids are not followed either
            raise ProtocolError("bad_frame", "a void before any deal")
        number, epoch, away = msg.round, msg.epoch, msg.away
        parties = play.seat_parties
        if (number != play.round_no or epoch < play.mental.epoch
                or any(p not in parties or p == BOT_PARTY for p in away)):
            raise FairnessError(DEALER, "its void names another round, an epoch already passed,"
                                " or parties not in the deal")
        me = self.my_seat
        if me is not None and me in away and not self._lost and not self._was_away():
            # Dealing this seat out while its person is here (a forced reconnect is no
            # absence) would let the host deal without this person's shuffle: refused.
            self._refuse_round(number, f"voided round {number}'s deal naming this seat as gone"
                               " while its person is here: the round is refused, and no card of"
                               " it is shown")
        if not away:
            # A void naming nobody is a host that started again (its bots' key is gone). Each
            # void is a new deal: a host voiding at will could keep the deal its bots like best,
            # so one such void per round is followed, and a second refused.
            if self._voided_empty:
                self._refuse_round(number, f"voided round {number}'s deal a second time naming"
                                   " nobody: the round is refused, and no card of it is shown")
            self._voided_empty = True
        dealt = tuple(BOT_PARTY if p in away else p for p in parties)
        self.moves_seen -= self._shown  # a voided deal's moves do not count
        names = ", ".join(self._seat_name(p) for p in away)
        self.emit(Notice(f"round {number} is dealt again"
                         + (f": {names} gone, the host's bots play for them" if names else
                            " (the host started again)")
                         + ("; the host sees their cards" if names else ""), "warning",
                         round=number))
        self._mental_start(MentalPlay(self.game, self.table, number, self._party(dealt), dealt,
                                      play.signs, play.dealer, play.scores, epoch + 1,
                                      house=self.house, defer_checks=True))

    def _refuse_round(self, number: int, why: str) -> None:
        self.mental, self.view, self.round_number = None, None, number
        self._refused_round = number
        raise FairnessError(DEALER, why)

    def _seat_name(self, seat: int) -> str:
        return self.seats[seat].name if 0 <= seat < len(self.seats) else f"seat {seat}"

    def _on_mental_host(self, msg: MpKey | MpShuffle | MpShares | Propose) -> None:
        """A message of the host's key for its bots (or of a key handed over to the host),
        signed in the host's own chain."""
        if not self._mental_fresh():
            return
        party = BOT_PARTY if msg.party is None else msg.party
        if party != BOT_PARTY and party not in self._handed:
            raise FairnessError(DEALER, f"spoke for party {party!r}, whose key it does not hold")
        body = as_map(msg)
        body.pop("party", None)
        self._mental_from(party, body)

    def _on_mental_fwd(self, seat: int, wire: Signed) -> None:
        """A seat's own signed mental-poker message, forwarded by the host."""
        body = self._seat_payload(seat, wire, MENTAL_PAYLOADS)
        fresh = self._mental_fresh()
        if seat == self.my_seat:
            self._own_forwarded(SignedMessage.from_wire(wire), body, fresh)
            return
        if not fresh:
            return
        if isinstance(body, MpHandover):
            self._handed.add(seat)
            self.emit(Notice(f"{self._seat_name(seat)} left and handed their key over: the"
                             " host's bot plays for them and sees their cards", "warning"))
        elif not isinstance(body, MpLost):
            self._mental_from(seat, as_map(body))

    def _own_forwarded(self, message: SignedMessage,
                       body: MentalPayload,
                       fresh: bool) -> None:
        """This seat's own message came back forwarded: its chain moves past it."""
        head = self._heads["move"]
        self._unforwarded = {n: v for n, v in self._unforwarded.items() if n > message.seq}
        if head.follows(message):
            head.advance(message)  # signed by this seat's earlier process: sign on after it
        if isinstance(body, MpHandover):
            if message.digest in self._signed_here:
                self._handing_over.set()
            else:  # this person's earlier program left in good order: the host holds its key
                self._handed_before = body.round
                if self.my_seat is not None:
                    self._handed.add(self.my_seat)  # so the host speaks for it from now on
        play = self.mental
        # A move without `epoch` is of a deal whose first epoch is 0.
        epoch = None if isinstance(body, MpHandover | MpLost) else body.epoch or 0
        if (fresh and play is not None and message.digest not in self._signed_here
                and body.round == play.round_no
                and not isinstance(body, MpLost)
                and (epoch is None or epoch >= play.first_epoch)):
            # Signed by this seat before this process began: its round key is lost with it.
            self._lost = True

    def _mental_from(self, sender: int, body: dict[str, object]) -> None:
        play = self.mental
        if play is None and self.lobby_deck is not None and self.chain_no == 0:
            self._lobby_from(sender, body)  # the bots' key's part of the lobby's deck
            return
        if play is None:
            if self._refused_round is not None and body.get("round") == self._refused_round:
                return  # a round this seat refused: nothing of it is applied or blamed again
            raise ProtocolError("bad_frame", "a mental-poker message before any deal")
        if self._lost or self._handing_over.is_set():
            return  # its own key is gone (or handed over): it waits, or leaves
        if self._caught is play:
            self.ignored += 1  # signed and in the chain, but no proof of it is checked
            return
        try:
            play.receive(sender, body)
        except FairnessError as exc:
            self._blame(exc)
            self._catch(play)
        self._mental_after()

    def _catch(self, play: MentalPlay) -> None:
        """A check of the deal in play failed: from now on this seat checks nothing more of
        that deal and takes nothing of it (no share, move or shuffle of it is applied, and it
        sends no share it did not owe already), so a host that fails checks without end costs
        it no more proofs; said once. A new deal (`deal` or `mp_void`) is checked afresh."""
        if self._caught is play:
            return
        self._caught = play
        self.emit(Notice(f"round {play.round_no}: a check of this deal failed, so this client"
                         " checks and takes nothing more of it (it opens no more cards and"
                         " sends no more shares of it) until the host deals again", "error",
                         kept=True, round=play.round_no))

    def _blame(self, exc: FairnessError) -> None:
        """Show a failed mental-poker check; the host holds the key of its bots' party, so
        what that party does wrong, the host did."""
        self._fault(FairnessError(DEALER, exc.reason) if exc.blamed == BOT_PARTY else exc)

    def _was_away(self) -> bool:
        """Whether this seat's last absence was long enough for an honest host to deal it out."""
        if not self._ever_live:
            return True  # this process started after the deal: its person was not here
        # A machine that slept that long during the deal was away too, its connection or not.
        asleep = slept() - self._slept_at_deal
        return long_enough_away(max(self.away_for, asleep), self.away_seconds)

    # -- every message this seat signs comes back forwarded ---------------------------

    def _await_forward(self, seq: int, body: bytes) -> None:
        """Keep a signed message until it is forwarded; check on it after FORWARD_SECONDS."""
        self._unforwarded[seq] = (body, False)
        self._forward_check_later(seq, body)

    def _forward_check_later(self, seq: int, body: bytes) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # driven without an event loop (a unit test): nothing waits on the wire
        loop.call_later(FORWARD_SECONDS, self._forward_due, seq, self.chain_no, body)

    def _forward_due(self, seq: int, chain: int, frame: bytes) -> None:
        """Send an unforwarded message again, once; a second time, blame the host."""
        pending = self._unforwarded.get(seq)
        # Another message may hold its number since (a new lobby deck's chain): not this one.
        if (pending is None or pending[0] is not frame or chain != self.chain_no or self.closed
                or self.result is not None or self.phase != "live"):
            return  # forwarded, another round, or reconnecting (then it is sent again)
        body, resent = pending
        if not resent:
            self._unforwarded[seq] = (body, True)
            asyncio.ensure_future(self._send(body))
            self._forward_check_later(seq, body)
            return
        del self._unforwarded[seq]
        kind = self._kind_of(body)
        self._fault(FairnessError(DEALER, f"did not forward this seat's {kind} (its message"
                                  f" {seq} of round {chain}), sent twice over a live connection"
                                  f" {2 * FORWARD_SECONDS:g} s ago"))

    @staticmethod
    def _kind_of(body: bytes) -> str:
        try:  # this seat's own signed body, as it sent it
            envelope = decode(body, SEAT_BODIES)
            kind = decode(envelope.m.payload, SEAT_PAYLOADS).t if isinstance(
                envelope, SeatSays) else ""
        except ProtocolError:
            return "message"
        return {"mp_key": "round key", "mp_shuffle": "shuffle", "mp_shares": "decryption shares",
                "move": "move", "mp_handover": "handed-over key",
                "mp_lost": "lost key"}.get(str(kind), "message")

    def _resend_unforwarded(self) -> None:
        """After a (re)connection: send again what the host has not forwarded, and wait anew."""
        for seq, (body, _) in sorted(self._unforwarded.items()):
            self._out.append(body)
            self._unforwarded[seq] = (body, False)
            self._forward_check_later(seq, body)

    def _mental_synced(self) -> None:
        """Caught up: say a lost round key, or send what is owed now."""
        play = self.mental
        if play is None and self.lobby_deck is not None:
            self._lobby_after()
            return
        if play is not None and self._lost and not self._told_lost:
            self._told_lost = True
            if self._handed_before == play.round_no:
                # Nothing is lost: the host holds the key this person handed over on leaving,
                # and its bot plays the seat to the round's end; this client waits for the next.
                self.emit(Notice("you handed your round key to the host when you left: its bot"
                                 " plays your seat until this round ends", "warning"))
                return
            self.emit(Notice(f"round {play.round_no} was dealt from a deck this client did not"
                             " see shuffled, so it holds no key of it: the host deals the round"
                             " again" if play.blind else "this client lost its round key when"
                             " it stopped: the host deals the round again", "warning",
                             round=play.round_no))
            lost = {"epoch": play.first_epoch} if play.blind else {}
            self._sign_mental(pack("mp_lost", round=play.round_no, **lost))
            return
        if play is not None:
            self._mental_after()

    def _sign_mental(self, payload: bytes, chain: str = "move") -> None:
        # Several messages may leave before the first comes back forwarded: each follows
        # the last one signed, not the last one heard.
        head = self._heads[chain]
        message = head.sign(self.identity.key, payload)
        head.advance(message)
        frame = pack("s", c=self.chain_no, m=message.to_wire())
        self._signed_here.add(message.digest)
        self._out.append(frame)
        self._await_forward(message.seq, frame)

    def _mental_after(self) -> None:
        """Sign what this seat owes, and show what the round has become."""
        play = self.mental
        assert play is not None
        if self.phase == "live" and not self._lost:
            for msg in play.drain():
                body = dict(msg)
                kind = body.pop("t")
                if kind == "move":
                    body["open"] = []
                self._sign_mental(pack(kind, **body))
        state = play.state
        if state is None:
            return
        if self.view is None:
            self._show_round_start(state)
        while self._shown < len(state.history):
            effect = state.history[self._shown]
            self._shown += 1
            self.moves_seen += 1
            self.turn_since = time.monotonic()
            seat = effect.seat
            name = self.seats[seat].name if seat < len(self.seats) else f"seat {seat}"
            self.emit(MoveMade(seat, effect.move, state.describe(effect).replace(
                f"seat {seat}", name, 1), state.copy()))

    def _mental_check(self) -> bool:
        """Check a complete chain of shuffles, once what this seat owed is sent (its own
        shuffle goes first, FAIRNESS.md A8); whether there was one to check. A proof that fails
        is blamed and no card of that deck opens."""
        play = self.mental
        if play is None:
            return self._lobby_check()
        if (self._lost or self._handing_over.is_set() or self._caught is play
                or not play.checks_due()):
            return False
        try:
            play.check()
        except FairnessError as exc:
            self._blame(exc)
            self._catch(play)
        self._mental_after()
        return True

    def _mental_submit(self, move: Any) -> None:
        play = self.mental
        assert play is not None
        if self._caught is play:
            return  # a deal that failed a check goes no further here (said when it failed)
        try:
            play.play(move)
        except FairnessError as exc:
            self.emit(Notice(f"could not play {move}: {exc.reason}", "error"))
            return
        self._mental_after()

    def _handover(self) -> bool:
        """Sign this seat's round key, sealed to the host, into its chain (mp_handover) when a
        deal it holds a key in is in play; whether it did."""
        play = self.mental
        if (play is None or play.party == WATCHER or self._lost or self.host_id is None
                or self.phase != "live" or self._caught is play or play.settled()):
            return False
        sealed = self.identity.key.box_with(self.host_id).encrypt(
            play.mental.handover_secret())
        self._sign_mental(pack("mp_handover", round=play.round_no, key=bytes(sealed)))
        return True

    async def _turn_clock(self) -> None:
        """On a mental-poker table nobody else holds this seat's key, so when its own turn
        timer runs out its client moves with the seat's bot (the host voids the deal of a
        seat that never does, PROTOCOL.md G9)."""
        from engine.bots import make_bot
        from netplay.session.thinking import choose_off_loop

        bot = make_bot("greedy", 0)
        while not self.closed:
            await asyncio.sleep(CLOCK_SECONDS)
            play, view, me = self.mental, self.view, self.my_seat
            if (play is None or view is None or me is None or view.round_over
                    or view.turn != me or me not in play.my_seats() or play.moves
                    or self.phase != "live"):
                continue
            left, position = self.turn_left(), (self.round_number, len(view.history))
            if left is None or left > 0 or self._timed_out == position:
                continue
            self._timed_out = position
            move = await choose_off_loop(bot, view.view(me))
            if self.view is view and len(view.history) == position[1] and not play.moves:
                self.emit(Notice(TIME_RAN_OUT, "warning"))
                try:
                    await self.submit(move)
                except IllegalMove as exc:
                    self.emit(Notice(f"the bot's move was refused: {exc}", "error"))
