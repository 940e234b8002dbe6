"""Zodiak, tui/RULES.md section 1: every rule, example and (our reading), one test or more each."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cards import Card, french_deck, parse_cards
from engine.errors import IllegalMove, RecordError
from engine.zodiak import (
    SIGN_CARDS,
    Draw,
    Run,
    ZodiakRound,
    follows,
    parse_move,
    parse_sign,
)


def C(text: str) -> Card:
    """One card from notation."""
    return Card.parse(text)


def make(
    hands: list[str], pile: str, stock: str = "", signs: list[str] | None = None,
    dealer: int | None = None, reshuffles: list[str] = (),  # type: ignore[assignment]
) -> ZodiakRound:
    """A round from notation; by default the last seat deals, so seat 0 moves first."""
    n = len(hands)
    return ZodiakRound.from_parts(
        [parse_cards(h) for h in hands], parse_cards(pile), parse_cards(stock),
        signs or ["aries"] * n, n - 1 if dealer is None else dealer,
        reshuffles=[parse_cards(r) for r in reshuffles],
    )


def play(state: ZodiakRound, text: str) -> None:
    """Play a move in notation (`draw` or a run)."""
    state.push(parse_move(text))


def runs(state: ZodiakRound) -> set[str]:
    """The legal runs of the seat to move, as text."""
    return {str(m) for m in state.legal_moves() if isinstance(m, Run)}


# -- 1.1 zodiac cards ----------------------------------------------------------


def test_sign_table() -> None:
    """RULES 1.1: the twelve signs name the twelve court cards of the table."""
    table = {
        "aries": "JC", "taurus": "KD", "gemini": "QS", "cancer": "JH", "leo": "KC",
        "virgo": "QD", "libra": "JS", "scorpio": "KH", "sagittarius": "QC",
        "capricorn": "JD", "aquarius": "KS", "pisces": "QH",
    }
    assert {s: str(c) for s, c in SIGN_CARDS.items()} == table
    assert len(set(SIGN_CARDS.values())) == 12
    assert parse_sign(" Leo ") == "leo"
    with pytest.raises(IllegalMove, match="not a zodiac sign"):
        parse_sign("ophiuchus")


def test_shared_signs_are_special_for_both() -> None:
    """RULES 1.1 (our reading): two players may share a sign; the card is special for both."""
    state = make(["KC 2C", "5C 6D", "9C"], "3C", "2D 3D 4D 5D 6H 7H 8S 9S 10S",
                 ["leo", "leo", "virgo"])
    assert state.zodiac_card(0) == state.zodiac_card(1) == C("KC")
    play(state, "KC")
    assert state.turn == 1 and state.penalty == 7
    play(state, "draw")
    assert len(state.hands[1]) == 9
    # Seat 1 (also Leo) would make its own KC special too: check it with seat 1's card.
    other = make(["5C 6D", "KC 2C"], "3C", "2D 3D 4D 5D 6H 7H 8S 9S 10S", ["leo", "leo"], dealer=0)
    assert other.turn == 1
    play(other, "KC")
    assert other.penalty == 7 and other.turn == 0


def test_zodiac_card_is_ordinary_for_others() -> None:
    """RULES 1.1: a zodiac card is special only for its owner(s); for everyone else it
    is ordinary."""
    state = make(["KC 2C", "5C 6D"], "3C", "2D 3D", ["virgo", "leo"])
    play(state, "KC")  # seat 0 is Virgo: KC is Leo's card
    assert state.penalty == 0 and state.turn == 1


# -- 1.2 deal ------------------------------------------------------------------


def test_deal_seven_each_pile_and_stock() -> None:
    """RULES 1.2: seven cards each, the next card starts the pile, the rest is the stock."""
    deck = french_deck()
    random.Random(5).shuffle(deck)
    state = ZodiakRound.deal(deck, ["aries", "leo", "virgo"], dealer=1)
    assert [len(h) for h in state.hands] == [7, 7, 7]
    assert state.hands[0] == deck[:7] and state.hands[2] == deck[14:21]
    assert state.pile == [deck[21]] and state.stock == deck[22:]
    with pytest.raises(IllegalMove, match="needs 29 cards"):
        ZodiakRound.deal(deck[:20], ["aries"] * 4, 0)


@pytest.mark.parametrize("start", ["AS", "8H", "JC", "KD"])
def test_starting_card_has_no_effect(start: str) -> None:
    """RULES 1.2 (our reading): the starting card has no special effect, whatever it is."""
    state = make(["2S 3H", "4D 5C"], start, "6S 7S", ["aries", "taurus"])
    assert state.penalty == 0 and state.declared is None
    assert state.check(Draw()) is None


@pytest.mark.parametrize(("players", "dealer"), [(2, 0), (2, 1), (3, 2), (4, 1), (4, 3)])
def test_player_after_the_dealer_starts(players: int, dealer: int) -> None:
    """RULES 1.2 (our reading): the player after the dealer starts; play goes clockwise."""
    deck = french_deck()
    state = ZodiakRound.deal(deck, ["aries"] * players, dealer)
    first = (dealer + 1) % players
    assert state.turn == first
    state.push(Draw())
    assert state.turn == (first + 1) % players


def test_first_dealer_is_an_input_and_the_deal_passes_clockwise() -> None:
    """RULES 1.2 (our reading): the first dealer (drawn at random by the caller) passes the deal
    clockwise."""
    from engine.match import Match

    match = Match("zodiak", 3, ("aries", "leo", "virgo"), dealer=2)
    for expected in (2, 0, 1, 2):
        assert match.dealer == expected
        state = match.start_round(french_deck())
        assert state.dealer == expected and state.turn == (expected + 1) % 3
        state.blocked, state.turn = True, None  # finish it without play
        match.end_round(state)


# -- 1.3 a turn: runs and draws ------------------------------------------------


def test_rules_example_runs() -> None:
    """RULES 1.3 example: on 2H, hand 2S 3S 3C 4C 7H 8H may play 7H, 7H 8H and 2S 3S 3C 4C."""
    state = make(["2S 3S 3C 4C 7H 8H", "KD"], "2H", "5D")
    legal = runs(state)
    assert {"7H", "7H 8H", "2S 3S 3C 4C"} <= legal
    for text in ("7H", "7H 8H", "2S 3S 3C 4C"):
        assert state.is_legal(Run.parse(text))
    assert "3S 3C" not in legal  # 3S matches neither suit nor rank of 2H


def test_first_card_matches_suit_or_rank() -> None:
    """RULES 1.3: the first card must match the pile's top card by suit or by rank."""
    state = make(["9H 2C 5S", "KD"], "2H", "5D")
    state.check(Run.parse("9H"))
    state.check(Run.parse("2C"))
    with pytest.raises(IllegalMove, match="5S does not match 2H: same suit or same rank"):
        state.check(Run.parse("5S"))


def test_following_cards_same_rank_or_next_of_same_suit() -> None:
    """RULES 1.3: each following card has the same rank, or the same suit one rank apart."""
    state = make(["5H 6H 6C 5C 7C 9C", "KD"], "2H", "5D")
    state.check(Run.parse("5H 6H 6C 5C"))
    state.check(Run.parse("6H 6C 7C"))
    with pytest.raises(IllegalMove, match="9C does not follow 7C: same rank or next card"):
        state.check(Run.parse("6H 6C 7C 9C"))
    with pytest.raises(IllegalMove, match="does not follow"):
        state.check(Run.parse("5H 6C"))


def test_king_and_ace_are_not_adjacent() -> None:
    """RULES 1.3 (our reading): the ace is next to the two only; K and A are not adjacent."""
    assert follows(C("AS"), C("2S")) and follows(C("2S"), C("AS"))
    assert follows(C("QS"), C("KS"))
    assert not follows(C("KS"), C("AS")) and not follows(C("AS"), C("KS"))
    state = make(["KS AS 2S", "KD"], "QS", "5D")
    with pytest.raises(IllegalMove, match="AS does not follow KS"):
        state.check(Run.parse("KS AS"))
    state2 = make(["AS 2S 3S", "KD"], "AH", "5D")
    state2.check(Run.parse("AS 2S 3S"))


def test_draw_one_ends_the_turn_even_if_playable() -> None:
    """RULES 1.3: drawing takes one card and ends the turn at once, even if it could be played."""
    state = make(["KD", "QD"], "2H", "3H 4H")
    state.push(Draw())
    assert state.hands[0] == [C("KD"), C("3H")] and state.turn == 1
    assert state.stock == [C("4H")]


def test_draw_is_always_allowed() -> None:
    """RULES 1.3: there is no passing, but drawing is allowed even with a playable card."""
    state = make(["2H", "QD"], "3H", "4H")
    assert Draw() in list(state.legal_moves())
    state.push(Draw())


def test_empty_stock_and_single_card_pile_draws_nothing() -> None:
    """RULES 1.3 (our reading): with an empty stock and no card under the top, a draw draws nothing."""
    state = make(["KD", "QC", "JS"], "2H", "")
    effect = state.push(Draw())
    assert effect.drawn == () and state.hands[0] == [C("KD")]
    assert state.turn == 1 and not state.round_over


def test_cards_not_in_hand_and_repeated_cards_are_rejected() -> None:
    """RULES 1.3: a run is made of cards from the mover's hand, each once."""
    state = make(["2H 3H", "KD"], "4H", "5D")
    with pytest.raises(IllegalMove, match="5H is not in your hand"):
        state.check(Run.parse("5H"))
    with pytest.raises(IllegalMove):
        state.check(Run((C("3H"), C("3H"))))


def test_only_the_seat_to_move_may_move() -> None:
    """RULES 1.3: on their turn a player moves; nobody else may."""
    state = make(["2H", "3H", "4H"], "5H", "6D")
    with pytest.raises(IllegalMove, match="it is seat 0's turn, not seat 1's"):
        state.check(Run.parse("3H"), seat=1)
    with pytest.raises(IllegalMove, match="turn"):
        state.check(Draw(), seat=2)


# -- 1.4 special cards ---------------------------------------------------------


def test_wild_eight_on_anything_declares_a_suit() -> None:
    """RULES 1.4: an 8 alone may be played on anything and its player declares a suit."""
    state = make(["8S 3C", "4C 4D 5D"], "2H", "6D 7D")
    state.check(Run.parse("8S/D"))
    play(state, "8S/D")
    assert state.declared == "D" and state.top == C("8S")
    with pytest.raises(IllegalMove, match="4C does not follow the declared suit: play a diamonds"):
        state.check(Run.parse("4C"))
    play(state, "4D 5D")
    assert state.declared is None  # the declaration lasts until the next card is played


def test_eight_alone_must_declare_and_only_it_may() -> None:
    """RULES 1.4 and 3: an 8 alone names its suit after a slash; nothing else declares one."""
    with pytest.raises(IllegalMove, match="must name a suit"):
        Run.parse("8H")
    with pytest.raises(IllegalMove, match="only an eight played alone"):
        Run.parse("7H/S")
    with pytest.raises(IllegalMove, match="only an eight played alone"):
        Run.parse("8H 8D/S")
    assert str(Run.parse("8h/d")) == "8H/D"
    state = make(["8H 2C", "KD"], "2H", "5D")
    with pytest.raises(IllegalMove, match="must name a suit"):
        state.check(Run((C("8H"),)))
    with pytest.raises(IllegalMove, match="not a suit"):
        state.check(Run((C("8H"),), "X"))


def test_declaration_survives_draws() -> None:
    """RULES 1.4: the declaration lasts until the next card is played, through draws."""
    state = make(["8S 2C", "4C", "9C"], "2H", "6D 7D")
    play(state, "8S/H")
    play(state, "draw")
    assert state.declared == "H"
    with pytest.raises(IllegalMove, match="declared suit"):
        state.check(Run.parse("9C"))


def test_declared_suit_first_card_or_eight_alone() -> None:
    """RULES 1.3 (our reading): under a declared suit the first card is of that suit or an 8 alone."""
    state = make(["8S 3C", "8C 9C 8D 5D 5H", "KD"], "2H", "6D 7D")
    play(state, "8S/D")
    assert state.turn == 1
    state.check(Run.parse("8C/S"))  # another 8 alone, any suit
    state.check(Run.parse("5D 5H"))  # first card of the declared suit
    with pytest.raises(IllegalMove, match="declared suit"):
        state.check(Run.parse("8C 9C"))  # an eight not alone must follow the declared suit
    with pytest.raises(IllegalMove, match="declared suit"):
        state.check(Run.parse("5H 5D"))
    assert "8D 5D" not in runs(state)
    state.check(Run.parse("8D/C"))


def test_special_cards_inside_a_run_have_no_effect() -> None:
    """RULES 1.4: inside a run of two or more cards, 8s, aces and zodiac cards are ordinary."""
    state = make(["2S AS 9D", "3C"], "2H", "5D 6D")
    play(state, "2S AS")
    assert state.penalty == 0 and state.turn == 1
    state = make(["QC KC 9D", "3C"], "2C", "5D 6D", ["leo", "aries"])
    play(state, "QC KC")
    assert state.penalty == 0
    state = make(["7H 8H 9D", "3C"], "2H", "5D 6D")
    play(state, "7H 8H")
    assert state.declared is None and state.top == C("8H")


def test_ace_alone_makes_the_next_draw_two() -> None:
    """RULES 1.4: after an ace alone the next player draws 2 and loses the turn."""
    state = make(["AH 3C", "KD 9S", "QS"], "2H", "4D 5D 6D 7D")
    play(state, "AH")
    assert state.penalty == 2 and state.turn == 1
    effect = state.push(Draw())
    assert effect.drawn == (C("4D"), C("5D"))
    assert state.penalty == 0 and state.turn == 2


def test_aces_stack_two_four_six() -> None:
    """RULES 1.4: an ace alone answers an ace: the following player faces 4, then 6, and so on."""
    state = make(["AH 3C", "AS 9S", "AD QS", "AC 2D"], "2H", " ".join(["4D"] + ["5D 6D 7D 9D 10D"]))
    play(state, "AH")
    play(state, "AS")
    assert state.penalty == 4 and state.turn == 2
    play(state, "AD")
    assert state.penalty == 6 and state.turn == 3
    assert {str(m) for m in state.legal_moves()} == {"AC", "draw"}
    play(state, "draw")
    assert len(state.hands[3]) == 8 and state.turn == 0 and state.penalty == 0


def test_penalty_only_ace_alone_or_draw_all() -> None:
    """RULES 1.4 (our reading): facing a penalty the only choices are an ace alone or
    drawing it all."""
    state = make(["AH 3C", "AS 2S 2H 8H 9H", "QS"], "2H", "4D 5D 6D")
    play(state, "AH")
    for text in ("2H", "9H", "8H/S", "AS 2S"):
        with pytest.raises(IllegalMove, match="you face 2 cards: answer with an ace alone or draw"):
            state.check(Run.parse(text))
    assert {str(m) for m in state.legal_moves()} == {"AS", "draw"}
    effect = state.push(Draw())
    assert len(effect.drawn) == 2  # the whole penalty, not one card


def test_after_the_penalty_play_continues_on_the_ace() -> None:
    """RULES 1.4: after the penalty is drawn, play continues normally on the ace on the pile."""
    state = make(["AH 3C", "KD", "5H AS 9C"], "2H", "4D 5D 6D 7D")
    play(state, "AH")
    play(state, "draw")
    assert state.turn == 2 and state.top == C("AH") and state.penalty == 0
    state.check(Run.parse("5H"))  # suit
    play(state, "AS")  # rank; a fresh ace alone starts a fresh penalty of 2
    assert state.penalty == 2


def test_own_zodiac_card_makes_the_next_draw_seven_no_defence() -> None:
    """RULES 1.4 (our reading): own zodiac card alone: the next draws 7, loses the turn, no defence."""
    stock = "2D 3D 4D 5D 6D 7D 9D 10D"
    state = make(["JC 3C", "AC 8C 9C", "QS"], "2C", stock, ["aries", "aries", "aries"])
    play(state, "JC")
    assert state.penalty == 7 and state.turn == 1
    for text in ("AC", "8C/S", "9C"):
        with pytest.raises(IllegalMove, match="a zodiac card makes you draw 7: you must draw"):
            state.check(Run.parse(text))
    assert [str(m) for m in state.legal_moves()] == ["draw"]
    effect = state.push(Draw())
    assert len(effect.drawn) == 7 and state.turn == 2 and state.penalty == 0


def test_zodiac_card_is_not_wild() -> None:
    """RULES 1.4: a zodiac card must match like any other card."""
    state = make(["JC 3C", "KD"], "2H", "5D", ["aries", "leo"])
    with pytest.raises(IllegalMove, match="JC does not match 2H"):
        state.check(Run.parse("JC"))


# -- 1.5 running out of stock --------------------------------------------------


def test_reshuffle_pile_under_top_into_stock() -> None:
    """RULES 1.5 / RECORDS: an empty stock takes the pile under its top; unrecorded order is bottom
    first."""
    state = make(["KD", "QC"], "3H 4H 5H", "")
    effect = state.push(Draw())
    assert effect.drawn == (C("3H"),) and effect.reshuffles == 1
    assert state.pile == [C("5H")] and state.stock == [C("4H")]


def test_reshuffle_uses_recorded_order() -> None:
    """RULES 1.5 / RECORDS: a recorded reshuffle order becomes the new stock, drawn first first."""
    state = make(["KD", "QC"], "3H 4H 5H 6H", "", reshuffles=["5H 3H 4H"])
    state.push(Draw())
    assert state.hands[0][-1] == C("5H") and state.stock == [C("3H"), C("4H")]
    bad = make(["KD", "QC"], "3H 4H 5H", "", reshuffles=["3H 9S"])
    with pytest.raises(RecordError, match=r"deal.reshuffles\[0\] must hold exactly the pile's"):
        bad.push(Draw())
    assert bad.pile == parse_cards("3H 4H 5H") and bad.stock == []  # left as it was


def test_reshuffle_in_the_middle_of_a_penalty_draw() -> None:
    """RULES 1.5: a penalty draw that empties the stock reshuffles and continues."""
    state = make(["AH 3C", "KD 9S"], "5C 6C 7C 2H", "4D")
    play(state, "AH")
    effect = state.push(Draw())
    assert effect.drawn == (C("4D"), C("5C")) and effect.reshuffles == 1
    assert state.pile == [C("AH")] and state.stock == [C("6C"), C("7C"), C("2H")]


def test_penalty_draw_that_cannot_complete_draws_what_there_is() -> None:
    """RULES 1.5 (our reading): a penalty draw with no cards anywhere draws what there is."""
    stock = "4D 5D"
    state = make(["JC 3C", "KD 9S"], "2C", stock, ["aries", "aries"])
    play(state, "JC")  # 7 owed, but only 2 in the stock and only JC (the top) in the pile
    effect = state.push(Draw())
    assert effect.drawn == (C("4D"), C("5D"), C("2C"))  # 2C came back from under the top
    assert state.penalty == 0 and state.turn == 0 and state.stock == [] and state.pile == [C("JC")]


def test_blocked_round() -> None:
    """RULES 1.5 (our reading): a whole circle with no play and nothing drawn blocks the round."""
    state = make(["KS 2C", "QC 3D", "JD 4S"], "2H", "")
    state.push(Draw())
    state.push(Draw())
    assert not state.round_over
    state.push(Draw())
    assert state.round_over and state.blocked and state.winner is None
    assert state.points() == 0 and state.scores == [0, 0, 0]
    with pytest.raises(IllegalMove, match="the round is over"):
        state.check(Draw())


def test_a_play_or_a_drawn_card_restarts_the_circle() -> None:
    """RULES 1.5 (our reading): the circle must pass with nobody playing and nobody drawing."""
    state = make(["KS 5H", "2C 3D", "JD 4S"], "2H", "")
    state.push(Draw())  # seat 0: nothing to draw
    play(state, "2C")  # seat 1 plays: the circle starts again
    state.push(Draw())  # seat 2 draws 2H from under the top
    state.push(Draw())
    state.push(Draw())
    assert not state.round_over
    state.push(Draw())
    assert state.round_over and state.blocked


# -- 1.6 end of a round and scoring --------------------------------------------


def test_going_out_wins_and_scores_cards_left() -> None:
    """RULES 1.6: the first out wins and scores one point per card in the other hands."""
    state = make(["3H 4H", "KD 9S", "QS 2C 5C"], "2H", "6D")
    play(state, "3H 4H")
    assert state.round_over and state.winner == 0 and state.turn is None
    assert state.points() == 5 and state.scores == [5, 0, 0]


def test_going_out_with_an_ace_resolves_the_penalty_first() -> None:
    """RULES 1.6 (our reading): going out with an ace alone: the next draws 2 before the round ends."""
    state = make(["AH", "KD 9S", "QS"], "2H", "4D 5D 6D")
    play(state, "AH")
    assert state.winner == 0 and not state.round_over and state.turn == 1
    play(state, "draw")
    assert state.round_over and state.scores == [5, 0, 0]  # counted after the penalty


def test_going_out_aces_answer_aces() -> None:
    """RULES 1.6 (our reading): against a going-out ace, an ace alone passes 4 to the player after."""
    state = make(["AH", "AS 9S", "QS"], "2H", "4D 5D 6D 7D 9D")
    play(state, "AH")
    play(state, "AS")
    assert state.turn == 2 and state.penalty == 4 and not state.round_over
    play(state, "draw")
    assert state.round_over and state.winner == 0
    assert state.scores == [1 + 5, 0, 0]


def test_going_out_with_own_zodiac_card() -> None:
    """RULES 1.6: going out with one's own zodiac card alone: the next draws 7, then the
    round ends."""
    state = make(["JC", "KD 9S"], "2C", "2D 3D 4D 5D 6D 7D 9D", ["aries", "leo"])
    play(state, "JC")
    assert not state.round_over
    with pytest.raises(IllegalMove):
        state.check(Run.parse("9S"))
    play(state, "draw")
    assert state.round_over and state.scores == [9, 0]


def test_empty_hands_are_skipped_during_a_penalty_chain() -> None:
    """RULES 1.6 (our reading): players with no cards are skipped while a penalty chain is resolved."""
    state = make(["AH 2C", "AS", "AD 7S", "5S"], "2H", "4D 5D 6D 7D 9D 10D 3S")
    play(state, "AH")
    play(state, "AS")  # seat 1 goes out with an ace: 4 pass on
    assert state.winner == 1 and state.turn == 2 and state.penalty == 4
    play(state, "AD")  # 6 pass to seat 3, and then the chain skips seat 1
    assert state.turn == 3
    state2 = make(["AH", "AS 9S", "KD"], "2H", "4D 5D 6D 7D")
    play(state2, "AH")  # seat 0 out
    play(state2, "AS")
    assert state2.turn == 2
    state3 = make(["AH", "AS 9S", "AD 3C"], "2H", "4D 5D 6D 7D 9D 10D 3S")
    play(state3, "AH")
    play(state3, "AS")
    play(state3, "AD")
    assert state3.turn == 1 and state3.penalty == 6  # seat 0 (no cards) is skipped


def test_penalty_nobody_can_draw_ends_the_round() -> None:
    """RULES 1.5/1.6 (our reading): when every hand is empty the unpaid penalty ends the round."""
    state = make(["AH", "AS"], "2H", "4D 5D 6D 7D")
    play(state, "AH")
    play(state, "AS")
    assert state.round_over and state.winner == 0 and state.penalty == 0
    assert state.scores == [0, 0]


def test_two_players_answering_ace_passes_penalty_back_to_self() -> None:
    """RULES 1.6 (our reading): with two players and the other out, an answering ace skips
    to oneself."""
    state = make(["AH", "AS 9S"], "2H", "4D 5D 6D 7D")
    play(state, "AH")
    play(state, "AS")
    assert state.turn == 1 and state.penalty == 4
    play(state, "draw")
    assert state.round_over and state.scores == [5, 0]


def test_match_to_55() -> None:
    """RULES 1.6: the match is played to 55: the first player to reach or pass 55 wins."""
    from engine.match import Match

    match = Match("zodiak", 2, ("aries", "leo"), scores=[50, 54])
    assert not match.over
    state = ZodiakRound.from_parts(
        [parse_cards("3H 4H"), parse_cards("KD 9S 2C 5C 6C")], parse_cards("2H"),
        parse_cards("7D"), ("aries", "leo"), 1, scores=match.scores,
    )
    play(state, "3H 4H")
    match.end_round(state)
    assert match.scores == [55, 54] and match.winner == 0 and match.over
    with pytest.raises(IllegalMove, match="the match is over"):
        match.start_round(french_deck())
    unfinished = Match("zodiak", 2, ("aries", "leo"))
    with pytest.raises(IllegalMove, match="not over"):
        unfinished.end_round(unfinished.start_round(french_deck()))


# -- 1.7 views ---------------------------------------------------------------------


def test_view_hides_other_hands_and_the_stock() -> None:
    """RULES 1.7: a seat sees its own hand, hand sizes, pile, top, stock size; nothing else."""
    state = make(["2H 3C", "4D 5S 6S", "7C"], "9H", "10S JS QS")
    view = state.view(1)
    assert view.hands == [[None, None], parse_cards("4D 5S 6S"), [None]]
    assert view.stock == [None, None, None] and view.pile == state.pile
    assert state.view(None).hands == [[None] * 2, [None] * 3, [None]]
    state.push(Draw())
    assert state.view(1).history[0].drawn == (None,)
    assert state.view(0).history[0].drawn == (C("10S"),)


def test_view_validates_moves_with_the_same_code() -> None:
    """DESIGN/RULES 1.7: a seat's view accepts the legal move of another seat and rejects impossible
    ones."""
    state = make(["2H 3C", "4D 5S 6S", "7C"], "9H", "10S JS QS")
    view = state.view(2)
    view.check(Run.parse("2H"))
    with pytest.raises(IllegalMove, match="7C cannot be in that hand"):
        view.check(Run.parse("7C"))  # seat 2 holds it
    with pytest.raises(IllegalMove, match="cannot be in that hand"):
        view.check(Run.parse("9H"))  # on the pile
    with pytest.raises(IllegalMove, match="seat 0 holds only 2 cards"):
        view.check(Run.parse("2H 2S 2D"))
    for bad in (Run(()), Run(("2H",))):  # type: ignore[arg-type]
        with pytest.raises(IllegalMove, match="a run is one or more cards"):
            view.check(bad)
    view.push(Run.parse("2H"))
    state.push(Run.parse("2H"))
    assert view.hands[0] == [None] and view.top == state.top


# -- legal move generation ----------------------------------------------------


hand_strategy = st.lists(st.sampled_from(french_deck()), min_size=1, max_size=7, unique=True)


@settings(max_examples=150, deadline=None)
@given(hand=hand_strategy, top=st.sampled_from(french_deck()),
       declared=st.sampled_from([None, "S", "H", "D", "C"]), penalty=st.sampled_from([0, 2, 4, 7]))
def test_legal_moves_is_exactly_the_checked_runs(
    hand: list[Card], top: Card, declared: str | None, penalty: int,
) -> None:
    """RULES 1.3/1.4: `legal_moves` lists every run `check` accepts (up to 4 cards) and no other."""
    if top in hand:
        return
    state = make([" ".join(map(str, hand)), "KD"] if C("KD") not in hand + [top] else
                 [" ".join(map(str, hand)), "KH"], str(top), "")
    state.declared = declared if not penalty else None
    state.penalty = penalty
    state.penalty_from_ace = penalty in (2, 4)
    listed = list(state.legal_moves())
    assert listed[-1] == Draw() and len(set(listed)) == len(listed)
    listed_runs = {m for m in listed if isinstance(m, Run)}
    for m in listed_runs:
        state.check(m)
    for size in range(1, min(4, len(hand)) + 1):
        for cards in itertools.permutations(hand, size):
            candidates = [Run(cards, s) for s in "SHDC"] if size == 1 and cards[0].rank == 8 \
                else [Run(cards)]
            for run in candidates:
                assert state.is_legal(run) == (run in listed_runs), str(run)


@given(st.text(max_size=40))
def test_fuzz_move_parser(text: str) -> None:
    """RULES 3: any text is a run, `draw`, or IllegalMove with a reason; never another error."""
    try:
        move = parse_move(text)
    except IllegalMove as exc:
        assert str(exc)
        return
    assert parse_move(str(move)) == move


@given(st.lists(st.sampled_from(
    ["2S", "8H", "8d", "10C", "TD", "Q♣", "/", "/S", "/x", "draw", " ", "8H/D", "AS", "k♥"]),
    max_size=6))
def test_fuzz_run_parser_with_card_pieces(pieces: list[str]) -> None:
    """RULES 3: runs made of card-like pieces parse and print back, or raise IllegalMove."""
    text = " ".join(pieces)
    try:
        run = Run.parse(text)
    except IllegalMove:
        return
    assert Run.parse(str(run)) == run
