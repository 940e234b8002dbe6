"""When a person counts as gone from a deal by mental poker: how long the host waits before it
deals a person out, and the absence after which that person's client believes it, kept apart
by a margin (FAIRNESS.md A8, "A person who stays away")."""

from __future__ import annotations

import time

_BOOT_CLOCK = getattr(time, "CLOCK_BOOTTIME", None)  # Linux: counts the time the machine slept

MIN_AWAY_SECONDS = 5.0
"""No one is dealt out for a shorter absence, whatever the table's away time."""
HOST_MARGIN = 4.0
"""How much longer than that an honest host waits: a seat times its absence from when it saw its
connection go, which may be after the host saw it (up to `SILENT_LINK_SECONDS`, 3.5 s, when the
link failed silently: `netplay.relay.client`), and it must not find it too short."""


def long_enough_away(absence: float, away_seconds: float | None) -> bool:
    """Whether a person's client believes a deal that gives its seat to the bots after an
    absence of `absence` seconds, at a table whose away time is `away_seconds`."""
    return absence >= max(MIN_AWAY_SECONDS, away_seconds or 0.0)


def host_patience(away_seconds: float) -> float:
    """How long an honest host waits for a person (away, or connected and owing a key, shuffle
    or share) before it deals them out: longer than any absence their client would refuse."""
    return max(MIN_AWAY_SECONDS, away_seconds) + HOST_MARGIN


def absence_clock() -> float:
    """Seconds on a clock that runs on while the machine sleeps (Linux's boot clock; elsewhere
    the monotonic one), to time a person's absence by."""
    if _BOOT_CLOCK is None:
        return time.monotonic()
    return time.clock_gettime(_BOOT_CLOCK)


def slept() -> float:
    """Seconds this machine has been suspended since it booted, as far as its clock tells
    (Linux; elsewhere 0): `time.monotonic` stops while a laptop sleeps, a person's absence
    does not."""
    return max(0.0, absence_clock() - time.monotonic())
