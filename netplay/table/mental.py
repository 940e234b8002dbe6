"""The host's side of mental-poker dealing (FAIRNESS.md A8): it carries, never sees.

With `HostConfig.mental`, a round starts with a `deal` that names each seat's party and no
card; every party's `MentalPlay` messages then travel as signed payloads: a seat's in its own
chain, forwarded verbatim (`fwd`), the host's key for its bots (party 255) in the host's chain.
The host checks each with its own `MentalPlay` (party 255, or a keyless watcher when no bot
sits) before it forwards it, so its engine follows the round on what it may see, and plays its
bots from there. It never holds a person's key.
"""

from __future__ import annotations

from typing import Any

from netplay.fair import FairnessError, SignedMessage
from netplay.fair.context import BOT_PARTY
from netplay.fair.mental_play import MentalPlay
from netplay.fair.mental_round import WATCHER
from netplay.messages import MpKey, MpShares, MpShuffle, Propose, ProtocolError, as_map
from netplay.protocol import wire_numbers
from netplay.table.state import TableState

MENTAL_KINDS = (MpKey, MpShuffle, MpShares, Propose)  # a seat's signed payloads in such a round


class HostMental(TableState):
    """The `Host` methods that carry a round dealt by mental poker."""

    def _seat_parties(self) -> tuple[int, ...]:
        return tuple(BOT_PARTY if seat.bot is not None else i for i, seat in enumerate(self.seats))

    async def _mental_deal(self, number: int) -> None:
        """Start round `number`: name the parties, then let the chain of shuffles run."""
        match = self.match
        assert match is not None  # a round is dealt only once the match has started
        parties = self._seat_parties()
        party = BOT_PARTY if BOT_PARTY in parties else WATCHER
        signs = tuple(match.signs) if self.config.game == "zodiak" else ()
        self.mental = MentalPlay(self.config.game, self.table, number, party, parties, signs,
                                 match.dealer, tuple(match.scores), house=self.config.house)
        self.state = None
        self.round_scored = False
        await self._broadcast("deal", round=number, game=self.config.game,
                              dealer=match.dealer, players=self.config.players,
                              scores=wire_numbers(match.scores), signs=list(signs) or None,
                              parties=list(parties), cards=None)
        await self._mental_flush()
        self.on_event(f"round {number} dealing by mental poker")

    async def _mental_flush(self) -> None:
        """Sign and send what the host's key for its bots owes the table; follow its state."""
        play = self.mental
        if play is None:
            return
        for msg in play.drain():
            body = dict(msg)
            await self._broadcast(body.pop("t"), **body)
        self.state = play.state
        if play.settled() and not self.round_scored:
            await self._end_round()
        self._wake.set()

    async def _on_mental_signed(self, index: int, message: SignedMessage,
                                body: MpKey | MpShuffle | MpShares | Propose) -> None:
        """Check a seat's mental-poker message with the host's own view, then forward it."""
        play = self.mental
        if play is None or body.round != self.round_number:
            raise ProtocolError("stale", "no round dealt by mental poker is in play")
        async with self._send_lock:
            try:
                play.receive(index, as_map(body))
            except FairnessError as exc:
                raise ProtocolError("bad_frame", exc.reason) from None
            self._seat_head(index, "move").advance(message)
            await self._broadcast_locked("fwd", seat=index, m=message.to_wire())
        self.moves_made += isinstance(body, Propose)
        await self._mental_flush()

    async def _mental_bot_move(self, seat: int, move: Any) -> None:
        """Play `move` for a bot seat with the host's key for its bots."""
        play = self.mental
        if play is None or play.state is None or play.moves or play.state.turn != seat:
            return
        play.play(move)
        self.moves_made += 1
        await self._mental_flush()
