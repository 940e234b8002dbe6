"""Issue 10: what the relay remembers per source address stays bounded when many addresses each
connect once (a botnet, or anyone with an IPv6 prefix): a real relay on 127.0.0.1 and plain
TCP connections from 127.0.1.x (all of 127.0.0.0/8 is local)."""

from __future__ import annotations

import asyncio

from netplay.relay.launch import start_relay
from netplay.relay.limits import RelayLimits

ADDRESSES = 120
KEPT = 20


async def connect_once_from_many_addresses() -> int:
    relay = await start_relay(limits=RelayLimits(addresses_kept=KEPT))
    try:
        for i in range(ADDRESSES):
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", relay.port, local_addr=(f"127.0.1.{i + 1}", 0))
            writer.close()  # each connects, is counted, and goes
            await writer.wait_closed()
            await reader.read()
        # A last connection from one more address: every earlier one has been let go by now.
        reader, writer = await asyncio.open_connection("127.0.0.1", relay.port,
                                                       local_addr=("127.0.2.1", 0))
        writer.write(b"GET /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        await reader.read()
        writer.close()
        return len(relay.relay.book.addresses)
    finally:
        await relay.close()


def test_addresses_that_came_and_went_are_forgotten_past_a_cap() -> None:
    """At most `addresses_kept` idle addresses are remembered (those with connections or rooms
    always are); before, every address whose connection budget was not yet refilled stayed."""
    remembered = asyncio.run(connect_once_from_many_addresses())
    assert remembered <= KEPT + 1
