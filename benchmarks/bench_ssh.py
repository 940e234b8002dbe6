"""Measure the SSH door: N simultaneous real `ssh` sessions, time to first screen, memory each.

Run: python benchmarks/bench_ssh.py [--sessions 20] [--app "python -c ..."] [--marker TEXT]

The door runs in its own process so its memory is measured apart from the clients. Each
client is the real OpenSSH binary with a forced pty; the clock runs from starting ssh until
the app's marker arrives. Memory is the RSS (and PSS) of the door plus every process under it,
taken while all sessions are open, divided by the number of sessions.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import asyncssh

STAND_IN_APP = (
    "import sys; print('CARDTUI-READY', flush=True); sys.stdin.read()"
)
DEFAULT_APP = shlex.join([sys.executable, "-c", STAND_IN_APP])
SSH_OPTIONS = [
    "-F", "/dev/null", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
    "-o", "LogLevel=ERROR", "-o", "IdentityAgent=none", "-o", "BatchMode=yes",
]


async def serve(host_key: Path, app: list[str], total_sessions: int) -> None:
    """Run a door on a free loopback port, print the port, and serve until stdin closes."""
    from netplay.ssh.door import DoorLimits, SSHDoor

    limits = DoorLimits(sessions_per_address=total_sessions, total_sessions=total_sessions,
                        startups_per_address=total_sessions,
                        max_startups=max(100, total_sessions))
    door = SSHDoor(lambda session: app, host_key, port=0, bind="127.0.0.1", limits=limits)
    print(await door.start(), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await door.close()


def rss_kib(pid: int) -> int:
    """Return a process's resident set size in KiB (0 if it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except FileNotFoundError:
        pass
    return 0


def pss_kib(pid: int) -> int:
    """Return a process's proportional set size in KiB: shared pages split among their users."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (FileNotFoundError, PermissionError):
        pass
    return 0


def descendants(root: int) -> list[int]:
    """Return the pids of every process below root in the process tree."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        children.setdefault(parent, []).append(int(entry.name))
    found, pending = [], [root]
    while pending:
        for child in children.get(pending.pop(), []):
            found.append(child)
            pending.append(child)
    return found


async def one_session(port: int, marker: bytes, user: str = "bench", source: str = "127.0.0.1",
                      extra: tuple[str, ...] = (), env: dict[str, str] | None = None,
                      ) -> tuple[float, asyncio.subprocess.Process]:
    """Start ssh with a pty from the loopback address source; return the seconds until marker
    arrived, and the live client."""
    started = time.perf_counter()
    client = await asyncio.create_subprocess_exec(
        "/usr/bin/ssh", *extra, *SSH_OPTIONS, "-tt", "-b", source, "-p", str(port),  # first wins
        f"{user}@127.0.0.1",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
    )
    assert client.stdout is not None
    seen = b""
    while marker not in seen:
        chunk = await asyncio.wait_for(client.stdout.read(65536), 120)
        if not chunk:
            raise RuntimeError(f"session ended before the marker; got {seen[-400:]!r}")
        seen = seen[-len(marker):] + chunk
    return time.perf_counter() - started, client


def machine() -> str:
    """Return a one-line description of the machine and software measured."""
    cpu = next(
        (line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
         if line.startswith("model name")),
        platform.processor() or "unknown CPU",
    )
    memory = Path("/proc/meminfo").read_text().splitlines()[0].split()[1]
    version = subprocess.run(["/usr/bin/ssh", "-V"], capture_output=True, text=True, check=False)
    openssh = version.stderr.strip()
    return (
        f"{cpu}, {os.cpu_count()} CPUs, {int(memory) // 1024} MiB RAM, {platform.system()} "
        f"{platform.release()}; Python {platform.python_version()}, asyncssh "
        f"{asyncssh.__version__}, {openssh}"
    )


async def measure(sessions: int, app: str, marker: str) -> None:
    """Start a door process, open all sessions at once, and print the figures."""
    with tempfile.TemporaryDirectory() as scratch:
        door = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--serve", str(Path(scratch) / "host_key"),
            "--app-json", json.dumps(shlex.split(app)), "--sessions", str(sessions),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        assert door.stdout is not None and door.stdin is not None
        port = int(await door.stdout.readline())
        idle_rss = rss_kib(door.pid)
        alone, client = await one_session(port, marker.encode())
        client.kill()
        await client.wait()
        results = await asyncio.gather(
            *(one_session(port, marker.encode()) for _ in range(sessions))
        )
        door_rss = rss_kib(door.pid)
        tree = [door.pid, *descendants(door.pid)]
        tree_rss = sum(rss_kib(pid) for pid in tree)
        tree_pss = sum(pss_kib(pid) for pid in tree)
        for _, client in results:
            client.kill()
            await client.wait()
        door.stdin.close()
        await door.wait()

    latencies = sorted(seconds * 1000 for seconds, _ in results)
    print(f"machine: {machine()}")
    print(f"app: {app}")
    print(f"{sessions} ssh sessions opened at once (real OpenSSH client, pty, no auth)")
    print(f"one session alone first: connect -> marker {alone * 1000:.0f} ms")
    print(f"connect -> marker on screen: median {statistics.median(latencies):.0f} ms, "
          f"worst {latencies[-1]:.0f} ms, best {latencies[0]:.0f} ms")
    print(f"memory: door + {len(tree) - 1} processes under it = {tree_rss / 1024:.1f} MiB RSS, "
          f"{tree_rss / sessions / 1024:.1f} MiB per session; PSS (shared pages split) "
          f"{tree_pss / 1024:.1f} MiB, {tree_pss / sessions / 1024:.1f} MiB per session")
    print(f"door process alone: {idle_rss / 1024:.1f} MiB idle, {door_rss / 1024:.1f} MiB "
          f"with {sessions} sessions ({(door_rss - idle_rss) / sessions:.0f} KiB per session)")


def main() -> None:
    """Parse the command line and either measure or (internally) serve the door."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--app", default=DEFAULT_APP, help="shell-style argv each session runs")
    parser.add_argument("--marker", default="CARDTUI-READY", help="text the app prints when up")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--app-json", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.serve:
        asyncio.run(serve(options.serve, json.loads(options.app_json), options.sessions))
    else:
        asyncio.run(measure(options.sessions, options.app, options.marker))


if __name__ == "__main__":
    main()
