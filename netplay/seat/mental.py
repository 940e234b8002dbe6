"""A seat's side of mental-poker dealing (FAIRNESS.md A8): its key, shuffles and shares.

A `deal` that names each seat's party and no card starts a `MentalPlay` for this seat (or a
keyless watcher's view). Every mental-poker message of the round then reaches it in the host's
chain: the host's key for its bots speaks in the host's own messages, every other seat's inside
a `fwd`, signed by that seat. What this seat owes (its key, its shuffle in turn, its shares, its
moves) is signed into its own chain and sent. The engine's view is `MentalPlay.state`; each
move applied is shown as it would be with the trusted dealer.
"""

from __future__ import annotations

import time
from typing import Any

from netplay.fair import FairnessError
from netplay.fair.context import BOT_PARTY
from netplay.fair.mental_play import MentalPlay
from netplay.fair.mental_round import WATCHER
from netplay.messages import ProtocolError
from netplay.protocol import field as get_field
from netplay.protocol import inner, pack, read_numbers
from netplay.seat.state import SeatState
from netplay.session.events import MatchStarted, MoveMade, Notice, RoundStarted

MENTAL_KINDS = frozenset({"mp_key", "mp_shuffle", "mp_shares", "move"})


class SeatMental(SeatState):
    """The `RemoteSession` methods that take part in a round dealt by mental poker."""

    def _on_mental_deal(self, msg: dict[str, Any]) -> None:
        number = get_field(msg, "round", int)
        players, dealer = get_field(msg, "players", int), get_field(msg, "dealer", int)
        parties = get_field(msg, "parties", list)
        if (players != len(self.ids) or len(parties) != players
                or any(p not in (i, BOT_PARTY) for i, p in enumerate(parties))):
            raise FairnessError("dealer", "its deal names parties that are not the table's seats")
        scores = read_numbers(msg.get("scores"), "'scores' of a deal")
        signs = tuple(get_field(msg, "signs", list, optional=True) or ())
        me = self.my_seat
        party = me if me is not None and parties[me] == me else WATCHER
        self.mental = MentalPlay(self.game, self.table, number, party, tuple(parties), signs,
                                 dealer, tuple(scores))
        self.view, self.round_number, self._shown = None, number, 0
        self._mental_after()

    def _on_mental_host(self, msg: dict[str, Any]) -> None:
        """A message of the host's key for its bots, signed in the host's own chain."""
        self._mental_from(BOT_PARTY, msg)

    def _on_mental_fwd(self, seat: int, wire: Any) -> None:
        """A seat's own signed mental-poker message, forwarded by the host."""
        payload = self._append_inner(seat, wire)
        if seat == self.my_seat:
            return  # this seat's own: applied when it was made, its head advanced when signed
        self._mental_from(seat, inner(payload))

    def _mental_from(self, sender: int, body: dict[str, Any]) -> None:
        play = self.mental
        if play is None:
            raise ProtocolError("bad_frame", "a mental-poker message before any deal")
        try:
            play.receive(sender, body)
        except FairnessError as exc:
            self._fault(exc)
        self._mental_after()

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
            self._out.append(pack("s", c=self.chain_no, m=message.to_wire()))
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
