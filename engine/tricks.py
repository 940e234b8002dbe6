"""Hekata tricks (tui/RULES.md 2.3 and 3): the value, its notation, the rules check, the best one."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from engine.cards import parse_digit
from engine.errors import IllegalMove, InvalidMove
from engine.limited_search import search_limited_rows
from engine.trick_search import search_best_rows

__all__ = [
    "MAX_TRICK_CARDS",
    "Row",
    "Trick",
    "all_tricks_exhaustive",
    "best_trick",
    "check_trick",
    "parse_trick",
    "row_rank",
    "trick_problem",
    "trick_rank",
]

MAX_TRICK_CARDS = 50  # the whole Hekata deck; nothing longer can be a trick
_DIGITS = "0123456789"
_EXAMPLE = "write rows joined by +, like 98 + 2 or 10 + 9_"


@dataclass(frozen=True, slots=True)
class Row:
    """One row of a trick: its cards as digits, and how many columns a single card is shifted."""

    digits: tuple[int, ...]
    shift: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.digits, tuple) or not self.digits:
            raise InvalidMove("a row needs at least one card")
        if not all(type(d) is int and 0 <= d <= 9 for d in self.digits):
            raise InvalidMove(f"{self.digits!r} is not a row: its cards are the digits 0 to 9")
        if type(self.shift) is not int or not 0 <= self.shift <= 2:
            raise IllegalMove("a card can stand in the units, tens or hundreds column only")
        if self.shift and len(self.digits) > 1:
            raise IllegalMove(f"only a single card can be shifted with _, not {self._text()!r}")
        if len(self.digits) > 1 and self.digits[0] == 0:
            raise IllegalMove(
                f"the row {self._text()!r} starts with 0: "
                "a row of two or more cards may not start with 0"
            )

    def _text(self) -> str:
        return "".join(map(str, self.digits)) + "_" * self.shift

    @property
    def value(self) -> int:
        """The number the row stands for in the column addition."""
        return int("".join(map(str, self.digits))) * 10**self.shift

    def __str__(self) -> str:
        return self._text()


@dataclass(frozen=True, slots=True)
class Trick:
    """A column addition of rows (tui/RULES.md 2.3), in the order its rows were written."""

    rows: tuple[Row, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.rows, tuple) or not self.rows:
            raise InvalidMove("a trick needs at least one row")
        if not all(isinstance(row, Row) for row in self.rows):
            raise InvalidMove("every row of a trick must be a Row")

    @property
    def total(self) -> int:
        """The sum of the rows, which the team scores if the trick is legal."""
        return sum(row.value for row in self.rows)

    @property
    def cards(self) -> tuple[int, ...]:
        """Every card of the trick, row by row (a multiset: repeats are separate cards)."""
        return tuple(d for row in self.rows for d in row.digits)

    def __str__(self) -> str:
        return " + ".join(map(str, self.rows))


def parse_trick(text: str) -> Trick:
    """Parse tui/RULES.md section 3 trick notation (`60 + 2__ + 2_`).

    Raises InvalidMove for text that is not a trick, and IllegalMove for well-written rows that
    tui/RULES.md 2.3 forbids on any table: a row of two or more cards starting with 0 (`05`), a row
    of two or more cards shifted (`35__`), a card shifted past the hundreds column (`2___`).
    """
    if not isinstance(text, str):
        raise InvalidMove(f"{text!r} is not a trick: {_EXAMPLE}")
    if not text.strip():
        raise InvalidMove(f"the trick is empty: {_EXAMPLE}")
    if len(text) > 20 * MAX_TRICK_CARDS:
        raise InvalidMove(f"that is far too long for a trick: {_EXAMPLE}")
    parts = [part.strip() for part in text.split("+")]
    rows = tuple(_parse_row(part, number) for number, part in enumerate(parts, 1))
    if sum(len(row.digits) for row in rows) > MAX_TRICK_CARDS:
        raise IllegalMove(f"a trick cannot have more than {MAX_TRICK_CARDS} cards")
    return Trick(rows)


def _parse_row(part: str, number: int) -> Row:
    """Parse one row of trick notation, naming the row in the error."""
    if not part:
        raise InvalidMove(f"row {number} is empty: {_EXAMPLE}")
    digits_end = 0
    while digits_end < len(part) and part[digits_end] in _DIGITS:
        digits_end += 1
    digits, marks = part[:digits_end], part[digits_end:]
    if not digits:
        raise InvalidMove(f"row {number} ({part!r}) must start with cards, the digits 0 to 9")
    stray = next((ch for ch in marks if ch != "_"), None)
    if stray is not None:
        raise InvalidMove(
            f"row {number} ({part!r}) contains {stray!r}: a row is digits, "
            "then _ or __ to shift a single card"
        )
    if len(digits) > MAX_TRICK_CARDS:
        raise IllegalMove(f"a trick cannot have more than {MAX_TRICK_CARDS} cards")
    if len(marks) > 2:
        raise IllegalMove(
            f"row {number} ({part!r}) is shifted too far: a card can stand at most in the "
            "hundreds column (2__ is worth 200)"
        )
    return Row(tuple(int(ch) for ch in digits), len(marks))


def _digits_of(values: object, what: str) -> list[int]:
    """Parse a sequence of Hekata cards, raising InvalidMove for anything else."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise InvalidMove(f"the {what} must be a sequence of digits 0 to 9, not {values!r}")
    return [parse_digit(value) for value in values]


def trick_problem(table: Counter[int], card: int, trick: Trick, max_row: int | None = None) -> str | None:
    """Why `trick` may not be taken with `card` laid on `table` (a multiset), or None if it may.

    `max_row` is the house rule limiting a row's cards (engine.house); None is RULES 2.3 as written.
    """
    if max_row is not None:
        for row in trick.rows:
            if len(row.digits) > max_row:
                return (f"the row {row} has {len(row.digits)} cards: the house rules allow rows of"
                        f" at most {max_row}")
    uses = Counter(trick.cards)
    if uses[card] == 0:
        return f"the trick must contain the card you played ({card})"
    for digit in sorted(uses):
        available = table[digit] + (digit == card)
        if uses[digit] > available:
            if table[digit] == 0:
                return f"the trick uses a {digit} that is not on the table"
            return (
                f"the trick uses {uses[digit]} cards {digit} but the table has only "
                f"{table[digit]}" + (" besides the card you played" if digit == card else "")
            )
    if len(trick.cards) < 2:
        return "a trick needs at least one table card"
    if not any(row.shift == 0 for row in trick.rows):
        return "the units column is empty: the last two digits of a trick must be made by cards"
    if not any(row.shift == 1 or len(row.digits) > 1 for row in trick.rows):
        return "the tens column is empty: the last two digits of a trick must be made by cards"
    total = trick.total
    if total == 0:
        return "the total is 0: a trick must be worth at least 100"
    if total % 100:
        return f"the total {total:,} is not a multiple of 100"
    return None


def check_trick(table: Sequence[int], card: int, trick: Trick | str, max_row: int | None = None) -> int:
    """The total of `trick` taken with `card` laid on `table`, or IllegalMove saying what is wrong."""
    table_counts = Counter(_digits_of(table, "table"))
    card = parse_digit(card)
    if isinstance(trick, str):
        trick = parse_trick(trick)
    elif not isinstance(trick, Trick):
        raise InvalidMove(f"{trick!r} is not a trick: {_EXAMPLE}")
    problem = trick_problem(table_counts, card, trick, max_row)
    if problem is not None:
        raise IllegalMove(problem)
    return trick.total


def row_rank(row: Row) -> tuple[int, int]:
    """A row's place in tie-breaking: larger value first, then the less shifted (`20` before `2_`)."""
    return (row.value, -row.shift)


def trick_rank(trick: Trick) -> tuple[int, tuple[tuple[float, ...], ...]]:
    """What best_trick maximises: the total, then the row ranks sorted descending, in turn.

    When one trick's ranked rows are the other's followed by more rows (which can only be
    zero rows), the one with fewer rows ranks higher: `200` beats `2__ + 0_ + 0`.
    """
    ranked = sorted((row_rank(row) for row in trick.rows), reverse=True)
    return (trick.total, tuple(ranked) + ((math.inf,),))


def best_trick(table: Sequence[int], card: int, max_row: int | None = None) -> Trick | None:
    """The legal trick of highest trick_rank (total first); None if there is none.

    Exact with or without the house rule `max_row` (engine.limited_search searches the rows
    under a limit when the unlimited best has a longer row).
    """
    digits = _digits_of(table, "table")
    card = parse_digit(card)
    rows = search_best_rows(digits, card)
    if rows is None:
        return None
    if max_row is not None and any(len(row_digits) > max_row for row_digits, _ in rows):
        rows = search_limited_rows(digits, card, max_row)
        if rows is None:
            return None
    return Trick(tuple(Row(row_digits, shift) for row_digits, shift in rows))


def all_tricks_exhaustive(table: Sequence[int], card: int, max_row: int | None = None) -> Iterator[Trick]:
    """Every legal trick once, rows in descending rank, by brute force (for small tables only)."""
    table_counts = Counter(_digits_of(table, "table"))
    card = parse_digit(card)
    available = table_counts + Counter([card])
    candidates = sorted((row for row in _possible_rows(available)
                         if max_row is None or len(row.digits) <= max_row), key=row_rank, reverse=True)
    needs = [tuple(Counter(row.digits).items()) for row in candidates]
    values = [row.value for row in candidates]
    left = [available[digit] for digit in range(10)]

    def fits(index: int) -> bool:
        return all(left[digit] >= count for digit, count in needs[index])

    def extend(options: list[int], rows: list[Row], total: int) -> Iterator[Trick]:
        # A total that is not a positive multiple of 100 is cheap to rule out first.
        if total and total % 100 == 0:
            trick = Trick(tuple(rows))
            if trick_problem(table_counts, card, trick, max_row) is None:
                yield trick
        for position, index in enumerate(options):
            for digit, count in needs[index]:
                left[digit] -= count
            rows.append(candidates[index])
            # Rows stay in non-increasing rank order, so each set of rows comes up once.
            still = [later for later in options[position:] if fits(later)]
            yield from extend(still, rows, total + values[index])
            rows.pop()
            for digit, count in needs[index]:
                left[digit] += count

    yield from extend(list(range(len(candidates))), [], 0)


def _possible_rows(available: Counter[int]) -> set[Row]:
    """Every row that can be written with some of the `available` cards."""
    rows: set[Row] = set()

    def grow(prefix: tuple[int, ...], left: Counter[int]) -> None:
        for digit in [d for d in left if left[d] > 0]:
            digits = prefix + (digit,)
            if len(digits) > 1 and digits[0] == 0:
                continue
            for shift in (0, 1, 2) if len(digits) == 1 else (0,):
                rows.add(Row(digits, shift))
            grow(digits, left - Counter([digit]))

    grow((), available)
    return rows
