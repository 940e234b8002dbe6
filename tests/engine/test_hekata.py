"""Hekata deals, tui/RULES.md section 2: seats and teams, turns, tricks through the deal, scoring, the
end.

The trick notation and search themselves are tested in test_tricks.py; here every
trick goes through `HekataDeal`, the way a seat plays it.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.cards import hekata_deck
from engine.errors import IllegalMove
from engine.hekata import GAME_TARGET, HekataDeal, HekataMove, parse_trick, team_of
from engine.match import Match


def digits(text: str) -> list[int]:
    """Digit cards from `"3 5 9 8"`."""
    return [int(d) for d in text.split()]


def make(hands: list[str], table: str, stock: str = "", dealer: int = 0,
         scores: list[int] | None = None) -> HekataDeal:
    """A deal from digit strings; the dealer moves first."""
    return HekataDeal.from_parts([digits(h) for h in hands], digits(table), digits(stock),
                                 dealer, scores)


def move(text: str) -> HekataMove:
    """A move in `card` or `card: trick` form."""
    return HekataMove.parse(text)


# -- 2.1 four players ---------------------------------------------------------------


def test_partners_sit_opposite() -> None:
    """RULES 2.1 [decision]: partners sit opposite: seats 0 and 2 against seats 1 and 3."""
    assert [team_of(s, 4) for s in range(4)] == [0, 1, 0, 1]
    deal = make(["2 7", "4 1", "6 6", "0 5"], "3 5 9 8", dealer=2)
    assert [deal.team(s) for s in range(4)] == [0, 1, 0, 1]
    deal.push(move("6"))  # seat 2 deals and plays first
    deal.push(move("0"))
    deal.push(move("2: 5398 + 2"))  # seat 0 scores for team 0
    assert deal.scores == [5400, 0]
    deal.push(move("4: 60 + 4_"))  # seat 1 (100) scores for team 1
    assert deal.scores == [5400, 100]


def test_four_player_deal_twelve_each_two_on_the_table() -> None:
    """RULES 2.1: each player gets 12 cards and the last two lie face up on the table."""
    deck = hekata_deck()
    random.Random(3).shuffle(deck)
    deal = HekataDeal.deal(deck, 4, dealer=1)
    assert [len(h) for h in deal.hands] == [12] * 4
    assert deal.hands[2] == deck[24:36] and deal.table == deck[48:50] and deal.stock == []
    assert deal.scores == [0, 0]


@pytest.mark.parametrize("dealer", [0, 1, 2, 3])
def test_dealer_plays_first_and_play_goes_clockwise(dealer: int) -> None:
    """RULES 2.1: the dealer makes the first play; play goes clockwise."""
    deal = HekataDeal.deal(hekata_deck(), 4, dealer)
    assert deal.turn == dealer
    card = next(c for c in deal.hands[dealer])
    deal.push(HekataMove(card))
    assert deal.turn == (dealer + 1) % 4


def test_redeal_passes_clockwise_and_scores_carry_over() -> None:
    """RULES 2.1 [decision] / 2.4: on a redeal the deal passes clockwise; scores carry over."""
    match = Match("hekata", 4, dealer=3)
    rng = random.Random(1)
    for expected in (3, 0, 1):
        deck = hekata_deck()
        rng.shuffle(deck)
        deal = match.start_round(deck)
        assert deal.dealer == expected and deal.turn == expected
        assert deal.scores == match.scores
        deal.scores[1] += 10  # as if team 1 took a trick
        while not deal.round_over:
            deal.push(HekataMove(deal.hands[deal.turn][0]))  # lay without taking
        match.end_round(deal)
        assert match.scores == deal.scores
    assert match.rounds_played == 3 and match.dealer == 2 and match.scores == [0, 30]


def test_players_and_stock_checks() -> None:
    """RULES 2.1/2.5: Hekata is for 2 or 4; the four-player game has no stock."""
    with pytest.raises(IllegalMove, match="2 or 4 players"):
        HekataDeal.deal(hekata_deck(), 3, 0)
    with pytest.raises(IllegalMove, match="no stock"):
        make(["1", "2", "3", "4"], "5", "6")
    with pytest.raises(IllegalMove, match="Hekata is for 2 or 4 players, not 3"):
        Match("hekata", 3)


# -- 2.2 a turn ---------------------------------------------------------------------


def test_lay_one_card_and_it_stays_without_a_trick() -> None:
    """RULES 2.2: a player lays one card; taking no trick, the card stays on the table."""
    deal = make(["2 7", "4 1", "6 6", "0 5"], "3 5 9 8")
    effect = deal.push(move("7"))
    assert deal.table == [3, 5, 9, 8, 7] and deal.hands[0] == [2] and effect.taken == ()
    assert deal.scores == [0, 0] and deal.turn == 1


def test_taking_is_optional() -> None:
    """RULES 2.2 [decision]: taking is optional: a card that could take may just be laid."""
    deal = make(["2 7", "4 1", "6 6", "0 5"], "3 5 9 8")
    assert any(m.trick is not None and m.card == 2 for m in deal.legal_moves())
    assert HekataMove(2) in list(deal.legal_moves())
    deal.push(move("2"))
    assert deal.table == [3, 5, 9, 8, 2] and deal.tricks == []


def test_take_one_trick_containing_the_card_just_laid() -> None:
    """RULES 2.2/2.3: the trick holds the card just laid and table cards; the team
    scores the total."""
    deal = make(["2 7", "4 1", "6 6", "0 5"], "3 5 9 8 1")
    effect = deal.push(move("2: 5398 + 2"))
    assert effect.total == 5400 and sorted(effect.taken) == [3, 5, 8, 9]
    assert deal.table == [1] and deal.scores == [5400, 0]
    assert deal.tricks[0].seat == 0 and str(deal.tricks[0].trick) == "5398 + 2"
    with pytest.raises(IllegalMove):
        make(["2 7", "4", "6", "0"], "3 5 9 8").check(move("7: 5398 + 2"))  # 7 is not in it


def test_sweep_leaves_an_empty_table_where_no_trick_can_be_taken() -> None:
    """RULES 2.2: after a trick takes every card, the next player plays on an empty
    table, no trick."""
    deal = make(["2 7", "8 2", "6 6", "0 5"], "9 8")
    deal.push(move("2: 98 + 2"))
    assert deal.table == []
    assert [m for m in deal.legal_moves() if m.trick is not None] == []
    with pytest.raises(IllegalMove, match="the table is empty: lay a card without taking a trick"):
        deal.check(move("8: 92 + 8"))
    deal.push(move("8"))
    assert deal.table == [8]


def test_only_the_seat_to_move_and_only_cards_held() -> None:
    """RULES 2.2: only the player whose turn it is lays a card, and only one they hold."""
    deal = make(["2 7", "4 1", "6 6", "0 5"], "3 5 9 8")
    with pytest.raises(IllegalMove, match="it is seat 0's turn, not seat 1's"):
        deal.check(move("4"), seat=1)
    with pytest.raises(IllegalMove, match="you hold no 4"):
        deal.check(move("4"))
    for bad in (HekataMove(12), HekataMove(True), HekataMove("7")):  # type: ignore[arg-type]
        with pytest.raises(IllegalMove, match="not a Hekata card"):
            deal.check(bad)


# -- 2.3 what a trick is: the examples of tui/RULES.md 2.3, played through a deal -----------------


EXAMPLES = [
    ("2 0", 0, "200", 200, ""),
    ("9 8", 2, "98 + 2", 100, ""),
    ("9 8", 2, "92 + 8", 100, ""),
    ("3 5 9 8", 2, "5398 + 2", 5400, ""),
    ("3 5 9 8", 2, "5392 + 8", 5400, ""),
    ("1 0", 9, "10 + 9_", 100, ""),
    ("6 0 2 2", 2, "60 + 2__ + 2_ + 2_", 300, ""),
    ("1 0 2 2 2 3 4", 7, "31 + 27 + 42", 100, "0 2"),
]


@pytest.mark.parametrize(("table", "card", "trick", "total", "left"), EXAMPLES,
                         ids=[e[2] for e in EXAMPLES])
def test_rules_examples_through_a_deal(table: str, card: int, trick: str, total: int,
                                       left: str) -> None:
    """RULES 2.3: every example of the original scores its total and leaves the rest
    on the table."""
    deal = make([f"{card} 1", "4", "6", "5"], table)
    effect = deal.push(HekataMove(card, parse_trick(trick)))
    assert effect.total == total and deal.scores == [total, 0]
    assert sorted(deal.table) == sorted(digits(left))


@pytest.mark.parametrize(("table", "card", "trick"), [
    ("5 9", 0, "05 + 95"),        # a row of two or more cards may not start with 0 [decision]
    ("0 9", 1, "09 + 91"),
    ("5 9 0", 1, "1__ + 0 + 0"),  # the tens column holds no card [decision]
    ("5", 5, "5__ + 5__"),        # the units and tens columns are empty [decision]
    ("9 8", 2, "98 + 3"),         # 3 is not the card laid
    ("9 8", 2, "97 + 3"),         # 7 is not on the table
    ("9 8", 2, "98 + 1"),         # total 99
    ("9 8 8", 2, "98 + 8"),       # the card laid is not in the trick
    ("5 5", 5, "5 + 5 + 5"),      # 15
])
def test_tricks_that_break_rules_2_3(table: str, card: int, trick: str) -> None:
    """RULES 2.3 [decisions]: no leading 0 in a row of 2+, units and tens hold cards,
    sums to 100s."""
    deal = make([f"{card} 1", "4", "6", "5"], table)
    try:
        parsed = parse_trick(trick)
    except IllegalMove:
        return  # the notation itself forbids it
    with pytest.raises(IllegalMove) as info:
        deal.check(HekataMove(card, parsed))
    assert str(info.value)
    assert deal.table == digits(table) and deal.hands[0] == [card, 1]  # nothing changed


def test_row_of_two_or_more_cards_may_not_start_with_zero() -> None:
    """RULES 2.3 [decision]: a row of two or more cards may not start with 0."""
    deal = make(["0 1", "4", "6", "5"], "5 9")
    with pytest.raises(IllegalMove, match="starts with 0"):
        deal.check(HekataMove.parse("0: 05 + 95"))
    deal = make(["0 1", "4", "6", "5"], "5 5")
    assert deal.check(HekataMove.parse("0: 50 + 5_")) == 100  # a 0 that does not lead is fine


def test_units_and_tens_columns_must_each_hold_a_card() -> None:
    """RULES 2.3 [decision]: the units and the tens column each hold a card of the trick."""
    deal = make(["0 3", "4", "6", "5"], "1 0")
    with pytest.raises(IllegalMove):
        deal.check(HekataMove.parse("0: 1__ + 0 + 0"))  # 100, but nothing in the tens column
    assert deal.check(HekataMove.parse("0: 100")) == 100
    deal = make(["5 3", "4", "6", "5"], "5")
    with pytest.raises(IllegalMove):
        deal.check(HekataMove.parse("5: 5__ + 5__"))  # 1000 made of hundreds only
    assert [m for m in deal.legal_moves() if m.trick is not None] == []


def test_no_two_cards_make_a_trick() -> None:
    """RULES 2.3: a trick needs at least three cards; no two cards make a multiple of 100."""
    for laid in range(10):
        for on_table in range(10):
            deal = make([f"{laid} 1", "4", "6", "5"], str(on_table))
            assert [m for m in deal.legal_moves() if m.trick is not None] == []


def test_a_trick_needs_a_table_card() -> None:
    """RULES 2.3: a trick uses the card just played and at least one table card."""
    deal = make(["0 1", "4", "6", "5"], "3")
    with pytest.raises(IllegalMove):
        deal.check(HekataMove(0, parse_trick("0")))


# -- 2.4 end of a deal, end of the game -------------------------------------------------


def test_deal_ends_when_every_card_is_played_and_leftovers_score_nothing() -> None:
    """RULES 2.4 [decision]: when every card is played the deal ends; table cards score nothing."""
    deal = make(["1", "2", "3", "4"], "7 7")
    for card in "1234":
        assert not deal.round_over
        deal.push(move(card))
    assert deal.round_over and deal.turn is None and deal.winner is None
    assert deal.table == [7, 7, 1, 2, 3, 4] and deal.scores == [0, 0]
    with pytest.raises(IllegalMove, match="the deal is over"):
        deal.check(move("1"))


def test_game_won_at_the_moment_a_team_reaches_10000() -> None:
    """RULES 2.4: the first team to reach 10,000 wins at the moment it reaches them."""
    deal = make(["2 7", "4 1", "6 6", "0 5"], "3 5 9 8", scores=[4599, 9999])
    deal.push(move("2: 5398 + 2"))
    assert deal.scores == [9999, 9999] and not deal.round_over
    deal = make(["2 7", "4 1", "6 6", "0 5"], "3 5 9 8", scores=[4600, 9999])
    deal.push(move("2: 5398 + 2"))
    assert deal.round_over and deal.winner == 0 and deal.turn is None
    assert deal.hands[1] == [4, 1]  # the rest of the deal is not played
    match = Match("hekata", 4, scores=[4600, 9999])
    match.end_round(deal)
    assert match.winner == 0 and match.over and GAME_TARGET == 10_000


def test_match_to_10000_redeals_until_a_team_wins() -> None:
    """RULES 2.4: deals are redealt with scores carried over until a team has 10,000."""
    rng = random.Random(4)
    match = Match("hekata", 4, dealer=rng.randrange(4))
    while not match.over:
        deck = hekata_deck()
        rng.shuffle(deck)
        deal = match.start_round(deck)
        while not deal.round_over:
            moves = list(deal.legal_moves())
            takes = [m for m in moves if m.trick is not None]
            deal.push(max(takes, key=lambda m: m.trick.total) if takes else moves[0])
        match.end_round(deal)
        assert match.rounds_played < 200
    assert max(match.scores) >= GAME_TARGET
    assert min(match.scores) < GAME_TARGET


# -- 2.5 two players ----------------------------------------------------------------------


def test_two_player_deal_six_each_then_table_then_stock() -> None:
    """RULES 2.5: 6 cards each, the 13th and 14th face up on the table, 36 in the stock."""
    deck = hekata_deck()
    random.Random(8).shuffle(deck)
    deal = HekataDeal.deal(deck, 2, dealer=1)
    assert deal.hands == [deck[:6], deck[6:12]]
    assert deal.table == deck[12:14] and deal.stock == deck[14:] and len(deal.stock) == 36
    assert deal.turn == 1


def test_two_players_draw_after_each_play_then_play_out() -> None:
    """RULES 2.5: after laying (and perhaps taking) a player draws one card while the
    stock lasts."""
    deal = make(["1 2", "3 4"], "9 8", "5 6 7")
    effect = deal.push(move("2: 98 + 2"))
    assert effect.drawn == (5,) and deal.hands[0] == [1, 5] and deal.scores == [100, 0]
    deal.push(move("3"))
    deal.push(move("1"))
    assert deal.stock == [] and deal.hands == [[5, 7], [4, 6]]
    effect = deal.push(move("4"))
    assert effect.drawn == () and deal.hands[1] == [6]
    for card in ("5", "6", "7"):
        deal.push(move(card))
    assert deal.round_over and deal.hands == [[], []]


def test_two_players_are_each_their_own_team() -> None:
    """RULES 2.5: in the two-player game each player is their own team."""
    assert team_of(0, 2) == 0 and team_of(1, 2) == 1
    deal = make(["1 3", "2 4"], "9 8", "5 6", dealer=1)
    deal.push(move("2: 98 + 2"))
    assert deal.scores == [0, 100]


# -- 2.6 views -----------------------------------------------------------------------------


def test_view_hides_hands_and_stock() -> None:
    """RULES 2.6: a seat sees the table, tricks, scores and sizes, and only its own hand."""
    deal = make(["1 2", "3 4"], "9 8", "5 6 7")
    view = deal.view(1)
    assert view.hands == [[None, None], [3, 4]] and view.stock == [None] * 3
    assert view.table == [9, 8]
    deal.push(move("2: 98 + 2"))
    assert deal.view(1).history[0].drawn == (None,) and deal.view(0).history[0].drawn == (5,)
    assert deal.view(None).hands == [[None, None], [None, None]]
    assert deal.view(1).tricks == deal.tricks and deal.view(1).scores == [100, 0]


def test_view_checks_with_the_same_code() -> None:
    """DESIGN / RULES 2.6: a view accepts the mover's legal move and applies it like the dealer."""
    deal = make(["1 2", "3 4"], "9 8", "5 6 7")
    view = deal.view(1)
    view.check(move("2: 98 + 2"))
    view.push(move("2: 98 + 2"))
    deal.push(move("2: 98 + 2"))
    assert view.table == deal.table and view.scores == deal.scores
    assert view.hands[0] == [None, None] and len(view.stock) == len(deal.stock)


def test_a_game_already_won_deals_nothing() -> None:
    """RULES 2.4: a deal that starts with a team at 10,000 is over at once (the game is won)."""
    deal = make(["1", "2", "3", "4"], "9 8", scores=[10_000, 200])
    assert deal.round_over and deal.winner == 0 and deal.turn is None


# -- RULES 3 notation of a Hekata move -----------------------------------------------------


def test_move_notation_round_trips() -> None:
    """RULES 3: a move is a digit card, optionally with the trick taken: `7: 31 + 27 + 42`."""
    assert HekataMove.parse(" 7 ") == HekataMove(7)
    parsed = HekataMove.parse("7: 31 + 27 + 42")
    assert parsed.card == 7 and str(parsed) == "7: 31 + 27 + 42"
    assert HekataMove.parse(str(parsed)) == parsed
    for bad in ("", "x", "12", "7:", "7: 9x + 1", ": 98 + 2", None, 7):
        with pytest.raises(IllegalMove):
            HekataMove.parse(bad)  # type: ignore[arg-type]


@given(st.text(max_size=30))
def test_fuzz_move_parser(text: str) -> None:
    """RULES 3: any text is a Hekata move or IllegalMove with a reason, never another exception."""
    try:
        parsed = HekataMove.parse(text)
    except IllegalMove as exc:
        assert str(exc)
        return
    assert HekataMove.parse(str(parsed)) == parsed


@given(st.lists(st.sampled_from(["0", "1", "2", "9", "98", "10", "_", "__", "+", " ", ":", "7",
                                 "5398", "x", "-"]), max_size=10),
       st.lists(st.integers(0, 9), max_size=6), st.integers(0, 9))
def test_fuzz_moves_against_a_deal(pieces: list[str], table: list[int], card: int) -> None:
    """RULES 2.2/2.3: any written move is legal with a positive multiple of 100, or IllegalMove."""
    deal = HekataDeal.from_parts([[card, 1], [2], [3], [4]], table, [], 0)
    try:
        parsed = HekataMove.parse("".join(pieces))
        total = deal.check(parsed)
    except IllegalMove as exc:
        assert str(exc)
        return
    assert parsed.card in (card, 1)
    if parsed.trick is None:
        assert total == 0
    else:
        assert total > 0 and total % 100 == 0
