"""The first round's deck, shuffled in the lobby before the match starts (FAIRNESS.md A8).

Every later round's deck is shuffled during the round before it (`MentalPlay.next`); the first
has no round before it, so the lobby does that work instead, in chain 0: once every seat is
taken the host names the parties and a lobby epoch (`mp_prepare`), each party announces its
key for round 1 of that epoch and shuffles in turn, and every client checks the chain. The
deal of round 1 then names that deck (`prepared`, as any prepared deck) and waits only for
shares. A change of parties starts again with the next lobby epoch. It does no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.games import game_named
from netplay.fair.commit import FairnessError
from netplay.fair.context import BOT_PARTY
from netplay.fair.mental_play import NEXT_KINDS, shuffle_in_turn, shuffled_digest
from netplay.fair.mental_round import WATCHER, MentalRound

FIRST_ROUND = 1
MAX_LOBBY_DECKS = 8  # lobby epochs 0..7: a client refuses more (each grows chain 0 ~10 KB a party)


@dataclass
class LobbyDeck:
    """One party's view of the first round's deck while the lobby shuffles it."""

    game: str
    table: str
    party: int  # or WATCHER: it checks the chain and holds no key
    seat_parties: tuple[int, ...]  # the party that would hold each seat if the match began now
    epoch: int  # the lobby epoch: the first epoch of round 1 when the deal names this deck
    defer_checks: bool = True
    round_no: int = field(default=0, init=False)  # the round "before" the first
    parties: tuple[int, ...] = field(init=False)
    next: MentalRound = field(init=False)
    outbox: list[dict[str, Any]] = field(default_factory=list)
    checked_by: set[int] = field(default_factory=set)  # parties that said they checked it

    def __post_init__(self) -> None:
        self.seat_parties = tuple(self.seat_parties)
        self.parties = tuple(sorted(set(self.seat_parties)))
        self.next = MentalRound(self.table, FIRST_ROUND, self.party, self.parties, self.epoch,
                                defer_checks=self.defer_checks)
        if self.party != WATCHER:
            self.outbox.append(self.next.key_message())
        self._progress()

    def receive(self, sender: int, msg: dict[str, Any]) -> None:
        """Check and apply `sender`'s key or shuffle of this deck, or blame it."""
        if (msg.get("t") not in NEXT_KINDS or msg.get("round") != FIRST_ROUND
                or msg.get("epoch") != self.epoch):
            raise FairnessError(sender, "in the lobby a party sends only its key and shuffle of"
                                " the first round's deck, of the lobby's epoch")
        self.next.receive(sender, msg)
        self._progress()

    def _progress(self) -> None:
        shuffle_in_turn(self.next, game_named(self.game), self.outbox)

    def checks_due(self) -> bool:
        """Whether the chain is complete and its proofs wait for `check`."""
        return self.next.checks_due()

    def check(self) -> None:
        """Check every proof of the chain; FairnessError blames the first that fails."""
        self.next.check_shuffles()

    @property
    def failed(self) -> bool:
        """Whether a proof of the chain failed: this deck never deals."""
        deck = self.next.decks.get(self.epoch)
        return deck is not None and deck.refused is not None

    def waiting_for(self) -> set[int]:
        """The parties the deck waits for: a key, or the next shuffle."""
        nxt = self.next
        if nxt.joint is None:
            return set(nxt.parties) - set(nxt.announced)
        deck = nxt.decks[self.epoch]
        return {deck.next_shuffler} if deck.next_shuffler is not None else set()

    @property
    def people(self) -> set[int]:
        """The parties that are people (not the host's key for its bots)."""
        return set(self.parties) - {BOT_PARTY}

    def prepared_digest(self, checked: bool = True) -> bytes | None:
        """The digest a deal names this deck by, once it is shuffled (and, with `checked`,
        every proof holds); None before."""
        return shuffled_digest(self.next, checked)

    def drain(self) -> list[dict[str, Any]]:
        """The messages this party owes the others, oldest first; the outbox is emptied."""
        out, self.outbox = self.outbox, []
        return out
