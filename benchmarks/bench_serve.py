"""Measure `cardtui serve`: N real `ssh` sessions at once, time to the lobby on screen, memory each.

Run: python benchmarks/bench_serve.py [--sessions 100] [--sources 50] [--cold]

By default sessions fork from the server's warm process; --cold starts each from scratch.
Clients connect from --sources loopback addresses (127.0.0.2, ...), so the door's default
per-address limits apply as they would to that many visitors.

The server is a real `cardtui serve` subprocess on free loopback ports. Each client is the
OpenSSH binary with a forced pty (80x24); the clock runs from starting ssh until the lobby's
title arrives in its output, which needs the door, a fresh Python with Textual, and a first
GET /tables. Memory is the RSS (and PSS) of the server plus every process under it, taken
while all sessions sit in the lobby, divided by the number of sessions.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_ssh import descendants, machine, one_session, pss_kib, rss_kib

MARKER = "Tables on this server"
IDLE_SECONDS = 30.0


def cpu_seconds(pid: int) -> float:
    """Return the user + system CPU time a process has used so far (0 if it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    """Return a TCP port that was free on 127.0.0.1 a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def wait_until_serving(server: asyncio.subprocess.Process) -> None:
    """Read `cardtui serve`'s start-up message until it says it is serving, or fail."""
    assert server.stdout is not None
    banner = b""
    while b"Stop with Ctrl-C." not in banner:
        line = await asyncio.wait_for(server.stdout.readline(), 30)
        if not line:
            raise RuntimeError(f"cardtui serve ended early: {banner.decode()}")
        banner += line


async def start_server(scratch: Path, sessions: int,
                       cold: bool) -> tuple[asyncio.subprocess.Process, int]:
    """Start `cardtui serve` admitting all the sessions and return it with its SSH port."""
    ssh_port = free_port()
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tui.cli", "serve", "--bind", "127.0.0.1",
        "--ssh-port", str(ssh_port), "--port", str(free_port()),
        "--host-key", str(scratch / "host_key"),
        "--max-sessions", str(sessions + 1),
        *(["--cold"] if cold else []),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, "XDG_DATA_HOME": str(scratch)},
    )
    await wait_until_serving(server)
    return server, ssh_port


def source(index: int, sources: int) -> str:
    """Return the loopback address client number index connects from."""
    return f"127.0.0.{2 + index % sources}"


def tree_cpu(pids: list[int]) -> float:
    """Return the CPU seconds the processes pids have used so far, together."""
    return sum(cpu_seconds(pid) for pid in pids)


async def measure(sessions: int, sources: int, cold: bool) -> None:
    """Start a server, open one session alone, then all sessions at once, and print figures."""
    with tempfile.TemporaryDirectory() as scratch:
        load_before = os.getloadavg()[0]
        server, port = await start_server(Path(scratch), sessions, cold)
        idle_rss = rss_kib(server.pid)
        alone, client = await one_session(port, MARKER.encode(), "warmup", "127.0.0.254")
        client.kill()
        await client.wait()
        await asyncio.sleep(1.0)  # let the warm-up session's process go before counting
        started = time.perf_counter()
        results = await asyncio.gather(
            *(one_session(port, MARKER.encode(), f"p{i}", source(i, sources))
              for i in range(sessions)))
        wall = time.perf_counter() - started
        await asyncio.sleep(5.0)  # every lobby has drawn its first listing
        idle_pids = [server.pid, *descendants(server.pid)]
        idle_before, idle_started = tree_cpu(idle_pids), time.perf_counter()
        server_before = cpu_seconds(server.pid)
        await asyncio.sleep(IDLE_SECONDS)
        idle_cpu = tree_cpu(idle_pids) - idle_before
        server_idle_cpu = cpu_seconds(server.pid) - server_before
        idle_wall = time.perf_counter() - idle_started
        server_rss = rss_kib(server.pid)
        tree = [server.pid, *descendants(server.pid)]
        tree_rss = sum(rss_kib(pid) for pid in tree)
        tree_pss = sum(pss_kib(pid) for pid in tree)
        session_cpu = sorted(cpu_seconds(pid) for pid in tree[1:])
        for _, client in results:
            client.kill()
            await client.wait()
        server.terminate()
        await server.wait()

    latencies = sorted(seconds * 1000 for seconds, _ in results)
    print(f"machine: {machine()}")
    how = "each started cold" if cold else "each forked from the warm process"
    print(f"{sessions} ssh sessions opened at once against `cardtui serve` (real OpenSSH, pty; "
          f"{how})")
    print(f"one session alone first: connect -> lobby on screen {alone * 1000:.0f} ms")
    print(f"connect -> lobby on screen: median {statistics.median(latencies):.0f} ms, "
          f"worst {latencies[-1]:.0f} ms, best {latencies[0]:.0f} ms "
          f"(all {sessions} in {wall:.1f} s)")
    print(f"CPU used by each process under the server up to now: median "
          f"{statistics.median(session_cpu):.2f} s, so {sessions} sessions on {os.cpu_count()} "
          f"CPUs need at least {sum(session_cpu) / (os.cpu_count() or 1):.1f} s (load average "
          f"{load_before:.1f} before the run)")
    print(f"memory: server + {len(tree) - 1} processes under it = {tree_rss / 1024:.1f} MiB RSS, "
          f"{tree_rss / sessions / 1024:.1f} MiB per session; PSS (shared pages split) "
          f"{tree_pss / 1024:.1f} MiB, {tree_pss / sessions / 1024:.1f} MiB per session")
    print(f"server process alone: {idle_rss / 1024:.1f} MiB idle, {server_rss / 1024:.1f} MiB "
          f"with {sessions} sessions")
    print(f"idle, all {sessions} in the lobby for {idle_wall:.0f} s: server and sessions used "
          f"{idle_cpu:.2f} CPU-s, {idle_cpu / idle_wall / sessions * 100:.3f} % of one core per "
          f"session (the server process {server_idle_cpu:.2f} CPU-s of it)")
    print(f"clients from {sources} loopback addresses; load average now "
          f"{os.getloadavg()[0]:.1f} (the machine is shared with other jobs)")


def main() -> None:
    """Parse the command line and measure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--sources", type=int, default=50,
                        help="loopback addresses the clients connect from")
    parser.add_argument("--cold", action="store_true", help="serve with --cold")
    options = parser.parse_args()
    asyncio.run(measure(options.sessions, options.sources, options.cold))


if __name__ == "__main__":
    main()
