"""Fixtures any test may use."""

from __future__ import annotations

import fcntl
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def mdns_alone() -> Iterator[None]:
    """Hold the machine's mDNS-on-loopback lock for the test.

    Every browser and announcer on 127.0.0.1 hears every other: a test that floods the LAN
    (tests/netplay/lan_flood.py) would crowd the tables another test waits for out of its list.
    Tests that listen or flood take this lock, which other pytest workers and runs on this
    machine wait for.
    """
    path = Path(tempfile.gettempdir()) / "cardtui-tests-mdns.lock"
    with path.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
