"""`cardtui serve` while its doors are flooded from one address, the attacker its own process.

The SSH door, the browser door, the relay and every table of `cardtui serve` share one process
and its event loop. An SSH connection needs no key, no password and no cipher to make that
loop parse packets: before the key exchange SSH packets travel in the clear, and
SSH_MSG_IGNORE is allowed there; a browser tab's WebSocket may send the page's `ping` as fast
as it likes. Each door reads a connection on a budget of bytes a second per address and for
all addresses together (netplay/ssh/guard.py `ReadBudget`), so a flood from one address slows
its own connections, not the tables: a match at a server table finishes while it goes on.
Nothing asserts a duration: the match must finish within the wait of any other e2e match.
"""

from __future__ import annotations

import json
import re
from urllib.request import Request, urlopen

import pytest

from tests.e2e.test_netplay import Procs, free_port, results, wait_all
from tests.e2e.test_relay_hostile import attack

pytestmark = pytest.mark.timeout(400)


def start_serve(procs: Procs, *options: str) -> tuple[int, int]:
    """A `cardtui serve` process on free loopback ports; its SSH and relay ports."""
    ssh_port, port = free_port(), free_port()
    procs.start("serve", "serve", "--bind", "127.0.0.1", "--ssh-port", str(ssh_port),
                "--port", str(port), "--host-key", str(procs.tmp / "host_key"),
                "--bot-speed", "0.01", *options)
    procs.wait_for_log("serve", r"Stop with Ctrl-C")
    return ssh_port, port


def play_a_server_table(procs: Procs, port: int) -> None:
    """Two `join --bot` seats and a bot play a short match at a new server table; both
    finish it, verified, with the same result."""
    api = f"http://127.0.0.1:{port}/tables"
    asked = json.dumps({"game": "zodiak", "players": 3, "bots": 1, "house": "target=12"})
    with urlopen(Request(api, data=asked.encode(), method="POST"), timeout=60) as answer:
        room = json.load(answer)["room"]
    seats = [procs.start(f"seat{i}", "join", "--relay", f"ws://127.0.0.1:{port}", room,
                         "--bot", "greedy", "--name", f"p{i}", "--allow-trusted-dealer",
                         "--result", str(procs.tmp / f"r{i}.json"),
                         "--seat-file", str(procs.tmp / f"seat{i}.id"))
             for i in range(2)]
    wait_all(seats)
    assert [p.returncode for p in seats] == [0, 0], procs.log("seat0")[-3000:]
    first, second = results(procs.tmp, ["r0", "r1"])
    assert first["verified"] is second["verified"] is True
    assert {k: first[k] for k in ("scores", "winner", "moves")} == {
        k: second[k] for k in ("scores", "winner", "moves")}
    assert "Traceback" not in procs.log("serve")


def test_a_flood_of_packets_before_login_does_not_stop_a_server_table(procs: Procs) -> None:
    """Ten connections from 127.0.0.2 (as many as one address may hold before logging in)
    send SSH_MSG_IGNORE as fast as the door reads them, all through a match at a server table
    between two `join --bot` seats over its relay; the match finishes and both seats agree."""
    ssh_port, port = start_serve(procs)
    flood = attack(procs, "flood", "sshflood", "127.0.0.1", str(ssh_port), "--from",
                   "127.0.0.2", "--conns", "10", "--seconds", "600")
    procs.wait_for_log("flood", r"sending \d+ KiB/s on 10 of 10")
    play_a_server_table(procs, port)
    assert flood.poll() is None  # it flooded all along
    assert re.search(r"sending [1-9]\d* KiB/s on 10 of 10", procs.log("flood"))


def test_a_browser_tab_flooding_pings_does_not_stop_a_server_table(procs: Procs) -> None:
    """Four terminal WebSockets of the browser door from 127.0.0.2 (as many sessions as one
    address may hold) send the page's `ping` as fast as the door reads them, all through a
    match at a server table; the match finishes and both seats agree."""
    web_port = free_port()
    _, port = start_serve(procs, "--web-port", str(web_port))
    flood = attack(procs, "flood", "webflood",
                   f"http://127.0.0.1:{web_port}/ws?width=80&height=24", "--from", "127.0.0.2",
                   "--conns", "4", "--seconds", "600")
    procs.wait_for_log("flood", r"sending \d+ messages/s on 4 of 4")
    play_a_server_table(procs, port)
    assert flood.poll() is None  # it flooded all along
    assert re.search(r"sending [1-9]\d* messages/s on 4 of 4", procs.log("flood"))
