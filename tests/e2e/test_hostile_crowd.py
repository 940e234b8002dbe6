"""PROTOCOL.md section 3 (`drop`) and G3 ("Budgets"), end to end: a real `cardtui host` and two
`join --bot` seats in their own processes, and a peer that spreads its attack over many conns
(tests/e2e/hostile_crowd.py) in another, all on 127.0.0.1. The honest seats finish each match."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from netplay.relay.wire import CLOSE_REPLACED
from netplay.table.state import SEAT_CHAT_BURST, SEAT_CHAT_RATE
from tests.e2e.test_hostile_peers import direct_host, host_result
from tests.e2e.test_netplay import Procs, assert_same_result, results, start_bots, wait_all

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

# A trusted dealer (FAIRNESS.md A9): the dealing is not under test, and its bot moves for the
# hostile seat, which never moves, once the turn timer runs out, or at once when the attacker
# has been gone two seconds; the hostile seat's unrevealed nonce is forfeited after two. The
# defaults (a minute, ten seconds) only made the match longer. A short match.
TABLE = ("--game", "zodiak", "--players", "3", "--speed", "0", "--turn-seconds", "1",
         "--away-timeout", "2", "--reveal-timeout", "2", "--trusted-dealer",
         "--house", "target=10")


def start_crowd(procs: Procs, mode: str, port: int, seconds: float) -> subprocess.Popen:
    """A tests/e2e/hostile_crowd.py attacker in its own process, logging to MODE.log."""
    with open(procs.tmp / f"{mode}.log", "w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "tests.e2e.hostile_crowd", mode,
                                 f"ws://127.0.0.1:{port}/ws", "-", str(procs.tmp / f"{mode}.json"),
                                 str(seconds)],
                                stdout=log, stderr=subprocess.STDOUT, env=procs.env,
                                cwd=procs.tmp, start_new_session=True)
    procs.procs.append(proc)
    return proc


def crowd_report(procs: Procs, mode: str) -> dict:
    path: Path = procs.tmp / f"{mode}.json"
    assert path.exists(), procs.log(mode)[-2000:]
    return json.loads(path.read_text())


def test_a_seat_joining_again_from_many_conns_keeps_one(procs: Procs) -> None:
    """A seat joins its own seat again from 15 more conns, holding each open: the host has the
    relay drop each old conn (close 4003), so the room's 15 seat slots never fill and the two
    honest seats that come next are admitted and finish the match."""
    # The attack is over before the match starts: the shortest match (one round, most often).
    host, port = direct_host(procs, *TABLE[:-1], "target=3", "--seed", "3")
    start_crowd(procs, "seat-conns", port, 600)
    procs.wait_for_log("seat-conns", "holding", timeout=60)
    got = crowd_report(procs, "seat-conns")
    assert got["closed"][:-1] == [CLOSE_REPLACED] * 15 and got["closed"][-1] is None, got
    seats = start_bots(procs, [f"127.0.0.1:{port}", "--allow-trusted-dealer"], 2)
    wait_all([host, *seats], timeout=240)
    assert host.returncode == 0
    assert "room_full" not in procs.log("host")
    assert_same_result(results(procs.tmp, ["r0", "r1"]), host_result(procs))


def test_strangers_spending_resyncs_do_not_keep_seats_out(procs: Procs) -> None:
    """A peer with no seat fills the lobby's chain with its watchers' chat, then opens a conn
    every 0.08 s that asks for three resyncs and joins as a watcher: its syncs are refused (it
    never joined), its watchers spend only the watchers' budget, and two honest seats that join
    meanwhile are seated at once and finish the match while it still runs."""
    host, port = direct_host(procs, *TABLE[:3], "2", *TABLE[4:], "--seed", "5")
    crowd = start_crowd(procs, "starve", port, 150)
    procs.wait_for_log("starve", "starving", timeout=60)
    seats = start_bots(procs, [f"127.0.0.1:{port}", "--allow-trusted-dealer"], 2)
    wait_all([host, *seats], timeout=140)
    assert crowd.poll() is None, "the match ended after the attack, not during it"
    assert host.returncode == 0
    assert_same_result(results(procs.tmp, ["r0", "r1"]), host_result(procs))
    report = procs.tmp / "starve.json"
    deadline = time.monotonic() + 60
    while not report.exists() and time.monotonic() < deadline:
        time.sleep(0.2)  # written every 50 of its conns
    answers = crowd_report(procs, "starve")["answers"]
    assert answers.get("not_allowed", 0) >= 10, answers  # "join the table before a resync"


def test_a_seat_flooding_chat_from_fresh_conns_says_a_bounded_amount(
        procs: Procs) -> None:
    """A seat says 300-character lines as fast as it may send, joining its seat again from a
    fresh conn (with a fresh conn budget) every 20 lines: its seat's chat budget, kept across
    its conns, lets through 20 lines and one every 2 s, and the honest seats finish."""
    seconds = 20.0
    # Turns of 5 s, not 1: the flooding seat's bot moves for it when its time runs out, and
    # with 1 s it once won the match (this deal: at its sixth turn) before the flood was over.
    assert TABLE[6:8] == ("--turn-seconds", "1")
    host, port = direct_host(procs, *TABLE[:7], "5", *TABLE[8:], "--seed", "7")
    crowd = start_crowd(procs, "chat-flood", port, seconds)
    procs.wait_for_log("host", r"seat 0 \(crowd\) joined")
    seats = start_bots(procs, [f"127.0.0.1:{port}", "--allow-trusted-dealer"], 2)
    crowd.wait(timeout=120)
    got = crowd_report(procs, "chat-flood")
    # Its last conn's lines may be heard by none of its conns: `said` is a lower bound, `sent`
    # shows the flood was real. Before the seat's budget it said every line (up to 2000).
    assert not got["ended"] and got["sent"] >= 200, got
    assert 0 < got["said"] <= SEAT_CHAT_BURST + SEAT_CHAT_RATE * (seconds + 15), got
    assert got["answers"].get("rate_limited", 0) >= 100, got
    wait_all([host, *seats], timeout=240)
    assert host.returncode == 0
    assert_same_result(results(procs.tmp, ["r0", "r1"]), host_result(procs))
