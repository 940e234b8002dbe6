"""Time best_trick on 1,000 random Hekata positions (2-40 table cards), without and with the
house rule max-row (rows of at most 3, 4 or 6 cards), and print the figures."""

from __future__ import annotations

import os
import platform
import random
import statistics
import time

from engine.cards import hekata_deck
from engine.limited_search import tens_sums_by_size
from engine.trick_search import best_tens_sum
from engine.tricks import best_trick

SEED = 20261129
POSITIONS = 1000
REPEATS = 5
LIMITS = (3, 4, 6)


def positions(seed: int = SEED, count: int = POSITIONS) -> list[tuple[list[int], int]]:
    """Random deals from one shuffled 50-card deck: a table of 2-40 cards and the card laid."""
    rng = random.Random(seed)
    dealt = []
    for _ in range(count):
        deck = hekata_deck()
        rng.shuffle(deck)
        size = rng.randint(2, 40)
        dealt.append((deck[:size], deck[size]))
    return dealt


def milliseconds(table: list[int], card: int) -> float:
    """Wall time of one best_trick call, in milliseconds."""
    start = time.perf_counter()
    best_trick(table, card)
    return (time.perf_counter() - start) * 1000


def uncached_milliseconds(table: list[int], card: int) -> float:
    """Like milliseconds, with the fixer cache emptied first."""
    best_tens_sum.cache_clear()
    return milliseconds(table, card)


def cpu_milliseconds(table: list[int], card: int, max_row: int) -> float:
    """CPU time of one best_trick call under a row limit, fixer caches emptied first, in ms."""
    best_tens_sum.cache_clear()
    tens_sums_by_size.cache_clear()
    start = time.process_time()
    best_trick(table, card, max_row)
    return (time.process_time() - start) * 1000


def report(label: str, times: list[float]) -> None:
    """Print median, p99 and worst of `times`."""
    ordered = sorted(times)
    print(
        f"{label:<34} median {statistics.median(ordered):7.3f} ms   "
        f"p99 {ordered[int(0.99 * len(ordered)) - 1]:7.3f} ms   worst {ordered[-1]:7.3f} ms"
    )


def main() -> None:
    """Time every position once from a cold cache, then the best of several runs of each."""
    dealt = positions()
    best_tens_sum.cache_clear()
    cold = [milliseconds(table, card) for table, card in dealt]
    # The best of a few runs is the algorithm's cost without other processes' interference;
    # clearing the cache before each run measures the search with no help from earlier ones.
    uncached = [min(uncached_milliseconds(t, c) for _ in range(REPEATS)) for t, c in dealt]
    best_of = [min(milliseconds(t, c) for _ in range(REPEATS)) for t, c in dealt]
    found = sum(best_trick(table, card) is not None for table, card in dealt)
    print(f"best_trick on {POSITIONS} random positions (seed {SEED}), {found} with a trick")
    report("one run each, cold fixer cache:", cold)
    report(f"best of {REPEATS}, cache cleared each:", uncached)
    report(f"best of {REPEATS} runs each, warm:", best_of)
    for max_row in LIMITS:
        limited = [cpu_milliseconds(t, c, max_row) for t, c in dealt]
        report(f"max-row={max_row}, CPU time, cold:", limited)
    print(
        f"machine: {platform.platform()}, {platform.python_implementation()} "
        f"{platform.python_version()}, {os.cpu_count()} CPUs, one core used, "
        f"load average {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
