"""Mental-poker core (docs/FAIRNESS.md): honest deals open every card to its owner only, and
every kind of cheating (wrong permutation, replaced card, bad share, invalid point, a proof
replayed from another table, round, epoch, party or position) is refused and blamed."""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nacl import bindings as sodium

from engine.cards import french_deck, hekata_deck
from netplay.fair.commit import FairnessError
from netplay.fair.context import BOT_PARTY, ProofContext
from netplay.fair.deck import MentalDeck
from netplay.fair.elgamal import CardBook, Ciphertext, card_point, open_deck
from netplay.fair.group import BASE, ORDER, Point, Scalar, base_times
from netplay.fair.keys import KEY_ANNOUNCEMENT_SIZE, JointKey, KeyAnnouncement, RoundKey
from netplay.fair.shares import SHARE_SIZE, DecryptionShare, make_share
from netplay.fair.shuffle import Shuffle, shuffle_deck, shuffle_size
from netplay.fair.shuffle_check import verify_shuffle

FRENCH = [str(card) for card in french_deck()]
HEKATA = [str(card) for card in hekata_deck()]
SMALL = FRENCH[:8]
CONTEXT = ProofContext("table-5f2c9a", 3, 0)


def table_keys(parties: list[int]) -> tuple[dict[int, RoundKey], JointKey]:
    """Fresh round keys for `parties` and the joint key every client derives from them."""
    keys = {party: RoundKey.generate() for party in parties}
    announced = {party: key.announce(CONTEXT, party) for party, key in keys.items()}
    return keys, JointKey.from_announcements(CONTEXT, announced)


def shuffled_everywhere(
    cards: list[str], keys: dict[int, RoundKey], joint: JointKey
) -> dict[int, MentalDeck]:
    """Each party's own view of one epoch after every party shuffled in turn."""
    views = {party: MentalDeck(CONTEXT, joint, cards, list(keys)) for party in keys}
    for shuffler in keys:
        wire = views[shuffler].shuffle(shuffler)
        assert len(wire) == shuffle_size(len(cards))
        for party, view in views.items():
            if party != shuffler:
                view.accept_shuffle(shuffler, wire)
    return views


def deal_to(
    views: dict[int, MentalDeck], keys: dict[int, RoundKey], owner: int, position: int
) -> str:
    """Open `position` to `owner` alone: every other party sends its proven share."""
    shares = {
        party: views[owner].accept_share(
            party, position, views[party].share(keys[party], party, position)
        )
        for party in keys
        if party != owner
    }
    return views[owner].open(position, shares, own=(owner, keys[owner]))


@pytest.mark.parametrize("cards", [FRENCH, HEKATA], ids=["zodiak-52", "hekata-50"])
def test_honest_deal_opens_every_card_to_its_owner(cards: list[str]) -> None:
    keys, joint = table_keys([0, 1, 2])
    views = shuffled_everywhere(cards, keys, joint)
    assert len({view.ciphertexts for view in views.values()}) == 1  # every client agrees
    dealt = [deal_to(views, keys, position % 3, position) for position in range(len(cards))]
    assert sorted(dealt) == sorted(cards)


def test_face_up_card_opens_for_everyone_with_every_share() -> None:
    keys, joint = table_keys([0, 1, BOT_PARTY])
    views = shuffled_everywhere(SMALL, keys, joint)
    wires = {party: views[party].share(keys[party], party, 5) for party in keys}
    opened = {
        viewer: views[viewer].open(
            5, {party: views[viewer].accept_share(party, 5, wire) for party, wire in wires.items()}
        )
        for viewer in keys
    }
    assert len(set(opened.values())) == 1 and opened[0] in SMALL


def test_missing_share_opens_nothing() -> None:
    keys, joint = table_keys([0, 1])
    views = shuffled_everywhere(SMALL, keys, joint)
    with pytest.raises(FairnessError, match="every party's share"):
        views[0].open(0, {}, own=(0, keys[0]))


def test_others_keys_together_never_recover_a_persons_card() -> None:
    """A hostile host holding its own key and the bots' key tries every combination of shares."""
    keys, joint = table_keys([0, 1, BOT_PARTY])
    views = shuffled_everywhere(SMALL, keys, joint)
    cards_points = {card_point(card).data for card in SMALL}
    hostile = [1, BOT_PARTY]
    for position in range(len(SMALL)):
        ciphertext = views[1].ciphertext(position)
        guesses = [ciphertext.b, ciphertext.a]
        for size in range(1, len(hostile) + 1):
            for subset in combinations(hostile, size):
                known = [ciphertext.a * keys[party].secret for party in subset]
                total = known[0]
                for value in known[1:]:
                    total = total + value
                guesses.append(ciphertext.b - total)
        assert not cards_points & {guess.data for guess in guesses}


# --- cheating shufflers ----------------------------------------------------------------


def two_party_deck() -> tuple[JointKey, MentalDeck, tuple[Ciphertext, ...]]:
    """A joint key of parties 0 and 1, a client's view of their deck, and its starting cards."""
    _keys, joint = table_keys([0, 1])
    view = MentalDeck(CONTEXT, joint, SMALL, [0, 1])
    return joint, view, view.ciphertexts


def tampered(shuffle: Shuffle, outputs: list[Ciphertext]) -> bytes:
    return Shuffle(tuple(outputs), shuffle.proof).encode()


def test_swapped_outputs_are_a_wrong_permutation_and_refused() -> None:
    joint, view, inputs = two_party_deck()
    made = shuffle_deck(CONTEXT, 0, 0, joint.combined, inputs)
    outputs = list(made.outputs)
    outputs[0], outputs[1] = outputs[1], outputs[0]
    with pytest.raises(FairnessError, match="not proven correct") as caught:
        view.accept_shuffle(0, tampered(made, outputs))
    assert caught.value.blamed == 0 and view.steps_done == 0


def test_replaced_card_is_refused() -> None:
    """The shuffler proves a shuffle of a deck where one card became another (a stacked deck)."""
    joint, view, inputs = two_party_deck()
    stacked = list(inputs)
    stacked[0] = open_deck([SMALL[1]], joint.combined)[0]
    made = shuffle_deck(CONTEXT, 0, 0, joint.combined, stacked)
    with pytest.raises(FairnessError, match="not proven correct"):
        view.accept_shuffle(0, made.encode())


def test_one_reencrypted_card_swapped_for_a_fresh_encryption_is_refused() -> None:
    joint, view, inputs = two_party_deck()
    made = shuffle_deck(CONTEXT, 0, 0, joint.combined, inputs)
    outputs = list(made.outputs)
    outputs[3] = open_deck([SMALL[0]], joint.combined)[0].reencrypt(joint.combined, Scalar.random())
    with pytest.raises(FairnessError):
        view.accept_shuffle(0, tampered(made, outputs))


def test_proof_altered_anywhere_is_refused() -> None:
    joint, view, inputs = two_party_deck()
    wire = shuffle_deck(CONTEXT, 0, 0, joint.combined, inputs).encode()
    n = len(SMALL)
    # one scalar in each region: challenge, s1..s4, s-hat, s-prime
    for index in [0, 1, 2, 3, 4, 5, 5 + n]:
        offset = (4 * n + 3 + index) * 32
        scalar = (int.from_bytes(wire[offset : offset + 32], "little") + 1) % ORDER
        bad = wire[:offset] + scalar.to_bytes(32, "little") + wire[offset + 32 :]
        with pytest.raises(FairnessError):
            view.accept_shuffle(0, bad)
    for index in range(3):  # t3, t4b, t4a: another group element
        offset = (4 * n + index) * 32
        bad = wire[:offset] + base_times(Scalar.random()).data + wire[offset + 32 :]
        with pytest.raises(FairnessError, match="not proven correct"):
            view.accept_shuffle(0, bad)


@pytest.mark.parametrize(
    "field", ["table", "round", "epoch", "party", "step", "key"], ids=lambda f: f"other-{f}"
)
def test_shuffle_proof_replayed_elsewhere_is_refused(field: str) -> None:
    joint, _view, inputs = two_party_deck()
    made = shuffle_deck(CONTEXT, 0, 0, joint.combined, inputs)
    verify_shuffle(made, CONTEXT, 0, 0, joint.combined, inputs)  # it holds where it was made
    context, party, step, key = CONTEXT, 0, 0, joint.combined
    if field == "table":
        context = ProofContext("another-table", 3, 0)
    elif field == "round":
        context = ProofContext(CONTEXT.table, 4, 0)
    elif field == "epoch":
        context = ProofContext(CONTEXT.table, 3, 1)
    elif field == "party":
        party = 1
    elif field == "step":
        step = 1
    else:
        key = joint.combined + BASE
    with pytest.raises(FairnessError):
        verify_shuffle(made, context, party, step, key, inputs)


def test_shuffle_out_of_turn_or_twice_is_refused() -> None:
    joint, view, _inputs = two_party_deck()
    own = MentalDeck(CONTEXT, joint, SMALL, [0, 1])
    first = own.shuffle(0)
    with pytest.raises(FairnessError, match="out of turn") as caught:
        view.accept_shuffle(1, first)
    assert caught.value.blamed == 1
    view.accept_shuffle(0, first)
    with pytest.raises(FairnessError, match="out of turn"):
        view.accept_shuffle(0, first)


def test_no_card_opens_before_every_shuffle() -> None:
    keys, joint = table_keys([0, 1])
    view = MentalDeck(CONTEXT, joint, SMALL, [0, 1])
    view.accept_shuffle(0, MentalDeck(CONTEXT, joint, SMALL, [0, 1]).shuffle(0))
    with pytest.raises(FairnessError, match="every shuffler"):
        view.share(keys[0], 0, 0)


# --- invalid points and scalars --------------------------------------------------------

ORDER_FOUR = bytes(32)  # y = 0: a point of order 4
NON_CANONICAL_IDENTITY = ((2**255 - 19) + 1).to_bytes(32, "little")


def bad_points() -> dict[str, bytes]:
    valid = base_times(Scalar.random()).data
    return {
        "identity": Point(b"\x01" + bytes(31)).data,
        "small order": ORDER_FOUR,
        "mixed order": sodium.crypto_core_ed25519_add(valid, ORDER_FOUR),
        "non-canonical": NON_CANONICAL_IDENTITY,
        "off the curve": next(
            bytes([i]) + bytes(31)
            for i in range(2, 255)
            if not sodium.crypto_core_ed25519_is_valid_point(bytes([i]) + bytes(31))
        ),
    }


@pytest.mark.parametrize("kind", list(bad_points()))
def test_invalid_point_in_a_shuffle_is_refused(kind: str) -> None:
    joint, view, inputs = two_party_deck()
    wire = shuffle_deck(CONTEXT, 0, 0, joint.combined, inputs).encode()
    for offset in (0, 32, len(SMALL) * 64, len(SMALL) * 96):  # outputs a and b, commitments, chain
        bad = wire[:offset] + bad_points()[kind] + wire[offset + 32 :]
        with pytest.raises(FairnessError, match="not a valid group element") as caught:
            view.accept_shuffle(0, bad)
        assert caught.value.blamed == 0


@pytest.mark.parametrize("kind", list(bad_points()))
def test_invalid_point_as_share_or_key_is_refused(kind: str) -> None:
    keys, joint = table_keys([0, 1])
    views = shuffled_everywhere(SMALL, keys, joint)
    share = views[1].share(keys[1], 1, 0)
    with pytest.raises(FairnessError, match="not a valid group element"):
        views[0].accept_share(1, 0, bad_points()[kind] + share[32:])
    announcement = keys[1].announce(CONTEXT, 1).encode()
    with pytest.raises(FairnessError, match="not a valid group element"):
        KeyAnnouncement.decode(bad_points()[kind] + announcement[32:], 1)


def test_unreduced_scalar_is_refused() -> None:
    keys, joint = table_keys([0, 1])
    views = shuffled_everywhere(SMALL, keys, joint)
    share = views[1].share(keys[1], 1, 0)
    unreduced = (int.from_bytes(share[64:], "little") + ORDER).to_bytes(32, "little")
    with pytest.raises(FairnessError, match="canonical scalar"):
        views[0].accept_share(1, 0, share[:64] + unreduced)


# --- bad shares and keys ---------------------------------------------------------------


def test_bad_share_is_blamed_on_its_sender() -> None:
    keys, joint = table_keys([0, 1, 2])
    views = shuffled_everywhere(SMALL, keys, joint)
    honest = DecryptionShare.decode(views[2].share(keys[2], 2, 4), 2)
    cases = {
        "other value": DecryptionShare(
            honest.value + BASE, honest.proof_challenge, honest.response
        ),
        "other position": DecryptionShare.decode(views[2].share(keys[2], 2, 5), 2),
        "made with a wrong key": make_share(
            RoundKey.generate(), views[2].ciphertext(4), CONTEXT, 2, 4
        ),
        "another party's": DecryptionShare.decode(views[1].share(keys[1], 1, 4), 1),
    }
    for share in cases.values():
        with pytest.raises(FairnessError, match="decryption share for deck position 4") as caught:
            views[0].accept_share(2, 4, share.encode())
        assert caught.value.blamed == 2


def test_share_replayed_from_another_round_is_refused() -> None:
    keys, joint = table_keys([0, 1])
    views = shuffled_everywhere(SMALL, keys, joint)
    ciphertext = views[0].ciphertext(2)
    share = make_share(keys[1], ciphertext, ProofContext(CONTEXT.table, 2, 0), 1, 2)
    with pytest.raises(FairnessError):
        views[0].accept_share(1, 2, share.encode())


def test_key_announcement_replayed_or_borrowed_is_refused() -> None:
    key = RoundKey.generate()
    announcement = key.announce(CONTEXT, 1)
    announcement.verify(CONTEXT, 1)
    for context, party in [(CONTEXT, 2), (ProofContext(CONTEXT.table, 4, 0), 1)]:
        with pytest.raises(FairnessError, match="proof of knowledge") as caught:
            announcement.verify(context, party)
        assert caught.value.blamed == party
    with pytest.raises(FairnessError, match="proof of knowledge") as caught:
        JointKey.from_announcements(CONTEXT, {1: announcement, 2: announcement})
    assert caught.value.blamed == 2


def test_rogue_key_without_knowledge_is_refused() -> None:
    """A party announcing X = Y - sum(others) to control the joint key cannot prove it."""
    honest = RoundKey.generate()
    rogue_public = base_times(Scalar.random()) - honest.public
    forged = KeyAnnouncement(rogue_public, Scalar.random(), Scalar.random())
    with pytest.raises(FairnessError, match="proof of knowledge"):
        JointKey.from_announcements(CONTEXT, {0: honest.announce(CONTEXT, 0), 1: forged})


# --- decoders answer random bytes with FairnessError or a value ---------------------------

DECODERS: dict[str, Callable[[bytes], object]] = {
    "point": lambda data: Point.decode(data, 1),
    "scalar": lambda data: Scalar.decode(data, 1),
    "ciphertext": lambda data: Ciphertext.decode(data, 1),
    "key": lambda data: KeyAnnouncement.decode(data, 1),
    "share": lambda data: DecryptionShare.decode(data, 1),
    "shuffle": lambda data: Shuffle.decode(data, 2, 1),
}
SIZES = {
    "point": 32,
    "scalar": 32,
    "ciphertext": 64,
    "key": KEY_ANNOUNCEMENT_SIZE,
    "share": SHARE_SIZE,
    "shuffle": shuffle_size(2),
}


@settings(max_examples=300)
@given(st.sampled_from(sorted(DECODERS)), st.data())
def test_decoders_answer_random_bytes_with_fairness_error(name: str, data: st.DataObject) -> None:
    size = SIZES[name]
    raw = data.draw(
        st.one_of(st.binary(max_size=size + 40), st.binary(min_size=size, max_size=size))
    )
    try:
        DECODERS[name](raw)
    except FairnessError as error:
        assert error.blamed == 1
    else:
        assert len(raw) == size


@settings(max_examples=100)
@given(st.binary(min_size=32, max_size=32))
def test_decoded_points_are_in_the_prime_order_group(raw: bytes) -> None:
    try:
        point = Point.decode(raw, 1)
    except FairnessError:
        return
    assert sodium.crypto_core_ed25519_is_valid_point(point.data) and not point.is_identity


@settings(max_examples=10, deadline=None)
@given(st.permutations(list(range(len(SMALL)))))
def test_any_permutation_is_proven_and_moves_each_card_where_it_says(perm: list[int]) -> None:
    keys, joint = table_keys([0])
    inputs = open_deck(SMALL, joint.combined)
    made = shuffle_deck(CONTEXT, 0, 0, joint.combined, inputs, perm)
    verify_shuffle(made, CONTEXT, 0, 0, joint.combined, inputs)
    book = CardBook(SMALL)
    opened = [book.card(output.b - output.a * keys[0].secret, 0) for output in made.outputs]
    assert opened == [SMALL[i] for i in perm]


@pytest.mark.parametrize("cards", [FRENCH, HEKATA], ids=["zodiak", "hekata"])
def test_open_deck_shortcut_computes_the_same_proof(cards: list[str]) -> None:
    """A first shuffle made or checked with the open deck's shortcut (FAIRNESS.md A5) is the
    same proof as without it: each checks the other's, and a stacked deck fails both ways."""
    _, joint = table_keys([0, 1])
    inputs = open_deck(cards, joint.combined)
    fast = shuffle_deck(CONTEXT, 0, 0, joint.combined, inputs, open_cards=cards)
    plain = shuffle_deck(CONTEXT, 0, 0, joint.combined, inputs)
    for made in (fast, plain):
        verify_shuffle(made, CONTEXT, 0, 0, joint.combined, inputs)
        verify_shuffle(made, CONTEXT, 0, 0, joint.combined, inputs, open_cards=cards)
    other = next(card for card in cards if card != cards[0])
    stacked = [other, *cards[1:]]  # the first card became another
    cheat = shuffle_deck(CONTEXT, 0, 0, joint.combined, open_deck(stacked, joint.combined),
                         open_cards=stacked)
    for shortcut in (None, cards):
        with pytest.raises(FairnessError, match="not proven correct"):
            verify_shuffle(cheat, CONTEXT, 0, 0, joint.combined, inputs, open_cards=shortcut)
