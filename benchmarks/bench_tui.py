"""Measure the TUI as a person meets it: `cardtui play` to the first frame, and key to screen.

Runs the real `cardtui` under a pseudo-terminal, feeds its output to a terminal
emulator (pyte) and times (1) from spawning `cardtui play zodiak` until the
first frame, and until the game frame with your hand is drawn; (2) from writing
a key to the moment the emulated screen shows its effect (the cursor moved, a
card selected). Prints the figures and the machine; asserts nothing.

    python benchmarks/bench_tui.py [--runs 5] [--keys 60]
"""

from __future__ import annotations

import argparse
import fcntl
import os
import platform
import select
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time

import pyte

COLS, ROWS = 100, 30
RIGHT = b"\x1b[C"


class Terminal:
    """`cardtui` on a pty, its output kept on an emulated screen."""

    def __init__(self, args: list[str]) -> None:
        self.screen = pyte.Screen(COLS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        env = dict(os.environ, TERM="xterm-256color", COLORTERM="truecolor",
                   CARDTUI_DATA_DIR=tempfile.mkdtemp(prefix="cardtui-bench-"))
        self.start = time.perf_counter()
        self.proc = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, env=env,
                                     start_new_session=True, close_fds=True)
        os.close(slave)
        self.fd = master
        self.first_output: float | None = None

    def pump(self, timeout: float) -> bool:
        """Read what is ready within `timeout` seconds; False if nothing came."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            return False
        if data and self.first_output is None:
            self.first_output = time.perf_counter()
        self.stream.feed(data)
        return bool(data)

    def text(self) -> str:
        """The emulated screen as text."""
        return "\n".join(self.screen.display)

    def wait_for(self, predicate, limit: float = 20.0) -> float:
        """Pump output until `predicate(self)` holds; return the moment it did."""
        deadline = time.perf_counter() + limit
        while not predicate(self):
            if time.perf_counter() > deadline:
                raise TimeoutError("the screen never showed what was expected:\n" + self.text())
            self.pump(0.05)
        return time.perf_counter()

    def send(self, data: bytes) -> float:
        """Write keys; return the moment they were written."""
        os.write(self.fd, data)
        return time.perf_counter()

    def close(self) -> None:
        """Stop the program (ctrl+q saves and quits)."""
        self.send(b"\x11")
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        os.close(self.fd)


def cursor_column(term: Terminal) -> int | None:
    """The column of the hand's cursor mark (▼), or None."""
    for line in term.screen.display:
        if "▼" in line:
            return line.index("▼")
    return None


def startup(command: list[str]) -> tuple[float, float]:
    """Seconds from spawn to the first output, and to the game frame with your hand."""
    term = Terminal(command)
    try:
        ready = term.wait_for(lambda t: "Your hand" in t.text() and cursor_column(t) is not None)
        assert term.first_output is not None
        return term.first_output - term.start, ready - term.start
    finally:
        term.close()


def key_latency(command: list[str], keys: int) -> list[float]:
    """Milliseconds from writing → until the cursor mark has moved on the screen, per key."""
    term = Terminal(command)
    samples = []
    try:
        term.wait_for(lambda t: "Your turn" in t.text() and cursor_column(t) is not None)
        for _ in range(keys):
            before = cursor_column(term)
            sent = term.send(RIGHT)
            seen = term.wait_for(lambda t, was=before: cursor_column(t) not in (was, None))
            samples.append((seen - sent) * 1000)
            # Let the frame finish so the next key starts from a quiet terminal.
            while term.pump(0.02):
                pass
    finally:
        term.close()
    return samples


def select_latency(command: list[str], keys: int) -> list[float]:
    """Milliseconds from writing space until the run line appears (or goes), per key."""
    term = Terminal(command)
    samples = []
    try:
        term.wait_for(lambda t: "Your turn" in t.text() and cursor_column(t) is not None)
        for i in range(keys):
            want = i % 2 == 0  # space selects, the next space takes the card back out
            sent = term.send(b" ")
            seen = term.wait_for(lambda t, w=want: ("Run:" in t.text()) == w)
            samples.append((seen - sent) * 1000)
            while term.pump(0.02):
                pass
    finally:
        term.close()
    return samples


def report(label: str, ms: list[float]) -> None:
    """Print the median, 90th percentile and worst of `ms`."""
    ms = sorted(ms)
    p90 = ms[max(0, int(len(ms) * 0.9) - 1)]
    print(f"{label}: median {statistics.median(ms):.1f} ms, p90 {p90:.1f} ms,"
          f" max {max(ms):.1f} ms ({len(ms)} keys)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="start-ups to time")
    parser.add_argument("--keys", type=int, default=60, help="key presses to time per game")
    args = parser.parse_args()
    exe = shutil.which("cardtui") or sys.exit("cardtui is not installed (pip install -e .)")
    print(f"machine: {platform.platform()}, {platform.processor() or platform.machine()},"
          f" {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(f"terminal: {COLS}x{ROWS} pty emulated by pyte")
    base = [exe, "play", "zodiak", "--seed", "3", "--speed", "0", "--sign", "leo", "--name", "Me"]
    firsts, frames = zip(*(startup(base) for _ in range(args.runs)))
    print(f"cardtui play zodiak -> first output: median {statistics.median(firsts) * 1000:.0f} ms"
          f" (min {min(firsts) * 1000:.0f}, max {max(firsts) * 1000:.0f}; {args.runs} runs)")
    print(f"cardtui play zodiak -> game frame with your hand: median"
          f" {statistics.median(frames) * 1000:.0f} ms (min {min(frames) * 1000:.0f},"
          f" max {max(frames) * 1000:.0f})")
    for game in ("zodiak", "hekata"):
        command = [exe, "play", game, "--seed", "3", "--speed", "0", "--sign", "leo",
                   "--name", "Me"]
        report(f"{game}: key (→ moves the cursor) to updated screen",
               key_latency(command, args.keys))
    report("zodiak: key (space selects, the run is checked) to updated screen",
           select_latency(base, args.keys))
    return 0


if __name__ == "__main__":
    sys.exit(main())
