"""A round of mental-poker dealing as its messages (FAIRNESS.md A8), between four parties in
this process: three people and the host's key for its bot. Every party ends knowing exactly its
own cards and the face-up ones; each kind of bad message is refused, blamed on its sender, and
leaves nothing half-applied."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cards import french_deck
from netplay.fair.commit import TABLE, FairnessError
from netplay.fair.context import BOT_PARTY
from netplay.fair.mental_round import MentalRound

FRENCH = [str(card) for card in french_deck()]
PARTIES = (0, 1, 2, BOT_PARTY)
HAND = 7


def everyone_hears(rounds: dict[int, MentalRound], sender: int, msg: dict[str, Any]) -> None:
    """The host forwards `msg` to every other party, which checks it."""
    for party, view in rounds.items():
        if party != sender:
            view.receive(sender, msg)


def dealt_table(round_no: int = 1) -> dict[int, MentalRound]:
    """Four parties after keys, the chain of shuffles, and a Zodiak deal: 7 cards to each seat
    (seat 3 is the bot, party 255), then the pile's first card face up."""
    rounds = {p: MentalRound("table-7c", round_no, p, PARTIES) for p in PARTIES}
    for party, view in rounds.items():
        everyone_hears(rounds, party, view.key_message())
    for view in rounds.values():
        view.start_epoch(FRENCH)
    for party in PARTIES:  # in party order, each after checking the previous ones
        msg = rounds[party].shuffle_message()
        assert msg is not None and len(msg["deck"]) == (6 * 52 + 8) * 32
        everyone_hears(rounds, party, msg)
    layout = [seat if seat != 3 else BOT_PARTY for seat in range(4) for _ in range(HAND)]
    for view in rounds.values():
        assert view.assign(0, [*layout, TABLE]) == list(range(29))
    for party, view in rounds.items():
        theirs = [q for q, owner in enumerate([*layout, TABLE]) if owner != party]
        everyone_hears(rounds, party, view.shares_message(0, theirs))
    return rounds


def test_each_party_opens_its_own_hand_and_the_table_card_only() -> None:
    rounds = dealt_table()
    hands = {party: sorted(view.my_cards().values()) for party, view in rounds.items()}
    assert all(len(hand) == HAND for hand in hands.values())
    every_card = [card for hand in hands.values() for card in hand]
    table = {view.known[(0, 28)] for view in rounds.values()}
    assert len(table) == 1 and len(set(every_card) | table) == 29
    for party, view in rounds.items():
        assert set(view.known.values()) == set(hands[party]) | table  # nothing of anyone else
    host = rounds[BOT_PARTY]  # the host holds only the bots' key: it never sees a person's card
    assert not set(host.known.values()) & {card for p in (0, 1, 2) for card in hands[p]}


def test_a_draw_a_face_up_play_and_a_reshuffle() -> None:
    rounds = dealt_table()
    for view in rounds.values():  # seat 1 draws position 29
        assert view.assign(0, [1]) == [29]
    for party in (0, 2, BOT_PARTY):
        everyone_hears(rounds, party, rounds[party].shares_message(0, [29]))
    drawn = rounds[1].known[(0, 29)]
    assert all((0, 29) not in rounds[p].known for p in (0, 2, BOT_PARTY))
    everyone_hears(rounds, 1, rounds[1].shares_message(0, [29]))  # seat 1 plays it face up
    assert {view.known[(0, 29)] for view in rounds.values()} == {drawn}

    pile = FRENCH[:10]  # the cards under the pile's top card, known to all
    for view in rounds.values():
        assert view.start_epoch(pile) == 1
    for party in PARTIES:
        everyone_hears(rounds, party, rounds[party].shuffle_message())  # type: ignore[arg-type]
    for view in rounds.values():
        view.assign(1, [2])
    for party in (0, 1, BOT_PARTY):
        everyone_hears(rounds, party, rounds[party].shares_message(1, [0]))
    assert rounds[2].known[(1, 0)] in pile


def state(view: MentalRound) -> tuple[object, ...]:
    """Everything a message could change in a party's view."""
    return ({k: dict(v) for k, v in view.shares.items()},
            {k: dict(v) for k, v in view.unchecked.items()}, dict(view.known), set(view.announced),
            [(deck.steps_done, deck.ciphertexts) for deck in view.decks.values()])


def refused(view: MentalRound, sender: int, msg: dict[str, Any], reason: str) -> None:
    """`msg` from `sender` is refused, blamed on the sender, and changes nothing."""
    before = state(view)
    with pytest.raises(FairnessError, match=reason) as caught:
        view.receive(sender, msg)
    assert caught.value.blamed == sender
    assert state(view) == before


def test_bad_messages_are_blamed_on_their_sender() -> None:
    rounds = dealt_table()
    seat0, seat1 = rounds[0], rounds[1]
    for view in rounds.values():
        view.assign(0, [2])  # position 29 goes to seat 2
    honest = seat1.shares_message(0, [29])
    seat0.receive(1, honest)
    refused(seat0, 1, honest, "twice")
    refused(seat0, 1, {**honest, "positions": [30]}, "not dealt yet")
    refused(seat0, 1, {**honest, "shares": honest["shares"][:-1]}, "96 bytes")
    forged = seat1.shares_message(0, [28])  # a share for another position, sent as 29's
    refused(rounds[2], 1, {**forged, "positions": [29]}, "does not hold")
    refused(seat0, 1, {**honest, "round": 2}, "not for this round")
    refused(seat0, 1, {"t": "mp_key", "round": 1, "epoch": 0, "key": bytes(96)}, "second")
    refused(seat0, 7, honest, "not another party")
    refused(seat0, 1, {"t": "move", "round": 1}, "no part of mental poker")


def test_keys_and_shuffles_from_elsewhere_are_refused() -> None:
    other_round = MentalRound("table-7c", 2, 1, PARTIES)
    fresh = MentalRound("table-7c", 1, 0, PARTIES)
    refused(fresh, 1, {**other_round.key_message(), "round": 1}, "proof of knowledge")
    refused(fresh, 1, {"t": "mp_shuffle", "round": 1, "epoch": 0, "step": 0, "deck": b""},
            "before every round key")

    rounds = {p: MentalRound("table-7c", 1, p, PARTIES) for p in PARTIES}
    for party, view in rounds.items():
        everyone_hears(rounds, party, view.key_message())
    for view in rounds.values():
        view.start_epoch(FRENCH[:8])
    first = rounds[0].shuffle_message()
    assert first is not None and rounds[1].shuffle_message() is None  # not its turn yet
    refused(rounds[2], 1, {**first, "step": 0}, "out of turn")
    refused(rounds[2], 0, {**first, "step": 1}, "another step")
    rounds[2].receive(0, first)
    refused(rounds[2], 0, first, "another step")


values = st.one_of(st.none(), st.booleans(), st.integers(-5, 300), st.text(max_size=12),
                   st.binary(max_size=200), st.lists(st.integers(-2, 40), max_size=4))
garbage = st.fixed_dictionaries(
    {"t": st.sampled_from(["mp_key", "mp_shuffle", "mp_shares", "x"]) | values,
     "round": st.sampled_from([1]) | values},
    optional={name: values for name in ("epoch", "step", "positions", "shares", "key", "deck")},
)


@cache
def ready_table() -> dict[int, MentalRound]:
    """One dealt table, shared by the examples below (none may change it)."""
    return dealt_table()


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([1, 2, BOT_PARTY]) | st.integers(-3, 300), garbage)
def test_garbage_is_refused_with_fairness_error_and_changes_nothing(sender: int,
                                                                     msg: dict) -> None:
    view = ready_table()[0]
    before = state(view)
    with pytest.raises(FairnessError):
        view.receive(sender, msg)
    assert state(view) == before


def test_a_bad_share_of_someone_elses_card_is_blamed_when_it_matters() -> None:
    """Its owner refuses it at once; a bystander, which cannot open that card anyway, blames
    its sender as soon as the card is played face up (FAIRNESS.md A8, "Blame")."""
    rounds = dealt_table()
    for view in rounds.values():
        view.assign(0, [2])  # position 29 goes to seat 2
    for party in (0, BOT_PARTY):
        everyone_hears(rounds, party, rounds[party].shares_message(0, [29]))
    forged = {**rounds[1].shares_message(0, [28]), "positions": [29]}
    refused(rounds[2], 1, forged, "does not hold")
    rounds[0].receive(1, forged)  # a bystander keeps it unchecked: it opens nothing yet
    face_up = rounds[2].shares_message(0, [29])
    with pytest.raises(FairnessError, match="position 29 does not hold") as caught:
        rounds[0].receive(2, face_up)
    assert caught.value.blamed == 1 and (0, 29) not in rounds[0].known


def test_a_person_who_leaves_hands_the_host_its_key_and_the_round_goes_on() -> None:
    """FAIRNESS.md A8: the host then sees that seat's cards and plays them for it."""
    rounds = dealt_table()
    host, leaving = rounds[BOT_PARTY], rounds[2]
    with pytest.raises(FairnessError, match="not its round key") as caught:
        host.adopt(2, rounds[1].handover_secret())
    assert caught.value.blamed == 2
    host.adopt(2, leaving.handover_secret())
    assert host.my_cards(2) == leaving.my_cards()  # the host sees its hand now
    for view in rounds.values():
        view.assign(0, [2])  # a draw for the seat the host now plays
    for party in (0, 1):
        everyone_hears(rounds, party, rounds[party].shares_message(0, [29]))
    everyone_hears(rounds, BOT_PARTY, host.shares_message(0, [29]))
    assert (0, 29) in host.my_cards(2)
    face_up = host.shares_message(0, [29], party=2)  # the host plays it face up for seat 2
    for party in (0, 1):
        rounds[party].receive(2, face_up)
        assert rounds[party].known[(0, 29)] == host.known[(0, 29)]


def test_a_deal_made_again_after_a_void_takes_nothing_from_the_voided_one() -> None:
    """FAIRNESS.md A8: the new deal has fresh keys and starts past the voided epochs."""
    voided = {p: MentalRound("table-7c", 1, p, PARTIES) for p in PARTIES}
    for party, view in voided.items():
        everyone_hears(voided, party, view.key_message())
    voided[0].start_epoch(FRENCH)
    old_shuffle = voided[0].shuffle_message()
    assert old_shuffle is not None

    again = {p: MentalRound("table-7c", 1, p, PARTIES, first_epoch=1) for p in PARTIES}
    old_key = voided[1].announced[1].encode()
    refused(again[0], 1, {"t": "mp_key", "round": 1, "epoch": 0, "key": old_key}, "first epoch")
    refused(again[0], 1, {"t": "mp_key", "round": 1, "epoch": 1, "key": old_key},
            "proof of knowledge")
    for party, view in again.items():
        everyone_hears(again, party, view.key_message())
    for view in again.values():
        assert view.start_epoch(FRENCH) == 1
    refused(again[1], 0, old_shuffle, "not the current")
    refused(again[1], 0, {**old_shuffle, "epoch": 1}, "not proven correct")
