"""One shuffle epoch as every party sees it: the chain of proven shuffles, then card openings.

A `MentalDeck` starts from the epoch's cards openly encrypted under the joint key, accepts one
proven shuffle from each shuffler in the agreed order (a shuffle out of turn, twice, or with a
proof that fails is refused and blamed on its sender), and once every shuffler has shuffled,
opens deck positions with verified decryption shares. It holds no secret: a party passes its
own `RoundKey` to the calls that need it.

A process that holds two views of one table (`cardtui host` with its own seat: the host's view
and the seat's) would check each shuffle twice; `VERIFIED` remembers the shuffles this process
has checked, by a hash of everything the check depends on (context, party, step, joint key,
inputs and the exact bytes received), so the second view takes the outputs the first checked.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Mapping, Sequence

from netplay.fair.commit import LOCAL, FairnessError, encode_parts
from netplay.fair.context import ProofContext
from netplay.fair.elgamal import CardBook, Ciphertext, encode_ciphertexts, open_deck
from netplay.fair.group import Point
from netplay.fair.keys import JointKey, RoundKey
from netplay.fair.shares import DecryptionShare, make_share, open_card, own_share
from netplay.fair.shuffle import Shuffle, shuffle_deck, verify_shuffle

VERIFIED: OrderedDict[bytes, tuple[Ciphertext, ...]] = OrderedDict()
"""The outputs of the shuffles this process has checked, by `MentalDeck._statement` digest."""
VERIFIED_KEPT = 64


class MentalDeck:
    """The encrypted deck of one epoch, shuffled by every shuffler in turn, then opened."""

    def __init__(
        self,
        context: ProofContext,
        joint: JointKey,
        cards: Sequence[str],
        shufflers: Sequence[int],
    ) -> None:
        if not shufflers or len(set(shufflers)) != len(shufflers):
            raise FairnessError(LOCAL, "a deck needs one or more distinct shufflers")
        if any(party not in joint.publics for party in shufflers):
            raise FairnessError(LOCAL, "every shuffler needs a round key")
        self.context = context
        self.joint = joint
        self.cards = tuple(cards)
        self.book = CardBook(self.cards)
        self.shufflers = tuple(shufflers)
        self.ciphertexts: tuple[Ciphertext, ...] = open_deck(self.cards, joint.combined)
        self.steps_done = 0

    @property
    def next_shuffler(self) -> int | None:
        """The party whose shuffle comes next, or None once all have shuffled."""
        if self.steps_done == len(self.shufflers):
            return None
        return self.shufflers[self.steps_done]

    @property
    def ready(self) -> bool:
        """Whether every shuffler has shuffled, so cards may be opened."""
        return self.next_shuffler is None

    def shuffle(self, party: int) -> bytes:
        """Make this party's shuffle (it must be its turn), apply it, and return its wire form."""
        if self.next_shuffler != party:
            raise FairnessError(LOCAL, f"it is not party {party}'s turn to shuffle")
        made = shuffle_deck(
            self.context, party, self.steps_done, self.joint.combined, self.ciphertexts,
            open_cards=self._open_cards(),
        )
        self.ciphertexts = made.outputs
        self.steps_done += 1
        return made.encode()

    def accept_shuffle(self, party: int, data: object) -> None:
        """Check another party's shuffle and make its outputs the deck, or blame that party."""
        if self.next_shuffler != party:
            raise FairnessError(party, "it sent a shuffle out of turn")
        statement = self._statement(party, data)
        outputs = VERIFIED.get(statement) if statement is not None else None
        if outputs is None:
            received = Shuffle.decode(data, len(self.cards), party)
            verify_shuffle(
                received, self.context, party, self.steps_done, self.joint.combined,
                self.ciphertexts, open_cards=self._open_cards(),
            )
            outputs = received.outputs
            if statement is not None:
                VERIFIED[statement] = outputs
                while len(VERIFIED) > VERIFIED_KEPT:
                    VERIFIED.popitem(last=False)
        self.ciphertexts = outputs
        self.steps_done += 1

    def _statement(self, party: int, data: object) -> bytes | None:
        """A digest of everything checking `data` as `party`'s next shuffle depends on."""
        if not isinstance(data, bytes):
            return None
        return hashlib.sha256(encode_parts(
            "checked-shuffle", self.context.encode(), party, self.steps_done,
            self.joint.combined.data, encode_ciphertexts(self.ciphertexts), data)).digest()

    def _open_cards(self) -> tuple[str, ...] | None:
        """The cards, while the deck is still the open deck made from them (no shuffle yet)."""
        return self.cards if self.steps_done == 0 else None

    def ciphertext(self, position: int) -> Ciphertext:
        """The final ciphertext at deck `position`."""
        if not self.ready:
            raise FairnessError(LOCAL, "no card is opened before every shuffler has shuffled")
        if not 0 <= position < len(self.cards):
            raise FairnessError(LOCAL, f"deck position {position} is outside the deck")
        return self.ciphertexts[position]

    def share(self, key: RoundKey, party: int, position: int) -> bytes:
        """This party's proven decryption share for `position`, to send to the card's opener."""
        ciphertext = self.ciphertext(position)
        return make_share(key, ciphertext, self.context, party, position).encode()

    def accept_share(self, party: int, position: int, data: object) -> Point:
        """Check another party's share for `position` and return its value, or blame it."""
        public = self.joint.publics.get(party)
        if public is None:
            raise FairnessError(party, "it sent a decryption share but holds no round key")
        share = DecryptionShare.decode(data, party)
        share.verify(public, self.ciphertext(position), self.context, party, position)
        return share.value

    def open(
        self, position: int, shares: Mapping[int, Point], own: tuple[int, RoundKey] | None = None
    ) -> str:
        """The card at `position` from every other party's verified share and, if given, ours."""
        ciphertext = self.ciphertext(position)
        values = dict(shares)
        if own is not None:
            party, key = own
            values[party] = own_share(key, ciphertext)
        if set(values) != set(self.joint.publics):
            raise FairnessError(LOCAL, "a card opens only with every party's share")
        return open_card(ciphertext, list(values.values()), self.book)
