"""Measure what one `cardtui serve` session costs to start, without SSH: CPU from fork to lobby.

Run: python benchmarks/bench_session_start.py [--sessions 30] [--rounds 3]

A real `cardtui serve` subprocess provides the tables. This process becomes a warm process
(tui.warmstart.prepare, as `cardtui serve` runs it) and forks --sessions sessions at once, each on
its own 80x24 pseudo-terminal through the warm process's own code path (warmstart._run_forked),
letting them draw a few at a time as the warm process does. Each session's CPU time is read from
the scheduler's count: when its turn comes (the fork, its start and the first GET /tables), when
its first frame is out, and 0.6 s later (the passes that settle the frame and the long poll that
watches the listing). The ssh client, the door and the network are left out: bench_serve.py
measures them too. CPU seconds depend far less than wall time on what else the machine runs;
what they do depend on is whether the machine has used the sessions' memory since it booted
(bench_serve.usable_memory_mib): the time in the kernel tells.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import select
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

from bench_serve import cpu_seconds, kernel_seconds, report_memory_readied, usable_memory_mib
from bench_ssh import machine

SETTLE_SECONDS = 0.6


class Session:
    """A forked session: its pid, the master side of its pty and the warm process's ends."""

    def __init__(self, pid: int, master: int, conn: socket.socket, turn: socket.socket) -> None:
        self.pid = pid
        self.master = master
        self.conn = conn
        self.turn = turn
        self.at_turn = 0.0
        self.at_frame = 0.0

    def drain(self) -> None:
        """Read whatever the session wrote to its terminal."""
        try:
            os.read(self.master, 65536)
        except OSError:
            pass


def fork_session(server: str, index: int, others: list[Session]) -> Session:
    """Fork a session on a new 80x24 pty, as the warm process does for a visitor."""
    from tui import warmstart

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    conn, conn_theirs = socket.socketpair()
    turn, turn_theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            for fd in (master, *(s.master for s in others)):
                os.close(fd)
            for sock in (conn, turn, *(s.conn for s in others), *(s.turn for s in others)):
                sock.close()
            request = {"name": f"p{index}", "env": {"TERM": "xterm-256color"}}
            code = warmstart._run_forked(conn_theirs, [slave], request, server, turn_theirs)
        finally:
            os._exit(code)
    os.close(slave)
    conn_theirs.close()
    turn_theirs.close()
    return Session(pid, master, conn, turn)


def burst(server: str, count: int,
          at_once: int) -> tuple[list[Session], list[float], list[float], float]:
    """Start count sessions at once, at_once drawing at a time; return them, their CPU seconds
    once settled (in all and in the kernel), and the seconds until every first frame was out."""
    sessions: list[Session] = []
    started = time.perf_counter()
    for index in range(count):
        sessions.append(fork_session(server, index, sessions))
    waiting, drawing = list(sessions), []
    while waiting or drawing:
        while waiting and len(drawing) < at_once:
            session = waiting.pop(0)
            session.at_turn = cpu_seconds(session.pid)
            session.turn.send(b"g")
            drawing.append(session)
        ready, _, _ = select.select([s.master for s in sessions] + [s.turn for s in drawing],
                                    [], [], 30)
        if not ready:
            raise RuntimeError("sessions stopped drawing")
        for session in sessions:
            if session.master in ready:
                session.drain()
        for session in [s for s in drawing if s.turn in ready]:
            session.turn.recv(1)
            session.at_frame = cpu_seconds(session.pid)
            drawing.remove(session)
    drawn = time.perf_counter() - started
    settle_until = time.perf_counter() + SETTLE_SECONDS
    while (left := settle_until - time.perf_counter()) > 0:
        ready, _, _ = select.select([s.master for s in sessions], [], [], left)
        for session in sessions:
            if session.master in ready:
                session.drain()
    settled = [cpu_seconds(s.pid) for s in sessions]
    in_kernel = [kernel_seconds(s.pid) for s in sessions]
    for session in sessions:
        session.conn.close()  # the session ends when its requester hangs up
        session.turn.close()
    for session in sessions:
        os.waitpid(session.pid, 0)
        os.close(session.master)
    return sessions, settled, in_kernel, drawn


def main() -> None:
    """Parse the command line, start a server, measure and print."""
    from tui import warmstart

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=30, help="sessions started at once")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--at-once", type=int, default=warmstart.DRAWING_AT_ONCE,
                        help="sessions drawing their first frame at a time")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        port = free_api_port()
        server = start_tables_server(Path(scratch), port)
        try:
            url = f"http://127.0.0.1:{port}"
            warmstart.prepare(url)
            load_before = os.getloadavg()[0]
            usable_before = usable_memory_mib()
            turns, frames, settles, kernel, walls = [], [], [], [], []
            for _ in range(options.rounds):
                sessions, settled, in_kernel, drawn = burst(url, options.sessions,
                                                            options.at_once)
                turns += [s.at_turn for s in sessions]
                frames += [s.at_frame for s in sessions]
                settles += settled
                kernel += in_kernel
                walls.append(drawn)
        finally:
            server.terminate()
            server.wait()
    print(f"machine: {machine()}")
    print(f"{options.sessions} sessions forked at once, {options.at_once} drawing at a time, "
          f"{options.rounds} rounds; load average {load_before:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after (the machine is shared with other jobs)")
    print(f"CPU per session, median: {statistics.median(turns) * 1000:.1f} ms until its turn "
          f"(fork, start, GET /tables), {statistics.median(frames) * 1000:.1f} ms to its first "
          f"frame, {statistics.median(settles) * 1000:.1f} ms settled "
          f"(mean {statistics.mean(settles) * 1000:.1f} ms, of it "
          f"{statistics.mean(kernel) * 1000:.1f} ms in the kernel)")
    print(f"every first frame out in {statistics.median(walls):.2f} s (median of the rounds)")
    report_memory_readied(usable_before)


def free_api_port() -> int:
    """Return a TCP port that was free on 127.0.0.1 a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_tables_server(scratch: Path, port: int) -> subprocess.Popen[bytes]:
    """Start `cardtui serve --cold` (tables and relay on port) and wait until it serves."""
    server = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "serve", "--bind", "127.0.0.1", "--cold",
         "--ssh-port", str(free_api_port()), "--port", str(port),
         "--host-key", str(scratch / "host_key")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        env={**os.environ, "XDG_DATA_HOME": str(scratch)})
    assert server.stdout is not None
    banner = b""
    while b"Stop with Ctrl-C." not in banner:
        line = server.stdout.readline()
        if not line:
            raise RuntimeError(f"cardtui serve ended early: {banner.decode()}")
        banner += line
    return server


if __name__ == "__main__":
    main()
