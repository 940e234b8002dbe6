"""One shuffle epoch as every party sees it: the chain of proven shuffles, then card openings.

A `MentalDeck` starts from the epoch's cards openly encrypted under the joint key, accepts one
shuffle from each shuffler in the agreed order (a shuffle out of turn or twice is refused and
blamed on its sender), checks their proofs, and once every shuffler has shuffled and every
proof holds, opens deck positions with verified decryption shares. A shuffle's proof is checked
as it arrives, or (`check=False`) later with the rest of the chain, all at once and cheaper
(netplay/fair/shuffle_check.py): the next shuffler may then shuffle a deck whose proof is not
checked yet, and no card opens before `check()` finds every proof sound; a proof that fails
refuses the deck for good, blamed on the first shuffler in the chain whose proof fails. The
deck keeps the shuffles this process made, with their secret factors, only to check the others'
more cheaply; it sends nothing, and a party passes its own `RoundKey` to the calls that need it.

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
from netplay.fair.group import InvalidPoint, Point
from netplay.fair.keys import JointKey, RoundKey
from netplay.fair.shares import DecryptionShare, make_share, open_card, own_share
from netplay.fair.shuffle import Shuffle, ShufflePlan, plan_shuffle, shuffle_deck
from netplay.fair.shuffle_check import ShuffleClaim, verify_shuffles

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
        self._open = open_deck(self.cards, joint.combined)
        self.ciphertexts: tuple[Ciphertext, ...] = self._open
        self.steps_done = 0
        self.unchecked: list[tuple[ShuffleClaim, bytes | None]] = []  # with VERIFIED's digest
        self.refused: FairnessError | None = None  # why a check failed: the deck is dead
        self._own: list[tuple[tuple[Ciphertext, ...], Shuffle]] = []  # made here, with inputs
        self._plans: dict[int, ShufflePlan] = {}  # shuffles of this process, made in advance

    @property
    def next_shuffler(self) -> int | None:
        """The party whose shuffle comes next, or None once all have shuffled."""
        if self.steps_done == len(self.shufflers):
            return None
        return self.shufflers[self.steps_done]

    @property
    def shuffled(self) -> bool:
        """Whether every shuffler has shuffled (their proofs may still wait to be checked)."""
        return self.next_shuffler is None

    @property
    def ready(self) -> bool:
        """Whether every shuffler has shuffled and every proof holds, so cards may be opened."""
        return self.shuffled and not self.unchecked and self.refused is None

    def prepare(self, party: int) -> None:
        """Make now the part of `party`'s shuffle that needs no inputs (`plan_shuffle`), when
        its turn is still to come: it waits for the earlier shufflers anyway."""
        if party in self.shufflers[self.steps_done + 1:] and party not in self._plans:
            self._plans[party] = plan_shuffle(len(self.cards), self.joint.combined)

    def shuffle(self, party: int) -> bytes:
        """Make this party's shuffle (it must be its turn), apply it, and return its wire form."""
        if self.next_shuffler != party:
            raise FairnessError(LOCAL, f"it is not party {party}'s turn to shuffle")
        inputs = self.ciphertexts
        try:
            made = shuffle_deck(
                self.context, party, self.steps_done, self.joint.combined, inputs,
                open_cards=self._open_cards(), plan=self._plans.pop(party, None),
            )
        except InvalidPoint:  # an unchecked shuffle before it holds a point outside the group
            self.check()
            raise FairnessError(LOCAL, "a deck to shuffle holds an invalid point") from None
        self._own.append((inputs, made))
        self.ciphertexts = made.outputs
        self.steps_done += 1
        return made.encode()

    def accept_shuffle(self, party: int, data: object, check: bool = True) -> None:
        """Take another party's shuffle as the deck: check its proof now (refused and blamed
        on that party if it fails) or, with `check=False`, later in `check()` (module doc)."""
        if self.next_shuffler != party:
            raise FairnessError(party, "it sent a shuffle out of turn")
        statement = self._statement(party, data)
        outputs = VERIFIED.get(statement) if statement is not None else None
        if outputs is None:
            received = Shuffle.decode(data, len(self.cards), party)
            claim = ShuffleClaim(received, self.context, party, self.steps_done,
                                 self.joint.combined, self.ciphertexts)
            unchecked = [*self.unchecked, (claim, statement)]
            if check:
                self._verify(unchecked)
                unchecked = []
            self.unchecked = unchecked
            outputs = received.outputs
        self.ciphertexts = outputs
        self.steps_done += 1

    def check(self) -> None:
        """Check every proof taken unchecked, at once; FairnessError blames the first that
        fails, and the deck is refused for good (no card of it ever opens)."""
        if self.refused is not None:
            raise self.refused
        try:
            self._verify(self.unchecked)
        except FairnessError as exc:
            self.refused = exc
            raise
        self.unchecked = []

    def _verify(self, unchecked: list[tuple[ShuffleClaim, bytes | None]]) -> None:
        if not unchecked:
            return
        claims = [claim for claim, _ in unchecked]
        opens = claims[0].step == 0 or bool(self._own and self._own[0][0] is self._open)
        verify_shuffles(claims, self.cards if opens else None, self._own)
        for claim, statement in unchecked:
            if statement is not None:
                VERIFIED[statement] = claim.shuffle.outputs
                while len(VERIFIED) > VERIFIED_KEPT:
                    VERIFIED.popitem(last=False)

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
            raise FairnessError(LOCAL, "no card is opened before every shuffler has shuffled"
                                " and every proof is checked")
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
