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
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from netplay.fair import DEALER, FairnessError, SignedMessage
from netplay.fair.context import BOT_PARTY
from netplay.fair.mental_play import MentalPlay
from netplay.fair.mental_round import WATCHER
from netplay.messages import (
    MENTAL_PAYLOADS,
    SEAT_BODIES,
    SEAT_PAYLOADS,
    Deal,
    MpKey,
    MpShares,
    MpShuffle,
    Propose,
    ProtocolError,
    SeatSays,
    Signed,
    as_map,
    decode,
)
from netplay.protocol import pack, read_numbers
from netplay.seat.state import SeatState
from netplay.session.events import MatchStarted, MoveMade, Notice, RoundStarted

FORWARD_SECONDS = 10.0
"""How long a signed message may wait to come back forwarded before it is sent again; after as
long again it is blamed on the host. An honest host forwards each at once, after its checks."""
MIN_AWAY_SECONDS = 5.0
"""A deal that gives this seat to the bots is believed only after an absence at least this long
and the table's away time (an honest host waits its away time before it voids a round)."""


class SeatMental(SeatState):
    """The `RemoteSession` methods that take part in a round dealt by mental poker."""

    def _on_mental_deal(self, msg: Deal) -> None:
        number, players, dealer = msg.round, msg.players, msg.dealer
        parties = msg.parties or ()
        if (players != len(self.ids) or len(parties) != players
                or any(p not in (i, BOT_PARTY) for i, p in enumerate(parties))):
            raise FairnessError("dealer", "its deal names parties that are not the table's seats")
        scores = read_numbers(msg.scores, "'scores' of a deal")
        signs = tuple(msg.signs or ())
        me = self.my_seat if self.my_seat is not None and self.my_seat < players else None
        dealt = self.mental
        if dealt is not None and dealt.round_no == number and dealt.seat_parties == tuple(parties):
            # Dealing a round again lets the host pick, among decks, one its bots like; an
            # honest host deals a round again only after a void, with a bot in a person's seat.
            raise FairnessError(DEALER, f"dealt round {number} a second time with the same"
                                " parties: this seat keeps the first deal")
        if me is not None and parties[me] != me and not self._was_away():
            self.mental, self.view, self.round_number = None, None, number
            self._refused_round = number
            raise FairnessError(DEALER, f"dealt round {number} with this seat played by its"
                                " bots while its person is here: the round is refused, and no"
                                " card of it is shown")
        self._refused_round = None
        party = me if me is not None and parties[me] == me else WATCHER
        self.mental = MentalPlay(self.game, self.table, number, party, tuple(parties), signs,
                                 dealer, tuple(scores), house=self.house)
        self.view, self.round_number, self._shown = None, number, 0
        self._mental_after()

    def _on_mental_host(self, msg: MpKey | MpShuffle | MpShares | Propose) -> None:
        """A message of the host's key for its bots, signed in the host's own chain."""
        self._mental_from(BOT_PARTY, as_map(msg))

    def _on_mental_fwd(self, seat: int, wire: Signed) -> None:
        """A seat's own signed mental-poker message, forwarded by the host."""
        body = self._seat_payload(seat, wire, MENTAL_PAYLOADS)
        if seat == self.my_seat:
            # This seat's own: applied when it was made, its head advanced when signed.
            seq = SignedMessage.from_wire(wire).seq
            self._unforwarded = {n: v for n, v in self._unforwarded.items() if n > seq}
            return
        self._mental_from(seat, as_map(body))

    def _mental_from(self, sender: int, body: dict[str, object]) -> None:
        play = self.mental
        if play is None:
            if self._refused_round is not None and body.get("round") == self._refused_round:
                return  # a round this seat refused: nothing of it is applied or blamed again
            raise ProtocolError("bad_frame", "a mental-poker message before any deal")
        try:
            play.receive(sender, body)
        except FairnessError as exc:
            # The host holds the key of its bots' party: what that party does wrong, it did.
            self._fault(FairnessError(DEALER, exc.reason) if exc.blamed == BOT_PARTY else exc)
        self._mental_after()

    def _was_away(self) -> bool:
        """Whether this seat's last absence was long enough for an honest host to void it."""
        if not self._ever_live:
            return True  # this process started after the deal: its person was not here
        return self.away_for >= max(MIN_AWAY_SECONDS, self.away_seconds or 0.0)

    # -- every message this seat signs comes back forwarded ---------------------------

    def _await_forward(self, seq: int, body: bytes) -> None:
        """Keep a signed message until it is forwarded; check on it after FORWARD_SECONDS."""
        self._unforwarded[seq] = (body, False)
        self._forward_check_later(seq)

    def _forward_check_later(self, seq: int) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # driven without an event loop (a unit test): nothing waits on the wire
        loop.call_later(FORWARD_SECONDS, self._forward_due, seq, self.chain_no)

    def _forward_due(self, seq: int, chain: int) -> None:
        """Send an unforwarded message again, once; a second time, blame the host."""
        pending = self._unforwarded.get(seq)
        if (pending is None or chain != self.chain_no or self.closed or self.result is not None
                or self.phase != "live"):
            return  # forwarded, another round, or reconnecting (then it is sent again)
        body, resent = pending
        if not resent:
            self._unforwarded[seq] = (body, True)
            asyncio.ensure_future(self._send(body))
            self._forward_check_later(seq)
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
                "move": "move"}.get(str(kind), "message")

    def _resend_unforwarded(self) -> None:
        """After a (re)connection: send again what the host has not forwarded, and wait anew."""
        for seq, (body, _) in sorted(self._unforwarded.items()):
            self._out.append(body)
            self._unforwarded[seq] = (body, False)
            self._forward_check_later(seq)

    def _mental_after(self) -> None:
        """Sign what this seat owes, and show what the round has become."""
        play = self.mental
        assert play is not None
        for msg in play.drain():
            body = dict(msg)
            kind = body.pop("t")
            if kind == "move":
                body["open"] = []
            # Several messages may leave before the first comes back forwarded: each follows
            # the last one signed, not the last one heard.
            head = self._heads["move"]
            message = head.sign(self.identity.key, pack(kind, **body))
            head.advance(message)
            signed = pack("s", c=self.chain_no, m=message.to_wire())
            self._out.append(signed)
            self._await_forward(message.seq, signed)
        state = play.state
        if state is None:
            return
        if self.view is None:
            self.view = state
            self.turn_since = time.monotonic()
            if not self._started_match:
                self._started_match = True
                self.emit(MatchStarted(self.game, self.seats, self.my_seat, self.target,
                                       tuple(state.scores)))
            self.emit(RoundStarted(self.round_number, state.copy(), tuple(state.scores)))
        while self._shown < len(state.history):
            effect = state.history[self._shown]
            self._shown += 1
            self.moves_seen += 1
            self.turn_since = time.monotonic()
            seat = effect.seat
            name = self.seats[seat].name if seat < len(self.seats) else f"seat {seat}"
            self.emit(MoveMade(seat, effect.move, state.describe(effect).replace(
                f"seat {seat}", name, 1), state.copy()))

    def _mental_submit(self, move: Any) -> None:
        play = self.mental
        assert play is not None
        try:
            play.play(move)
        except FairnessError as exc:
            self.emit(Notice(f"could not play {move}: {exc.reason}", "error"))
            return
        self._mental_after()
