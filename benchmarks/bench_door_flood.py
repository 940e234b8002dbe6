"""Measure `cardtui serve` under a flood: a legitimate `ssh` while one address floods the door.

Run: python benchmarks/bench_door_flood.py [--silent 300] [--guessers 20] [--tries 5]

The server is a real `cardtui serve` with --password on free loopback ports. From 127.0.0.2,
--silent TCP connections that never say a word are kept open (each one the door drops is
opened again), and --guessers asyncssh clients guess passwords without pause, reconnecting
when the door hangs up (from 127.0.0.2 too, or --guesser-address). Meanwhile the real OpenSSH client, from 127.0.0.3 with the right
password (through SSH_ASKPASS), connects --tries times one after the other; the clock runs
from starting ssh until the lobby's title is on its screen.
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

import asyncssh
from bench_serve import MARKER, free_port, wait_until_serving
from bench_ssh import machine, one_session

PASSWORD = "correct horse"
FLOODER = "127.0.0.2"
VISITOR = "127.0.0.3"
RECONNECT_SECONDS = 0.5  # a dropped silent connection is opened again after this


async def start_server(scratch: Path) -> tuple[asyncio.subprocess.Process, int]:
    """Start `cardtui serve --password` and return it with its SSH port."""
    ssh_port = free_port()
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tui.cli", "serve", "--bind", "127.0.0.1",
        "--ssh-port", str(ssh_port), "--port", str(free_port()),
        "--host-key", str(scratch / "host_key"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, "XDG_DATA_HOME": str(scratch), "CARDTUI_SSH_PASSWORD": PASSWORD},
    )
    await wait_until_serving(server)
    return server, ssh_port


class Counts:
    """What the flood managed."""

    def __init__(self) -> None:
        self.connections = 0
        self.guesses = 0


async def silent_connection(port: int, counts: Counts, stop: asyncio.Event) -> None:
    """Keep one silent connection open from FLOODER, opening it again whenever it is dropped."""
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        sock = socket.socket()
        sock.setblocking(False)
        try:
            sock.bind((FLOODER, 0))
            await loop.sock_connect(sock, ("127.0.0.1", port))
            counts.connections += 1
            while await loop.sock_recv(sock, 4096):
                pass
        except OSError:
            pass
        finally:
            sock.close()
        await asyncio.sleep(RECONNECT_SECONDS)


class Guesser(asyncssh.SSHClient):
    """Answers every password prompt with a new wrong guess."""

    def __init__(self, counts: Counts) -> None:
        self.counts = counts

    def password_auth_requested(self) -> str:
        self.counts.guesses += 1
        return f"guess-{self.counts.guesses}"


async def guesser(port: int, counts: Counts, stop: asyncio.Event, address: str) -> None:
    """Guess passwords from address until stopped, reconnecting whenever the door hangs up."""
    while not stop.is_set():
        try:
            await asyncssh.connect("127.0.0.1", port, local_addr=(address, 0), username="root",
                                   known_hosts=None, client_keys=None, agent_path=None,
                                   client_factory=lambda: Guesser(counts), kbdint_auth=False)
        except (OSError, asyncssh.Error):
            pass
        await asyncio.sleep(0.01)


async def measure(silent: int, guessers: int, tries: int, guesser_address: str) -> None:
    """Start the server and the flood, time the legitimate sessions, and print the figures."""
    with tempfile.TemporaryDirectory() as scratch:
        askpass = Path(scratch) / "askpass"
        askpass.write_text(f"#!/bin/sh\necho '{PASSWORD}'\n")
        askpass.chmod(0o700)
        env = {**os.environ, "SSH_ASKPASS": str(askpass), "SSH_ASKPASS_REQUIRE": "force",
               "DISPLAY": ":0"}
        extra = ("-o", "BatchMode=no", "-o", "PreferredAuthentications=password")
        server, port = await start_server(Path(scratch))
        quiet, client = await one_session(port, MARKER.encode(), "ann", VISITOR, extra, env)
        client.kill()
        await client.wait()
        counts, stop = Counts(), asyncio.Event()
        flood = [asyncio.create_task(silent_connection(port, counts, stop))
                 for _ in range(silent)]
        flood += [asyncio.create_task(guesser(port, counts, stop, guesser_address))
                  for _ in range(guessers)]
        await asyncio.sleep(5.0)  # the flood at full strength
        started = time.perf_counter()
        timings = []
        for attempt in range(tries):
            seconds, client = await one_session(port, MARKER.encode(), f"ann{attempt}", VISITOR,
                                                extra, env)
            timings.append(seconds)
            client.kill()
            await client.wait()
        flooded_for = time.perf_counter() - started + 5.0
        stop.set()
        for task in flood:
            task.cancel()
        await asyncio.gather(*flood, return_exceptions=True)
        server.terminate()
        assert server.stdout is not None
        log = (await server.stdout.read()).decode(errors="replace")
        await server.wait()

    failed_lines = log.count("ssh login failed")
    print(f"machine: {machine()}")
    print(f"flood from {FLOODER}: {silent} silent connections kept up ({counts.connections}"
          f" opened in {flooded_for:.0f} s, the door dropping all but its per-address share)"
          f" and {guessers} password guessers from {guesser_address} ({counts.guesses} guesses, "
          f"{counts.guesses / flooded_for:.1f}/s; {failed_lines} 'login failed' lines logged)")
    print(f"legitimate ssh from {VISITOR} with the password, connect -> lobby on screen: "
          f"before the flood {quiet * 1000:.0f} ms; during it median "
          f"{statistics.median(timings) * 1000:.0f} ms, worst {max(timings) * 1000:.0f} ms "
          f"({tries} sessions one after the other)")
    print(f"load average now {os.getloadavg()[0]:.1f} (the machine is shared with other jobs)")


def main() -> None:
    """Parse the command line and measure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--silent", type=int, default=300)
    parser.add_argument("--guessers", type=int, default=20)
    parser.add_argument("--tries", type=int, default=5)
    parser.add_argument("--guesser-address", default=FLOODER,
                        help="where the guessers connect from (default: the flooding address)")
    options = parser.parse_args()
    asyncio.run(measure(options.silent, options.guessers, options.tries,
                        options.guesser_address))


if __name__ == "__main__":
    main()
