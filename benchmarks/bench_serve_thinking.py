"""How busy expert bots at `cardtui serve`'s tables make the server: its tables API's answer time.

Run: `python benchmarks/bench_serve_thinking.py [--tables K] [--thinkers N] [--seconds S]`.
Starts a real `cardtui serve` (expert bots, the default bot speed) on free loopback ports,
opens K four-player Zodiak tables of three expert bots each through its tables API, seats a
`cardtui join --bot greedy` process in each table's last seat so that every match starts,
and then asks `GET /tables` 10 times a second for S seconds, printing the answer times
(median, 90th and 99th percentile, worst) and the CPU the serve process and its children
used meanwhile. `--thinkers` is passed to `serve` (0: bots think in threads of the serve
process, as before the thinking processes). Nothing is asserted: the figures go in the README.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds(pid: int) -> tuple[float, float]:
    """The CPU seconds of `pid` itself and of its reaped children (user + system)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    own = (int(fields[11]) + int(fields[12])) / tick
    return own, (int(fields[13]) + int(fields[14])) / tick


def children_cpu(pid: int) -> float:
    """The CPU seconds of the live processes whose parent is `pid` (the thinking processes)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def request(url: str, body: dict[str, object] | None = None) -> dict[str, object]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as answer:
        return json.loads(answer.read())  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=12)
    parser.add_argument("--thinkers", type=int, help="passed to `cardtui serve --thinkers`")
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args(argv)
    port, ssh_port = free_port(), free_port()
    home = tempfile.mkdtemp(prefix="cardtui-bench-")
    env = {**os.environ, "CARDTUI_CONFIG_DIR": home, "XDG_DATA_HOME": home}
    command = [sys.executable, "-m", "tui.cli", "serve", "--port", str(port), "--ssh-port",
               str(ssh_port), "--bind", "127.0.0.1", "--bot-kind", "expert",
               "--host-key", os.path.join(home, "key"), "--empty-table-seconds", "600"]
    if args.thinkers is not None:
        command += ["--thinkers", str(args.thinkers)]
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    seats: list[subprocess.Popen[bytes]] = []
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                request(f"{base}/tables")
                break
            except OSError:
                time.sleep(0.1)
        for _ in range(args.tables):
            room = request(f"{base}/tables", {"game": "zodiak", "players": 4, "bots": 3})["room"]
            seats.append(subprocess.Popen(
                [sys.executable, "-m", "tui.cli", "join", "--relay", f"ws://127.0.0.1:{port}",
                 str(room), "--bot", "greedy", "--allow-trusted-dealer", "--rematches", "1000",
                 "--give-up", "600"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL))
        time.sleep(5)  # every match under way
        own0, reaped0 = cpu_seconds(server.pid)
        live0 = children_cpu(server.pid)
        times: list[float] = []
        began = time.perf_counter()
        while time.perf_counter() - began < args.seconds:
            asked = time.perf_counter()
            listing = request(f"{base}/tables")
            times.append(time.perf_counter() - asked)
            time.sleep(max(0.0, 0.1 - times[-1]))
        spent = time.perf_counter() - began
        own1, reaped1 = cpu_seconds(server.pid)
        live1 = children_cpu(server.pid)
        playing = sum(1 for t in listing["tables"] if t.get("state") == "playing")  # type: ignore[union-attr]
        times.sort()
        pick = lambda q: 1000 * times[min(len(times) - 1, int(q * len(times)))]
        print(f"{args.tables} expert tables ({playing} playing), thinkers"
              f" {'default' if args.thinkers is None else args.thinkers}: GET /tables over"
              f" {len(times)} requests: median {pick(0.5):.1f} ms, p90 {pick(0.9):.1f} ms,"
              f" p99 {pick(0.99):.1f} ms, worst {1000 * times[-1]:.1f} ms; serve process"
              f" {100 * (own1 - own0) / spent:.0f}% of a core, its children"
              f" {100 * (live1 - live0 + reaped1 - reaped0) / spent:.0f}%", flush=True)
    finally:
        for seat in seats:
            seat.send_signal(signal.SIGTERM)
        server.send_signal(signal.SIGINT)
        for process in [*seats, server]:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
