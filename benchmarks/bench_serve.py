"""Measure `cardtui serve`: N real `ssh` sessions at once, time to the lobby on screen, memory each.

Run: python benchmarks/bench_serve.py [--sessions 100] [--sources 50] [--cold] [--client-nice N]

By default sessions fork from the server's warm process; --cold starts each from scratch.
Clients connect from --sources loopback addresses (127.0.0.2, ...), so the door's default
per-address limits apply as they would to that many visitors.

The server is a real `cardtui serve` subprocess on free loopback ports. Each client is the
OpenSSH binary with a forced pty (80x24); the clock runs from starting ssh until the lobby's
title arrives in its output, and on until its listing ("No tables yet") does, which needs the
door, the session's app and a first GET /tables. CPU per session start is what the server, the
processes under it and the ssh clients used from the moment all sessions were opened until
every listing was on screen, divided by the number of sessions: on a shared machine it is the
figure that does not depend on the other jobs. Memory is the RSS (and PSS) of the server plus
every process under it, taken while all sessions sit in the lobby, divided by the number of
sessions.

The ssh clients run on the same cores as the server (about a sixth of the CPU per session
start): --client-nice N runs them at that lower priority, closer to visitors whose clients run on
their own machines.

A session's app writes to about 3,500 pages (14 MiB) of its own as it starts. On this machine,
a virtual machine, memory it has not used since it booted costs about ten times the kernel time
per page the first time (see usable_memory_mib), so a burst that takes more memory than it had
in use before costs the sessions that do about twice the CPU. The session apps' time in the
kernel tells such a run (about 0.006 CPU-s per session when their memory was in use before,
0.025-0.045 when it was not); the run also says when the kernel readied memory meanwhile.
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

from bench_ssh import SSH_OPTIONS, descendants, machine, one_session, pss_kib, rss_kib

MARKER = "Tables on this server"
LISTED = b"No tables yet"
IDLE_SECONDS = 30.0


def cpu_seconds(pid: int) -> float:
    """Return the CPU time a process has used so far (0 if it is gone).

    From the scheduler's nanosecond count where the kernel keeps one: /proc/PID/stat counts in
    ticks of 10 ms, which a short-lived ssh client or a session's start mostly rounds away.
    """
    try:
        return sum(int((task / "schedstat").read_text().split()[0])  # every thread's
                   for task in Path(f"/proc/{pid}/task").iterdir()) / 1e9
    except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
        pass
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def kernel_seconds(pid: int) -> float:
    """Return the CPU time a process has spent in the kernel so far (0 if it is gone).

    In ticks of 10 ms (/proc/PID/stat), so only a sum over many processes means anything.
    """
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return int(fields[12]) / os.sysconf("SC_CLK_TCK")


def usable_memory_mib() -> float:
    """Return the memory the kernel has made usable so far (its zones' managed pages), in MiB.

    This machine's kernel is booted with deferred_init=lazy: it readies memory only when it
    first needs it (and, it seems, the host backs a page only once it is first written).
    Whoever first takes such a page pays, in kernel time: about 11 µs per 4 KiB page here,
    against 1.3 µs for a page used before. A run during which this grew measured the machine's
    first use of that memory as well as the code.
    """
    try:
        text = Path("/proc/zoneinfo").read_text()
    except OSError:
        return 0.0
    pages = sum(int(line.split()[1]) for line in text.splitlines()
                if line.split()[:1] == ["managed"])
    return pages * os.sysconf("SC_PAGE_SIZE") / (1 << 20)


def report_memory_readied(before_mib: float) -> None:
    """Say so if the kernel readied memory since before_mib was read (see usable_memory_mib)."""
    grown = usable_memory_mib() - before_mib
    if grown > 0:
        print(f"the kernel readied {grown:.0f} MiB of memory during the run, at about 11 µs of "
              f"kernel time a page to whoever needed it first: the CPU figures above include "
              f"that; a second run reuses the memory")


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


async def lobby_session(port: int, user: str, source_address: str, client_nice: int = 0,
                        ) -> tuple[float, float, asyncio.subprocess.Process]:
    """Start ssh with a pty from source_address; return the seconds until the lobby's title and
    until its listing arrived, and the live client."""
    started = time.perf_counter()
    client = await asyncio.create_subprocess_exec(
        "/usr/bin/ssh", *SSH_OPTIONS, "-tt", "-b", source_address, "-p", str(port),
        f"{user}@127.0.0.1", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        preexec_fn=(lambda: os.nice(client_nice)) if client_nice else None)
    assert client.stdout is not None
    seen, title = b"", 0.0
    while LISTED not in seen:
        chunk = await asyncio.wait_for(client.stdout.read(65536), 120)
        if not chunk:
            raise RuntimeError(f"session ended before the lobby; got {seen[-400:]!r}")
        seen += chunk
        if not title and MARKER.encode() in seen:
            title = time.perf_counter() - started
        seen = seen[-4096:]
    return title, time.perf_counter() - started, client


def tree_cpu(pids: list[int]) -> float:
    """Return the CPU seconds the processes pids have used so far, together."""
    return sum(cpu_seconds(pid) for pid in pids)


async def measure(sessions: int, sources: int, cold: bool, client_nice: int = 0) -> None:
    """Start a server, open one session alone, then all sessions at once, and print figures."""
    usable_before = usable_memory_mib()
    with tempfile.TemporaryDirectory() as scratch:
        load_before = os.getloadavg()[0]
        server, port = await start_server(Path(scratch), sessions, cold)
        idle_rss = rss_kib(server.pid)
        alone, client = await one_session(port, MARKER.encode(), "warmup", "127.0.0.254")
        client.kill()
        await client.wait()
        await asyncio.sleep(1.0)  # let the warm-up session's process go before counting
        before = [server.pid, *descendants(server.pid)]
        cpu_before = tree_cpu(before)
        server_before = cpu_seconds(server.pid)
        started = time.perf_counter()
        results = await asyncio.gather(
            *(lobby_session(port, f"p{i}", source(i, sources), client_nice)
              for i in range(sessions)))
        wall = time.perf_counter() - started
        load_after_burst = os.getloadavg()[0]
        tree = [server.pid, *descendants(server.pid)]
        apps = [pid for pid in tree if pid not in before]
        app_cpus = sorted(cpu_seconds(pid) for pid in apps)
        apps_cpu = sum(app_cpus)
        apps_kernel = sum(kernel_seconds(pid) for pid in apps)
        server_start_cpu = cpu_seconds(server.pid) - server_before
        rest_cpu = tree_cpu(before) - cpu_before - server_start_cpu
        clients_cpu = sum(cpu_seconds(client.pid) for _, _, client in results)
        start_cpu = server_start_cpu + rest_cpu + apps_cpu + clients_cpu
        await asyncio.sleep(5.0)  # anything still settling settles
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
        for _, _, client in results:
            client.kill()
            await client.wait()
        server.terminate()
        await server.wait()

    titles = sorted(seconds * 1000 for seconds, _, _ in results)
    listings = sorted(seconds * 1000 for _, seconds, _ in results)
    print(f"machine: {machine()}")
    how = "each started cold" if cold else "each forked from the warm process"
    print(f"{sessions} ssh sessions opened at once against `cardtui serve` (real OpenSSH, pty; "
          f"{how}); load average {load_before:.1f} before, {load_after_burst:.1f} after")
    print(f"one session alone first: connect -> lobby on screen {alone * 1000:.0f} ms")
    print(f"connect -> lobby with its listing on screen: median "
          f"{statistics.median(listings):.0f} ms, worst {listings[-1]:.0f} ms, best "
          f"{listings[0]:.0f} ms (all {sessions} in {wall:.1f} s); its title alone: median "
          f"{statistics.median(titles):.0f} ms, worst {titles[-1]:.0f} ms")
    print(f"CPU per session start: {start_cpu / sessions:.3f} CPU-s (server "
          f"{server_start_cpu / sessions:.3f}, warm process {rest_cpu / sessions:.3f}, session "
          f"app {apps_cpu / sessions:.3f}, ssh client {clients_cpu / sessions:.3f}), so "
          f"{sessions} sessions on {os.cpu_count()} CPUs need at least "
          f"{start_cpu / (os.cpu_count() or 1):.1f} s")
    if app_cpus:
        print(f"session apps: median {statistics.median(app_cpus):.3f} CPU-s, slowest "
              f"{app_cpus[-1]:.3f}; {apps_kernel / sessions:.3f} CPU-s per session in the kernel")
    print(f"memory: server + {len(tree) - 1} processes under it = {tree_rss / 1024:.1f} MiB RSS, "
          f"{tree_rss / sessions / 1024:.1f} MiB per session; PSS (shared pages split) "
          f"{tree_pss / 1024:.1f} MiB, {tree_pss / sessions / 1024:.1f} MiB per session")
    print(f"server process alone: {idle_rss / 1024:.1f} MiB idle, {server_rss / 1024:.1f} MiB "
          f"with {sessions} sessions")
    print(f"idle, all {sessions} in the lobby for {idle_wall:.0f} s: server and sessions used "
          f"{idle_cpu:.2f} CPU-s, {idle_cpu / idle_wall / sessions * 100:.3f} % of one core per "
          f"session (the server process {server_idle_cpu:.2f} CPU-s of it)")
    print(f"clients from {sources} loopback addresses"
          f"{f', at nice {client_nice}' if client_nice else ''}; load average now "
          f"{os.getloadavg()[0]:.1f} (the machine is shared with other jobs)")
    report_memory_readied(usable_before)


def main() -> None:
    """Parse the command line and measure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--sources", type=int, default=50,
                        help="loopback addresses the clients connect from")
    parser.add_argument("--cold", action="store_true", help="serve with --cold")
    parser.add_argument("--client-nice", type=int, default=0, metavar="N",
                        help="run the ssh clients at nice N (0: as this process)")
    options = parser.parse_args()
    asyncio.run(measure(options.sessions, options.sources, options.cold, options.client_nice))


if __name__ == "__main__":
    main()
