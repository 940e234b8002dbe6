"""House rules (engine.house): the text form, the row limit on Hekata tricks, a lower match target."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.dealer import DealtRound
from engine.errors import IllegalMove, RecordError
from engine.hekata import HekataDeal, HekataMove
from engine.house import HouseRules
from engine.match import Match
from engine.records import Record
from engine.tricks import (
    Row,
    Trick,
    all_tricks_exhaustive,
    best_trick,
    check_trick,
    row_rank,
    trick_problem,
    trick_rank,
)


def test_text_form_round_trips() -> None:
    """The text form names each option; the empty text and `standard` are the rules as written."""
    rules = HouseRules.parse("max-row=4, target=3000")
    assert rules == HouseRules(max_row=4, target=3000)
    assert str(rules) == "max-row=4,target=3000"
    assert HouseRules.parse(str(rules)) == rules
    assert HouseRules.parse("") == HouseRules.parse("standard") == HouseRules()
    assert HouseRules().standard and str(HouseRules()) == "standard"


def test_leading_zeros_do_not_cut_a_number() -> None:
    """A number is read whole: target=0000000000001000 is 1,000 (it was cut to 12 digits: 0)."""
    assert HouseRules.parse("target=0000000000001000").target == 1000


@pytest.mark.parametrize(("text", "says"), [
    ("max-row", "needs a whole number"),
    ("max-row=", "needs a whole number"),
    ("rows=4", "not a house rule"),
    ("max-row=0", "from 1 to 50"),
    ("max-row=51", "from 1 to 50"),
    ("target=0", "target must be"),
    ("target=-5", "needs a whole number"),
    ("target=1,target=2", "given twice"),
    ("max-row=4;target=3", "needs a whole number"),
    ("x" * 500, "written like"),
    ("target=" + "9" * 13, "far too large"),
])
def test_bad_text_says_what_is_wrong(text: str, says: str) -> None:
    """Garbage is refused with a reason that names the option."""
    with pytest.raises(IllegalMove, match=says):
        HouseRules.parse(text)


@given(st.text(max_size=40))
def test_any_text_parses_or_is_refused_cleanly(text: str) -> None:
    """Any text is house rules or an IllegalMove, never another exception."""
    try:
        rules = HouseRules.parse(text)
    except IllegalMove:
        return
    assert HouseRules.parse(str(rules)) == rules


def test_five_card_row_refused_under_max_row_4() -> None:
    """RULES 2.3 with max-row=4: a row of five cards is refused, saying why; four are fine."""
    table = [3, 5, 9, 8, 1]
    assert check_trick(table, 2, "53198 + 2") == 53200  # legal as written
    with pytest.raises(IllegalMove, match="the row 53198 has 5 cards: the house rules allow rows"
                                          " of at most 4"):
        check_trick(table, 2, "53198 + 2", max_row=4)
    assert check_trick(table, 2, "5398 + 2 + 1__", max_row=4) == 5500


def test_deal_refuses_long_row_under_house_rules() -> None:
    """RULES 2.2-2.3: a deal played by max-row=4 refuses a 5-card row and offers none."""
    house = HouseRules(max_row=4)
    deal = HekataDeal.from_parts([[2, 0], [1, 1]], [3, 5, 9, 8, 1], [], 0, house=house)
    with pytest.raises(IllegalMove, match="at most 4"):
        deal.check(HekataMove.parse("2: 53198 + 2"))
    for move in deal.legal_moves():
        assert move.trick is None or all(len(row.digits) <= 4 for row in move.trick.rows)
        assert deal.is_legal(move)


def _brute_best(table: list[int], card: int, max_row: int) -> Trick | None:
    return max(all_tricks_exhaustive(table, card, max_row), key=trick_rank, default=None)


def _positions(min_table: int, max_table: int) -> st.SearchStrategy[tuple[list[int], int]]:
    """A table and a laid card with at most five copies of any digit, as in the deck."""
    return (st.lists(st.integers(0, 9), min_size=min_table + 1, max_size=max_table + 1)
            .filter(lambda cards: max(Counter(cards).values()) <= 5)
            .map(lambda cards: (cards[1:], cards[0])))


@settings(max_examples=60, deadline=None)
@given(_positions(1, 5), st.integers(1, 5))
def test_best_trick_under_a_limit_is_the_brute_force_best(position: tuple[list[int], int],
                                                           max_row: int) -> None:
    """RULES 2.3 with max-row: best_trick is exactly the brute-force best, ties included."""
    table, card = position
    best = best_trick(table, card, max_row)
    expected = _brute_best(table, card, max_row)
    assert (best is None) == (expected is None)
    if best is not None and expected is not None:
        assert trick_rank(best) == trick_rank(expected), (str(best), str(expected))
        assert check_trick(table, card, best, max_row) == best.total


# Positions of 7 and 8 table cards whose unlimited best has a row longer than the limit (so the
# limited search runs), with the best trick found by brute force over every legal trick
# (all_tricks_exhaustive, 0.2-34 s each, too slow for every run): two long rows, rows of
# three, pairs, zeros above a fixer.
BRUTE_FORCE_ANSWERS = [
    ([8, 7, 7, 8, 9, 3, 2], 7, 4, "9877 + 8723"),
    ([9, 2, 1, 7, 4, 2, 1], 7, 4, "7279 + 4121"),
    ([9, 6, 7, 9, 2, 9, 0], 0, 4, "9900 + 9__ + 7__ + 6__ + 2__"),
    ([0, 0, 3, 3, 9, 0, 7], 1, 3, "900 + 7__ + 3__ + 3__ + 1__"),
    ([9, 3, 8, 3, 4, 7, 0], 7, 4, "8497 + 7303"),
    ([7, 4, 6, 8, 1, 4, 5], 1, 2, "8__ + 7__ + 1__ + 1__ + 56 + 44"),
    ([4, 0, 1, 9, 1, 6, 1], 8, 3, "980 + 6__ + 4__ + 1__ + 1_ + 1_"),
    ([1, 0, 0, 3, 3, 0, 7], 6, 3, "700 + 6__ + 3__ + 3__ + 1__"),
    ([6, 1, 9, 3, 4, 5, 1], 6, 3, "966 + 534 + 1__ + 1__"),
    ([0, 6, 1, 2, 3, 1, 0], 5, 2, "6__ + 5__ + 3__ + 2__ + 1__ + 1__ + 0 + 0_"),
    ([7, 2, 8, 3, 7, 8, 3], 7, 4, "8777 + 8323"),
    ([6, 6, 1, 6, 6, 3, 0], 2, 3, "660 + 6__ + 6__ + 2__ + 3_ + 1_"),    ([6, 6, 4, 7, 3, 7, 8, 2], 2, 4, "8766 + 7432 + 2"),
    ([3, 0, 0, 5, 9, 6, 1, 2], 8, 2, "9__ + 8__ + 6__ + 5__ + 3__ + 2__ + 1__ + 0 + 0_"),
    ([0, 6, 6, 9, 7, 0, 5, 8], 3, 3, "900 + 8__ + 7__ + 6__ + 6__ + 5__ + 3__"),
    ([5, 0, 2, 1, 1, 0, 7, 2], 1, 4, "7500 + 2__ + 2__ + 1__ + 1__ + 1__"),
    ([6, 7, 2, 2, 0, 7, 3, 1], 5, 2, "7__ + 7__ + 6__ + 3__ + 50 + 2_ + 2_ + 1_"),
    ([9, 1, 1, 8, 7, 8, 6, 3], 3, 3, "987 + 813 + 6__ + 3__ + 1__"),
    ([8, 6, 4, 5, 7, 8, 6, 5], 2, 3, "876 + 824 + 6__ + 5__ + 5__"),
    ([4, 0, 1, 2, 7, 0, 7, 1], 6, 4, "7260 + 7140 + 1__"),
    ([8, 3, 9, 9, 5, 8, 9, 1], 9, 2, "9__ + 9__ + 8__ + 8__ + 5__ + 3__ + 99 + 1"),
    ([5, 5, 5, 9, 4, 3, 1, 2], 2, 2, "9__ + 5__ + 3__ + 55 + 42 + 2 + 1"),
    ([6, 5, 2, 0, 8, 3, 6, 2], 2, 4, "8266 + 5032 + 2"),
    ([0, 5, 7, 8, 6, 3, 3, 2], 9, 4, "9765 + 8033 + 2"),
    ([7, 6, 7, 0, 4, 0, 4, 4], 1, 2, "7__ + 7__ + 6__ + 4__ + 4__ + 4__ + 1__ + 0 + 0_"),
    ([3, 2, 6, 1, 5, 2, 2, 7], 6, 2, "7__ + 6__ + 2__ + 65 + 32 + 2 + 1"),
]


@pytest.mark.parametrize(("table", "card", "max_row", "answer"), BRUTE_FORCE_ANSWERS)
def test_best_trick_under_a_limit_on_bigger_tables(table: list[int], card: int, max_row: int,
                                                   answer: str) -> None:
    """RULES 2.3 with max-row: the brute-force answers on 7 and 8 table cards."""
    unlimited = best_trick(table, card)
    assert unlimited is not None and any(len(row.digits) > max_row for row in unlimited.rows)
    assert str(best_trick(table, card, max_row)) == answer


def _cut_rows(trick: Trick, max_row: int) -> Trick:
    """`trick` with each long row cut (the old answer under a limit): its tens and units cards
    stay a row, the higher cards that fit stay above them, the rest stand in the hundreds."""
    rows: list[Row] = []
    for row in trick.rows:
        if len(row.digits) <= max_row:
            rows.append(row)
            continue
        *higher, tens, units = row.digits
        kept = higher[:max(0, max_row - 2)]
        alone = higher[len(kept):]
        while kept and kept[0] == 0:
            alone.append(kept.pop(0))
        if kept:
            rows.append(Row((*kept, tens, units)))
        elif max_row >= 2 and tens != 0:
            rows.append(Row((tens, units)))
        else:
            rows.extend([Row((tens,), 1), Row((units,))])
        rows.extend(Row((digit,), 2) for digit in alone)
    return Trick(tuple(sorted(rows, key=row_rank, reverse=True)))


@settings(max_examples=80, deadline=None)
@given(_positions(6, 40), st.integers(1, 8))
def test_best_trick_on_big_tables_is_legal_and_at_least_every_simpler_answer(
        position: tuple[list[int], int], max_row: int) -> None:
    """RULES 2.3 with max-row: on tables too big for brute force the trick is legal, exists
    exactly when one exists without the limit, beats the unlimited best cut down to the limit,
    grows with the limit and is the unlimited best once every row fits."""
    table, card = position
    unlimited = best_trick(table, card)
    limited = best_trick(table, card, max_row)
    assert (limited is None) == (unlimited is None)
    if limited is None or unlimited is None:
        return
    assert check_trick(table, card, limited, max_row) == limited.total
    cut = _cut_rows(unlimited, max_row)
    assert trick_problem(Counter(table), card, cut, max_row) is None
    assert limited.total >= cut.total
    wider = best_trick(table, card, max_row + 1)
    assert wider is not None and wider.total >= limited.total
    assert trick_rank(best_trick(table, card, len(table) + 1)) == trick_rank(unlimited)


def _play_match(house: HouseRules, seed: int) -> Match:
    from engine.bots import GreedyBot
    bot = GreedyBot()
    match = Match("hekata", 2, house=house)
    rng = random.Random(seed)
    while not match.over:
        dealt = DealtRound.deal(match, ["A", "B"], rng)
        while not dealt.state.round_over:
            dealt.push(bot.choose(dealt.state.view(dealt.state.turn)))
        match.end_round(dealt.state)
        assert dealt.record.house == house
    return match


def test_match_ends_at_the_lower_target() -> None:
    """RULES 2.4 with target=1000: the match ends the moment a team reaches 1,000."""
    match = _play_match(HouseRules(target=1000), seed=3)
    assert match.target == 1000 and match.over
    assert max(match.scores) >= 1000
    assert max(match.scores) < 10_000


def test_zodiak_match_ends_at_the_lower_target() -> None:
    """RULES 1.6 with target=5: a Zodiak match is won on reaching 5."""
    match = Match("zodiak", 2, ("aries", "leo"), scores=[5, 0], house=HouseRules(target=5))
    assert match.winner == 0
    assert Match("zodiak", 2, ("aries", "leo"), scores=[5, 0]).winner is None


def test_record_with_rules_replays_by_them() -> None:
    """docs/RECORDS.md "House rules": a record carries its rules, and replay checks moves by them."""
    house = HouseRules(max_row=4, target=3000)
    record = Record("hekata", [{"name": "A"}, {"name": "B"}], 0, [0, 0],
                    {"hands": [["2", "0"], ["1", "1"]], "table": ["3", "5", "9", "8", "1"],
                     "stock": []},
                    [{"seat": 0, "play": "2", "trick": "53198 + 2"}], house)
    text = record.dumps()
    assert json.loads(text)["house"] == "max-row=4,target=3000"
    again = Record.loads(text)
    assert again.house == house
    result = again.replay()
    assert not result.ok and "at most 4" in result.error[2]
    standard = Record.loads(text.replace('"house": "max-row=4,target=3000"', '"house": "standard"'))
    assert standard.replay().ok


def test_record_with_bad_rules_is_refused() -> None:
    """A record whose "house" is not house rules is refused, naming the field."""
    data = {"game": "hekata", "seats": [{}, {}], "dealer": 0,
            "deal": {"hands": [["1"], ["2"]], "table": ["3", "4"], "stock": []},
            "house": "max-row=99"}
    with pytest.raises(RecordError, match='"house": max-row must be'):
        Record.from_json(data)
    data["house"] = 4
    with pytest.raises(RecordError, match='"house"'):
        Record.from_json(data)


def test_a_row_limit_is_refused_for_zodiak_which_has_no_rows() -> None:
    """RULES 2 (house rules): max-row caps a Hekata trick's rows; a Zodiak match with it is
    refused rather than played as if the rule were there."""
    with pytest.raises(IllegalMove, match="max-row caps the rows of a Hekata trick"):
        Match("zodiak", 2, ("leo", "aries"), house=HouseRules(max_row=4))
    Match("zodiak", 2, ("leo", "aries"), house=HouseRules(target=30))
    Match("hekata", 2, house=HouseRules(max_row=4))
