"""`cardtui relay` as a real process: it prints its URL, relays, and stops cleanly on a signal."""

from __future__ import annotations

import asyncio
import re
import signal
import sys

import pytest

from netplay.messages import Arrived, Frame
from netplay.relay.client import RelayClosed, RelayConnection


async def start_command(*args: str) -> tuple[asyncio.subprocess.Process, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tui.cli", "relay", "--port", "0", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    first = (await proc.stdout.readline()).decode()
    found = re.search(r"ws://127\.0\.0\.1:\d+/ws", first)
    assert found, first
    return proc, found.group(0)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_the_relay_command_serves_rooms_and_stops_on_a_signal(signum: int) -> None:
    proc, url = await start_command("--max-rooms", "5")
    host = await RelayConnection.open_room(url)
    seat = await RelayConnection.enter(url, host.room)
    await seat.send(b"hello")
    assert await host.recv() == Arrived(conn=1)
    assert await host.recv() == Frame(sender=1, body=b"hello")
    proc.send_signal(signum)
    with pytest.raises(RelayClosed) as closed:
        await seat.recv()
    assert closed.value.close_code == 1001
    out, _ = await proc.communicate()
    assert proc.returncode == 0
    assert b"1 rooms opened, 1 frames relayed" in out
    await host.close()
    await seat.close()


async def test_a_busy_port_is_reported_plainly() -> None:
    proc, url = await start_command()
    port = url.rsplit(":", 1)[1].removesuffix("/ws")
    second = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tui.cli", "relay", "--port", port,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    _, err = await second.communicate()
    assert second.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}".encode() in err
    proc.terminate()
    await proc.communicate()
    assert proc.returncode == 0
