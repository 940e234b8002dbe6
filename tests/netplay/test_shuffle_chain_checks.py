"""A chain of shuffles whose proofs are checked together at its end (FAIRNESS.md A5, "Check";
A8, "Shuffle"): each shuffler shuffles the last deck without waiting for its check, every proof
is checked before any share of the deck is made, a proof that fails is blamed on its own
shuffler (not on those who shuffled on top of it) and no card of that deck ever opens."""

from __future__ import annotations

from typing import Any

import pytest
from nacl import bindings as sodium

from engine.games import game_named
from netplay.fair.commit import FairnessError
from netplay.fair.context import ProofContext
from netplay.fair.deck import MentalDeck
from netplay.fair.elgamal import Ciphertext
from netplay.fair.group import ORDER, Scalar, base_times
from netplay.fair.keys import JointKey, RoundKey
from netplay.fair.mental_play import MentalPlay
from netplay.fair.shuffle import shuffle_deck
from netplay.fair.shuffle_check import ShuffleClaim, verify_shuffles
from tests.netplay.test_mental_poker import FRENCH, ORDER_FOUR, SMALL

CONTEXT = ProofContext("table-chain", 2, 0)
PARTIES = (0, 1, 2, 3)


def table() -> tuple[dict[int, RoundKey], JointKey]:
    keys = {party: RoundKey.generate() for party in PARTIES}
    return keys, JointKey.from_announcements(
        CONTEXT, {party: key.announce(CONTEXT, party) for party, key in keys.items()})


def broken_proof(wire: bytes, cards: int) -> bytes:
    """The same shuffled deck with its proof's s1 changed: the deck is fine, its proof is not."""
    offset = (4 * cards + 3 + 1) * 32
    s1 = (int.from_bytes(wire[offset:offset + 32], "little") + 1) % ORDER
    return wire[:offset] + s1.to_bytes(32, "little") + wire[offset + 32:]


def test_a_chain_checked_at_its_end_opens_every_card_for_every_checker() -> None:
    """Every party shuffles in turn without checking; at the end each checks the others'
    proofs at once (its own outputs replaced by its inputs and factors) and the deck opens."""
    keys, joint = table()
    views = {p: MentalDeck(CONTEXT, joint, FRENCH, list(PARTIES)) for p in PARTIES}
    for shuffler in PARTIES:
        wire = views[shuffler].shuffle(shuffler)
        for party, view in views.items():
            if party != shuffler:
                view.accept_shuffle(shuffler, wire, check=False)
    assert all(view.shuffled and not view.ready for view in views.values())
    for view in views.values():
        view.check()
        assert view.ready
    ciphertext = views[0].ciphertext(5)
    card = views[0].book.card(ciphertext.b - sum(
        (ciphertext.a * keys[p].secret for p in PARTIES[1:]), ciphertext.a * keys[0].secret), 0)
    assert card in FRENCH


@pytest.mark.parametrize("cheat", PARTIES)
def test_a_broken_proof_is_blamed_on_its_shuffler_after_others_shuffled_on_top(
        cheat: int) -> None:
    """A proof that fails, sent with a good deck that later shufflers shuffle on, is found at the
    chain's end by every other party, blamed on its shuffler with its step, and the deck stays
    refused: no share can be made of it, and checking again says the same without work."""
    _keys, joint = table()
    views = {p: MentalDeck(CONTEXT, joint, SMALL, list(PARTIES)) for p in PARTIES}
    for shuffler in PARTIES:
        wire = views[shuffler].shuffle(shuffler)
        if shuffler == cheat:
            wire = broken_proof(wire, len(SMALL))
        for party, view in views.items():
            if party != shuffler:
                view.accept_shuffle(shuffler, wire, check=False)
    for party, view in views.items():
        if party == cheat:
            continue
        for _ in range(2):
            with pytest.raises(FairnessError, match=rf"step {cheat} of the chain\) is not proven"
                               ) as caught:
                view.check()
            assert caught.value.blamed == cheat
        assert not view.ready and view.refused is not None
        with pytest.raises(FairnessError, match="every proof is checked"):
            view.ciphertext(0)


def test_a_point_outside_the_group_stops_the_next_shuffler_and_blames_its_sender() -> None:
    """The next shuffler takes a deck unchecked; a mixed-order point in it makes its own shuffle
    fail, and the check it then runs blames the party that sent the point."""
    _keys, joint = table()
    first = MentalDeck(CONTEXT, joint, SMALL, list(PARTIES))
    wire = first.shuffle(0)
    bad = sodium.crypto_core_ed25519_add(base_times(Scalar.random()).data, ORDER_FOUR)
    wire = wire[:32] + bad + wire[64:]  # the first output's b
    second = MentalDeck(CONTEXT, joint, SMALL, list(PARTIES))
    second.accept_shuffle(0, wire, check=False)
    with pytest.raises(FairnessError, match="not a valid group element") as caught:
        second.shuffle(1)
    assert caught.value.blamed == 0


def test_one_false_equation_among_several_checked_together_is_found() -> None:
    """The random combination of a chain's equations fails when one shuffle's t4 is off by
    anything, and the one-by-one pass blames that shuffle alone."""
    _keys, joint = table()
    key = joint.combined
    deck: tuple[Ciphertext, ...] = MentalDeck(CONTEXT, joint, SMALL, list(PARTIES)).ciphertexts
    claims = []
    for step, party in enumerate(PARTIES):
        made = shuffle_deck(CONTEXT, party, step, key, deck)
        claims.append(ShuffleClaim(made, CONTEXT, party, step, key, deck))
        deck = made.outputs
    verify_shuffles(claims, SMALL)
    proof = claims[2].shuffle.proof
    shifted = type(proof)(**{**proof.__dict__, "t4_b": proof.t4_b + base_times(Scalar.of(1))})
    claims[2] = ShuffleClaim(type(claims[2].shuffle)(claims[2].shuffle.outputs, shifted),
                             CONTEXT, 2, 2, key, claims[2].inputs)
    with pytest.raises(FairnessError, match=r"step 2 of the chain") as caught:
        verify_shuffles(claims, SMALL)
    assert caught.value.blamed == 2


def plays(defer: bool) -> dict[int, MentalPlay]:
    signs = game_named("zodiak").signs_for([None] * 4)
    return {p: MentalPlay("zodiak", "table-chain", 1, p, PARTIES, signs, 0, (0,) * 4,
                          defer_checks=defer) for p in PARTIES}


def deliver(parties: dict[int, MentalPlay], tamper: Any = None) -> bool:
    sent = False
    for sender, play in parties.items():
        for msg in play.drain():
            sent = True
            if tamper is not None:
                msg = tamper(sender, msg)
            for party, other in parties.items():
                if party != sender:
                    other.receive(sender, msg)
    return sent


def test_players_share_nothing_of_a_chain_whose_middle_proof_fails() -> None:
    """Four players with deferred checks: party 1's proof is broken, parties 2 and 3 shuffle on
    top of its deck, then every other party's check blames party 1, and no player sends a share
    of that deck or knows any card of it."""
    parties = plays(defer=True)

    def tamper(sender: int, msg: dict[str, Any]) -> dict[str, Any]:
        if sender == 1 and msg["t"] == "mp_shuffle":
            return {**msg, "deck": broken_proof(msg["deck"], len(FRENCH))}
        return msg

    while deliver(parties, tamper):
        pass
    assert all(play.mental.decks[0].steps_done == 4 for play in parties.values())
    for party, play in parties.items():
        if party == 1:
            continue
        assert play.checks_due()
        with pytest.raises(FairnessError, match=r"step 1 of the chain") as caught:
            play.check()
        assert caught.value.blamed == 1
        assert not play.checks_due() and play.state is None
    deliver(parties)
    for play in parties.values():
        assert play.mental.known == {} and not play.mental.shares


def test_players_with_deferred_checks_deal_the_same_round() -> None:
    """The same four players, all honest, check at the chain's end and every one opens its own
    seven cards and the pile's first card."""
    parties = plays(defer=True)
    while True:
        if deliver(parties):
            continue
        due = [play for play in parties.values() if play.checks_due()]
        if not due:
            break
        for play in due:
            play.check()
    for play in parties.values():
        assert play.state is not None
        assert len(play.mental.my_cards()) == 7


def test_a_shuffle_prepared_in_advance_is_proven_and_its_plan_used_once() -> None:
    """FAIRNESS.md A5, "Offline": a later shuffler's permutation, factors and commitments are
    made before its inputs arrive; the shuffle made from them checks, and the plan is gone."""
    _keys, joint = table()
    views = {p: MentalDeck(CONTEXT, joint, SMALL, list(PARTIES)) for p in PARTIES}
    views[2].prepare(2)
    views[0].prepare(0)  # its turn is now: nothing to prepare
    assert set(views[2]._plans) == {2} and not views[0]._plans
    for shuffler in PARTIES:
        wire = views[shuffler].shuffle(shuffler)
        for party, view in views.items():
            if party != shuffler:
                view.accept_shuffle(shuffler, wire)
    assert not views[2]._plans and all(view.ready for view in views.values())
