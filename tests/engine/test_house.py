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
    EXACT_LIMITED_CARDS,
    all_tricks_exhaustive,
    best_trick,
    check_trick,
    cut_rows,
    trick_problem,
)


def test_text_form_round_trips() -> None:
    """The text form names each option; the empty text and `standard` are the rules as written."""
    rules = HouseRules.parse("max-row=4, target=3000")
    assert rules == HouseRules(max_row=4, target=3000)
    assert str(rules) == "max-row=4,target=3000"
    assert HouseRules.parse(str(rules)) == rules
    assert HouseRules.parse("") == HouseRules.parse("standard") == HouseRules()
    assert HouseRules().standard and str(HouseRules()) == "standard"


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


def _brute_best_total(table: list[int], card: int, max_row: int) -> int | None:
    totals = [t.total for t in all_tricks_exhaustive(table, card, max_row)]
    return max(totals) if totals else None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=1, max_size=EXACT_LIMITED_CARDS),
       st.integers(0, 9), st.integers(1, 4))
def test_best_trick_respects_the_limit_against_brute_force(table: list[int], card: int,
                                                           max_row: int) -> None:
    """RULES 2.3 with max-row: on small tables best_trick is exactly the brute-force best."""
    if Counter([*table, card]).most_common(1)[0][1] > 5:
        return
    best = best_trick(table, card, max_row)
    expected = _brute_best_total(table, card, max_row)
    assert (best.total if best else None) == expected
    if best is not None:
        assert check_trick(table, card, best, max_row) == best.total


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=EXACT_LIMITED_CARDS + 1, max_size=30),
       st.integers(0, 9), st.integers(1, 6))
def test_best_trick_on_big_tables_is_legal_and_exists_exactly_when_a_trick_does(
        table: list[int], card: int, max_row: int) -> None:
    """RULES 2.3 with max-row: a trick exists under the limit exactly when one exists without it."""
    unlimited = best_trick(table, card)
    limited = best_trick(table, card, max_row)
    assert (limited is None) == (unlimited is None)
    if limited is not None:
        assert check_trick(table, card, limited, max_row) == limited.total
        assert trick_problem(Counter(table), card, cut_rows(unlimited, max_row), max_row) is None


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
