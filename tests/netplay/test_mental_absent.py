"""A person who leaves a round dealt by mental poker (FAIRNESS.md A8, "A person who stays
away"): a key handed over lets the host's view play the seat to the end of the round, and a
deal made again after a void, with the host's bots' key in the seat, ignores what was sent for
the voided deal. Every party runs `MentalPlay` in this process; the host forwards in one order."""

from __future__ import annotations

from typing import Any

import pytest

from engine.bots import make_bot
from netplay.fair.commit import FairnessError
from netplay.fair.context import BOT_PARTY
from netplay.fair.mental_play import MentalPlay
from tests.netplay.test_mental_play import outcome, table_of


def deliver(parties: dict[int, MentalPlay]) -> bool:
    """Every waiting message to every other view; a message naming a `party` (a key handed
    over) comes from that party. Whether any was sent."""
    sent = False
    for view, play in list(parties.items()):
        for msg in play.drain():
            sent = True
            body = dict(msg)
            sender = body.pop("party", view)
            for other_view, other in parties.items():
                if other_view != view and other.party != sender:
                    other.receive(sender, body)
    return sent


def play_moves(parties: dict[int, MentalPlay], count: int | None = None) -> int:
    """Bots play up to `count` moves (None: to the round's end) for whoever holds each seat."""
    made = 0
    bot = make_bot("greedy", 3)
    while count is None or made < count:
        if deliver(parties):
            continue
        movers = [play for play in parties.values() if play.state is not None and not play.moves
                  and not play.state.round_over and play.state.turn in play.my_seats()]
        if not movers:
            break
        play = movers[0]
        play.play(bot.choose(play.state.view(play.state.turn)))
        made += 1
    while deliver(parties):
        pass
    return made


@pytest.mark.parametrize("game", ["zodiak", "hekata"])
def test_a_key_handed_over_lets_the_host_play_the_seat_to_the_end(game: str) -> None:
    """Party 1 leaves after a few moves and hands its round secret to the host's view; the host
    opens that seat's cards, sends the shares it owed, plays it, and the round ends the same for
    the one who stayed and the host."""
    parties = table_of(game, 2, 3 if game == "zodiak" else 4)
    assert play_moves(parties, 4) == 4
    leaving = parties.pop(1)
    host = parties[BOT_PARTY]
    host.adopt(1, leaving.mental.handover_secret())
    assert 1 in host.my_seats()
    assert None not in host.state.hands[1]  # the seat's cards, for its bot
    play_moves(parties)
    assert len({outcome(play) for play in parties.values()}) == 1
    assert all(play.state.round_over and play.settled() for play in parties.values())


def test_a_secret_that_is_not_the_partys_key_is_refused_and_blamed() -> None:
    parties = table_of("zodiak", 2, 3)
    play_moves(parties, 1)
    with pytest.raises(FairnessError) as caught:
        parties[BOT_PARTY].adopt(1, parties[0].mental.handover_secret())
    assert caught.value.blamed == 1
    assert 1 not in parties[BOT_PARTY].held


def test_a_deal_made_again_after_a_void_ignores_the_voided_deal() -> None:
    """The host voids the deal (party 1 is gone) and every view deals again from the next epoch
    with the bots' key in seat 1: a message of the voided deal that crosses the void changes
    nothing, and the new deal plays to the same end for everyone."""
    parties = table_of("zodiak", 2, 3)
    play_moves(parties, 3)
    stale = parties[0].mental.shares_message(0, [0]) if parties[0].mental.owners[0][0] != 0 \
        else None
    epoch = parties[BOT_PARTY].mental.epoch
    seats = (0, BOT_PARTY, BOT_PARTY)
    again: dict[int, MentalPlay] = {
        party: MentalPlay("zodiak", "table-9f", 1, party, seats, old.signs, old.dealer,
                          old.scores, epoch + 1)
        for party, old in parties.items() if party in (0, BOT_PARTY)}
    if stale is not None:
        again[BOT_PARTY].receive(0, stale)  # of epoch 0: nothing of it holds
    old_move: dict[str, Any] = {"t": "move", "round": 1, "epoch": 0, "n": 0, "move": "draw"}
    again[BOT_PARTY].receive(0, old_move)
    del old_move["epoch"]  # a move of a deal whose first epoch is 0 may leave it out
    again[BOT_PARTY].receive(0, old_move)
    assert not again[BOT_PARTY].moves
    play_moves(again)
    assert len({outcome(play) for play in again.values()}) == 1
    assert min(again[0].mental.decks) == epoch + 1
