"""A seat's checks of the host's word: its signed chain, every shuffle, and each round's audit.

docs/FAIRNESS.md says what each check proves and whom a failure blames.
"""

from __future__ import annotations

import time
from typing import Any

from engine import zodiak
from engine.errors import IllegalMove
from engine.games import game_named
from netplay.fair import (
    DEALER,
    RELAY,
    TABLE,
    CardOpening,
    Failure,
    FairnessError,
    PublicIdentity,
    SignedMessage,
    TranscriptChain,
    new_secret,
    nonce_commitment,
    open_card,
    verify_message,
)
from netplay.fair.audit import MAX_EPOCHS
from netplay.messages import (
    HOST_PAYLOADS,
    NONCE_PAYLOADS,
    Deal,
    Deck,
    Family,
    Forward,
    HostPayload,
    HostSays,
    NonceCommit,
    NonceReveal,
    Proof,
    ProtocolError,
    Resync,
    Reveal,
    RoundEnd,
    Seeds,
    Seen,
    Shuffle,
    Signed,
    Synced,
    decode,
)
from netplay.protocol import (
    HOST_SENDER,
    ChainHead,
    OpenShuffle,
    RoundLedger,
    canonical_deck,
    card_of,
    chain_room,
    deal_layout,
    nonce_sender,
    pack,
    read_number,
    read_numbers,
)
from netplay.seat.state import M, SeatState
from netplay.session.events import Notice, RoundEnded

MAX_FAILURES = 100  # failed checks a client keeps and shows; a host could fail them without end
VERDICT_NAMES = 5  # failures a round's verdict names (the rest counted): it is shown whole


class ClientChecks(SeatState):
    """The `RemoteSession` methods that follow the host's chain, shuffles and audits."""

    def _on_resync(self, msg: Resync) -> None:
        chain, start = msg.c, msg.n
        if (self.mental is not None and self.chain is not None and chain == self.chain_no
                and start < self._have()):
            # An honest host sends a round on from what the seat has. Starting it again would
            # make this seat forget the round key and shuffle it already sent: keep them.
            self._fault(FairnessError(DEALER, f"sent round {chain} again from its start (message"
                                      f" {start}) while this seat had {self._have()} of it"))
            self.phase = "marker"
            self._out.append(pack("sync", c=self.chain_no, n=self._have()))
            return
        if self.chain is None or chain != self.chain_no or start != self._have():
            if self.ledger is not None and self.ledger.number >= chain:
                self.ledger = None  # the round is sent again from its start
            self._begin_chain(chain)
        elif self.my_seat is not None and not self._heads:
            # Seated in the chain it already follows as a watcher (`join --expect` watches
            # until the host's key is the one expected): it signs there from the start.
            self._start_heads()
        self.phase = "catchup"

    def _on_synced(self, msg: Synced) -> None:
        if self.phase == "marker":
            return  # the end of a resync this seat refused, or of none: it still waits for one
        caught_up = self.phase == "catchup"
        self.phase = "live"
        self._ever_live = True
        # Here again, live: the absence ends now, not at a welcome a host could hold back.
        self._time_absence(ended=True)
        if (caught_up and msg.turn_left is not None and self.turn_seconds
                and self.turn_since is not None):
            # Only the countdown shown: `synced` is not signed, and this client's own clock
            # (turn_since) alone decides when its time has run out (a relay's turn_left 0
            # would have had a mental-poker seat's bot move for its person at once).
            left = min(msg.turn_left, float(self.turn_seconds))
            self.turn_shown = (self.turn_since,
                               time.monotonic() - (self.turn_seconds - left))
        self._resend_unforwarded()
        self._duties()
        if self.dealing == "mental":
            self._mental_synced()

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
        self._unforwarded = {}  # numbered in the chain they were signed in
        self._start_heads()

    def _start_heads(self) -> None:
        """This seat's chains of signed messages (its moves, its nonces) in the current round's
        chain, from their start."""
        if self.my_seat is not None:
            room = chain_room(self.table, self.chain_no)
            self._heads = {"move": ChainHead.start(room, self.my_seat),
                           "nonce": ChainHead.start(room, nonce_sender(self.my_seat))}

    def _check_lobby_key(self, seat: int, public: PublicIdentity) -> None:
        """A live lobby lists this client's seat under this client's key: under another, the
        host could sign for the seat while its player sits there (older lobbies replayed in a
        resync may name who sat here before)."""
        if seat == self.my_seat and self.phase == "live" and public != self.identity.key.public:
            self._fault(FairnessError(DEALER, f"listed seat {seat}, this client's, under another"
                                      " player's key"))

    def _rekey_lobby_seat(self, seat: int, public: PublicIdentity) -> None:
        """Follow a lobby seat taken by someone new in the chain in use, where nothing has been
        dealt yet: a rematch's lobby opens the chain its first round is dealt in, and a seat
        freed there may change hands before that seat has signed anything in it."""
        chain, ledger = self.chain, self.ledger
        if chain is None or (ledger is not None and ledger.number == self.chain_no):
            return
        if not all([chain.rekey(seat, public), chain.rekey(nonce_sender(seat), public)]):
            self._fault(FairnessError(DEALER, f"gave seat {seat} another key after it signed"
                                      f" in round {self.chain_no}"))

    def _on_signed(self, msg: HostSays) -> None:
        if self.phase == "marker" or self.chain is None:
            return  # frames from before our join or sync: the resync sends them again
        chain = msg.c
        body: HostPayload | None = None
        try:
            if chain < self.chain_no:
                raise FairnessError(RELAY, f"a message of round {chain} was replayed")
            after = None
            if chain > self.chain_no:
                if self.ledger is not None and not self.ledger.ended:
                    raise FairnessError(RELAY, f"the end of round {self.chain_no} was dropped")
                after = self._have() if chain == self.chain_no + 1 else None
                self._begin_chain(chain)
            payload = self.chain.append(HOST_SENDER, msg.m)
            body = self._host_payload(payload)
            said = getattr(body, "after", None) if after is not None else None
            if said is not None and after is not None and said != after:
                raise FairnessError(RELAY, f"{said - after} message(s) at the end of round"
                                    f" {chain - 1} were dropped")
        except FairnessError as exc:
            self._fault(exc)
            if exc.blamed != RELAY:  # the host signed two histories: nothing it says holds now
                if self.trusted:
                    self.emit(Notice("this host is no longer trusted", "error", kept=True))
                self.trusted = False
                return
            self.phase = "marker"  # ask again from the last good message
            self._out.append(pack("sync", c=self.chain_no, n=self._have()))
            return
        if body is None:
            return
        try:
            self._on_host_message(body)
        except FairnessError as exc:
            self._fault(exc)
        except IllegalMove as exc:  # a card or deal the rules refuse, signed by the host
            self._fault(FairnessError(DEALER, f"signed what the rules refuse: {exc}"))
        if self.phase == "live":
            self._duties()

    def _host_payload(self, payload: bytes) -> HostPayload | None:
        """The host's signed payload as its kind; None, with a fault, when it is none."""
        try:
            return decode(payload, HOST_PAYLOADS)
        except ProtocolError as exc:
            self._fault(FairnessError(DEALER, f"signed a message that breaks the protocol:"
                                      f" {exc.message}"))
            return None

    def _seat_payload(self, sender: int | str, wire: Signed, family: Family[M]) -> M:
        """A seat's signed message the host forwarded, checked in the seat's chain, decoded."""
        payload = self._append_inner(sender, wire)
        try:
            return decode(payload, family)
        except ProtocolError as exc:  # the host checks what it forwards: it is to blame
            raise FairnessError(DEALER, f"forwarded a {family.name} that breaks the protocol:"
                                f" {exc.message}") from None

    def _fault(self, exc: FairnessError) -> None:
        """Show a failed check now and keep it for the round's verdict."""
        failure = Failure(exc.blamed, exc.reason)
        ledger = self.ledger  # each round's audit keeps its own, whatever failed before it
        if ledger is not None and not ledger.ended and len(ledger.failures) < MAX_FAILURES:
            ledger.failures.append(failure)
        if len(self.failures) >= MAX_FAILURES:  # a host may fail checks without end: the first
            self.failures_dropped += 1  # ones tell, and are never crowded out of the screen
            return
        self.failures.append(str(failure))
        self.emit(Notice(f"check failed: {failure}", "error", kept=True))

    def _check(self, action: Any, *args: Any) -> bool:
        try:
            action(*args)
        except FairnessError as exc:
            self._fault(exc)
            return False
        return True

    # -- shuffles ------------------------------------------------------------------

    def _ledger(self, number: int) -> RoundLedger:
        ledger = self.ledger
        if ledger is not None and ledger.number == number:
            return ledger
        raise FairnessError(DEALER, f"spoke of round {number} while round "
                            f"{ledger.number if ledger else 'none'} is in play")

    def _on_shuffle(self, msg: Shuffle) -> None:
        number, epoch = msg.round, msg.epoch
        if number != self.chain_no:
            raise FairnessError(DEALER, f"shuffled for round {number} in round {self.chain_no}")
        if self.ledger is None or self.ledger.number != number:
            if self.ledger is not None and not self.ledger.ended:
                self.emit(Notice(f"round {self.ledger.number} could not be audited: this"
                                 " client missed its end", "warning",
                                 round=self.ledger.number))
            self.ledger = RoundLedger(self.game, self.table, number, self.my_seat)
            self.ledger.house = self.house
        ledger = self.ledger
        self._check(ledger.audit.seed_committed, epoch, msg.seed)
        for item in msg.commits:
            try:
                seat, commit = self._proof(item, number, epoch)
            except FairnessError as exc:
                self._fault(exc)
                continue
            if self._check(ledger.audit.nonce_committed, epoch, seat, commit):
                ledger.committed.setdefault(epoch, set()).add(seat)
        seats, missing = list(msg.seats), list(msg.missing)
        ledger.open = OpenShuffle(epoch, seats, missing, not missing)
        if self.phase == "live" and self.my_seat is not None and self.my_seat not in seats:
            raise FairnessError(DEALER, f"left this seat, which is connected, out of shuffle"
                                f" {epoch} of round {number}")

    def _proof(self, item: Proof, number: int, epoch: int) -> tuple[int, bytes]:
        """The seat and commitment a seat-signed proof holds for this shuffle, or FairnessError."""
        seat = item.seat
        public = self.ids[seat] if seat < len(self.ids) else None
        if public is None:
            raise FairnessError(DEALER, "a nonce commitment proof names no seat of the table")
        message = verify_message(public, item.message, DEALER)
        try:
            body: NonceCommit | NonceReveal | None = decode(message.payload, NONCE_PAYLOADS)
        except ProtocolError:
            body = None
        if isinstance(body, NonceCommit) and (body.round, body.epoch) == (number, epoch):
            return seat, body.commit
        for entry in body.next if isinstance(body, NonceReveal) else ():
            if (entry.round, entry.epoch) == (number, epoch):
                return seat, entry.commit
        raise FairnessError(DEALER, f"the proof of seat {seat}'s commitment for shuffle"
                            f" {epoch} does not hold one")

    def _append_inner(self, sender: int | str, wire: Signed) -> bytes:
        """A seat's message carried in the host's envelope, checked against the seat's chain."""
        assert self.chain is not None
        try:
            return self.chain.append(sender, wire)
        except FairnessError as exc:  # the host signed the envelope: what it carries is its own
            raise FairnessError(DEALER if exc.blamed == RELAY else exc.blamed, exc.reason) from None

    def _on_reveal(self, msg: Reveal) -> None:
        ledger = self._ledger(msg.round)
        epoch = msg.epoch
        if ledger.open is not None and ledger.open.epoch == epoch:
            ledger.open.seats = list(msg.seats)
            ledger.open.reveal_open = True
            if ("c", ledger.number, epoch) in self._sent and self.my_seat not in ledger.open.seats:
                raise FairnessError(DEALER, f"left out of shuffle {epoch} the commitment this"
                                    " seat sent (or it came after the host's timeout)")

    def _on_fwd(self, msg: Forward) -> None:
        seat, wire = msg.seat, msg.m
        if msg.deck is not None:
            self._on_lobby_fwd(seat, msg.deck, wire)
            return
        if self.mental is not None or self._refused_round is not None:
            self._on_mental_fwd(seat, wire)
            return
        body = self._seat_payload(nonce_sender(seat), wire, NONCE_PAYLOADS)
        if seat == self.my_seat:
            self._heads["nonce"].advance(SignedMessage.from_wire(wire))
        ledger = self._ledger(body.round)
        epoch = body.epoch
        if isinstance(body, NonceCommit):
            if self._check(ledger.audit.nonce_committed, epoch, seat, body.commit):
                ledger.committed.setdefault(epoch, set()).add(seat)
        elif self._check(ledger.audit.nonce_revealed, epoch, seat, body.nonce):
            ledger.nonces.setdefault(epoch, {})[seat] = body.nonce
            self._compare_transcripts(seat, body.seen)

    def _compare_transcripts(self, seat: int, seen: Seen | None) -> None:
        """Compare the digest a seat signed for an earlier round with this client's own."""
        if seen is None:
            return
        mine = self._digests.get(seen.round)
        if mine is not None and seen.digest != mine and seat != self.my_seat:
            raise FairnessError(DEALER, f"showed seat {seat} a different transcript of round"
                                f" {seen.round} than this client's")

    def _on_deck(self, msg: Deck) -> None:
        ledger = self._ledger(msg.round)
        epoch = msg.epoch
        if epoch == 0:
            canonical = canonical_deck(self.game)
        elif self.view is not None and isinstance(self.view, zodiak.ZodiakRound):
            canonical = [str(c) for c in self.view.pile[:-1]]
        else:
            raise FairnessError(DEALER, f"shuffled epoch {epoch} when nothing was to reshuffle")
        ledger.canonical[epoch] = canonical
        self._check(ledger.audit.deck_committed, epoch, canonical, msg.commitments)
        ledger.open = None
        me = self.my_seat
        if ("n", ledger.number, epoch) in self._sent and me not in ledger.nonces.get(epoch, {}):
            raise FairnessError(DEALER, f"shuffled epoch {epoch} without the nonce this seat"
                                " revealed (or it came after the host's timeout)")

    def _duties(self) -> None:
        """Commit to or reveal its nonce when a shuffle needs it, and in the lobby for the first."""
        ledger, me = self.ledger, self.my_seat
        if (me is not None and self.chain_no == 0 and "nonce" in self._heads
                and ("lobby", 1, 0) not in self._sent):
            # Committed in the lobby, before any seed commitment is opened, so the match's
            # first deal asks only for reveals. Its own key: a commitment refused here (the
            # match began meanwhile) is sent again when the first shuffle lists it missing.
            self._sent.add(("lobby", 1, 0))
            self._sign("nonce", "nonce_commit", round=1, epoch=0, commit=self._commitment(1, 0))
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
            self._revealing(self._nonce_key(number, epoch))
            upcoming = [(number, epoch + 1)] if game_named(self.game).reshuffles else []
            seen = [number - 1, self._digests[number - 1]] if number - 1 in self._digests else None
            self._sign("nonce", "nonce", round=number, epoch=epoch, nonce=bytes.fromhex(nonce),
                       seen=seen,
                       next=[[r, e, self._commitment(r, e)]
                             for r, e in upcoming + [(number + 1, 0)]])

    def _nonce_key(self, number: int, epoch: int) -> str:
        # The table is part of the key: a nonce revealed at one table is public, so reusing it
        # at another would let that dealer know this seat's share before committing its seed.
        return f"{self.table} {number}/{epoch}"

    def _revealing(self, key: str) -> None:
        """Note, before it leaves, that a nonce is public: it is never committed to again."""
        if key not in self.identity.revealed:
            self.identity.revealed.add(key)
            self.identity.save(self.identity_path)

    def _commitment(self, number: int, epoch: int) -> bytes:
        key = self._nonce_key(number, epoch)
        # A host that asks again for a shuffle whose nonce this seat revealed (it repeated a
        # table id, or replays an old table) gets a commitment to a fresh nonce, never to one
        # it already knows, so it cannot grind a deck in advance.
        if key not in self.identity.nonces or key in self.identity.revealed:
            self.identity.nonces = {k: v for k, v in self.identity.nonces.items()
                                    if k.startswith(f"{self.table} ")
                                    and int(k.split(" ")[-1].split("/")[0]) >= number - 1}
            self.identity.revealed = {k for k in self.identity.revealed
                                      if k in self.identity.nonces and k != key}
            self.identity.nonces[key] = new_secret().hex()
            self.identity.save(self.identity_path)  # a restarted seat can still reveal it
        assert self.my_seat is not None
        return nonce_commitment(self.table, number, epoch, self.my_seat,
                                bytes.fromhex(self.identity.nonces[key]))

    def _sign(self, chain: str, t: str, **fields: Any) -> None:
        message = self._heads[chain].sign(self.identity.key, pack(t, **fields))
        self._out.append(pack("s", c=self.chain_no, m=message.to_wire()))

    # -- the deal ------------------------------------------------------------------

    def _open_mine(self, ledger: RoundLedger, blob: object) -> CardOpening | None:
        assert self.host_id is not None
        try:
            card = open_card(self.identity.key, self.host_id, blob, self.table, ledger.number)
        except FairnessError as exc:
            self._fault(exc)
            return None
        self._check(ledger.audit.delivered, card)
        return card

    def _on_deal(self, msg: Deal) -> None:
        if msg.parties is not None:
            number = msg.round
            if self.ledger is None or self.ledger.number != number:
                self.ledger = RoundLedger(self.game, self.table, number, self.my_seat)
            self._on_mental_deal(msg)
            return
        self.mental = None
        if self.dealing == "mental":
            self.trusted = False
            raise FairnessError(DEALER, "dealt the cards itself at a table it announced as"
                                " dealt by mental poker")
        ledger = self._ledger(msg.round)
        players, dealer = msg.players, msg.dealer
        if players != len(self.ids):
            raise FairnessError(DEALER, f"dealt for {players} players at a table of"
                                f" {len(self.ids)}")
        scores = read_numbers(msg.scores, "'scores' of a deal")
        signs = list(msg.signs or ())
        layout = deal_layout(self.game, players)
        cards = msg.cards
        if cards is None or len(cards) != len(layout):
            raise ProtocolError("bad_frame", f"a deal of {len(cards or ())} cards; expected"
                                f" {len(layout)}")
        rules = game_named(self.game)
        if (dealer >= players or len(scores) != rules.sides(players)
                or len(signs) != (players if rules.uses_signs else 0)):
            raise ProtocolError("bad_frame", "impossible deal: its dealer, scores or signs do"
                                " not fit the table")
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
            state = rules.seat_view(hands, table, stock, signs, dealer, scores, self.house)
        except (IllegalMove, FairnessError) as exc:  # the engine's and the opening's refusals
            self.trusted = False
            raise ProtocolError("bad_frame", f"impossible deal: {exc}") from None
        ledger.start = (dealer, list(scores), list(signs), players)
        self.round_number = ledger.number
        self._show_round_start(state)

    def _on_seeds(self, msg: Seeds) -> None:
        """Seeds of a round with very many shuffles, revealed ahead of its `round_end`."""
        ledger = self._ledger(msg.round)
        first, seeds = msg.first, list(msg.seeds)
        if self.view is None or not self.view.round_over:
            raise FairnessError(DEALER, "revealed seeds before the round was over")
        have = ledger.early_seeds
        if have[first:first + len(seeds)] == seeds and first < len(have):
            return  # sent again by a host that restarted before the round's end
        if first != len(have):
            raise FairnessError(DEALER, f"revealed seeds from shuffle {first} on, but this"
                                f" client has {len(have)}")
        if first + len(seeds) > MAX_EPOCHS:  # each message may go on from the last, without end
            raise FairnessError(DEALER, f"revealed more seeds than a round may shuffle"
                                f" ({MAX_EPOCHS})")
        have.extend(seeds)

    def _on_round_end(self, msg: RoundEnd) -> None:
        view, ledger = self.view, self._ledger(msg.round)
        if ledger.ended:
            raise FairnessError(DEALER, f"ended round {ledger.number} again")
        scores = read_numbers(msg.scores, "'scores' of a round's end")
        winner = msg.winner
        if view is not None and self.trusted and (not view.round_over
                                                  or list(view.scores) != scores):
            self.trusted = False
            self.emit(Notice("the host ended the round, but this client's engine disagrees"
                             f" (its scores: {list(view.scores)}).", "error", kept=True))
        first = msg.first or 0
        if first != len(ledger.early_seeds):
            self._fault(FairnessError(DEALER, f"revealed the seeds from shuffle {first} on, but"
                                      f" this client has {len(ledger.early_seeds)} before them"))
        failures = (list(dict.fromkeys(ledger.failures)) if self.mental is not None
                    else ledger.verdict(ledger.early_seeds + list(msg.seeds), scores))
        ledger.ended = True
        if self.chain is not None:
            self._digests[ledger.number] = self.chain.digest  # signed into our next reveal
        if failures:
            more = len(failures) - VERDICT_NAMES
            verdict = (f"round {ledger.number} failed its audit: "
                       + "; ".join(map(str, failures[:VERDICT_NAMES]))
                       + (f"; and {more} more" if more > 0 else ""))
            for text in dict.fromkeys(map(str, failures)):  # the audit's own too, as bounded
                if text not in self.failures and len(self.failures) < MAX_FAILURES:
                    self.failures.append(text)
        else:
            verdict = f"round {ledger.number} verified"
        self.verdicts.append(verdict)  # the --result file's audit, for scripts
        told = (verdict if failures else
                f"round {ledger.number} audited: shuffle, deal and every move check out")
        self.emit(Notice(told, "error" if failures else "info", kept=bool(failures),
                         round=ledger.number))
        self.emit(RoundEnded(view.copy() if view else None, winner,
                             read_number(msg.points, "'points'"), tuple(scores),
                             msg.summary[:200], ledger.number))
