"""One party's side of a round of mental-poker dealing, as the messages of FAIRNESS.md A8.

`MentalRound` holds what one party (a person's seat, or the host's key for its bots) knows of a
round: every party's round key, each epoch's chain of shuffles (`MentalDeck`), who each dealt
position went to, the shares seen, and the cards this party may know. It makes this party's
messages (`key_message`, `shuffle_message`, `shares_message`) and checks everyone else's
(`receive`), blaming the sender of anything wrong. It does no I/O: the host and the seats carry
its messages, signed, in their chains. Which position goes to whom comes from the engine's deal
and draws (`assign`), the same on every side.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from netplay.fair.commit import (
    LOCAL,
    MAX_DECK,
    TABLE,
    FairnessError,
    require_bytes,
    require_uint,
)
from netplay.fair.context import MAX_PARTY, ProofContext
from netplay.fair.deck import MentalDeck
from netplay.fair.group import Point
from netplay.fair.keys import JointKey, KeyAnnouncement, RoundKey
from netplay.fair.shares import SHARE_SIZE, make_share

Owner = int | str
"""A party number, or TABLE for a card dealt face up."""
MAX_POSITIONS = 64  # more than any deck: a bound on what one message may name


@dataclass
class MentalRound:
    """One party's view of a round's keys, shuffles, dealt positions and opened cards."""

    table: str
    round_no: int
    party: int
    parties: tuple[int, ...]
    key: RoundKey = field(default_factory=RoundKey.generate)
    announced: dict[int, KeyAnnouncement] = field(default_factory=dict)
    joint: JointKey | None = None
    decks: list[MentalDeck] = field(default_factory=list)
    owners: list[list[Owner]] = field(default_factory=list)  # per epoch, per dealt position
    shares: dict[tuple[int, int], dict[int, Point]] = field(default_factory=dict)
    known: dict[tuple[int, int], str] = field(default_factory=dict)  # cards this party has seen
    public: set[tuple[int, int]] = field(default_factory=set)  # positions opened to everyone

    def __post_init__(self) -> None:
        if self.party not in self.parties or len(set(self.parties)) != len(self.parties):
            raise FairnessError(LOCAL, "a round needs distinct parties, this one among them")
        self.parties = tuple(sorted(self.parties))

    # -- keys --------------------------------------------------------------------------

    def context(self, epoch: int) -> ProofContext:
        """The proof context of one epoch of this round."""
        return ProofContext(self.table, self.round_no, epoch)

    def key_message(self) -> dict[str, Any]:
        """This party's round key with its proof of knowledge (mp_key)."""
        announcement = self.key.announce(self.context(0), self.party)
        self.announced[self.party] = announcement
        self._maybe_join()
        return {"t": "mp_key", "round": self.round_no, "epoch": 0, "key": announcement.encode()}

    def _on_key(self, sender: int, msg: dict[str, Any]) -> None:
        if sender in self.announced:
            raise FairnessError(sender, "it announced a second round key")
        if msg.get("epoch") != 0:
            raise FairnessError(sender, "a round key must be for the deal, epoch 0")
        announcement = KeyAnnouncement.decode(msg.get("key"), sender)
        announcement.verify(self.context(0), sender)
        self.announced[sender] = announcement
        self._maybe_join()

    def _maybe_join(self) -> None:
        if self.joint is None and set(self.announced) == set(self.parties):
            self.joint = JointKey.from_announcements(self.context(0), self.announced)

    # -- shuffles ----------------------------------------------------------------------

    def start_epoch(self, cards: Sequence[str]) -> int:
        """Begin the next epoch over `cards` (the deal's deck, or a reshuffled pile)."""
        if self.joint is None:
            raise FairnessError(LOCAL, "no epoch starts before every party's key is in")
        if self.decks and not self.decks[-1].ready:
            raise FairnessError(LOCAL, "an epoch starts only after the last one is shuffled")
        # Each epoch has its own proof context; the keys stay those of the round.
        self.decks.append(MentalDeck(self.context(len(self.decks)), self.joint, cards,
                                     list(self.parties)))
        self.owners.append([])
        return len(self.decks) - 1

    def shuffle_message(self) -> dict[str, Any] | None:
        """This party's shuffle of the current epoch when it is its turn (mp_shuffle)."""
        if not self.decks or self.decks[-1].next_shuffler != self.party:
            return None
        deck, epoch = self.decks[-1], len(self.decks) - 1
        step = deck.steps_done
        return {"t": "mp_shuffle", "round": self.round_no, "epoch": epoch, "step": step,
                "deck": deck.shuffle(self.party)}

    def _on_shuffle(self, sender: int, msg: dict[str, Any]) -> None:
        epoch = require_uint(msg.get("epoch"), "epoch", sender)
        if epoch != len(self.decks) - 1:
            raise FairnessError(sender, f"it sent a shuffle for epoch {epoch}, not the current")
        deck = self.decks[epoch]
        if msg.get("step") != deck.steps_done:
            raise FairnessError(sender, "its shuffle names another step of the chain")
        deck.accept_shuffle(sender, msg.get("deck"))

    # -- dealing and opening -----------------------------------------------------------

    def assign(self, epoch: int, owners: Sequence[Owner]) -> list[int]:
        """Deal the next positions of `epoch` to `owners` in order; return those positions."""
        if not 0 <= epoch < len(self.decks) or not self.decks[epoch].ready:
            raise FairnessError(LOCAL, f"epoch {epoch} is not shuffled")
        dealt = self.owners[epoch]
        if len(dealt) + len(owners) > len(self.decks[epoch].cards):
            raise FairnessError(LOCAL, f"epoch {epoch} has no more cards to deal")
        for owner in owners:
            if owner != TABLE and owner not in self.parties:
                raise FairnessError(LOCAL, f"{owner!r} is no party of this round")
        first = len(dealt)
        dealt.extend(owners)
        return list(range(first, len(dealt)))

    def shares_message(self, epoch: int, positions: Sequence[int]) -> dict[str, Any]:
        """This party's shares of `positions` (mp_shares): the others' cards, or its own to
        play them face up."""
        deck = self.decks[epoch]
        made = [make_share(self.key, deck.ciphertext(q), deck.context, self.party, q)
                for q in positions]
        for q, share in zip(positions, made, strict=True):
            self._note_share(epoch, q, self.party, share.value)
        blob = b"".join(share.encode() for share in made)
        return {"t": "mp_shares", "round": self.round_no, "epoch": epoch,
                "positions": list(positions), "shares": blob}

    def _on_shares(self, sender: int, msg: dict[str, Any]) -> None:
        epoch = require_uint(msg.get("epoch"), "epoch", sender)
        positions = msg.get("positions")
        if (epoch >= len(self.decks) or not isinstance(positions, list)
                or not 0 < len(positions) <= MAX_POSITIONS):
            raise FairnessError(sender, "its shares name no dealt positions of a known epoch")
        blob = require_bytes(msg.get("shares"), "shares", sender, SHARE_SIZE * len(positions))
        checked: list[tuple[int, Point]] = []
        for i, raw in enumerate(positions):
            q = require_uint(raw, "position", sender, MAX_DECK)
            if q >= len(self.owners[epoch]):
                raise FairnessError(sender, f"it sent a share for position {q}, not dealt yet")
            if sender in self.shares.get((epoch, q), {}) or any(q == p for p, _ in checked):
                raise FairnessError(sender, f"it sent its share for position {q} twice")
            wire = blob[i * SHARE_SIZE:(i + 1) * SHARE_SIZE]
            checked.append((q, self.decks[epoch].accept_share(sender, q, wire)))
        for q, value in checked:  # all or nothing: a bad share leaves no half-applied message
            self._note_share(epoch, q, sender, value)

    def _note_share(self, epoch: int, position: int, party: int, value: Point) -> None:
        seen = self.shares.setdefault((epoch, position), {})
        seen[party] = value
        where = (epoch, position)
        owner = self.owners[epoch][position]
        if len(seen) == len(self.parties):
            self.known[where] = self.decks[epoch].open(position, seen)
            self.public.add(where)
        elif owner == self.party and set(seen) | {self.party} == set(self.parties):
            self.known[where] = self.decks[epoch].open(position, seen, own=(self.party, self.key))

    # -- everything a peer sends -----------------------------------------------------

    def receive(self, sender: object, msg: object) -> None:
        """Check and apply one message from `sender`; FairnessError blames whoever was wrong."""
        if not isinstance(sender, int) or not 0 <= sender <= MAX_PARTY:
            raise FairnessError(LOCAL, "a message from no party")
        if sender not in self.parties or sender == self.party:
            raise FairnessError(sender, "it is not another party of this round")
        if not isinstance(msg, dict) or msg.get("round") != self.round_no:
            raise FairnessError(sender, "its message is not for this round")
        kind = msg.get("t")
        handlers = {"mp_key": self._on_key, "mp_shuffle": self._on_shuffle,
                    "mp_shares": self._on_shares}
        handler = handlers.get(kind) if isinstance(kind, str) else None
        if handler is None:
            raise FairnessError(sender, "it sent a message that is no part of mental poker")
        if kind != "mp_key" and self.joint is None:
            raise FairnessError(sender, "it sent a shuffle or a share before every round key")
        handler(sender, msg)

    def my_cards(self) -> dict[tuple[int, int], str]:
        """The cards dealt to this party that it has opened, by (epoch, position)."""
        return {where: card for where, card in self.known.items()
                if self.owners[where[0]][where[1]] == self.party}
