"""A seat's side of the first round's deck, shuffled in the lobby (FAIRNESS.md A8, "Lobby deck").

The host names the parties and a lobby epoch (`mp_prepare`); this seat then announces its key
for round 1 of that epoch and shuffles in its turn, each signed in a chain of its own,
`seat/deck<epoch>`, which the host forwards in a `fwd` naming the epoch. Chain 0 learned each
seat's signing key from the lobby as people sat down; such a chain is admitted when the host
names it, with the key the lobby showed for that seat, and never keyed again. The first deal
may then name this deck (`MentalPlay(prepared=...)`, netplay/seat/mental.py).

A process started again in the lobby has lost its key of the deck: its catch-up shows a
message of the deck it did not sign, and it sends nothing more of that deck. It came back on a
new connection, so the host begins a new deck for it anyway.
"""

from __future__ import annotations

from netplay.fair import DEALER, FairnessError, PublicIdentity, SignedMessage
from netplay.fair.context import BOT_PARTY
from netplay.fair.mental_lobby import FIRST_ROUND, MAX_LOBBY_DECKS, LobbyDeck
from netplay.fair.mental_round import WATCHER
from netplay.messages import (
    MENTAL_PAYLOADS,
    MpChecked,
    MpKey,
    MpPrepare,
    MpShuffle,
    Signed,
    as_map,
)
from netplay.protocol import ChainHead, chain_room, pack
from netplay.seat.mental import SeatMental


def deck_sender(seat: int, epoch: int) -> str:
    """The name of a seat's chain of messages for the lobby deck of `epoch`."""
    return f"{seat}/deck{epoch}"


class SeatFirstDeck(SeatMental):
    """The `RemoteSession` methods that shuffle the first round's deck in the lobby."""

    def first_deck_line(self) -> str:
        """Where the lobby's shuffle of round 1's deck stands, in one line for the lobby screen
        ("" when the table's dealer is trusted or the match has begun)."""
        if self.dealing != "mental" or self._started_match or self.chain_no != 0:
            return ""
        deck = self.lobby_deck
        if deck is None:
            return ""  # none until every seat is taken and every person connected
        if deck.failed or self._lobby_lost:
            return "Round 1's deck: shuffled again when the round starts."
        if deck.prepared_digest() is not None:
            return "Round 1's deck: shuffled and checked, ready to deal."
        waiting = deck.waiting_for()
        if not waiting:
            return "Round 1's deck: shuffled, checking its proofs."
        names = ", ".join(self._party_name(p) for p in sorted(waiting))
        return f"Round 1's deck: being shuffled, waiting for {names}."

    def _party_name(self, party: int) -> str:
        if party == BOT_PARTY:
            return "the host's bots"
        if party == self.my_seat:
            return "you"
        name = self.seats[party].name if 0 <= party < len(self.seats) else ""
        return f"seat {party}" + (f" ({name})" if name else "")

    def _on_mp_prepare(self, msg: MpPrepare) -> None:
        parties, epoch, players = msg.parties, msg.epoch, len(self.ids)
        if (self.chain_no != 0 or msg.round != FIRST_ROUND or self.mental is not None
                or self.dealing != "mental"):
            raise FairnessError(DEALER, "named a lobby deck outside the lobby")
        if (len(parties) != players
                or any(p not in (i, BOT_PARTY) for i, p in enumerate(parties))):
            raise FairnessError(DEALER, "its lobby deck names parties that are not the table's"
                                " seats")
        if epoch >= MAX_LOBBY_DECKS:
            raise FairnessError(DEALER, f"named lobby deck {epoch}: a lobby has at most"
                                f" {MAX_LOBBY_DECKS}")
        keys: dict[int, PublicIdentity] = {}
        for seat, party in enumerate(parties):
            public = self.ids[seat]
            if party == BOT_PARTY:
                continue
            if public is None:
                raise FairnessError(DEALER, f"named seat {seat} a party of the lobby's deck"
                                    " before any lobby showed its key")
            keys[seat] = public
        me = self.my_seat
        mine = keys.get(me) if me is not None else None
        # Caught up, an earlier deck may be of whoever sat here before: not this person's.
        ours = mine is None or mine.to_bytes() == self.identity.key.public.to_bytes()
        if not ours and self.phase == "live":
            raise FairnessError(DEALER, "named this seat a party of the lobby's deck with a key"
                                " that is not this seat's")
        assert self.chain is not None
        for seat, public in keys.items():  # also when chain 0 is sent again from its start
            self.chain.admit(deck_sender(seat, epoch), public)
        if not self._mental_fresh():
            return
        last = self.lobby_deck.epoch if self.lobby_deck is not None else -1
        if epoch <= last:
            raise FairnessError(DEALER, f"named lobby deck {epoch} after lobby deck {last}")
        # Heard live, the deck is this process's own: an honest host names no other for the
        # first deal while this person sits here (FAIRNESS.md A8, "Lobby deck").
        self._lobby_live = self.phase == "live"
        # What this seat sent of an earlier lobby deck is over: the host refuses it as stale.
        self._unforwarded, self._lobby_lost = {}, False
        party = self._party(parties) if ours else WATCHER
        if party != WATCHER:
            self._heads[f"deck{epoch}"] = ChainHead.start(chain_room(self.table, 0),
                                                          deck_sender(party, epoch))
        self.lobby_deck = LobbyDeck(self.game, self.table, party, tuple(parties), epoch)
        self._lobby_after()

    def _on_lobby_fwd(self, seat: int, epoch: int, wire: Signed) -> None:
        """A seat's key or shuffle of the lobby's deck, forwarded by the host."""
        deck = self.lobby_deck
        if self.chain_no != 0 or deck is None or epoch != deck.epoch:
            raise FairnessError(DEALER, f"forwarded a message of lobby deck {epoch}, which it"
                                " did not name last")
        body = self._seat_payload(deck_sender(seat, epoch), wire, MENTAL_PAYLOADS)
        fresh = self._mental_fresh()
        if seat == self.my_seat:
            message = SignedMessage.from_wire(wire)
            head = self._heads.get(f"deck{epoch}")
            self._unforwarded = {n: v for n, v in self._unforwarded.items() if n > message.seq}
            if head is not None and head.follows(message):
                head.advance(message)  # signed by this seat's earlier process: sign on after it
            if fresh and message.digest not in self._signed_here:
                self._lobby_lost = True  # that process's key of the deck is gone with it
                if self._lobby_live:  # no earlier process of this seat could have signed it
                    raise FairnessError(DEALER, f"forwarded a message of this seat's lobby"
                                        f" deck {epoch} that this program did not sign")
            return
        if not fresh:
            return
        if isinstance(body, MpChecked):
            return  # another party checked the chain: it tells the host, which waits for it
        if not isinstance(body, MpKey | MpShuffle):
            raise FairnessError(DEALER, "forwarded in the lobby a message that is no key,"
                                " shuffle or check of its deck")
        self._lobby_from(seat, as_map(body))

    def _lobby_from(self, sender: int, body: dict[str, object]) -> None:
        deck = self.lobby_deck
        if deck is None or self._lobby_lost:
            return
        try:
            deck.receive(sender, body)
        except FairnessError as exc:
            self._blame(exc)
        self._lobby_after()

    def _lobby_after(self) -> None:
        """Sign what this seat owes the lobby's deck."""
        deck = self.lobby_deck
        if deck is None or self.phase != "live" or self._lobby_lost:
            return
        for msg in deck.drain():
            body = dict(msg)
            self._sign_mental(pack(body.pop("t"), **body), f"deck{deck.epoch}")

    def _lobby_check(self) -> bool:
        """Check the lobby deck's complete chain once what this seat owed is sent, and say so
        (mp_checked); whether there was anything to do. (A chain this process already checked
        for another view, as the host's own seat's, is ready without a check.)"""
        deck = self.lobby_deck
        if self.mental is not None or deck is None or self._lobby_lost:
            return False
        if deck.checks_due():
            try:
                deck.check()
            except FairnessError as exc:
                self._blame(exc)
                return True
        digest = deck.prepared_digest()
        if (deck.party == WATCHER or digest is None or deck.party in deck.checked_by
                or self.phase != "live"):
            return False
        deck.checked_by.add(deck.party)
        self._sign_mental(pack("mp_checked", round=FIRST_ROUND, epoch=deck.epoch,
                               digest=digest), f"deck{deck.epoch}")
        return True
