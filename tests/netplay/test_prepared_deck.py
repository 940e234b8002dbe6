"""The next round's deck, shuffled during this one (FAIRNESS.md A8, "Prepared deck"): every
party runs `MentalPlay` in this process and the messages go round in one order, as the host's
chain fixes it. A prepared deal opens every hand with shares alone; a deck named by another
digest is not followed; a broken proof in the preparation is blamed before any card of it
opens; what was prepared for a voided deal is refused in the deal made again."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.bots import make_bot
from engine.games import game_named
from netplay.fair.commit import FairnessError
from netplay.fair.context import BOT_PARTY
from netplay.fair.mental_play import MentalPlay
from netplay.fair.mental_round import WATCHER
from tests.netplay.test_mental_play import outcome, play_out, table_of
from tests.netplay.test_shuffle_chain_checks import broken_proof

TABLE = "table-9f"


def deliver(parties: dict[int, MentalPlay], heard: list[tuple[int, dict[str, Any]]],
            tamper: Any = None) -> bool:
    """Every waiting message to every other view, checks made as they come due; whether any
    message went."""
    sent = False
    for sender, play in parties.items():
        for msg in play.drain():
            sent = True
            if tamper is not None:
                msg = tamper(sender, msg)
            heard.append((sender, msg))
            for party, other in parties.items():
                if party != sender:
                    other.receive(sender, msg)
    for play in parties.values():
        if play.checks_due():
            play.check()
            sent = True
    return sent


def settle(parties: dict[int, MentalPlay], tamper: Any = None) -> list[tuple[int, dict[str, Any]]]:
    heard: list[tuple[int, dict[str, Any]]] = []
    while deliver(parties, heard, tamper):
        pass
    return heard


def next_round(parties: dict[int, MentalPlay], game: str) -> dict[int, MentalPlay]:
    """Round 2 for every view, of the deck each prepared during round 1."""
    rules = game_named(game)
    return {p: MentalPlay(game, TABLE, 2, play.party, play.seat_parties,
                          rules.signs_for([None] * len(play.seat_parties)), 1,
                          play.state.scores, prepared=play.next)
            for p, play in parties.items()}


@pytest.mark.parametrize(("game", "people", "players"), [
    ("zodiak", 2, 4), ("zodiak", 4, 4), ("hekata", 2, 2), ("hekata", 3, 4)])
def test_a_prepared_deck_deals_the_next_round_with_shares_alone(
        game: str, people: int, players: int) -> None:
    """Round 1 is played to its end (its next deck shuffled meanwhile); every view, a keyless
    watcher's too, names that deck by the same digest; round 2 of it deals every hand without
    a key or a shuffle sent, and ends the same for everyone."""
    parties = table_of(game, people, players, watchers=1)
    play_out(parties, seed=people + players)
    settle(parties)
    digests = {play.prepared_digest() for play in parties.values()}
    assert len(digests) == 1 and None not in digests
    round_two = next_round(parties, game)
    heard = settle(round_two)
    # Round 3's deck is prepared in turn, as soon as each party's cards of round 2 are open.
    assert {msg["t"] for _, msg in heard if msg["round"] == 2} == {"mp_shares"}
    assert {msg["t"] for _, msg in heard if msg["round"] == 3} == {"mp_key", "mp_shuffle"}
    for play in round_two.values():
        assert play.state is not None
        assert all(None not in play.state.hands[s] for s in play.my_seats())
    play_out(round_two, seed=5)
    assert len({outcome(play) for play in round_two.values()}) == 1
    assert all(play.settled() for play in round_two.values())


def test_the_prepared_deck_is_none_of_the_cards_of_the_round_in_play() -> None:
    """The deck of round 2 is shuffled under round 2's own keys: round 1's shares open none of
    it, and nobody knows a card of it before round 2 deals (its digest names keys and deck)."""
    parties = table_of("zodiak", 2, 4)
    play_out(parties, seed=3)
    settle(parties)
    for play in parties.values():
        nxt = play.next
        assert nxt is not None and nxt.round_no == 2 and not nxt.known and not nxt.owners.get(0)
        assert nxt.joint is not None and nxt.joint != play.mental.joint


class Deaf(MentalPlay):
    """A keyless view that never hears the last shuffle of the next round's deck."""

    def receive(self, sender: int, msg: dict[str, Any]) -> None:
        if msg.get("t") == "mp_shuffle" and msg.get("round") == self.round_no + 1 \
                and msg.get("step") == len(self.mental.parties) - 1:
            return
        super().receive(sender, msg)


def test_a_view_that_missed_a_shuffle_of_the_next_deck_has_no_digest_to_match() -> None:
    """A view that heard every key but not the last shuffle cannot name the deck, so a deal of
    it is never followed on a guess (netplay/seat/mental.py then says mp_lost)."""
    parties = table_of("hekata", 2, 2)
    honest = parties[0]
    parties[WATCHER] = Deaf("hekata", TABLE, 1, WATCHER, honest.seat_parties, honest.signs, 0,
                            honest.scores)
    play_out(parties, seed=1)
    settle(parties)
    assert parties[0].prepared_digest() is not None
    assert parties[WATCHER].prepared_digest(checked=False) is None


def test_a_broken_proof_in_the_next_deck_is_blamed_before_any_card_of_it_opens() -> None:
    """Party 1's shuffle of round 2's deck has a broken proof: the first check of that chain
    blames party 1 (the host then voids the deal in play, netplay/table/mental.py), and no
    digest names that deck, so no deal of it is ever made."""
    parties = table_of("zodiak", 2, 3)

    def tamper(sender: int, msg: dict[str, Any]) -> dict[str, Any]:
        if sender == 1 and msg["t"] == "mp_shuffle" and msg["round"] == 2:
            return {**msg, "deck": broken_proof(msg["deck"], 52)}
        return msg

    bot = make_bot("greedy", 2)
    heard: list[tuple[int, dict[str, Any]]] = []
    with pytest.raises(FairnessError) as caught:
        while True:
            if deliver(parties, heard, tamper):
                continue
            movers = [play for p, play in parties.items() if play.state is not None
                      and not play.state.round_over and not play.moves
                      and play.seat_parties[play.state.turn] == p]
            if not movers:
                break
            movers[0].play(bot.choose(movers[0].state.view(movers[0].state.turn)))
    assert caught.value.blamed == 1
    for play in parties.values():
        assert play.prepared_digest() is None
        assert play.next is not None and not play.next.known


def test_a_key_prepared_for_a_voided_deal_is_refused_by_the_deal_made_again() -> None:
    """The deck prepared during a deal belongs to that deal's epoch: after a void, the deal
    made again (from epoch 1) takes no next-round key of epoch 0 as its own."""
    parties = table_of("zodiak", 2, 3)
    play_out(parties, seed=4)
    settle(parties)
    prepared = parties[0].next
    assert prepared is not None and prepared.first_epoch == 0
    old_key = {"t": "mp_key", "round": 2, "epoch": 0, "key": prepared.announced[0].encode()}
    again = MentalPlay("zodiak", TABLE, 1, 1, parties[1].seat_parties,
                       parties[1].signs, 0, (0,) * 3, first_epoch=1)
    again.receive(0, old_key)  # of an epoch below the deal's first: dropped, as a voided deal's
    assert again.next is None or 0 not in again.next.announced
    assert not any(m for m in again.early if m[1] is old_key)


def test_a_prepared_deck_of_other_parties_is_refused() -> None:
    """A deck prepared by other parties (a person since dealt out) cannot deal this round."""
    parties = table_of("hekata", 2, 2)
    play_out(parties, seed=6)
    settle(parties)
    play = parties[0]
    with pytest.raises(FairnessError, match="another round or parties"):
        MentalPlay("hekata", TABLE, 2, 0, (0, BOT_PARTY), play.signs, 1, play.state.scores,
                   prepared=play.next)


MUTATIONS = ("again", "epoch", "step", "party", "deck", "key")


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutation=st.sampled_from(MUTATIONS), flip=st.integers(0, 10_000))
def test_a_wrong_next_round_message_is_blamed_on_its_sender_and_changes_nothing(
        mutation: str, flip: int) -> None:
    """A seat sends a well-formed but wrong message for the next round's deck (its key again,
    another epoch or step, as another party, a deck or key with a byte changed): the receiving
    view blames that seat or drops it (a voided deal's epoch), keeps the next deck's state as
    it was, and the honest round and its next deck go on to agree for everyone."""
    parties = table_of("zodiak", 2, 3)
    heard = settle(parties)  # the deal, and the keys and shuffles of round 2's deck
    sent = [(s, m) for s, m in heard if m["round"] == 2 and s == 1]
    key = next(m for _, m in sent if m["t"] == "mp_key")
    shuffle = next((m for _, m in sent if m["t"] == "mp_shuffle"), key)
    wrong: dict[str, Any] = {
        "again": key,
        "epoch": {**key, "epoch": 1 + flip % 3},
        "step": {**shuffle, "step": (shuffle.get("step", 0) + 1 + flip % 2)},
        "party": shuffle,
        "deck": {**shuffle, "deck": flipped(shuffle.get("deck", b""), flip)},
        "key": {**key, "key": flipped(key["key"], flip)},
    }[mutation]
    sender = BOT_PARTY if mutation == "party" else 1
    view = parties[0]
    before = (dict(view.next.announced), view.next.epoch,
              {e: d.steps_done for e, d in view.next.decks.items()})
    try:
        view.receive(sender, wrong)
    except FairnessError as exc:
        assert exc.blamed == sender
    after = (dict(view.next.announced), view.next.epoch,
             {e: d.steps_done for e, d in view.next.decks.items()})
    assert after == before
    play_out(parties, seed=flip % 7)
    settle(parties)
    assert len({outcome(play) for play in parties.values()}) == 1
    assert len({play.prepared_digest() for play in parties.values()} - {None}) == 1


def flipped(data: bytes, at: int) -> bytes:
    """`data` with one byte changed (empty stays empty)."""
    if not data:
        return data
    i = at % len(data)
    return data[:i] + bytes([data[i] ^ 0x41]) + data[i + 1:]
