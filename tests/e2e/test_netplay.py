"""End to end over 127.0.0.1 with separate processes: hosts, relays and `join --bot` seats."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

CLI = [sys.executable, "-m", "tui.cli"]
REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Procs:
    """Processes started by one test, all stopped at its end."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.procs: list[subprocess.Popen] = []
        self.env = {**os.environ, "XDG_DATA_HOME": str(tmp / "data"), "PYTHONUNBUFFERED": "1"}
        # This checkout first: the attackers run as `python -m tests.e2e.hostile_…`.
        self.env["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
        # A `cardtui host` bound to loopback announces its table there, where every test's LAN
        # browser hears it: only a test about announcing lets it (tests/conftest.py mdns_alone).
        self.announce = False

    def start(self, name: str, *args: str) -> subprocess.Popen:
        if args[:1] == ("host",) and not self.announce:
            args = (*args, "--no-announce")
        with open(self.tmp / f"{name}.log", "w") as log:  # the child keeps its own copy
            proc = subprocess.Popen([*CLI, *args], stdout=log, stderr=subprocess.STDOUT,
                                    env=self.env, cwd=self.tmp, start_new_session=True)
        self.procs.append(proc)
        return proc

    def log(self, name: str) -> str:
        return (self.tmp / f"{name}.log").read_text()

    def wait_for_log(self, name: str, pattern: str, timeout: float = 30) -> re.Match:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = re.search(pattern, self.log(name))
            if found:
                return found
            time.sleep(0.1)
        raise AssertionError(f"{name} never printed {pattern!r}:\n{self.log(name)[-2000:]}")

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def wait_all(procs: list[subprocess.Popen], timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    for proc in procs:
        proc.wait(timeout=max(1, deadline - time.monotonic()))


def results(tmp: Path, names: list[str]) -> list[dict]:
    return [json.loads((tmp / f"{n}.json").read_text()) for n in names]


def assert_same_result(found: list[dict], host: dict) -> None:
    for r in found:
        assert r["verified"] is True
        assert {k: r[k] for k in ("game", "scores", "winner", "moves")} == host
    assert host["winner"] is not None


def start_bots(procs: Procs, target: list[str], count: int = 4) -> list[subprocess.Popen]:
    return [procs.start(f"seat{i}", "join", *target, "--bot", "greedy", "--name", f"p{i}",
                        "--result", str(procs.tmp / f"r{i}.json"),
                        "--seat-file", str(procs.tmp / f"seat{i}.id"), "--sign", "leo")
            for i in range(count)]


# Where the dealing is not what a test is about, its host deals as a trusted dealer (FAIRNESS.md
# A9) and its seats accept that: mental poker costs a match several times the messages and CPU.
# Whole matches dealt by mental poker, both games, are in tests/e2e/test_mental_netplay.py.
TRUSTED_HOST = ("--trusted-dealer",)
TRUSTED_SEATS = ("--allow-trusted-dealer",)


@pytest.mark.parametrize("game", ["zodiak", "hekata"])
def test_direct_host_four_bots_finish_a_match(procs: Procs, game: str) -> None:
    """Four `join --bot` processes play a whole match through a direct host (a trusted dealer's:
    tests/e2e/test_mental_netplay.py has the same by mental poker); all agree."""
    port = free_port()
    host = procs.start("host", "host", "--headless", "--game", game, "--players", "4",
                       "--port", str(port), "--bind", "127.0.0.1", "--seed", "11", "--speed", "0",
                       "--result", str(procs.tmp / "host.json"),
                       "--save", str(procs.tmp / "hosted.json"), *TRUSTED_HOST)
    procs.wait_for_log("host", r"others run")
    seats = start_bots(procs, [f"127.0.0.1:{port}", *TRUSTED_SEATS])
    wait_all([host, *seats])
    host_result = json.loads((procs.tmp / "host.json").read_text())
    assert_same_result(results(procs.tmp, [f"r{i}" for i in range(4)]), host_result)


def test_standalone_relay_carries_a_match(procs: Procs) -> None:
    """A host opens a room on a standalone relay; four bots join by room code and finish."""
    port = free_port()
    procs.start("relay", "relay", "--port", str(port), "--bind", "127.0.0.1")
    procs.wait_for_log("relay", r"ws://")
    url = f"ws://127.0.0.1:{port}"
    host = procs.start("host", "host", "--headless", "--relay", url, "--players", "4",
                       "--seed", "3", "--speed", "0", "--result", str(procs.tmp / "host.json"),
                       "--save", str(procs.tmp / "hosted.json"), *TRUSTED_HOST)
    code = procs.wait_for_log("host", r"join --relay \S+ (\S+)").group(1)
    seats = start_bots(procs, ["--relay", url, code, *TRUSTED_SEATS])
    wait_all([host, *seats])
    host_result = json.loads((procs.tmp / "host.json").read_text())
    assert_same_result(results(procs.tmp, [f"r{i}" for i in range(4)]), host_result)


def test_killed_client_comes_back_and_the_match_finishes(procs: Procs) -> None:
    """A seat's process killed mid-match and started again takes its seat back. Dealt by mental
    poker (the default), the new process has lost its round key: it says so (`mp_lost`), the
    round in play is dealt again with the host's bot in its seat, and it plays from the next
    round on (FAIRNESS.md A8). A short match (to 20): the length is not what is tested."""
    port = free_port()
    host = procs.start("host", "host", "--headless", "--players", "4", "--port", str(port),
                       "--bind", "127.0.0.1", "--seed", "5", "--speed", "0.02",
                       "--house", "target=20",
                       "--away-timeout", "600", "--result", str(procs.tmp / "host.json"),
                       "--save", str(procs.tmp / "hosted.json"))
    procs.wait_for_log("host", r"others run")
    seats = start_bots(procs, [f"127.0.0.1:{port}"])
    procs.wait_for_log("host", r"move 10:")
    os.killpg(seats[0].pid, signal.SIGKILL)
    seats[0].wait()
    procs.wait_for_log("host", r"lost its connection")
    seats[0] = start_bots(procs, [f"127.0.0.1:{port}"], 1)[0]
    wait_all([host, *seats], timeout=600)
    host_result = json.loads((procs.tmp / "host.json").read_text())
    assert_same_result(results(procs.tmp, [f"r{i}" for i in range(4)]), host_result)


def test_killed_host_resumes_and_clients_reconnect(procs: Procs) -> None:
    """The host killed mid-match and restarted with --resume; the seats reconnect and finish.
    A trusted dealer's table: by mental poker the round in play is voided and dealt again
    (tests/e2e/test_mental_netplay.py)."""
    port = free_port()
    args = ["host", "--headless", "--players", "4", "--port", str(port), "--bind", "127.0.0.1",
            "--seed", "8", "--speed", "0.02", "--result", str(procs.tmp / "host.json"),
            "--save", str(procs.tmp / "hosted.json"), *TRUSTED_HOST]
    host = procs.start("host", *args)
    procs.wait_for_log("host", r"others run")
    seats = start_bots(procs, [f"127.0.0.1:{port}", *TRUSTED_SEATS])
    procs.wait_for_log("host", r"move 40:")
    os.killpg(host.pid, signal.SIGKILL)
    host.wait()
    host = procs.start("host2", *args, "--resume")
    wait_all([host, *seats], timeout=600)
    host_result = json.loads((procs.tmp / "host.json").read_text())
    assert_same_result(results(procs.tmp, [f"r{i}" for i in range(4)]), host_result)


# A move in a `join --bot` log. Not its first line's "(a greedy bot plays the seat)": waiting
# for that, a host was stopped before the seat had joined, which then only timed out.
A_MOVE = r"(plays|draws) (?!the seat)"


def one_bot_seat_at_a_slow_host(procs: Procs, give_up: float) -> tuple[
        subprocess.Popen, subprocess.Popen]:
    """A headless two-seat host (its bot in one seat, half a second a move) and a `join --bot`
    in the other, giving up after `give_up` seconds out of reach."""
    port = free_port()
    host = procs.start("host", "host", "--headless", "--players", "2", "--bots", "1",
                       "--port", str(port), "--bind", "127.0.0.1", "--seed", "5",
                       "--speed", "0.5", "--save", str(procs.tmp / "hosted.json"), *TRUSTED_HOST)
    procs.wait_for_log("host", r"others run")
    seat = procs.start("seat", "join", f"127.0.0.1:{port}", "--bot", "greedy", "--name", "p0",
                       "--give-up", f"{give_up:g}", "--seat-file", str(procs.tmp / "seat.id"),
                       *TRUSTED_SEATS)
    return host, seat


def test_a_bot_seat_says_what_happens_and_gives_up_on_a_dead_host(procs: Procs) -> None:
    """Issue 13.16: `join --bot` prints the match as it goes and stops once the host is gone."""
    host, seat = one_bot_seat_at_a_slow_host(procs, give_up=1)
    procs.wait_for_log("seat", r"joining ")
    procs.wait_for_log("seat", r"match started in seat \d")
    procs.wait_for_log("seat", A_MOVE)
    os.killpg(host.pid, signal.SIGKILL)
    host.wait()
    assert seat.wait(timeout=60) == 1
    assert "giving up" in procs.log("seat")


def test_a_host_stopped_in_good_order_tells_its_seats_the_table_is_closed(procs: Procs) -> None:
    """A host stopped by its person (the app's quit, or a signal) says so to every seat, which
    says it in one line and stops, where it tried to reconnect to nothing for minutes."""
    host, seat = one_bot_seat_at_a_slow_host(procs, give_up=600)
    procs.wait_for_log("seat", r"match started in seat \d")
    procs.wait_for_log("seat", A_MOVE)
    host.send_signal(signal.SIGTERM)
    host.wait(timeout=60)
    assert seat.wait(timeout=120) == 1  # a hang guard: without the word it waited 600 s
    log = procs.log("seat")
    assert "the host closed the table; `cardtui host --resume`" in log, log[-2000:]
    assert "Traceback" not in log


@pytest.mark.usefixtures("mdns_alone")  # no flood of another test in its list
def test_cardtui_host_is_listed_on_the_lan(procs: Procs) -> None:
    """`cardtui host` announces its table over mDNS (here on loopback: bound there)."""
    import asyncio

    from netplay.relay.lan import LanBrowser

    port = free_port()
    procs.announce = True
    procs.start("host", "host", "--headless", "--players", "2", "--port", str(port),
                "--bind", "127.0.0.1", "--name", "Hana", "--save", str(procs.tmp / "h.json"))
    procs.wait_for_log("host", r"others run")

    async def listed() -> tuple[str, int, str]:
        changed = asyncio.Event()
        browser = LanBrowser(changed.set, interfaces=["127.0.0.1"])
        await browser.start()
        try:
            async with asyncio.timeout(30):
                while True:
                    for table in browser.tables.values():
                        if table.port == port:
                            return table.game, table.players, table.host
                    await changed.wait()
                    changed.clear()
        finally:
            await browser.close()

    assert asyncio.run(listed()) == ("zodiak", 2, "Hana")
