"""A move's round trip on loopback: from a seat's proposal until all four clients have applied it.

The host (relay + dealer) runs as `cardtui host --headless` in its own process;
the four seats run here, played by greedy bots, and every proposal and every
application is timed with the same monotonic clock.

    python benchmarks/bench_netplay.py [--game zodiak] [--moves 600]

With --relay the room is on a standalone `cardtui relay` process, opened there by a
`cardtui host --relay` process; with --flood N as well, N connections from 127.0.0.2 each
send --flood-rate pings a second to the same relay all through the measurement (the flood
is tests/e2e/attackers.py, its own process). --trust-flood exempts 127.0.0.2 from the
relay's limits per source address, to see what they are worth.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import re
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


async def measure(port: int, count: int, room: str | None = None) -> list[float]:
    """Round trips in milliseconds for about `count` moves."""
    url = f"ws://127.0.0.1:{port}/ws"
    sessions = [RemoteSession(game="", url=url, room=room, name=f"b{i}") for i in range(4)]
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


def wait_for_port(port: int) -> None:
    """Until something listens on 127.0.0.1:port (at most 10 s)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)


def wait_for_line(path: str, pattern: str) -> re.Match[str]:
    """The first match of `pattern` in the file at `path`, waiting up to 20 s for it."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with open(path) as f:
            found = re.search(pattern, f.read())
        if found:
            return found
        time.sleep(0.05)
    raise SystemExit(f"{path} never showed {pattern!r}")


def start(argv: list[str], log: str | None = None) -> subprocess.Popen[bytes]:
    """A child process, its output to `log` (or nowhere)."""
    out = open(log, "w") if log else subprocess.DEVNULL  # noqa: SIM115 - the child keeps it
    return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process has used so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_on_relay(args: argparse.Namespace, tmp: str) -> list[float]:
    """Relay, host and (optionally) flood processes; the round trips of the seats here."""
    port = free_port()
    children = []
    try:
        relay = ["relay", "--port", str(port), "--bind", "127.0.0.1"]
        if args.trust_flood:
            relay += ["--trust", "127.0.0.2"]
        children.append(start([sys.executable, "-m", "tui.cli", *relay]))
        wait_for_port(port)
        url = f"ws://127.0.0.1:{port}"
        host_log = os.path.join(tmp, "host.log")
        children.append(start(
            [sys.executable, "-m", "tui.cli", "host", "--headless", "--relay", url,
             "--game", args.game, "--seed", "1", "--speed", "0", *dealing(args),
             "--save", os.path.join(tmp, "hosted.json")], host_log))
        room = wait_for_line(host_log, r"join --relay \S+ (\S+)").group(1)
        if args.flood:
            flood_log = os.path.join(tmp, "flood.log")
            children.append(start(
                [sys.executable, "-m", "tests.e2e.attackers", "flood", url + "/ws",
                 "--from", "127.0.0.2", "--conns", str(args.flood),
                 "--rate", str(args.flood_rate), "--seconds", "600"], flood_log))
            wait_for_line(flood_log, r"connected .*")  # every flooding connection is in
        relay_pid, started = children[0].pid, time.monotonic()
        relay_cpu = cpu_seconds(relay_pid)
        trips = asyncio.run(measure(port, args.moves, room.replace("-", "")))
        relay_cpu = (cpu_seconds(relay_pid) - relay_cpu) / (time.monotonic() - started)
        print(f"relay process CPU while measuring: {relay_cpu:.0%} of one core")
        if args.flood:
            with open(flood_log) as f:
                print("flood: " + "; ".join(f.read().strip().splitlines()))
        return trips
    finally:
        for child in reversed(children):
            child.terminate()
            child.wait()


def dealing(args: argparse.Namespace) -> list[str]:
    """The host's options for the dealing asked for."""
    return ["--trusted-dealer"] if args.dealing == "trusted" else []


def main() -> None:
    """Start a headless host, play, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="zodiak", choices=("zodiak", "hekata"))
    parser.add_argument("--moves", type=int, default=600)
    parser.add_argument("--relay", action="store_true",
                        help="through a standalone relay process instead of the host's own")
    parser.add_argument("--flood", type=int, default=0, metavar="N",
                        help="N flooding connections from 127.0.0.2 (implies --relay)")
    parser.add_argument("--flood-rate", type=float, default=100.0, help="pings a second each")
    parser.add_argument("--trust-flood", action="store_true",
                        help="the relay exempts the flood's address from its per-address limits")
    parser.add_argument("--dealing", default="trusted", choices=("trusted", "mental"),
                        help="the host's dealing: trusted (the default here, comparable with "
                             "figures from before mental poker was host's default) or mental")
    args = parser.parse_args()
    port = free_port()
    if args.relay or args.flood:
        with tempfile.TemporaryDirectory() as tmp:
            report(args, run_on_relay(args, tmp))
        return
    with tempfile.TemporaryDirectory() as tmp:
        host_log = os.path.join(tmp, "host.log")
        host = start(
            [sys.executable, "-m", "tui.cli", "host", "--headless", "--game", args.game,
             "--port", str(port), "--bind", "127.0.0.1", "--seed", "1", "--speed", "0",
             *dealing(args), "--save", os.path.join(tmp, "hosted.json")], host_log)
        try:
            wait_for_line(host_log, r"room \S+ open")  # listening comes before the room
            host_cpu, seats_cpu = cpu_seconds(host.pid), time.process_time()
            trips = asyncio.run(measure(port, args.moves))
            host_cpu, seats_cpu = cpu_seconds(host.pid) - host_cpu, time.process_time() - seats_cpu
        finally:
            host.terminate()
            host.wait()
    report(args, trips)
    # CPU time says more than wall time on a shared machine (and counts the round's deals).
    print(f"CPU per move: host {host_cpu / len(trips) * 1e6:.0f} µs, this process (the four"
          f" seats and their bots) {seats_cpu / len(trips) * 1e6:.0f} µs;"
          f" load average {os.getloadavg()[0]:.2f}")


def report(args: argparse.Namespace, trips: list[float]) -> None:
    """Print the machine and the round trips' median, p99 and worst."""
    trips.sort()
    if args.flood:
        print(f"flood: {args.flood} connections x {args.flood_rate:g} pings/s from 127.0.0.2"
              f"{' (exempt from the per-address limits)' if args.trust_flood else ''}")
    elif args.relay:
        print("through a standalone relay")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores,"
          f" Python {platform.python_version()}")
    print(f"{args.game}: {len(trips)} moves proposed by a seat and applied by all four clients")
    print(f"round trip median {statistics.median(trips):.2f} ms,"
          f" p99 {trips[int(len(trips) * 0.99) - 1]:.2f} ms, worst {trips[-1]:.2f} ms")


if __name__ == "__main__":
    main()
