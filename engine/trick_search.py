"""The exact best Hekata trick (tui/RULES.md 2.3), searched on digit counts rather than on tricks.

Why the search is exact. Call the cards in the units and tens columns the *fixer* F, and let
H be the cards of one row that stand in the hundreds column or higher. Only F decides the
total modulo 100: with T the tens cards and U the units cards of F, the fixer adds
low = sum(U) + 10 * sum(T) = sum(F) + 9 * sum(T), which must be a multiple of 100.

1. Two rows of three or more cards are never best: move the higher cards of the shorter one
   onto the higher part of the longer one (its two low cards stay where they stand, as a
   two-card row or as single cards). The low columns keep their sums and the higher part
   grows from h + h' to at least h * 10**len(h') + h' > h + h'.
2. So a trick with a row of three or more cards has exactly one, `H t u`, whose higher part
   H starts with a nonzero card. Any card left on the table or standing alone in the hundreds
   column is better appended to H (H grows at least tenfold), so the best such trick uses
   every card, H is all cards outside F in descending order, and the total is
   100 * h + low with h = int(H). A two-card row `ab` is worth the same as `a_` plus `b`.
3. A trick without such a row has all its cards in the low columns or as single cards in the
   hundreds column; with a nonzero hundreds card d__ it is never better than `d t u` (case 2
   with the same fixer), and zero cards there only add zero rows. So the remaining candidates
   are exactly "F is the whole trick".

So the best trick is the best fixer F: a sub-multiset of all the cards with a split into
nonempty T and U making low a multiple of 100. For a fixed F the best split has the largest
sum(T) with sum(T) = 11 * sum(F) (mod 100), found from F's subset sums and cached, since it
depends on F alone. Fixers are searched by size, and within one size in increasing order of
their count vectors (f9, f8, ..., f0), which is decreasing h; every branch carries an upper
bound (the largest h it can leave, plus 10 * the largest sum it can hold) and is cut as soon
as that cannot reach the best total found, so only a handful of fixers is ever evaluated.

Ties are broken by `rows_rank` (see engine.tricks.trick_rank): equal totals prefer the
larger first row, which is 100 * h + 10 * max(T) + max(U) in case 2, so the larger h, then the
largest tens and units cards in the long row; the other fixer cards are paired greedily,
largest tens card over largest units card, which maximises the sorted row values.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from functools import lru_cache

SearchRow = tuple[tuple[int, ...], int]
"""A row as (its digits left to right, how many columns a single card is shifted)."""

_DOWN = range(9, -1, -1)


def row_value(row: SearchRow) -> int:
    """The number a row adds to the total."""
    digits, shift = row
    return int("".join(map(str, digits))) * 10**shift


def rows_rank(rows: Sequence[SearchRow]) -> tuple[int, tuple[tuple[float, ...], ...]]:
    """Total, then (value, -shift) of the rows sorted descending, a shorter list winning a tie."""
    ranked = sorted(((row_value(row), -row[1]) for row in rows), reverse=True)
    return (sum(value for value, _ in ranked), tuple(ranked) + ((math.inf,),))


def search_best_rows(table: Sequence[int], card: int) -> list[SearchRow] | None:
    """The best trick's rows, largest first, for `card` (0-9) laid on `table` (digits), or None."""
    if not table:
        return None
    counts = [0] * 10
    for digit in table:
        counts[digit] += 1
    counts[card] += 1
    if sum(counts) < 3:
        return None
    return _Search(counts, card).run()


@lru_cache(maxsize=1 << 16)
def best_tens_sum(fixer: tuple[int, ...]) -> int | None:
    """The largest sum(T) of a split of `fixer` (digit counts) into nonempty T and U with
    sum(U) + 10 * sum(T) a multiple of 100, or None if no split works."""
    total = sum(digit * count for digit, count in enumerate(fixer))
    reachable = 1  # bit s is set when some part of the fixer sums to s
    for digit in range(1, 10):
        for _ in range(fixer[digit]):
            reachable |= reachable << digit
    tens_sum = 11 * total % 100  # 9 * 11 = 99 = -1 (mod 100)
    tens_sum += (total - tens_sum) // 100 * 100 if total >= tens_sum else -100
    while tens_sum >= 0:
        # A sum of 0 or of everything needs a zero card to keep both T and U nonempty.
        if reachable >> tens_sum & 1 and (0 < tens_sum < total or fixer[0] > 0):
            return tens_sum
        tens_sum -= 100
    return None


def _descending_text(counts: Sequence[int]) -> str:
    return "".join(str(digit) * counts[digit] for digit in _DOWN)


class FixerWalk:
    """A depth-first walk over the fixer's count of each digit, 9 down to 0, that a search prunes."""

    counts: Sequence[int]
    below: list[int]

    def _pruned(self, digit: int, remaining: int, fixer: list[int], fixer_sum: int) -> bool:
        raise NotImplementedError

    def _leaf(self, fixer: tuple[int, ...], fixer_sum: int) -> None:
        raise NotImplementedError

    def _best_completion(self, digit: int, remaining: int, fixer: list[int],
                         fixer_sum: int) -> tuple[list[int], int]:
        """What completing `fixer` with `remaining` digits up to `digit` can at best leave kept
        (dropping the smallest) and at best sum to (taking the largest): a bound, each alone."""
        kept = [self.counts[d] - fixer[d] for d in range(10)]
        low_sum = fixer_sum
        to_drop = to_add = remaining
        for d in range(digit + 1):
            dropped = min(kept[d], to_drop)
            kept[d] -= dropped
            to_drop -= dropped
        for d in range(digit, -1, -1):
            added = min(self.counts[d], to_add)
            low_sum += added * d
            to_add -= added
        return kept, low_sum

    def _visit(self, digit: int, remaining: int, fixer: list[int], fixer_sum: int) -> None:
        if self._pruned(digit, remaining, fixer, fixer_sum):
            return
        if digit == 0:
            fixer[0] = remaining
            self._leaf(tuple(fixer), fixer_sum)
            fixer[0] = 0
            return
        lowest = max(0, remaining - self.below[digit])
        for taken in range(lowest, min(self.counts[digit], remaining) + 1):
            fixer[digit] = taken
            self._visit(digit - 1, remaining - taken, fixer, fixer_sum + taken * digit)
        fixer[digit] = 0


class _Search(FixerWalk):
    """One branch-and-bound search over fixers for one position."""

    def __init__(self, counts: list[int], card: int) -> None:
        self.counts = counts
        self.card = card
        self.size = sum(counts)
        self.below = [sum(counts[:digit]) for digit in range(10)]
        self.best_total = -1
        self.best_h = -1
        self.best_fixers: list[tuple[int, ...]] = []

    def run(self) -> list[SearchRow] | None:
        descending = _descending_text(self.counts)
        bounds = [0] * (self.size + 2)
        for fixer_size in range(self.size, 1, -1):
            kept = descending[: self.size - fixer_size]
            high = int(kept) if kept and kept[0] != "0" else 0
            low = 10 * sum(map(int, descending[:fixer_size])) // 100 * 100
            bounds[fixer_size] = max(100 * high + low, bounds[fixer_size + 1])
        fixer = [0] * 10
        for fixer_size in range(2, self.size + 1):
            if bounds[fixer_size] < self.best_total:
                break
            self._visit(9, fixer_size, fixer, 0)
        if not self.best_fixers:
            return None
        options = [self._arrange(found) for found in self.best_fixers]
        return max(options, key=rows_rank)

    def _cut(self, digit: int, remaining: int, fixer: list[int], fixer_sum: int) -> bool:
        """Whether no fixer completing `fixer` below `digit` can reach the best found."""
        kept, low_sum = self._best_completion(digit, remaining, fixer, fixer_sum)
        text = _descending_text(kept)
        high = int(text) if text and text[0] != "0" else 0
        bound = 100 * high + 10 * low_sum // 100 * 100
        if bound != self.best_total:
            return bound < self.best_total
        # Equal totals: a larger h wins; a smaller one cannot; equal h > 0 is the same fixer.
        return high < self.best_h or (high == self.best_h and high > 0)

    def _pruned(self, digit: int, remaining: int, fixer: list[int], fixer_sum: int) -> bool:
        return self.best_total >= 0 and self._cut(digit, remaining, fixer, fixer_sum)

    def _leaf(self, fixer: tuple[int, ...], fixer_sum: int) -> None:
        tens_sum = best_tens_sum(fixer)
        if tens_sum is None:
            return
        low = fixer_sum + 9 * tens_sum
        kept = [self.counts[d] - fixer[d] for d in range(10)]
        if any(kept[1:]):
            high = int(_descending_text(kept))
        elif fixer[self.card] and low > 0:
            high = 0  # every card in the low columns: the trick is the fixer alone
        else:
            return
        total = 100 * high + low
        if (total, high) > (self.best_total, self.best_h):
            self.best_total, self.best_h, self.best_fixers = total, high, [fixer]
        elif (total, high) == (self.best_total, self.best_h):
            self.best_fixers.append(fixer)  # only fixers without a long row can tie here

    def _arrange(self, fixer: tuple[int, ...]) -> list[SearchRow]:
        """The best-ranked rows for this fixer among its splits with the largest tens sum."""
        tens_sum = best_tens_sum(fixer)
        assert tens_sum is not None
        kept = [self.counts[d] - fixer[d] for d in range(10)]
        higher = tuple(int(c) for c in _descending_text(kept)) if any(kept[1:]) else ()
        best: list[SearchRow] = []
        best_rank: tuple = ()
        for tens in _parts_with_sum(fixer, tens_sum):
            tens_cards = _descending(tens)
            units_cards = _descending([fixer[d] - tens[d] for d in range(10)])
            if not tens_cards or not units_cards:
                continue
            if higher:
                rows = [(higher + (tens_cards[0], units_cards[0]), 0)]
                rows += _pair_up(tens_cards[1:], units_cards[1:])
            else:
                rows = _pair_up(tens_cards, units_cards)
            rank = rows_rank(rows)
            if rank > best_rank:
                best, best_rank = rows, rank
        return sorted(best, key=lambda row: (row_value(row), -row[1]), reverse=True)


def _descending(counts: Sequence[int]) -> list[int]:
    return [digit for digit in _DOWN for _ in range(counts[digit])]


def _parts_with_sum(fixer: tuple[int, ...], target: int) -> Iterator[list[int]]:
    """Every sub-multiset (as digit counts) of `fixer` whose digits sum to `target`."""
    part = [0] * 10

    def choose(digit: int, left: int) -> Iterator[list[int]]:
        if digit == 0:
            for zeros in range(fixer[0] + 1):
                part[0] = zeros
                yield list(part)
            part[0] = 0
            return
        for taken in range(min(fixer[digit], left // digit) + 1):
            part[digit] = taken
            if digit > 1 or left - taken == 0:
                yield from choose(digit - 1, left - taken * digit)
        part[digit] = 0

    yield from choose(9, target)


def _pair_up(tens_cards: list[int], units_cards: list[int]) -> list[SearchRow]:
    """Rows for tens and units cards (each descending) that rank highest once sorted."""
    # The largest next row is always the largest tens card over the largest units card (a
    # two-card row may not start with 0), so pairing them greedily is the lexicographic best.
    rows: list[SearchRow] = []
    pairs = 0
    while pairs < min(len(tens_cards), len(units_cards)) and tens_cards[pairs] != 0:
        rows.append(((tens_cards[pairs], units_cards[pairs]), 0))
        pairs += 1
    rows.extend(((digit,), 1) for digit in tens_cards[pairs:])
    rows.extend(((digit,), 0) for digit in units_cards[pairs:])
    return rows
