"""Tables on the LAN over mDNS, on loopback only: announced, listed, withdrawn."""

from __future__ import annotations

import asyncio

from netplay.relay.lan import LanAnnouncement, LanBrowser

LOOPBACK = ["127.0.0.1"]
WAIT = 20.0


async def until(condition, changed: asyncio.Event) -> None:
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
