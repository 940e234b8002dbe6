"""The table fingerprint people compare aloud, and the check behind `join --expect`.

`table_fingerprint` hashes the table id, the host's identity and every seat's identity (a free
or bot seat as empty) into 15 decimal digits, so two screens that show the same digits see the
same keys: a relay that swapped any key in the lobby would show different digits on each side.
`host_matches` checks a host identity against the fingerprint a person was given beforehand
(`PublicIdentity.fingerprint()`, shown by `cardtui host`), ignoring case, spaces and dashes.
"""

from __future__ import annotations

from collections.abc import Sequence

from netplay.fair.commit import tagged_hash
from netplay.fair.identity import PublicIdentity

DIGITS = 15


def table_fingerprint(
    table: str, host: PublicIdentity, seats: Sequence[PublicIdentity | None]
) -> str:
    """Fifteen digits in groups of three, from the table id and every identity at the table."""
    parts = [seat.to_bytes() if seat is not None else b"" for seat in seats]
    digest = tagged_hash("table-fingerprint", table, host.to_bytes(), len(parts), *parts)
    number = int.from_bytes(digest[:8], "big") % 10**DIGITS  # 2**64 / 10**15: bias below 1e-4
    text = str(number).zfill(DIGITS)
    return "-".join(text[i : i + 3] for i in range(0, DIGITS, 3))


def normalized(fingerprint: str) -> str:
    """A fingerprint as typed, lower-cased, without spaces or dashes."""
    return "".join(ch for ch in fingerprint.lower() if ch not in " -:")


def host_matches(expected: str, host: PublicIdentity) -> bool:
    """Whether `host`'s fingerprint is the one a person expects (`join --expect`)."""
    return normalized(expected) == normalized(host.fingerprint())
