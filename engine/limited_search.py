"""The exact best Hekata trick when the house rules cap a row's cards (engine.house `max-row`).

Why the search is exact. As in engine.trick_search, call the cards in the units and tens
columns the *fixer* F, split into tens cards T and units cards U (both nonempty); they alone
decide the total modulo 100, adding low = sum(F) + 9 * sum(T). Every other card R stands in
the hundreds column or higher. With rows of at most L cards:

1. A row of at most three cards is worth exactly its cards standing alone (`abc` = `a__` +
   `b_` + `c`), so only rows of four or more cards (long rows) reach past the hundreds column,
   and each holds one card of T and one of U: there are at most r = min(|T|, |U|) of them,
   each carrying at most w = L - 2 cards of R, in the columns from the hundreds up.
2. For a given R the highest value (in hundreds) is the *stack*: rows of w cards of R as long
   as r allows, then one shorter row with what is left, the rest alone in the hundreds
   column, the largest cards in the highest columns. Filling whole rows first puts the most
   cards at or above every column (a row with j cards at or above column c needs c - 2 below
   it, so the fewest, longest rows win), and sorted cards on the highest positions are best.
   A row whose top card would be 0 is all zeros above its fixer pair, so it adds nothing.
3. Every card outside F is used (the stack only grows with R), so a trick is decided by F and
   its split, worth 100 * stack(R, r) + low; the split needs sum(T) = 11 * sum(F) (mod 100).

The search tries fixers by size and, within a size, with their high cards last (the first
fixers found keep the high cards for the stack); a branch is cut as soon as its bound (the
stack of the most it can keep, with as many rows as its size allows, plus 10 * the largest
sum it can hold) is below the best total found. Ties keep every fixer and split, and the one
whose rows rank highest (engine.trick_search.rows_rank) wins: long rows take the largest
cards of each column and the largest tens and units cards, then three-card rows `ctu` and
pairs `tu` are formed largest first, which makes each next row the largest still possible.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import lru_cache

from engine.trick_search import FixerWalk, SearchRow, row_value, rows_rank

_DOWN = range(9, -1, -1)
Counts = tuple[int, ...]


def search_limited_rows(table: Sequence[int], card: int, max_row: int) -> list[SearchRow] | None:
    """The best trick's rows, largest first, with rows of at most `max_row` cards, or None."""
    counts = [0] * 10
    for digit in table:
        counts[digit] += 1
    counts[card] += 1
    if not table or sum(counts) < 3:
        return None
    return _LimitedSearch(tuple(counts), card, max_row).run()


def stack_positions(cards: int, rows: int, max_row: int) -> list[int]:
    """The columns (2 = hundreds) of the stack's positions for `cards` cards, highest first."""
    width = max_row - 2
    if width <= 1:
        return [2] * cards
    full = min(rows, cards // width)
    rest = cards - full * width
    partial = rest if full < rows and rest >= 2 else 0
    columns: list[int] = []
    for column in range(max_row - 1, 1, -1):
        height = column - 2
        columns += [column] * (full + (partial > height))
    return columns + [2] * (cards - len(columns))


def stack_value(kept: Sequence[int], rows: int, max_row: int) -> int:
    """The stack's value in hundreds for the cards `kept` (digit counts)."""
    digits = _descending(kept)
    return sum(d * 10 ** (column - 2)
               for d, column in zip(digits, stack_positions(len(digits), rows, max_row), strict=True)
               if d)


@lru_cache(maxsize=1 << 14)
def tens_sums_by_size(fixer: Counts) -> tuple[int | None, ...]:
    """For each number k of tens cards (index k), the largest sum(T) of k cards of `fixer` with
    sum(F) + 9 * sum(T) a multiple of 100 and at least one units card left, or None."""
    size = sum(fixer)
    total = sum(d * c for d, c in enumerate(fixer))
    reachable = [1] + [0] * size  # reachable[k] has bit s set when k cards can sum to s
    for digit in range(10):
        for _ in range(fixer[digit]):
            for k in range(size, 0, -1):
                reachable[k] |= reachable[k - 1] << digit
    wanted = 11 * total % 100
    best: list[int | None] = [None] * (size + 1)
    for k in range(1, size):
        tens_sum = wanted + (total - wanted) // 100 * 100 if total >= wanted else -1
        while tens_sum >= 0 and not reachable[k] >> tens_sum & 1:
            tens_sum -= 100
        best[k] = tens_sum if tens_sum >= 0 else None
    return tuple(best)


class _LimitedSearch(FixerWalk):
    """One branch-and-bound search over fixers for one position and row limit."""

    def __init__(self, counts: Counts, card: int, max_row: int) -> None:
        self.counts = counts
        self.card = card
        self.max_row = max_row
        self.size = sum(counts)
        self.below = [sum(counts[:digit]) for digit in range(10)]
        self.best_total = 0
        self.fixer_size = 2
        self.tied: list[tuple[Counts, int, int]] = []  # (fixer, tens cards, tens sum)

    def run(self) -> list[SearchRow] | None:
        fixer = [0] * 10
        bounds = {}
        for fixer_size in range(2, self.size + 1):
            self.fixer_size = fixer_size
            bounds[fixer_size] = self._bound(9, fixer_size, fixer, 0)
        # The most promising sizes first, so that the best total found early cuts the rest.
        for fixer_size in sorted(bounds, key=bounds.__getitem__, reverse=True):
            if bounds[fixer_size] < self.best_total:
                break
            self.fixer_size = fixer_size
            self._visit(9, fixer_size, fixer, 0)
        if not self.tied:
            return None
        options = (self._arrange(*found) for found in dict.fromkeys(self.tied))
        return max(options, key=rows_rank)

    def _bound(self, digit: int, remaining: int, fixer: list[int], fixer_sum: int) -> int:
        """The most any fixer completing `fixer` with digits up to `digit` can be worth."""
        kept, low_sum = self._best_completion(digit, remaining, fixer, fixer_sum)
        high = stack_value(kept, self.fixer_size // 2, self.max_row)
        return 100 * high + 10 * low_sum // 100 * 100

    def _pruned(self, digit: int, remaining: int, fixer: list[int], fixer_sum: int) -> bool:
        return self._bound(digit, remaining, fixer, fixer_sum) < self.best_total

    def _leaf(self, fixer: Counts, fixer_sum: int) -> None:
        kept = [self.counts[d] - fixer[d] for d in range(10)]
        size = sum(fixer)
        for tens, tens_sum in enumerate(tens_sums_by_size(fixer)):
            if tens_sum is None:
                continue
            high = stack_value(kept, min(tens, size - tens), self.max_row)
            total = 100 * high + fixer_sum + 9 * tens_sum
            if total == 0:
                continue  # a trick is worth at least 100
            if total > self.best_total:
                self.best_total, self.tied = total, []
            if total == self.best_total:
                self.tied.append((fixer, tens, tens_sum))

    def _arrange(self, fixer: Counts, tens: int, tens_sum: int) -> list[SearchRow]:
        """The best-ranked rows for this fixer among its splits into `tens` cards summing
        `tens_sum` and the units cards."""
        kept = [self.counts[d] - fixer[d] for d in range(10)]
        best: list[SearchRow] = []
        best_rank: tuple[int, tuple[tuple[float, ...], ...]] | None = None
        for part in _parts(fixer, tens, tens_sum):
            units = [fixer[d] - part[d] for d in range(10)]
            rows = self._rows(kept, _descending(part), _descending(units))
            rank = rows_rank(rows)
            if best_rank is None or rank > best_rank:
                best, best_rank = rows, rank
        return sorted(best, key=lambda row: (row_value(row), -row[1]), reverse=True)

    def _rows(self, kept: Sequence[int], tens: list[int], units: list[int]) -> list[SearchRow]:
        """The stack's long rows, then three-card rows and pairs, largest first."""
        high = _descending(kept)
        positions = stack_positions(len(high), min(len(tens), len(units)), self.max_row)
        columns: dict[int, list[int]] = {}
        for digit, column in zip(high, positions, strict=True):
            columns.setdefault(column, []).append(digit)
        rows: list[SearchRow] = []
        alone = list(columns.get(2, []))
        top = max(columns, default=2)
        long_rows = len(columns.get(top, [])) if top > 2 else 0
        long_rows = max(len(columns.get(3, [])), long_rows)
        for index in range(long_rows):
            upper = [columns[c][index] for c in range(top, 1, -1) if index < len(columns.get(c, []))]
            if upper[0] == 0:
                continue  # all zeros above the pair: worth nothing, the zeros stay alone
            rows.append(((*upper, tens.pop(0), units.pop(0)), 0))
            alone.remove(upper[-1])
        alone = [d for d in sorted(alone, reverse=True) if d]
        while self.max_row >= 3 and alone and tens and units:
            rows.append(((alone.pop(0), tens.pop(0), units.pop(0)), 0))
        rows += [((d,), 2) for d in alone]
        rows += _pair_up(tens, units, self.max_row)
        if not any(self.card in digits for digits, _ in rows):
            rows.append(((self.card,), 2))  # a laid 0 that only a zero row can hold
        return rows


def _descending(counts: Sequence[int]) -> list[int]:
    return [digit for digit in _DOWN for _ in range(counts[digit])]


def _parts(fixer: Counts, size: int, target: int) -> Iterator[list[int]]:
    """Every sub-multiset (as digit counts) of `fixer` of `size` cards whose digits sum to `target`."""
    part = [0] * 10

    def choose(digit: int, left_size: int, left_sum: int) -> Iterator[list[int]]:
        if digit == 0:
            if left_sum == 0 and left_size <= fixer[0]:
                part[0] = left_size
                yield list(part)
                part[0] = 0
            return
        for taken in range(min(fixer[digit], left_size, left_sum // digit) + 1):
            part[digit] = taken
            yield from choose(digit - 1, left_size - taken, left_sum - taken * digit)
        part[digit] = 0

    yield from choose(9, size, target)


def _pair_up(tens: list[int], units: list[int], max_row: int) -> list[SearchRow]:
    """Rows for the tens and units cards left (each descending), largest first."""
    rows: list[SearchRow] = []
    pairs = 0
    while (max_row >= 2 and pairs < min(len(tens), len(units)) and tens[pairs] != 0):
        rows.append(((tens[pairs], units[pairs]), 0))
        pairs += 1
    rows.extend(((digit,), 1) for digit in tens[pairs:])
    rows.extend(((digit,), 0) for digit in units[pairs:])
    return rows
