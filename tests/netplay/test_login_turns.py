"""Issue 11 item 4: failed logins slow an address down however many connections it guesses
through at once (the SSH door allows 10 unauthenticated ones per address, the browser door 32)."""

from __future__ import annotations

import asyncio

from netplay.ssh.guard import LoginThrottle, ThrottleLimits

DELAY = 1.0


async def parallel_waits(attempts: int) -> list[float]:
    throttle = LoginThrottle(ThrottleLimits(free_failures=1, first_delay=DELAY, max_delay=DELAY))
    throttle.failed("203.0.113.9")
    throttle.failed("203.0.113.9")
    waits = await asyncio.gather(*(throttle.wait_turn("203.0.113.9") for _ in range(attempts)))
    other = await throttle.wait_turn("198.51.100.7")
    return [*sorted(waits), other]


def test_parallel_attempts_from_one_address_take_turns() -> None:
    """Three attempts at once wait one, two and three delays (before: one delay each, so 32
    parallel browser requests made 32 guesses every 8 s); another address is not held up."""
    *waits, other = asyncio.run(parallel_waits(3))
    assert [round(w / DELAY) for w in waits] == [1, 2, 3]
    assert other == 0.0
