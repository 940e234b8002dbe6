"""Table fingerprints (FAIRNESS.md, "Table fingerprint"): the same keys give the same digits on
every screen; any swapped key changes them; `join --expect` matches only the expected host."""

from __future__ import annotations

from netplay.fair.fingerprint import host_matches, table_fingerprint
from netplay.fair.identity import Identity

HOST, ALICE, BOB, MALLORY = (Identity.generate().public for _ in range(4))


def test_same_keys_same_digits() -> None:
    shown = table_fingerprint("T1", HOST, [ALICE, None, BOB])
    assert shown == table_fingerprint("T1", HOST, [ALICE, None, BOB])
    assert len(shown.replace("-", "")) == 15 and shown.replace("-", "").isdigit()


def test_any_swapped_or_moved_key_changes_the_digits() -> None:
    shown = table_fingerprint("T1", HOST, [ALICE, None, BOB])
    others = [
        table_fingerprint("T1", MALLORY, [ALICE, None, BOB]),
        table_fingerprint("T1", HOST, [MALLORY, None, BOB]),
        table_fingerprint("T1", HOST, [BOB, None, ALICE]),
        table_fingerprint("T1", HOST, [ALICE, BOB, None]),
        table_fingerprint("T1", HOST, [ALICE, None, BOB, None]),
        table_fingerprint("T2", HOST, [ALICE, None, BOB]),
    ]
    assert shown not in others


def test_expect_matches_only_the_hosts_fingerprint() -> None:
    given = HOST.fingerprint()
    assert host_matches(given, HOST)
    assert host_matches(given.upper().replace("-", " "), HOST)
    assert not host_matches(given, MALLORY)
    assert not host_matches("", HOST)
