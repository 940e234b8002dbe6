"""Hekata tricks: notation, the rules check, and the exact best-trick search (tui/RULES.md 2.3, 3)."""

from __future__ import annotations

import itertools
import re
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.errors import IllegalMove
from engine.tricks import (
    Row,
    Trick,
    all_tricks_exhaustive,
    best_trick,
    check_trick,
    parse_trick,
    row_rank,
    trick_rank,
)

RULES_EXAMPLES = [
    ([2, 0], 0, "200", 200),
    ([9, 8], 2, "98 + 2", 100),
    ([9, 8], 2, "92 + 8", 100),
    ([3, 5, 9, 8], 2, "5398 + 2", 5400),
    ([3, 5, 9, 8], 2, "5392 + 8", 5400),
    ([1, 0], 9, "10 + 9_", 100),
    ([6, 0, 2, 2], 2, "60 + 2__ + 2_ + 2_", 300),
    ([1, 0, 2, 2, 2, 3, 4], 7, "31 + 27 + 42", 100),
]


@pytest.mark.parametrize(("table", "card", "text", "total"), RULES_EXAMPLES)
def test_rules_examples_parse_round_trip_and_check(table, card, text, total):
    """RULES 2.3 and 3: every example trick in the table of tui/RULES.md 2.3 is legal and worth its total."""
    trick = parse_trick(text)
    assert str(trick) == text
    assert parse_trick(str(trick)) == trick
    assert trick.total == total
    assert check_trick(table, card, trick) == total
    assert check_trick(table, card, text) == total


def test_rows_values_and_cards():
    """RULES 2.3: a shifted single card is worth ten or a hundred times its digit."""
    trick = parse_trick("60 + 2__ + 2_ + 2_")
    assert [row.value for row in trick.rows] == [60, 200, 20, 20]
    assert trick.rows[1] == Row((2,), 2)
    assert Counter(trick.cards) == Counter([6, 0, 2, 2, 2])


@pytest.mark.parametrize(
    ("table", "card", "text", "reason"),
    [
        ([9, 8], 3, "98 + 2", "the trick must contain the card you played (3)"),
        ([9, 8], 2, "92 + 8 + 7", "the trick uses a 7 that is not on the table"),
        ([2, 0], 0, "2000", "the trick uses 3 cards 0 but the table has only 1"),
        ([9, 8, 8], 2, "98 + 2 + 9", "the trick uses 2 cards 9 but the table has only 1"),
        ([3], 3, "3", "a trick needs at least one table card"),
        ([9], 1, "9_ + 1_", "the units column is empty"),
        ([5, 5], 0, "5__ + 5__ + 0", "the tens column is empty"),
        ([3, 5, 9, 8], 2, "5398 + 2_", "the total 5,418 is not a multiple of 100"),
        ([3, 5, 9, 8], 2, "5392 + 8_", "the total 5,472 is not a multiple of 100"),
        ([0, 0], 0, "0 + 0_ + 0", "the total is 0"),
    ],
)
def test_illegal_tricks_say_what_is_wrong(table, card, text, reason):
    """RULES 2.3: the card laid, table cards only, both low columns filled, a multiple of 100."""
    with pytest.raises(IllegalMove, match=re.escape(reason)):
        check_trick(table, card, text)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("98 +", "row 2 is empty"),
        ("+", "row 1 is empty"),
        ("05 + 95", "may not start with 0"),
        ("98_ + 2", "only a single card can be shifted"),
        ("2___", "shifted too far"),
        ("9 8 + 2", "contains ' '"),
        ("98-2", "contains '-'"),
        ("_2", "must start with cards"),
        ("٣٣ + 1", "must start with cards"),
        ("x", "must start with cards"),
        ("1" * 51, "more than 50 cards"),
        (" + ".join(["1"] * 51), "more than 50 cards"),
    ],
)
def test_parse_rejects_bad_notation_with_a_reason(text, reason):
    """RULES 3 and 2.3: rows of digits joined by +, `_` only after a single card, no leading 0."""
    with pytest.raises(IllegalMove, match=re.escape(reason)):
        parse_trick(text)


def test_parse_is_tolerant_of_spacing_and_keeps_row_order():
    """RULES 3: spacing around + does not matter; rows stay in the order they were written."""
    assert parse_trick("  2+98 ") == parse_trick("2 + 98")
    assert str(parse_trick("2+98")) == "2 + 98"
    assert parse_trick("10+9_").rows == (Row((1, 0)), Row((9,), 1))


@pytest.mark.parametrize(
    "build",
    [
        lambda: Row((0, 5)),
        lambda: Row((5, 5), 1),
        lambda: Row(()),
        lambda: Row((10,)),
        lambda: Row((1,), 3),
        lambda: Row([1, 2]),  # type: ignore[arg-type]
        lambda: Trick(()),
        lambda: Trick(("98",)),  # type: ignore[arg-type]
    ],
)
def test_values_refuse_to_be_built_wrong(build):
    """RULES 2.3: a Row or Trick value that breaks the per-row rules cannot exist."""
    with pytest.raises(IllegalMove):
        build()


@pytest.mark.parametrize(
    ("table", "card", "bad"),
    [("98", 2, "sequence"), ([9, 10], 2, "not a Hekata card"), ([9, 8], "x", "not a Hekata"),
     (None, 2, "sequence"), ([9, 8], 2, "is not a trick")],
)
def test_check_trick_rejects_bad_arguments(table, card, bad):
    """RULES 3: the table and the card are digits 0-9, the trick a Trick or its notation."""
    trick = 12 if bad == "is not a trick" else "98 + 2"
    with pytest.raises(IllegalMove, match=bad):
        check_trick(table, card, trick)  # type: ignore[arg-type]


# ------------------------------------------------------------------ Hypothesis: notation

single_rows = st.builds(Row, st.tuples(st.integers(0, 9)), st.integers(0, 2))
long_rows = st.builds(
    lambda first, rest: Row((first, *rest)),
    st.integers(1, 9),
    st.lists(st.integers(0, 9), min_size=1, max_size=6),
)
tricks = st.builds(
    lambda rows: Trick(tuple(rows)), st.lists(single_rows | long_rows, min_size=1, max_size=6)
)


@given(tricks)
def test_notation_round_trips(trick):
    """RULES 3: str() writes the notation and parse_trick reads back the same trick."""
    assert parse_trick(str(trick)) == trick
    assert parse_trick(str(trick).replace(" + ", "+")) == trick


notation_alphabet = st.sampled_from(list("0123456789_+ ") + ["\t", "-", "x", "٣", "²", "\x00"])


@given(st.text(notation_alphabet, max_size=30) | st.text(max_size=30))
def test_parse_trick_answers_garbage_with_illegal_move(text):
    """RULES 3: any text either parses to a trick that prints back, or raises IllegalMove."""
    try:
        trick = parse_trick(text)
    except IllegalMove:
        return
    assert parse_trick(str(trick)) == trick


anything = st.one_of(
    st.none(), st.booleans(), st.integers(-20, 20), st.text(max_size=5), st.floats(),
    st.lists(st.integers(-3, 12), max_size=6), st.binary(max_size=4),
)


@given(
    st.lists(st.integers(0, 9), max_size=8) | anything,
    st.integers(0, 9) | anything,
    st.text(notation_alphabet, max_size=20) | tricks | anything,
)
def test_check_trick_answers_garbage_with_illegal_move(table, card, trick):
    """RULES 2.3: check_trick returns a positive multiple of 100 or raises IllegalMove."""
    try:
        total = check_trick(table, card, trick)
    except IllegalMove:
        return
    assert total > 0 and total % 100 == 0


@given(st.lists(st.integers(0, 9), max_size=8) | anything, st.integers(0, 9) | anything)
def test_best_trick_answers_garbage_with_illegal_move(table, card):
    """RULES 2.3: best_trick takes digit cards only and says so otherwise."""
    try:
        best_trick(table, card)
    except IllegalMove:
        pass


# ------------------------------------------------------------------ the best trick


@pytest.mark.parametrize(
    ("table", "card", "best"),
    [
        ([2, 0], 0, "200"),
        ([9, 8], 2, "98 + 2"),
        ([3, 5, 9, 8], 2, "5398 + 2"),
        ([1, 0], 9, "90 + 1_"),
        ([6, 0, 2, 2], 2, "260 + 2_ + 2_"),
        ([1, 0, 2, 2, 2, 3, 4], 7, "4222170 + 3_"),
        ([5, 0, 0], 5, "5500"),
    ],
)
def test_best_trick_of_the_rules_examples(table, card, best):
    """RULES 2.3: the highest total, ties to the lexicographically largest rows, largest first."""
    trick = best_trick(table, card)
    assert str(trick) == best
    assert check_trick(table, card, trick) == trick.total


@pytest.mark.parametrize(
    ("table", "card"), [([], 5), ([1], 9), ([5, 5], 5), ([1, 1, 1, 1], 1), ([0, 0, 0, 0], 0)]
)
def test_best_trick_is_none_when_there_is_no_trick(table, card):
    """RULES 2.3: a trick needs three cards and a positive multiple of 100; often there is none."""
    assert best_trick(table, card) is None
    assert next(all_tricks_exhaustive(table, card), None) is None


def oracle_best(table: list[int], card: int) -> Trick | None:
    """The best trick by brute force over every legal trick."""
    return max(all_tricks_exhaustive(table, card), key=trick_rank, default=None)


def assert_same_as_oracle(table: list[int], card: int) -> None:
    want = oracle_best(table, card)
    got = best_trick(table, card)
    if want is None:
        assert got is None, (table, card, str(got))
        return
    assert got is not None, (table, card, str(want))
    assert trick_rank(got) == trick_rank(want), (table, card, str(got), str(want))
    assert list(got.rows) == sorted(got.rows, key=row_rank, reverse=True)
    assert check_trick(table, card, got) == got.total


def test_best_trick_matches_brute_force_on_every_table_of_up_to_three_cards():
    """RULES 2.3: exact, including tie-breaks, on all 2,860 positions with at most 3 table cards."""
    for size in range(4):
        for table in itertools.combinations_with_replacement(range(10), size):
            for card in range(10):
                if table.count(card) < 5:
                    assert_same_as_oracle(list(table), card)


def positions(min_table: int, max_table: int) -> st.SearchStrategy[tuple[list[int], int]]:
    """A table and a laid card with at most five copies of any digit, as in the deck."""
    return (
        st.lists(st.integers(0, 9), min_size=min_table + 1, max_size=max_table + 1)
        .filter(lambda cards: max(Counter(cards).values()) <= 5)
        .map(lambda cards: (cards[1:], cards[0]))
    )


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions(4, 5))
def test_best_trick_matches_brute_force_on_random_small_tables(position):
    """RULES 2.3: exact, including tie-breaks, against every legal trick of 4-5 table cards."""
    assert_same_as_oracle(*position)


def best_total_by_fixers(table: list[int], card: int) -> int | None:
    """The best total over every choice of units and tens cards, the rest in one long row.

    This is the search's reduction (engine.trick_search's docstring) without the search: every
    split of the cards into units, tens and the rest, tried one by one.
    """
    cards = Counter(table) + Counter([card])
    digits = sorted(cards)
    choices = [
        [(tens, units) for tens in range(cards[d] + 1) for units in range(cards[d] + 1 - tens)]
        for d in digits
    ]
    best = None
    for split in itertools.product(*choices):
        tens = [d for d, (t, _) in zip(digits, split) for _ in range(t)]
        units = [d for d, (_, u) in zip(digits, split) for _ in range(u)]
        low = sum(units) + 10 * sum(tens)
        if not tens or not units or low % 100:
            continue
        rest = sorted((cards - Counter(tens) - Counter(units)).elements(), reverse=True)
        if rest and rest[0] != 0:
            total = 100 * int("".join(map(str, rest))) + low
        elif card in tens + units and low > 0:
            total = low
        else:
            continue
        best = total if best is None else max(best, total)
    return best


@settings(max_examples=40, deadline=None)
@given(positions(6, 9))
def test_best_trick_total_matches_every_fixer_on_medium_tables(position):
    """RULES 2.3: on 6-9 table cards the search finds the best total of the full reduction."""
    table, card = position
    trick = best_trick(table, card)
    want = best_total_by_fixers(table, card)
    assert (trick.total if trick else None) == want
    if trick is not None:
        assert check_trick(table, card, trick) == want


@settings(max_examples=60, deadline=None)
@given(positions(2, 40))
def test_best_trick_is_legal_sorted_and_deterministic_on_large_tables(position):
    """RULES 2.3: on any table the best trick checks, lists rows largest first, and is repeatable."""
    table, card = position
    trick = best_trick(table, card)
    if trick is None:
        return
    assert check_trick(table, card, trick) == trick.total
    assert list(trick.rows) == sorted(trick.rows, key=row_rank, reverse=True)
    assert best_trick(list(reversed(table)), card) == trick


@pytest.mark.parametrize(
    ("table", "card"),
    [
        ([1, 1, 1, 1, 2, 2, 2, 2, 2], 1),  # no small fixer: few kinds of card
        ([9, 9, 1, 0, 0, 1, 1], 9),  # the 9s must leave the long row
        ([5, 5, 5, 5, 0, 0, 0, 0, 0], 5),
        ([9, 1, 9, 1, 9, 1, 8, 2], 8),
        ([0, 0, 0, 0, 1, 1, 1, 1, 1], 0),
        ([3, 3, 3, 3, 7, 7, 7, 7, 7], 3),
    ],
)
def test_best_trick_total_matches_every_fixer_on_awkward_tables(table, card):
    """RULES 2.3: positions where the cheapest fixers do not exist still get the best total."""
    trick = best_trick(table, card)
    assert (trick.total if trick else None) == best_total_by_fixers(table, card)
