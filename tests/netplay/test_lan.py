"""Tables on the LAN over mDNS, on loopback only: announced, listed, withdrawn, flooded."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from netplay.relay.lan import (
    CHANGE_INTERVAL,
    MAX_FIELD,
    MAX_RESOLVING,
    MAX_TABLES,
    MAX_UNLISTED,
    MAX_WAITING,
    LanAnnouncement,
    LanBrowser,
)

pytestmark = pytest.mark.usefixtures("mdns_alone")

LOOPBACK = ["127.0.0.1"]
WAIT = 20.0


async def until(condition: Callable[[], bool], changed: asyncio.Event) -> None:
    """Wait for the browser's changes until `condition()` holds."""
    async with asyncio.timeout(WAIT):
        while not condition():
            await changed.wait()
            changed.clear()


async def test_an_announced_table_is_listed_with_what_it_says_then_withdrawn() -> None:
    changed = asyncio.Event()
    browser = LanBrowser(changed.set, interfaces=LOOPBACK)
    await browser.start()
    announcement = await LanAnnouncement.start(17955, "127.0.0.1", "hekata", 4, "Hana\x1b[2J",
                                               interfaces=LOOPBACK)
    try:
        await until(lambda: any(t.port == 17955 for t in browser.tables.values()), changed)
        table = next(t for t in browser.tables.values() if t.port == 17955)
        assert (table.game, table.players, table.target) == ("hekata", 4, "127.0.0.1:17955")
        assert table.host == "Hana[2J"  # no control characters from a stranger's record
        await announcement.close()
        await until(lambda: all(t.port != 17955 for t in browser.tables.values()), changed)
    finally:
        await browser.close()


# -- a hostile neighbour floods the LAN (tests/netplay/lan_flood.py, a process of its own) -----

FLOOD = Path(__file__).with_name("lan_flood.py")
FLOOD_PORT, GARBAGE_PORTS, FIRST_TABLES = 40000, (39001, 39002, 39003), 400


def flood(*args: str) -> subprocess.Popen[bytes]:
    """Start the hostile announcer; it stops by itself after 40 s if the test cannot stop it."""
    return subprocess.Popen([sys.executable, str(FLOOD), "--seconds", "40", *args],
                            stdout=subprocess.DEVNULL)


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    process.wait(timeout=10)


async def test_a_flood_stays_within_the_bounds_and_the_table_heard_first_stays() -> None:
    changes = 0
    changed = asyncio.Event()

    def on_change() -> None:
        nonlocal changes
        changes += 1
        changed.set()

    browser = LanBrowser(on_change, interfaces=LOOPBACK)
    started = asyncio.get_running_loop().time()
    await browser.start()
    honest = await LanAnnouncement.start(17958, "127.0.0.1", "zodiak", 3, "Hana",
                                         interfaces=LOOPBACK)
    peak = {"tables": 0, "unlisted": 0, "resolving": 0, "waiting": 0, "tasks": 0}

    def measure() -> None:
        for key, value in (("tables", len(browser.tables)), ("unlisted", len(browser.unlisted)),
                           ("resolving", browser.resolving), ("waiting", browser.waiting),
                           ("tasks", len(asyncio.all_tasks()))):
            peak[key] = max(peak[key], value)

    def listed(port: int) -> bool:
        return any(t.port == port for t in browser.tables.values())

    process = None
    try:
        await until(lambda: listed(17958), changed)
        tasks_before = len(asyncio.all_tasks())
        process = flood("--ghosts", "200", "--tables", str(FIRST_TABLES), "--churn")
        # Full, more left out than counted, as many requests as allowed, some names dropped,
        # and churned: tables first announced after the flood began were listed in freed places.
        async with asyncio.timeout(WAIT):
            while not (len(browser.tables) == MAX_TABLES and browser.unlisted_overflow
                       and peak["resolving"] == MAX_RESOLVING and browser.dropped
                       and any(t.port >= FLOOD_PORT + FIRST_TABLES
                               for t in browser.tables.values())):
                measure()
                await asyncio.sleep(0.02)
        measure()
        elapsed = asyncio.get_running_loop().time() - started
        assert process.poll() is None  # still flooding
        assert listed(17958)  # the table heard first stays
        assert peak["tables"] <= MAX_TABLES and peak["unlisted"] <= MAX_UNLISTED
        assert peak["waiting"] <= MAX_WAITING
        assert peak["tasks"] <= tasks_before + MAX_RESOLVING  # nothing else runs per name
        # Many changes, at most one call per CHANGE_INTERVAL since the browser started
        # (a loaded machine only makes fewer calls, never more).
        assert changes <= elapsed / CHANGE_INTERVAL + 1
    finally:
        if process is not None:
            stop(process)
        await honest.close()
        await browser.close()


async def test_garbage_txt_records_are_shown_cleaned_and_a_garbage_name_ignored() -> None:
    changed = asyncio.Event()
    browser = LanBrowser(changed.set, interfaces=LOOPBACK)
    await browser.start()
    process = flood("--garbage")
    try:
        await until(lambda: {t.port for t in browser.tables.values()} >= set(GARBAGE_PORTS),
                    changed)
        # The name with control characters zeroconf refuses to ask for: not listed (and the
        # browser went on to list the three announced after it).
        for table in browser.tables.values():
            assert table.port in GARBAGE_PORTS
            for text in (table.name, table.game, table.host):
                assert len(text) <= MAX_FIELD and text.isprintable()
            assert table.host.startswith("\ufffd\ufffd[31mEvilHost")  # bytes not UTF-8 marked
            assert table.game == "Z" * MAX_FIELD  # 245 bytes announced
            assert table.players == 0  # "lots", bytes, 20 digits: unknown
            assert table.target == f"127.0.0.1:{table.port}"
    finally:
        stop(process)
        await browser.close()
