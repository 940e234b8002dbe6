"""Fairness toolkit tests: honest rounds verify; every kind of cheat is caught and blamed."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cards import french_deck, hekata_deck
from netplay.fair import (
    DEALER,
    RELAY,
    TABLE,
    CardOpening,
    DeckCommitment,
    FairnessError,
    Identity,
    MessageSigner,
    PublicIdentity,
    RoundAudit,
    SignedMessage,
    TranscriptChain,
    card_commitment,
    commit,
    derive_opening,
    genesis_hash,
    new_secret,
    nonce_commitment,
    open_card,
    seal_card,
    seed_commitment,
    shuffle_order,
    sign_message,
    verify_message,
    verify_opening,
)
from netplay.fair.commit import decode_parts, encode_parts

ROOM = "table-5f2c9a"
ROUND = 3
FRENCH = [str(card) for card in french_deck()]
SEATS = 4
ME = 0


def seeded(label: str) -> bytes:
    """A deterministic 32-byte secret, so failures reproduce."""
    return hashlib.sha256(label.encode()).digest()


# --- the test double dealer -------------------------------------------------------------


class Dealer:
    """An honest dealer; each cheating dealer below overrides exactly one step."""

    def __init__(self) -> None:
        self.identity = Identity(seeded("dealer"))
        self.seeds: dict[int, bytes] = {}
        self.decks: dict[int, DeckCommitment] = {}

    def commit_seed(self, epoch: int) -> bytes:
        self.seeds[epoch] = seeded(f"seed {epoch}")
        return seed_commitment(ROOM, ROUND, epoch, self.seeds[epoch])

    def commit_deck(self, epoch: int, nonces: list[bytes], canonical: list[str]) -> list[bytes]:
        deck = DeckCommitment.build(ROOM, ROUND, epoch, self.seeds[epoch], nonces, canonical)
        self.decks[epoch] = deck
        return list(deck.commitments)

    def card(self, epoch: int, position: int) -> CardOpening:
        return self.decks[epoch].opening(position)

    def seal(self, epoch: int, position: int, seat: PublicIdentity) -> bytes:
        return seal_card(self.identity, seat, ROOM, ROUND, self.card(epoch, position))

    def reveal(self, epoch: int) -> bytes:
        return self.seeds[epoch]


class SwappingDealer(Dealer):
    """Delivers our seat a better card than the one committed at that position."""

    def seal(self, epoch: int, position: int, seat: PublicIdentity) -> bytes:
        honest = self.card(epoch, position)
        if seat != SEAT_IDENTITIES[ME].public:
            return super().seal(epoch, position, seat)
        better = "AS" if honest.card != "AS" else "KS"
        swapped = CardOpening(epoch, position, better, honest.opening)
        return seal_card(self.identity, seat, ROOM, ROUND, swapped)


class StackingDealer(Dealer):
    """Commits honestly to its seed but deals a deck in an order of its own choosing."""

    def commit_deck(self, epoch: int, nonces: list[bytes], canonical: list[str]) -> list[bytes]:
        seed = self.seeds[epoch]
        stacked = list(reversed(canonical))
        openings = [derive_opening(seed, ROOM, ROUND, epoch, p) for p in range(len(stacked))]
        commitments = tuple(
            card_commitment(ROOM, ROUND, epoch, p, card, opening)
            for p, (card, opening) in enumerate(zip(stacked, openings, strict=True))
        )
        self.decks[epoch] = DeckCommitment(
            ROOM, ROUND, epoch, seed, tuple(stacked), tuple(openings), commitments
        )
        return list(commitments)


class IgnoresNoncesDealer(Dealer):
    """Shuffles with its seed alone, so it could have precomputed the deck."""

    def commit_deck(self, epoch: int, nonces: list[bytes], canonical: list[str]) -> list[bytes]:
        return super().commit_deck(epoch, [], canonical)


class SeedSwitchingDealer(Dealer):
    """Commits to one seed, shuffles with another it picked after seeing the nonces."""

    def commit_seed(self, epoch: int) -> bytes:
        commitment = super().commit_seed(epoch)
        self.committed = getattr(self, "committed", {}) | {epoch: self.seeds[epoch]}
        return commitment

    def commit_deck(self, epoch: int, nonces: list[bytes], canonical: list[str]) -> list[bytes]:
        self.seeds[epoch] = seeded(f"chosen seed {epoch}")
        return super().commit_deck(epoch, nonces, canonical)


class RevealsCommittedSeedDealer(SeedSwitchingDealer):
    """Shuffled with a switched seed but reveals the committed one at the audit."""

    def reveal(self, epoch: int) -> bytes:
        return self.committed[epoch]


class SkippingDealer(Dealer):
    """Publishes no commitment for the last position of the deal."""

    def commit_deck(self, epoch: int, nonces: list[bytes], canonical: list[str]) -> list[bytes]:
        return super().commit_deck(epoch, nonces, canonical)[:-1]


class LyingAuditDealer(Dealer):
    """Reveals a seed at the end that is not the one it committed to and used."""

    def reveal(self, epoch: int) -> bytes:
        return seeded("a different seed")


class RandomOpeningsDealer(Dealer):
    """Commits with openings it does not derive from the seed, so the audit cannot re-derive."""

    def commit_deck(self, epoch: int, nonces: list[bytes], canonical: list[str]) -> list[bytes]:
        honest = DeckCommitment.build(ROOM, ROUND, epoch, self.seeds[epoch], nonces, canonical)
        openings = tuple(seeded(f"opening {p}") for p in range(len(honest.cards)))
        commitments = tuple(
            card_commitment(ROOM, ROUND, epoch, p, card, opening)
            for p, (card, opening) in enumerate(zip(honest.cards, openings, strict=True))
        )
        self.decks[epoch] = DeckCommitment(
            ROOM, ROUND, epoch, honest.seed, honest.cards, openings, commitments
        )
        return list(commitments)


# --- a round as seat ME sees it ---------------------------------------------------------


SEAT_IDENTITIES = [Identity(seeded(f"seat {s}")) for s in range(SEATS)]


def attempt(feed: Callable[..., object], *args: object) -> FairnessError | None:
    """Run one feed as a client would: a failed check is noted and the round goes on."""
    try:
        feed(*args)
    except FairnessError as error:
        return error
    return None


def shuffle_epoch(
    audit: RoundAudit, dealer: Dealer, epoch: int, canonical: list[str]
) -> list[FairnessError]:
    """Seed commitment, nonce commit-then-reveal by every seat, then the deck commitments."""
    errors = [attempt(audit.seed_committed, epoch, dealer.commit_seed(epoch))]
    nonces = [seeded(f"nonce {epoch} {seat}") for seat in range(SEATS)]
    for seat, nonce in enumerate(nonces):
        commitment = nonce_commitment(ROOM, ROUND, epoch, seat, nonce)
        errors.append(attempt(audit.nonce_committed, epoch, seat, commitment))
    for seat, nonce in enumerate(nonces):
        errors.append(attempt(audit.nonce_revealed, epoch, seat, nonce))
    commitments = dealer.commit_deck(epoch, nonces, canonical)
    errors.append(attempt(audit.deck_committed, epoch, canonical, commitments))
    return [e for e in errors if e is not None]


def deal(audit: RoundAudit, dealer: Dealer, epoch: int, position: int, owner: int | str) -> list:
    """Deal one position: announce it, then deliver it sealed (to me) or open it (table)."""
    errors = [attempt(audit.dealt, epoch, position, owner)]
    if owner == ME:
        sealed = dealer.seal(epoch, position, SEAT_IDENTITIES[ME].public)
        card = open_card(SEAT_IDENTITIES[ME], dealer.identity.public, sealed, ROOM, ROUND)
        errors.append(attempt(audit.delivered, card))
    elif owner == TABLE:
        errors.append(attempt(audit.opened, TABLE, dealer.card(epoch, position)))
    return [e for e in errors if e is not None]


def play_zodiak_round(dealer: Dealer) -> tuple[RoundAudit, list[FairnessError]]:
    """Deal 7 each and a face-up start card, play and draw, reshuffle the pile, audit."""
    audit = RoundAudit(ROOM, ROUND, ME)
    errors = shuffle_epoch(audit, dealer, 0, FRENCH)
    owners = [seat for seat in range(SEATS) for _ in range(7)] + [TABLE] + [1, ME, 2, 3]
    for position, owner in enumerate(owners):
        errors += deal(audit, dealer, 0, position, owner)
    # Seat 2 plays its first card face up: it opens the card it was sealed.
    seat_two = SEAT_IDENTITIES[2]
    sealed = dealer.seal(0, 14, seat_two.public)
    played = open_card(seat_two, dealer.identity.public, sealed, ROOM, ROUND)
    errors.append(attempt(audit.opened, 2, played))
    # The stock runs out (in this short test, by fiat): the pile becomes epoch 1's stock.
    pile = [dealer.card(0, 28).card, played.card]
    errors += shuffle_epoch(audit, dealer, 1, pile)
    errors += deal(audit, dealer, 1, 0, ME)
    errors += deal(audit, dealer, 1, 1, 3)
    for epoch in (0, 1):
        errors.append(attempt(audit.seed_revealed, epoch, dealer.reveal(epoch)))
    return audit, [e for e in errors if e is not None]


def test_an_honest_round_with_a_reshuffle_verifies() -> None:
    audit, errors = play_zodiak_round(Dealer())
    report = audit.verify()
    assert errors == []
    assert report.ok, report.summary()
    assert report.summary() == "verified"


def test_a_swapped_card_is_caught_on_delivery_and_blamed_on_the_dealer() -> None:
    audit, errors = play_zodiak_round(SwappingDealer())
    assert errors and all(e.blamed == DEALER for e in errors)
    assert "does not match the commitment" in errors[0].reason
    report = audit.verify()
    assert not report.ok
    assert {f.who for f in report.failures} == {DEALER}


def test_a_stacked_deck_is_caught_by_the_audit() -> None:
    audit, errors = play_zodiak_round(StackingDealer())
    assert errors == []  # every card matched its (dishonest) commitment while playing
    report = audit.verify()
    assert not report.ok
    assert [f.who for f in report.failures] == [DEALER]
    assert "epoch 0 is not the shuffle" in report.failures[0].what


def test_a_shuffle_that_ignores_the_nonces_is_caught() -> None:
    audit, _ = play_zodiak_round(IgnoresNoncesDealer())
    report = audit.verify()
    assert [f.who for f in report.failures] == [DEALER, DEALER]
    assert "epoch 1 is not the shuffle" in report.failures[1].what


def test_a_seed_switched_after_the_nonces_is_caught_whichever_seed_is_revealed() -> None:
    audit, errors = play_zodiak_round(SeedSwitchingDealer())
    assert [e.blamed for e in errors] == [DEALER, DEALER]
    assert "not the one it committed to" in errors[0].reason
    audit, errors = play_zodiak_round(RevealsCommittedSeedDealer())
    assert errors == []
    report = audit.verify()
    assert report.failures and all(f.who == DEALER for f in report.failures)
    assert "is not the shuffle" in report.failures[0].what


def test_a_skipped_commitment_is_caught() -> None:
    audit, errors = play_zodiak_round(SkippingDealer())
    reasons = " / ".join(e.reason for e in errors)
    assert all(e.blamed == DEALER for e in errors)
    assert "published 51 commitments for the 52 cards of epoch 0" in reasons
    assert not audit.verify().ok


def test_a_lie_in_the_audit_is_caught() -> None:
    audit, errors = play_zodiak_round(LyingAuditDealer())
    assert [e.blamed for e in errors] == [DEALER, DEALER]
    report = audit.verify()
    assert not report.ok and {f.who for f in report.failures} == {DEALER}


def test_openings_not_derived_from_the_seed_fail_the_audit() -> None:
    audit, errors = play_zodiak_round(RandomOpeningsDealer())
    assert errors == []
    assert [f.who for f in audit.verify().failures] == [DEALER, DEALER]


def test_a_missing_reveal_and_an_undelivered_card_are_reported() -> None:
    audit = RoundAudit(ROOM, ROUND, ME)
    dealer = Dealer()
    shuffle_epoch(audit, dealer, 0, FRENCH)
    audit.dealt(0, 0, ME)
    report = audit.verify()
    whats = [f.what for f in report.failures]
    assert whats == [
        "did not reveal the seed of epoch 0",
        "dealt you position 0 of epoch 0 but never delivered it",
    ]


def test_dealing_out_of_order_or_before_committing_is_the_dealers_fault() -> None:
    audit = RoundAudit(ROOM, ROUND, ME)
    with pytest.raises(FairnessError, match="before committing") as caught:
        audit.dealt(0, 0, ME)
    assert caught.value.blamed == DEALER
    shuffle_epoch(audit, Dealer(), 0, FRENCH)
    with pytest.raises(FairnessError, match="out of order"):
        audit.dealt(0, 5, ME)
    with pytest.raises(FairnessError, match="no commitment"):
        audit.dealt(0, 52, ME)


# --- seats that cheat -------------------------------------------------------------------


def dealt_round() -> tuple[RoundAudit, Dealer]:
    """Epoch 0 committed and dealt 7 each, seat by seat."""
    audit, dealer = RoundAudit(ROOM, ROUND, ME), Dealer()
    shuffle_epoch(audit, dealer, 0, FRENCH)
    for position in range(7 * SEATS):
        audit.dealt(0, position, position // 7)
    return audit, dealer


def test_a_seat_cannot_play_a_card_dealt_to_another_seat() -> None:
    audit, dealer = dealt_round()
    with pytest.raises(FairnessError, match="dealt to seat 3") as caught:
        audit.opened(1, dealer.card(0, 22))
    assert caught.value.blamed == 1
    assert audit.verify().failures[0].who == 1


def test_a_seat_cannot_play_a_card_it_invented() -> None:
    audit, dealer = dealt_round()
    real = dealer.card(0, 9)
    invented = CardOpening(0, 9, "AS" if real.card != "AS" else "AH", real.opening)
    with pytest.raises(FairnessError, match="does not match the commitment") as caught:
        audit.opened(1, invented)
    assert caught.value.blamed == 1
    with pytest.raises(FairnessError, match="never dealt"):
        audit.opened(2, dealer.card(0, 40))
    with pytest.raises(FairnessError, match="never began") as caught:
        audit.opened(2, CardOpening(9, 0, "AS", real.opening))
    assert caught.value.blamed == 2
    audit.opened(1, real)
    with pytest.raises(FairnessError, match="second time"):
        audit.opened(1, real)


def test_a_seat_whose_reveal_does_not_open_its_commitment_is_blamed() -> None:
    audit = RoundAudit(ROOM, ROUND, ME)
    audit.seed_committed(0, Dealer().commit_seed(0))
    audit.nonce_committed(0, 2, nonce_commitment(ROOM, ROUND, 0, 2, seeded("mine")))
    audit.nonce_committed(0, 3, nonce_commitment(ROOM, ROUND, 0, 3, seeded("theirs")))
    with pytest.raises(FairnessError, match="not the committed one") as caught:
        audit.nonce_revealed(0, 2, seeded("something better"))
    assert caught.value.blamed == 2
    report = audit.verify()
    assert Counter(f.who for f in report.failures)[3] == 1  # seat 3 never revealed: forfeits
    assert any("forfeits" in f.what for f in report.failures)


def test_a_dealer_that_commits_its_seed_after_seeing_nonces_is_caught() -> None:
    audit = RoundAudit(ROOM, ROUND, ME)
    audit.nonce_committed(0, 1, nonce_commitment(ROOM, ROUND, 0, 1, seeded("n")))
    audit.nonce_revealed(0, 1, seeded("n"))
    assert audit.verify().ok  # seats alone cannot make the dealer look guilty
    with pytest.raises(FairnessError, match="after nonces") as caught:
        audit.seed_committed(0, Dealer().commit_seed(0))
    assert caught.value.blamed == DEALER


# --- the shuffle ------------------------------------------------------------------------


@given(
    seed=st.binary(min_size=32, max_size=32),
    nonces=st.lists(st.binary(min_size=32, max_size=32), max_size=5),
    n=st.integers(min_value=0, max_value=120),
)
def test_shuffle_order_is_always_a_permutation(seed: bytes, nonces: list[bytes], n: int) -> None:
    order = shuffle_order(seed, nonces, n)
    assert sorted(order) == list(range(n))
    assert shuffle_order(seed, nonces, n) == order


def test_shuffle_order_is_pinned_by_a_known_answer() -> None:
    # The order is a protocol constant: another client must derive the same deck.
    order = shuffle_order(bytes(range(32)), [bytes(32), b"\xff" * 32], 10)
    assert order == KNOWN_ORDER


KNOWN_ORDER = [9, 8, 6, 3, 2, 0, 4, 7, 1, 5]


def test_every_nonce_changes_the_order() -> None:
    seed, nonces = seeded("s"), [seeded(f"n{i}") for i in range(4)]
    base = shuffle_order(seed, nonces, 52)
    for i in range(4):
        changed = list(nonces)
        changed[i] = seeded(f"other {i}")
        assert shuffle_order(seed, changed, 52) != base
    assert shuffle_order(seed, nonces[::-1], 52) != base


def test_shuffle_order_has_no_visible_bias() -> None:
    # 6000 fixed seeds: each of the 6 orders of 3 cards should appear about 1000 times.
    counts = Counter(tuple(shuffle_order(seeded(f"bias {i}"), [], 3)) for i in range(6000))
    assert len(counts) == 6
    assert all(850 < count < 1150 for count in counts.values()), counts
    firsts = Counter(shuffle_order(seeded(f"first {i}"), [], 52)[0] for i in range(5200))
    assert len(firsts) == 52 and max(firsts.values()) < 160


def test_decks_of_both_games_commit_and_open() -> None:
    digits = [str(d) for d in hekata_deck()]
    deck = DeckCommitment.build(ROOM, ROUND, 0, seeded("h"), [seeded("n")], digits)
    assert sorted(deck.cards) == sorted(digits)
    for position in range(len(digits)):
        verify_opening(deck.commitments[position], ROOM, ROUND, deck.opening(position), DEALER)
    with pytest.raises(FairnessError):
        verify_opening(deck.commitments[1], ROOM, ROUND + 1, deck.opening(1), DEALER)


def test_commitments_are_domain_separated() -> None:
    nonce = seeded("x")
    assert commit(nonce) != seed_commitment(ROOM, ROUND, 0, nonce)
    assert seed_commitment(ROOM, ROUND, 0, nonce) != nonce_commitment(ROOM, ROUND, 0, 0, nonce)
    assert nonce_commitment(ROOM, ROUND, 0, 0, nonce) != nonce_commitment(ROOM, ROUND, 0, 1, nonce)
    assert encode_parts("ab", "c") != encode_parts("a", "bc")
    assert decode_parts(encode_parts("ab", b"c", -5), DEALER) == ["ab", b"c", -5]
    assert len(new_secret()) == 32 and new_secret() != new_secret()


# --- identities and sealed cards --------------------------------------------------------


def test_identities_are_reproducible_and_round_trip() -> None:
    one, again = Identity(seeded("me")), Identity(seeded("me"))
    assert one.public == again.public
    assert PublicIdentity.from_bytes(one.public.to_bytes()) == one.public
    assert one.public.fingerprint() != Identity.generate().public.fingerprint()
    assert one.public.sign_key != one.public.box_key


def test_a_sealed_card_opens_only_for_its_seat_and_only_from_the_dealer() -> None:
    dealer, seat, other = Identity(seeded("d")), SEAT_IDENTITIES[1], SEAT_IDENTITIES[2]
    card = CardOpening(0, 4, "10H", seeded("o"))
    sealed = seal_card(dealer, seat.public, ROOM, ROUND, card)
    assert open_card(seat, dealer.public, sealed, ROOM, ROUND) == card
    for recipient, sender in [(other, dealer.public), (seat, other.public)]:
        with pytest.raises(FairnessError, match="could not be opened"):
            open_card(recipient, sender, sealed, ROOM, ROUND)
    tampered = sealed[:-1] + bytes([sealed[-1] ^ 1])
    with pytest.raises(FairnessError):
        open_card(seat, dealer.public, tampered, ROOM, ROUND)
    with pytest.raises(FairnessError, match="was for room"):
        open_card(seat, dealer.public, sealed, ROOM, ROUND + 1)


# --- signatures and the hash chain ------------------------------------------------------


def chain_setup() -> tuple[MessageSigner, TranscriptChain]:
    keys = {seat: SEAT_IDENTITIES[seat].public for seat in range(SEATS)} | {
        DEALER: Identity(seeded("dealer")).public
    }
    return MessageSigner(SEAT_IDENTITIES[1], ROOM, 1), TranscriptChain(ROOM, keys)


def test_an_untouched_stream_is_accepted_and_digests_agree() -> None:
    signer, chain = chain_setup()
    _, other_view = chain_setup()
    dealer = MessageSigner(Identity(seeded("dealer")), ROOM, DEALER)
    for i in range(5):
        message = signer.sign(f"move {i}".encode())
        assert chain.append(1, message) == f"move {i}".encode()
        other_view.append(1, message.to_wire())
        notice = dealer.sign(b"ok")
        chain.append(DEALER, notice)
        other_view.append(DEALER, notice)
    assert chain.count == 10 and chain.digest == other_view.digest
    assert chain.next_seq(1) == 5


def test_an_altered_message_is_the_relays_fault() -> None:
    signer, chain = chain_setup()
    message = signer.sign(b"play 7H")
    forged = SignedMessage(message.seq, message.prev_hash, b"play AS", message.signature)
    with pytest.raises(FairnessError, match="altered") as caught:
        chain.append(1, forged)
    assert caught.value.blamed == RELAY
    with pytest.raises(FairnessError, match="altered"):
        chain.append(2, message)  # restamped as another seat's
    assert chain.append(1, message) == b"play 7H"  # the real one still goes through


def test_a_sender_is_keyed_anew_only_before_its_first_message() -> None:
    """PROTOCOL.md G1, "Chains": a lobby seat taken by someone new before it signed anything
    in the chain takes the newcomer's key; once it has signed, its key stays."""
    _, chain = chain_setup()
    newcomer = MessageSigner(SEAT_IDENTITIES[2], ROOM, 1)  # another person, in seat 1
    assert chain.rekey(1, SEAT_IDENTITIES[2].public)
    assert chain.append(1, newcomer.sign(b"ready")) == b"ready"
    assert not chain.rekey(1, SEAT_IDENTITIES[1].public)  # it has signed: no other key now
    assert chain.rekey(1, SEAT_IDENTITIES[2].public)  # its own key: nothing changes
    with pytest.raises(FairnessError, match="altered"):
        chain.append(1, MessageSigner(SEAT_IDENTITIES[1], ROOM, 1).sign(b"x"))


def test_a_dropped_message_is_detected() -> None:
    signer, chain = chain_setup()
    chain.append(1, signer.sign(b"a"))
    signer.sign(b"b")
    with pytest.raises(FairnessError, match=r"1 message\(s\) from seat 1 were dropped") as caught:
        chain.append(1, signer.sign(b"c"))
    assert caught.value.blamed == RELAY


def test_a_replayed_or_reordered_message_is_detected() -> None:
    signer, chain = chain_setup()
    first, second, third = signer.sign(b"a"), signer.sign(b"b"), signer.sign(b"c")
    chain.append(1, first)
    with pytest.raises(FairnessError, match="replayed"):
        chain.append(1, first)
    with pytest.raises(FairnessError, match="dropped"):
        chain.append(1, third)
    chain.append(1, second)
    chain.append(1, third)


def test_a_sender_that_signs_two_histories_is_blamed() -> None:
    identity = SEAT_IDENTITIES[1]
    _, chain = chain_setup()
    start = genesis_hash(ROOM, 1)
    shown_to_me = sign_message(identity, 0, start, b"draw")
    shown_to_others = sign_message(identity, 0, start, b"play 8S")
    chain.append(1, shown_to_me)
    follow_up = sign_message(identity, 1, shown_to_others.digest, b"declare H")
    with pytest.raises(FairnessError, match="does not link") as caught:
        chain.append(1, follow_up)
    assert caught.value.blamed == 1


def test_unknown_senders_and_other_rooms_are_rejected() -> None:
    signer, chain = chain_setup()
    with pytest.raises(FairnessError, match="unknown sender"):
        chain.append(7, signer.sign(b"x"))
    elsewhere = MessageSigner(SEAT_IDENTITIES[1], "another room", 1)
    with pytest.raises(FairnessError, match="does not link"):
        chain.append(1, elsewhere.sign(b"x"))
    verify_message(SEAT_IDENTITIES[1].public, signer.sign(b"y").to_wire())


# --- garbage in, FairnessError out ------------------------------------------------------

garbage = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True),
    st.text(max_size=300),
    st.binary(max_size=80),
    st.binary(min_size=32, max_size=32),
    st.binary(min_size=64, max_size=64),
    st.lists(st.one_of(st.integers(), st.binary(max_size=40), st.text(max_size=5)), max_size=6),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=3),
)


def only_fairness_errors(action: Callable[[], object]) -> None:
    """Call `action`; success or FairnessError are fine, any other exception fails the test."""
    try:
        action()
    except FairnessError as error:
        assert error.reason and str(error)


@settings(max_examples=150)
@given(garbage, garbage, garbage, garbage, garbage)
def test_commitment_checks_answer_garbage_with_fairness_errors(a, b, c, d, e) -> None:
    only_fairness_errors(lambda: shuffle_order(a, b, c))
    only_fairness_errors(lambda: verify_opening(a, b, c, d, DEALER))
    only_fairness_errors(lambda: verify_opening(a, ROOM, ROUND, CardOpening(b, c, d, e), 1))
    only_fairness_errors(lambda: CardOpening.from_wire(a))
    only_fairness_errors(lambda: CardOpening.from_wire([a, b, c, d]))
    only_fairness_errors(lambda: card_commitment(a, b, c, d, e, a))
    only_fairness_errors(lambda: seed_commitment(a, b, c, d))
    only_fairness_errors(lambda: nonce_commitment(a, b, c, d, e))
    only_fairness_errors(lambda: commit(a))
    only_fairness_errors(lambda: DeckCommitment.build(ROOM, ROUND, 0, a, b, ["1", "2"]))


@settings(max_examples=150)
@given(garbage, garbage, garbage, garbage)
def test_identity_and_sealing_answer_garbage_with_fairness_errors(a, b, c, d) -> None:
    seat, dealer = SEAT_IDENTITIES[0], Identity(seeded("dealer"))
    only_fairness_errors(lambda: PublicIdentity.from_bytes(a))
    only_fairness_errors(lambda: open_card(seat, dealer.public, a, b, c))
    only_fairness_errors(lambda: open_card(seat, dealer.public, a, ROOM, ROUND))
    only_fairness_errors(lambda: open_card(seat, d, a, ROOM, ROUND))
    only_fairness_errors(lambda: Identity(a))
    if isinstance(a, bytes) and len(a) == 64:
        stranger = PublicIdentity.from_bytes(a)
        only_fairness_errors(lambda: open_card(seat, stranger, b, ROOM, ROUND))
        only_fairness_errors(lambda: verify_message(stranger, [0, bytes(32), b"", bytes(64)]))


@given(st.binary(max_size=200))
def test_a_well_sealed_garbage_plaintext_is_rejected(plaintext: bytes) -> None:
    seat, dealer = SEAT_IDENTITIES[0], Identity(seeded("dealer"))
    sealed = bytes(dealer.box_with(seat.public).encrypt(plaintext))
    only_fairness_errors(lambda: open_card(seat, dealer.public, sealed, ROOM, ROUND))
    only_fairness_errors(lambda: decode_parts(plaintext, DEALER))


@settings(max_examples=150)
@given(garbage, garbage, garbage, garbage)
def test_messages_and_chains_answer_garbage_with_fairness_errors(a, b, c, d) -> None:
    signer, chain = chain_setup()
    only_fairness_errors(lambda: SignedMessage.from_wire(a))
    only_fairness_errors(lambda: SignedMessage.from_wire([a, b, c, d]))
    only_fairness_errors(lambda: verify_message(SEAT_IDENTITIES[1].public, [a, b, c, d]))
    only_fairness_errors(lambda: verify_message(a, sign_message(SEAT_IDENTITIES[1], 0, c, b)))
    only_fairness_errors(lambda: chain.append(a, b))
    only_fairness_errors(lambda: chain.append(1, [a, b, c, d]))
    only_fairness_errors(lambda: chain.append(1, a))
    only_fairness_errors(lambda: genesis_hash(a, 1))
    assert chain.append(1, signer.sign(b"still fine")) == b"still fine"


@settings(max_examples=150)
@given(garbage, garbage, garbage, garbage)
def test_the_audit_answers_garbage_with_fairness_errors_and_keeps_going(a, b, c, d) -> None:
    audit, dealer = dealt_round()
    only_fairness_errors(lambda: audit.seed_committed(a, b))
    only_fairness_errors(lambda: audit.nonce_committed(a, b, c))
    only_fairness_errors(lambda: audit.nonce_revealed(a, b, c))
    only_fairness_errors(lambda: audit.deck_committed(a, b, c))
    only_fairness_errors(lambda: audit.deck_committed(0, FRENCH, [a, b]))
    only_fairness_errors(lambda: audit.dealt(a, b, c))
    only_fairness_errors(lambda: audit.delivered(a))
    only_fairness_errors(lambda: audit.delivered(CardOpening(a, b, c, d)))
    only_fairness_errors(lambda: audit.opened(a, b))
    only_fairness_errors(lambda: audit.opened(1, CardOpening(0, a, b, c)))
    only_fairness_errors(lambda: audit.seed_revealed(a, b))
    only_fairness_errors(lambda: RoundAudit(a, b, c))
    report = audit.verify()
    assert all(isinstance(f.what, str) for f in report.failures)
    audit.opened(0, dealer.card(0, 3))  # the real round is unharmed


def test_an_honest_hekata_deal_verifies() -> None:
    audit, dealer = RoundAudit(ROOM, ROUND, ME), Dealer()
    digits = [str(d) for d in hekata_deck()]
    assert shuffle_epoch(audit, dealer, 0, digits) == []
    owners = [seat for seat in range(SEATS) for _ in range(12)] + [TABLE, TABLE]
    for position, owner in enumerate(owners):
        assert deal(audit, dealer, 0, position, owner) == []
    audit.seed_revealed(0, dealer.reveal(0))
    assert audit.verify().ok


def test_clients_shown_different_messages_end_with_different_digests() -> None:
    dealer = MessageSigner(Identity(seeded("dealer")), ROOM, DEALER)
    _, mine = chain_setup()
    _, theirs = chain_setup()
    mine.append(DEALER, dealer.sign(b"commitments A"))
    other_dealer = MessageSigner(Identity(seeded("dealer")), ROOM, DEALER)
    theirs.append(DEALER, other_dealer.sign(b"commitments B"))
    assert mine.count == theirs.count and mine.digest != theirs.digest


def test_sealed_cards_all_have_one_length() -> None:
    """Issue 12, item 4: a sealed ten was one byte longer than any other card."""
    dealer, seat = Identity.generate(), Identity.generate()
    sizes = {
        len(seal_card(dealer, seat.public, ROOM, ROUND, CardOpening(0, i, card, seeded(card))))
        for i, card in enumerate([*FRENCH, *(str(d) for d in hekata_deck())])
    }
    assert len(sizes) == 1


def test_a_seat_cannot_forge_a_sealed_card_from_the_dealer() -> None:
    """Issue 12, item 7: a Box key is shared by both ends, so the dealer signs inside the box."""
    dealer, seat, other = Identity.generate(), Identity.generate(), Identity.generate()
    card = CardOpening(0, 3, "AS", seeded("AS"))
    genuine = seal_card(dealer, seat.public, ROOM, ROUND, card)
    plaintext = dealer.box_with(seat.public).decrypt(genuine)
    forged_card = encode_parts("sealed-card", ROOM, ROUND, 0, 3, "KS", seeded("AS"), bytes(14),
                               decode_parts(plaintext, DEALER)[8])
    forged = bytes(seat.box_with(dealer.public).encrypt(forged_card))
    with pytest.raises(FairnessError, match="dealer's signature"):
        open_card(seat, dealer.public, forged, ROOM, ROUND)
    # The dealer's own signed card, boxed again by its seat for another seat, is not theirs.
    passed_on = bytes(other.box_with(dealer.public).encrypt(plaintext))
    with pytest.raises(FairnessError, match="dealer's signature"):
        open_card(other, dealer.public, passed_on, ROOM, ROUND)
