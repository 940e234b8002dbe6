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
from netplay.fair.group import Point, Scalar, base_times
from netplay.fair.keys import JointKey, KeyAnnouncement, RoundKey
from netplay.fair.shares import SHARE_SIZE, DecryptionShare, make_share

Owner = int | str
"""A party number, or TABLE for a card dealt face up."""
MAX_POSITIONS = 64  # more than any deck: a bound on what one message may name
WATCHER = -1
"""The party number of a view that holds no key (a host without bots, a watcher): it checks
every message and opens only the cards opened to everyone."""


@dataclass
class MentalRound:
    """One party's view of a round's keys, shuffles, dealt positions and opened cards."""

    table: str
    round_no: int
    party: int
    parties: tuple[int, ...]
    first_epoch: int = 0  # a deal made again after a void starts past the voided epochs
    # Shuffle proofs are checked at the end of each chain, in `check_shuffles` (FAIRNESS.md A8,
    # "Shuffle"), rather than each as it arrives.
    defer_checks: bool = False
    key: RoundKey = field(default_factory=RoundKey.generate)
    announced: dict[int, KeyAnnouncement] = field(default_factory=dict)
    joint: JointKey | None = None
    decks: dict[int, MentalDeck] = field(default_factory=dict)  # by epoch
    owners: dict[int, list[Owner]] = field(default_factory=dict)  # per epoch, per dealt position
    adopted: dict[int, RoundKey] = field(default_factory=dict)  # keys handed over to this party
    shares: dict[tuple[int, int], dict[int, Point]] = field(default_factory=dict)  # checked
    unchecked: dict[tuple[int, int], dict[int, DecryptionShare]] = field(default_factory=dict)
    known: dict[tuple[int, int], str] = field(default_factory=dict)  # cards this party has seen
    public: set[tuple[int, int]] = field(default_factory=set)  # positions opened to everyone

    def __post_init__(self) -> None:
        if ((self.party not in self.parties and self.party != WATCHER)
                or len(set(self.parties)) != len(self.parties)):
            raise FairnessError(LOCAL, "a round needs distinct parties, this one among them")
        self.parties = tuple(sorted(self.parties))

    # -- keys --------------------------------------------------------------------------

    def context(self, epoch: int) -> ProofContext:
        """The proof context of one epoch of this round."""
        return ProofContext(self.table, self.round_no, epoch)

    def key_message(self) -> dict[str, Any]:
        """This party's round key with its proof of knowledge (mp_key)."""
        if self.party == WATCHER:
            raise FairnessError(LOCAL, "a watcher holds no round key")
        announcement = self.key.announce(self.context(self.first_epoch), self.party)
        self.announced[self.party] = announcement
        self._maybe_join()
        return {"t": "mp_key", "round": self.round_no, "epoch": self.first_epoch,
                "key": announcement.encode()}

    def _on_key(self, sender: int, msg: dict[str, Any]) -> None:
        if sender in self.announced:
            raise FairnessError(sender, "it announced a second round key")
        if msg.get("epoch") != self.first_epoch:
            raise FairnessError(sender, "its round key is not for this deal's first epoch")
        announcement = KeyAnnouncement.decode(msg.get("key"), sender)
        announcement.verify(self.context(self.first_epoch), sender)
        self.announced[sender] = announcement
        self._maybe_join()

    def _maybe_join(self) -> None:
        if self.joint is None and set(self.announced) == set(self.parties):
            self.joint = JointKey.from_announcements(self.context(self.first_epoch),
                                                     self.announced)

    # -- shuffles ----------------------------------------------------------------------

    def start_epoch(self, cards: Sequence[str]) -> int:
        """Begin the next epoch over `cards` (the deal's deck, or a reshuffled pile)."""
        if self.joint is None:
            raise FairnessError(LOCAL, "no epoch starts before every party's key is in")
        if self.decks and not self.decks[self.epoch].ready:
            raise FairnessError(LOCAL, "an epoch starts only after the last one is shuffled"
                                " and checked")
        # Each epoch has its own proof context; the keys stay those of the deal.
        epoch = self.epoch + 1 if self.decks else self.first_epoch
        self.decks[epoch] = MentalDeck(self.context(epoch), self.joint, cards, list(self.parties))
        self.owners[epoch] = []
        return epoch

    @property
    def epoch(self) -> int:
        """The current (latest) epoch."""
        return max(self.decks, default=self.first_epoch)

    def shuffle_message(self, party: int | None = None) -> dict[str, Any] | None:
        """The shuffle of the current epoch (mp_shuffle) when it is this party's turn, or that
        of a `party` whose key was handed over to it."""
        party = self.party if party is None else party
        if not self.decks or self.decks[self.epoch].next_shuffler != party:
            return None
        if party != self.party and party not in self.adopted:
            raise FairnessError(LOCAL, f"party {party}'s key was not handed over")
        deck, epoch = self.decks[self.epoch], self.epoch
        step = deck.steps_done
        return {"t": "mp_shuffle", "round": self.round_no, "epoch": epoch, "step": step,
                "deck": deck.shuffle(party)}

    def _on_shuffle(self, sender: int, msg: dict[str, Any]) -> None:
        epoch = require_uint(msg.get("epoch"), "epoch", sender)
        if not self.decks or epoch != self.epoch:
            raise FairnessError(sender, f"it sent a shuffle for epoch {epoch}, not the current")
        deck = self.decks[epoch]
        if msg.get("step") != deck.steps_done:
            raise FairnessError(sender, "its shuffle names another step of the chain")
        deck.accept_shuffle(sender, msg.get("deck"), check=not self.defer_checks)

    def checks_due(self) -> bool:
        """Whether an epoch's chain of shuffles is complete and its proofs wait to be checked."""
        return any(deck.shuffled and deck.unchecked and deck.refused is None
                   for deck in self.decks.values())

    def check_shuffles(self) -> None:
        """Check the proofs of every complete chain of shuffles (FairnessError blames the first
        shuffler whose proof fails; that epoch's deck then never opens a card)."""
        for deck in self.decks.values():
            if deck.shuffled and (deck.unchecked or deck.refused is not None):
                deck.check()

    # -- dealing and opening -----------------------------------------------------------

    def assign(self, epoch: int, owners: Sequence[Owner]) -> list[int]:
        """Deal the next positions of `epoch` to `owners` in order; return those positions."""
        if epoch not in self.decks or not self.decks[epoch].ready:
            raise FairnessError(LOCAL, f"epoch {epoch} is not shuffled")
        dealt = self.owners[epoch]
        if len(dealt) + len(owners) > len(self.decks[epoch].cards):
            raise FairnessError(LOCAL, f"epoch {epoch} has no more cards to deal")
        for owner in owners:
            if owner != TABLE and owner not in self.parties:
                raise FairnessError(LOCAL, f"{owner!r} is no party of this round")
        first = len(dealt)
        dealt.extend(owners)
        for position in range(first, len(dealt)):
            self._open_alone(epoch, position)
        return list(range(first, len(dealt)))

    def _open_alone(self, epoch: int, position: int) -> None:
        """Open a card dealt to the only party of the round, when this party holds its key:
        no other party's share is to come for it (a deal left with the host's bots alone, all
        the people dealt out), so it opens with that key alone."""
        owner = self.owners[epoch][position]
        if not isinstance(owner, int) or set(self.parties) != {owner}:
            return
        key = self.key if owner == self.party else self.adopted.get(owner)
        if key is not None:
            self.known[(epoch, position)] = self.decks[epoch].open(position, {}, own=(owner, key))

    def shares_message(
        self, epoch: int, positions: Sequence[int], party: int | None = None
    ) -> dict[str, Any]:
        """This party's shares of `positions` (mp_shares): the others' cards, or its own to
        play them face up; or those of a `party` whose key was handed over to it."""
        party = self.party if party is None else party
        key = self.key if party == self.party else self.adopted.get(party)
        if key is None:
            raise FairnessError(LOCAL, f"party {party}'s key was not handed over")
        deck = self.decks[epoch]
        made = [make_share(key, deck.ciphertext(q), deck.context, party, q) for q in positions]
        for q, share in zip(positions, made, strict=True):
            self._note_share(epoch, q, party, share, checked=True)
        blob = b"".join(share.encode() for share in made)
        return {"t": "mp_shares", "round": self.round_no, "epoch": epoch,
                "positions": list(positions), "shares": blob}

    def _on_shares(self, sender: int, msg: dict[str, Any]) -> None:
        epoch = require_uint(msg.get("epoch"), "epoch", sender)
        positions = msg.get("positions")
        if (epoch not in self.decks or not isinstance(positions, list)
                or not 0 < len(positions) <= MAX_POSITIONS):
            raise FairnessError(sender, "its shares name no dealt positions of a known epoch")
        blob = require_bytes(msg.get("shares"), "shares", sender, SHARE_SIZE * len(positions))
        accepted: list[tuple[int, DecryptionShare, bool]] = []
        for i, raw in enumerate(positions):
            q = require_uint(raw, "position", sender, MAX_DECK)
            if q >= len(self.owners[epoch]):
                raise FairnessError(sender, f"it sent a share for position {q}, not dealt yet")
            if self._has_share(epoch, q, sender) or any(q == p for p, _, _ in accepted):
                raise FairnessError(sender, f"it sent its share for position {q} twice")
            share = DecryptionShare.decode(blob[i * SHARE_SIZE:(i + 1) * SHARE_SIZE], sender)
            # A share of another party's private card opens nothing here until that card is
            # played face up, so its proof is checked then; its owner checks it at once.
            owner = self.owners[epoch][q]
            needed = owner in (self.party, TABLE, sender) or owner in self.adopted
            if needed:
                self._verify(epoch, q, sender, share)
            accepted.append((q, share, needed))
        for q, share, checked in accepted:  # all or nothing: no half-applied message
            self._note_share(epoch, q, sender, share, checked)

    def _has_share(self, epoch: int, position: int, party: int) -> bool:
        where = (epoch, position)
        return party in self.shares.get(where, {}) or party in self.unchecked.get(where, {})

    def _verify(self, epoch: int, position: int, party: int, share: DecryptionShare) -> None:
        deck, joint = self.decks[epoch], self.joint
        assert joint is not None
        share.verify(joint.publics[party], deck.ciphertext(position), deck.context, party,
                     position)

    def _note_share(
        self, epoch: int, position: int, party: int, share: DecryptionShare, checked: bool
    ) -> None:
        where = (epoch, position)
        seen = self.shares.setdefault(where, {})
        if checked:
            seen[party] = share.value
        else:
            self.unchecked.setdefault(where, {})[party] = share
        waiting = self.unchecked.get(where, {})
        holders = set(seen) | set(waiting)
        if holders == set(self.parties):  # opened to everyone: every share is checked now
            for sender, pending in sorted(waiting.items()):
                del waiting[sender]
                self._verify(epoch, position, sender, pending)
                seen[sender] = pending.value
            self.known[where] = self.decks[epoch].open(position, seen)
            self.public.add(where)
        else:
            owner = self.owners[epoch][position]
            # arg-type: an owner that is TABLE (a str) has no adopted key, and `get` says None.
            key = self.key if owner == self.party else self.adopted.get(owner)  # type: ignore[arg-type]
            if key is not None and holders | {owner} == set(self.parties):
                assert isinstance(owner, int)
                self.known[where] = self.decks[epoch].open(position, seen, own=(owner, key))

    # -- a person who leaves in good order -------------------------------------------

    def handover_secret(self) -> bytes:
        """This party's round secret, for its holder to seal to the host before leaving."""
        return self.key.secret.data

    def adopt(self, party: int, secret: object) -> None:
        """Take over `party`'s round key (mp_handover): refuse a secret that is not its key."""
        public = self.announced.get(party)
        if public is None or party == self.party:
            raise FairnessError(party, "it handed over a key it never announced")
        key = RoundKey(Scalar.decode(secret, party, "round secret"), public.public)
        if base_times(key.secret) != key.public:
            raise FairnessError(party, "it handed over a secret that is not its round key")
        self.adopted[party] = key
        for (epoch, position), seen in list(self.shares.items()):  # cards it can open now
            where = (epoch, position)
            waiting = self.unchecked.get(where, {})
            if (self.owners[epoch][position] != party or where in self.known
                    or set(seen) | set(waiting) | {party} != set(self.parties)):
                continue
            for sender, pending in sorted(waiting.items()):  # needed now: checked now
                del waiting[sender]
                self._verify(epoch, position, sender, pending)
                seen[sender] = pending.value
            self.known[where] = self.decks[epoch].open(position, seen, own=(party, key))

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

    def my_cards(self, party: int | None = None) -> dict[tuple[int, int], str]:
        """The cards dealt to this party (or to `party`, handed over) that it has opened."""
        party = self.party if party is None else party
        return {where: card for where, card in self.known.items()
                if self.owners[where[0]][where[1]] == party}
