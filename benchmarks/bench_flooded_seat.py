"""Measure a person's key presses while their host floods them: the app's answer to a hostile host.

Starts the hostile mental-poker host of the attack tests in `flood` mode (tests/e2e/
hostile_host.py: as round 1 is dealt it sends each seat 20,000 refusals and the table 5,000
signed chat lines of 260 characters, as fast as it can), seats the real `cardtui join` app in
seat 0 on a pseudo-terminal emulated by pyte (as benchmarks/bench_tui.py does), and times each
key typed into the lobby's chat field until the emulated screen shows it: a letter, then
backspace, over and over. First with nobody else seated (no flood), then from the moment a
`join --bot` seat takes seat 1 (the match starts, and the flood with it) until the host says the
flood is sent. Prints the figures and the machine; asserts nothing.

    python benchmarks/bench_flooded_seat.py [--quiet-keys 60]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_tui import Terminal, report

ROOT = Path(__file__).resolve().parent.parent
PLACEHOLDER = "Say something to the table"
F2 = b"\x1bOQ"
BACKSPACE = b"\x7f"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def chat_line(term: Terminal) -> str | None:
    """The chat field's line of the emulated screen (its text or placeholder), or None."""
    for line in term.screen.display:
        if line.lstrip().startswith("▊  "):
            return line.strip().strip("▊▎").strip()
    return None


def type_and_see(term: Terminal) -> list[float]:
    """Type a letter and wait to see it, then backspace and wait to see it gone: two samples, ms."""
    samples = []
    sent = term.send(b"q")
    seen = term.wait_for(lambda t: chat_line(t) == "q", limit=120)
    samples.append((seen - sent) * 1000)
    sent = term.send(BACKSPACE)
    seen = term.wait_for(lambda t: (chat_line(t) or "").startswith(PLACEHOLDER), limit=120)
    samples.append((seen - sent) * 1000)
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quiet-keys", type=int, default=60, help="keys timed before the flood")
    args = parser.parse_args()
    exe = shutil.which("cardtui") or sys.exit("cardtui is not installed (pip install -e .)")
    print(f"machine: {platform.platform()}, {platform.processor() or platform.machine()},"
          f" {os.cpu_count()} CPUs, Python {platform.python_version()}")
    work = Path(tempfile.mkdtemp(prefix="cardtui-flood-bench-"))
    port = free_port()
    env = dict(os.environ, CARDTUI_CONFIG_DIR=str(work / "config"), PYTHONPATH=str(ROOT))
    host_log = work / "host.log"
    with open(host_log, "w") as log:
        host = subprocess.Popen([sys.executable, "-m", "tests.e2e.hostile_host", "flood",
                                 str(port), str(work / "attack.json"), "--players", "2",
                                 "--bots", "0", "--target", "20"],
                                stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
                                start_new_session=True)
    seat: subprocess.Popen[bytes] | None = None
    deadline = time.monotonic() + 30
    while "listening on" not in host_log.read_text():
        if time.monotonic() > deadline:
            host.kill()
            sys.exit("the hostile host did not start:\n" + host_log.read_text())
        time.sleep(0.1)
    os.environ["CARDTUI_CONFIG_DIR"] = str(work / "app-config")
    term = Terminal([exe, "join", f"127.0.0.1:{port}", "--name", "Me", "--sign", "leo"])
    try:
        term.wait_for(lambda t: (chat_line(t) or "").startswith(PLACEHOLDER), limit=60)
        term.send(F2)
        term.wait_for(lambda t: "ready" in t.text() and "not ready" not in t.text())
        quiet: list[float] = []
        while len(quiet) < args.quiet_keys:
            quiet += type_and_see(term)
        seat = subprocess.Popen([exe, "join", f"127.0.0.1:{port}", "--bot", "greedy", "--name",
                                 "p1", "--sign", "leo"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=dict(
                                    env, CARDTUI_CONFIG_DIR=str(work / "seat-config")))
        while "match started" not in host_log.read_text():
            term.pump(0.05)
        began = time.perf_counter()
        flooded: list[float] = []
        while "hostile: sent every seat" not in host_log.read_text():
            flooded += type_and_see(term)
        lasted = time.perf_counter() - began
        # Round 1's deal comes after the 5,000 chat lines in the host's chain: once the app
        # shows the round it has read them all (in order), not skipped them.
        caught_up = term.wait_for(lambda t: "— Round 1 —" in t.text(), limit=120)
        print("app: cardtui join in seat 0, 100x30 pty emulated by pyte; the other seat a"
              " `join --bot greedy` process; all on 127.0.0.1, one machine")
        report("quiet lobby: key typed in the chat field to updated screen", quiet)
        report("while the host floods (20,000 refusals to each seat, 5,000 signed chat lines):"
               " key to updated screen", flooded)
        print(f"the flood, from the match's start until the host had sent it all: {lasted:.1f} s;"
              f" the app showed round 1, dealt after the flood, {caught_up - began - lasted:.1f} s"
              " later")
    finally:
        term.close()
        for proc in (seat, host):
            if proc is not None:
                proc.kill()
                proc.wait()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
