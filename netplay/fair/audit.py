"""The round audit one seat runs: every commitment, delivery and opening checked, then the deck.

Feed a `RoundAudit` what the seat sees during the round, in order; each feed checks what can
be checked at once and raises FairnessError (also kept for the report) when it fails. When the
dealer reveals its seeds at the end of the round, `verify()` re-derives every shuffle epoch's
deck from seed and nonces, recomputes every position's commitment and returns an AuditReport:
"verified", or exactly what failed and who is to blame.
"""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from dataclasses import dataclass, field

from netplay.fair.commit import (
    DEALER,
    HASH_SIZE,
    LOCAL,
    MAX_DECK,
    RELAY,
    SECRET_SIZE,
    TABLE,
    Blame,
    CardOpening,
    FairnessError,
    card_commitment,
    check_context,
    derive_opening,
    describe,
    nonce_commitment,
    require_bytes,
    require_text,
    require_uint,
    seed_commitment,
    shuffle_order,
    verify_opening,
)

MAX_EPOCHS = 1024
MAX_SEAT = 63

Owner = int | str
"""Who a dealt position went to: a seat number, or TABLE for a card dealt face up."""


@dataclass(frozen=True)
class Failure:
    """One thing that failed the audit and who is to blame for it."""

    who: Blame
    what: str

    def __str__(self) -> str:
        return f"{describe(self.who)}: {self.what}"


@dataclass(frozen=True)
class AuditReport:
    """The audit's verdict: ok, or the failures in the order they were found."""

    ok: bool
    failures: tuple[Failure, ...]

    def summary(self) -> str:
        """'verified', or one line per failure."""
        return "verified" if self.ok else "\n".join(str(f) for f in self.failures)


@dataclass
class _Epoch:
    seed_commitment: bytes | None = None
    nonce_commitments: dict[int, bytes] = field(default_factory=dict)
    nonces: dict[int, bytes] = field(default_factory=dict)
    reveals_started: bool = False
    canonical: tuple[str, ...] | None = None
    commitments: tuple[bytes, ...] | None = None
    owners: list[Owner] = field(default_factory=list)
    delivered: set[int] = field(default_factory=set)
    opened: set[int] = field(default_factory=set)
    seed: bytes | None = None
    seed_checked: bool = False


class RoundAudit:
    """Everything one seat saw of one round's dealing, checked as it arrives and at the end."""

    def __init__(self, room: str, round_no: int, seat: int) -> None:
        check_context(room, round_no, 0, LOCAL)
        self.room = room
        self.round_no = round_no
        self.seat = require_uint(seat, "own seat", LOCAL, MAX_SEAT)
        self._epochs: dict[int, _Epoch] = {}
        self._failures: list[Failure] = []

    def _fail(self, who: Blame, what: str) -> FairnessError:
        self._failures.append(Failure(who, what))
        return FairnessError(who, what)

    def _guard(self, error: FairnessError) -> FairnessError:
        return self._fail(error.blamed, error.reason)

    def _epoch(self, epoch: object, blamed: Blame, create: bool = True) -> _Epoch:
        number = require_uint(epoch, "shuffle epoch", blamed, MAX_EPOCHS)
        if not create and number not in self._epochs:
            raise FairnessError(blamed, f"referred to shuffle epoch {number}, which never began")
        return self._epochs.setdefault(number, _Epoch())

    def seed_committed(self, epoch: int, commitment: bytes) -> None:
        """The dealer published its seed commitment for `epoch` (before any nonce reveal)."""
        try:
            state = self._epoch(epoch, DEALER)
            require_bytes(commitment, "seed commitment", DEALER, HASH_SIZE)
        except FairnessError as error:
            raise self._guard(error) from None
        if state.seed_commitment is not None and state.seed_commitment != commitment:
            raise self._fail(DEALER, f"committed to two different seeds for epoch {epoch}")
        if state.reveals_started:
            raise self._fail(DEALER, f"committed to its seed for epoch {epoch} after nonces")
        state.seed_commitment = commitment

    def nonce_committed(self, epoch: int, seat: int, commitment: bytes) -> None:
        """`seat` published the commitment to its nonce for `epoch`."""
        try:
            require_uint(seat, "seat", RELAY, MAX_SEAT)
            state = self._epoch(epoch, seat)
            require_bytes(commitment, "nonce commitment", seat, HASH_SIZE)
        except FairnessError as error:
            raise self._guard(error) from None
        known = state.nonce_commitments.get(seat)
        if known is not None and known != commitment:
            raise self._fail(seat, f"committed to two different nonces for epoch {epoch}")
        state.nonce_commitments[seat] = commitment

    def nonce_revealed(self, epoch: int, seat: int, nonce: bytes) -> None:
        """`seat` revealed its nonce for `epoch`; it must open the seat's commitment."""
        try:
            require_uint(seat, "seat", RELAY, MAX_SEAT)
            state = self._epoch(epoch, seat)
            require_bytes(nonce, "nonce", seat, SECRET_SIZE)
        except FairnessError as error:
            raise self._guard(error) from None
        state.reveals_started = True
        committed = state.nonce_commitments.get(seat)
        if committed is None:
            raise self._fail(seat, f"revealed a nonce for epoch {epoch} it never committed to")
        expected = nonce_commitment(self.room, self.round_no, epoch, seat, nonce)
        if not hmac.compare_digest(committed, expected):
            raise self._fail(
                seat, f"revealed a nonce for epoch {epoch} that is not the committed one"
            )
        state.nonces[seat] = nonce

    def deck_committed(
        self, epoch: int, canonical: Sequence[str], commitments: Sequence[bytes]
    ) -> None:
        """The dealer committed to every position of `epoch`'s deck of the `canonical` cards."""
        try:
            state = self._epoch(epoch, DEALER)
            cards = _card_list(canonical, LOCAL)
            hashes = _hash_list(commitments, DEALER)
        except FairnessError as error:
            raise self._guard(error) from None
        if state.commitments is not None:
            raise self._fail(DEALER, f"published card commitments for epoch {epoch} twice")
        state.canonical, state.commitments = cards, hashes
        if len(hashes) != len(cards):
            raise self._fail(
                DEALER,
                f"published {len(hashes)} commitments for the {len(cards)} cards of epoch {epoch}",
            )

    def dealt(self, epoch: int, position: int, owner: Owner) -> None:
        """Position `position` of `epoch` left the stock for `owner` (positions go in order)."""
        try:
            state = self._epoch(epoch, DEALER)
            require_uint(position, "position", DEALER, MAX_DECK)
            owner = _owner(owner)
        except FairnessError as error:
            raise self._guard(error) from None
        if state.commitments is None:
            raise self._fail(DEALER, f"dealt from epoch {epoch} before committing to its deck")
        if position >= len(state.commitments):
            raise self._fail(
                DEALER, f"dealt position {position} of epoch {epoch}, which has no commitment"
            )
        if position != len(state.owners):
            raise self._fail(
                DEALER,
                f"dealt position {position} of epoch {epoch} out of order "
                f"(the next card of the stock is position {len(state.owners)})",
            )
        state.owners.append(owner)

    def delivered(self, card: CardOpening) -> None:
        """A card sealed to this seat arrived and was opened; it must match its commitment."""
        self._check_card(DEALER, self.seat, card, "delivered")

    def opened(self, owner: Owner, card: CardOpening) -> None:
        """`owner` opened a card face up (a play, or TABLE's face-up card opened by the dealer)."""
        try:
            owner = _owner(owner)
        except FairnessError as error:
            raise self._guard(error) from None
        self._check_card(DEALER if owner == TABLE else owner, owner, card, "opened")

    def _check_card(self, blamed: Blame, owner: Owner, card: CardOpening, verb: str) -> None:
        try:
            if not isinstance(card, CardOpening):
                raise FairnessError(blamed, "expected a card opening")
            state = self._epoch(card.epoch, blamed, create=False)
            CardOpening.from_wire(card.to_wire(), blamed)
        except FairnessError as error:
            raise self._guard(error) from None
        where = f"position {card.position} of epoch {card.epoch}"
        if state.commitments is None or card.position >= len(state.commitments):
            raise self._fail(blamed, f"{verb} {card.card} at {where}, which has no commitment")
        if card.position >= len(state.owners):
            raise self._fail(blamed, f"{verb} {card.card} at {where}, which was never dealt")
        dealt_to = state.owners[card.position]
        if dealt_to != owner:
            raise self._fail(
                blamed, f"{verb} {card.card} at {where}, which was dealt to {describe(dealt_to)}"
            )
        seen = state.delivered if verb == "delivered" else state.opened
        if card.position in seen:
            raise self._fail(blamed, f"{verb} {where} a second time")
        try:
            verify_opening(state.commitments[card.position], self.room, self.round_no, card, blamed)
        except FairnessError as error:
            raise self._guard(error) from None
        seen.add(card.position)

    def seed_revealed(self, epoch: int, seed: bytes) -> None:
        """At the end of the round the dealer revealed the seed it used for `epoch`."""
        try:
            state = self._epoch(epoch, DEALER)
            require_bytes(seed, "seed", DEALER, SECRET_SIZE)
        except FairnessError as error:
            raise self._guard(error) from None
        if state.seed_checked:
            raise self._fail(DEALER, f"revealed the seed of epoch {epoch} twice")
        state.seed_checked = True
        if state.seed_commitment is None:
            raise self._fail(DEALER, f"revealed a seed for epoch {epoch} it never committed to")
        expected = seed_commitment(self.room, self.round_no, epoch, seed)
        if not hmac.compare_digest(expected, state.seed_commitment):
            raise self._fail(
                DEALER, f"revealed a seed for epoch {epoch} that is not the one it committed to"
            )
        state.seed = seed

    def verify(self) -> AuditReport:
        """Re-derive every epoch's deck and check everything; call after every seed_revealed."""
        failures = list(self._failures)
        for number in sorted(self._epochs):
            failures += self._final_checks(number, self._epochs[number])
        unique = tuple(dict.fromkeys(failures))
        return AuditReport(not unique, unique)

    def _final_checks(self, number: int, state: _Epoch) -> list[Failure]:
        found: list[Failure] = []
        if not (state.seed_commitment or state.commitments is not None or state.seed_checked):
            return found  # only seats spoke of this epoch: the dealer never began it
        if state.seed_commitment is None:
            found.append(Failure(DEALER, f"never committed to a seed for epoch {number}"))
        if state.commitments is None:
            found.append(Failure(DEALER, f"never committed to the cards of epoch {number}"))
        for seat in sorted(set(state.nonce_commitments) - set(state.nonces)):
            found.append(Failure(seat, f"never revealed its nonce for epoch {number} (forfeits)"))
        if not state.seed_checked:
            found.append(Failure(DEALER, f"did not reveal the seed of epoch {number}"))
        for position, owner in enumerate(state.owners):
            if owner == self.seat and position not in state.delivered:
                found.append(
                    Failure(DEALER, f"dealt you position {position} of epoch {number} "
                            "but never delivered it")
                )
        if state.seed is not None and state.commitments is not None and state.canonical:
            found += self._check_deck(number, state)
        return found

    def _check_deck(self, number: int, state: _Epoch) -> list[Failure]:
        assert state.seed is not None and state.commitments is not None and state.canonical
        nonces = [state.nonces[seat] for seat in sorted(state.nonces)]
        order = shuffle_order(state.seed, nonces, len(state.canonical))
        wrong = []
        for position, (index, published) in enumerate(zip(order, state.commitments, strict=False)):
            opening = derive_opening(state.seed, self.room, self.round_no, number, position)
            card = state.canonical[index]
            expected = card_commitment(self.room, self.round_no, number, position, card, opening)
            if not hmac.compare_digest(expected, published):
                wrong.append(position)
        if not wrong:
            return []
        shown = ", ".join(str(p) for p in wrong[:12]) + (" ..." if len(wrong) > 12 else "")
        return [
            Failure(
                DEALER,
                f"the committed deck of epoch {number} is not the shuffle of the revealed seed "
                f"and nonces at {len(wrong)} position(s): {shown}",
            )
        ]


def _owner(value: object) -> Owner:
    if value == TABLE and isinstance(value, str):
        return TABLE
    return require_uint(value, "owner", DEALER, MAX_SEAT)


def _card_list(value: object, blamed: Blame) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)) or len(value) > MAX_DECK:
        raise FairnessError(blamed, f"a deck must be a list of at most {MAX_DECK} cards")
    return tuple(require_text(card, "card", blamed) for card in value)


def _hash_list(value: object, blamed: Blame) -> tuple[bytes, ...]:
    if not isinstance(value, (list, tuple)) or len(value) > MAX_DECK:
        raise FairnessError(blamed, f"commitments must be a list of at most {MAX_DECK} hashes")
    return tuple(require_bytes(h, "commitment", blamed, HASH_SIZE) for h in value)
