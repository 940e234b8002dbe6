"""A move's round trip on loopback: from a seat's proposal until all four clients have applied it.

The host (relay + dealer) runs as `cardtui host --headless` in its own process;
the four seats run here, played by greedy bots, and every proposal and every
application is timed with the same monotonic clock.

    python benchmarks/bench_netplay.py [--game zodiak] [--moves 600]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from engine.bots import make_bot
from netplay.seat.remote import RemoteSession
from netplay.session.events import MatchEnded, MoveMade


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def seat_loop(session: RemoteSession, proposed: dict, applied: dict, stop: asyncio.Event,
                    count: int) -> None:
    """Play the seat with a greedy bot, timing proposals and applications."""
    bot = make_bot("greedy")
    async for event in session.events():
        if isinstance(event, MatchEnded) or stop.is_set():
            break
        if isinstance(event, MoveMade):
            key = (session.round_number, len(event.view.history) - 1)
            applied.setdefault(key, []).append(time.perf_counter())
            if len(proposed) >= count:
                stop.set()
        view = session.view
        if (view is not None and not view.round_over and view.turn == session.my_seat
                and session.queue.empty()):
            key = (session.round_number, len(view.history))
            if key not in proposed:
                proposed[key] = time.perf_counter()
                await session.submit(bot.choose(view.view(session.my_seat)))


async def measure(port: int, count: int) -> list[float]:
    """Round trips in milliseconds for about `count` moves."""
    url = f"ws://127.0.0.1:{port}/ws"
    sessions = [RemoteSession(game="", url=url, name=f"b{i}") for i in range(4)]
    for s in sessions:
        await s.start()
        await s.wait_seated()
    proposed: dict = {}
    applied: dict = {}
    stop = asyncio.Event()
    loops = [asyncio.create_task(seat_loop(s, proposed, applied, stop, count)) for s in sessions]
    await asyncio.wait(loops, timeout=300, return_when=asyncio.FIRST_COMPLETED)
    stop.set()
    for task in loops:
        task.cancel()
    for s in sessions:
        await s.close()
    return [(max(applied[k]) - t0) * 1000 for k, t0 in proposed.items()
            if len(applied.get(k, ())) == 4]


def main() -> None:
    """Start a headless host, play, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="zodiak", choices=("zodiak", "hekata"))
    parser.add_argument("--moves", type=int, default=600)
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        host = subprocess.Popen(
            [sys.executable, "-m", "tui.cli", "host", "--headless", "--game", args.game,
             "--port", str(port), "--bind", "127.0.0.1", "--seed", "1", "--speed", "0",
             "--save", os.path.join(tmp, "hosted.json")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", port), 0.2).close()
                    break
                except OSError:
                    time.sleep(0.05)
            trips = asyncio.run(measure(port, args.moves))
        finally:
            host.terminate()
            host.wait()
    trips.sort()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores,"
          f" Python {platform.python_version()}")
    print(f"{args.game}: {len(trips)} moves proposed by a seat and applied by all four clients")
    print(f"round trip median {statistics.median(trips):.2f} ms,"
          f" p99 {trips[int(len(trips) * 0.99) - 1]:.2f} ms, worst {trips[-1]:.2f} ms")


if __name__ == "__main__":
    main()
