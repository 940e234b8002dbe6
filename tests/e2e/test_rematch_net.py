"""A rematch at a networked table (issue 13, "a rematch with the same seats"): a real `cardtui
host --headless --rematches 1` (trusted dealer or mental poker), one host bot and two `cardtui
join --bot --rematches 1` processes on 127.0.0.1 play a match, accept the host's rematch and
play a second one; at a `cardtui serve` table any seated person offers it."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import time
from collections.abc import Callable
from urllib.request import Request, urlopen

from tests.e2e import test_serve
from tests.e2e.test_netplay import Procs, assert_same_result, free_port, results, wait_all
from tests.e2e.test_serve import Player, ServerMaker

# The fixtures of test_serve, for the rematch over SSH too.
serve = test_serve.serve
players = test_serve.players


def test_the_same_seats_play_a_rematch_and_agree_on_both_matches(procs: Procs) -> None:
    port = free_port()
    host = procs.start("host", "host", "--headless", "--game", "zodiak", "--players", "3",
                       "--bots", "1", "--rematches", "1", "--house", "target=12",
                       "--trusted-dealer",
                       "--port", str(port), "--bind", "127.0.0.1", "--seed", "3", "--speed", "0",
                       "--result", str(procs.tmp / "host.json"))
    procs.wait_for_log("host", r"others run")
    seats = [procs.start(f"seat{i}", "join", f"127.0.0.1:{port}", "--bot", "greedy",
                         "--name", f"p{i}", "--rematches", "1", "--allow-trusted-dealer",
                         "--result", str(procs.tmp / f"r{i}.json"),
                         "--seat-file", str(procs.tmp / f"seat{i}.id"))
             for i in range(2)]
    wait_all([host, *seats])
    assert [p.returncode for p in (host, *seats)] == [0, 0, 0]
    host_log = procs.log("host")
    assert host_log.count("match over") == 2, host_log[-3000:]
    assert "the host offers a rematch" in host_log
    for i in range(2):
        log = procs.log(f"seat{i}")
        assert re.search(r"(the host|h\w*) offers a rematch with the same seats", log), log[-3000:]
        assert log.count("zodiak match started") == 2, log[-3000:]
        assert len(re.findall(r"match over: scores", log)) == 2
        # The same seats: the second match names the same players in the same order.
        starts = re.findall(r"zodiak match started in seat (\d): ([^;]+);", log)
        assert starts[0] == starts[1]
    # The files hold the second match: every seat verified it and agrees with the host.
    host_result = json.loads((procs.tmp / "host.json").read_text())
    assert_same_result(results(procs.tmp, ["r0", "r1"]), host_result)
    assert max(host_result["scores"]) >= 12


def test_a_table_without_rematches_ends_after_its_match(procs: Procs) -> None:
    port = free_port()
    host = procs.start("host", "host", "--headless", "--game", "zodiak", "--players", "2",
                       "--house", "target=5", "--port", str(port), "--bind", "127.0.0.1",
                       "--seed", "3", "--speed", "0", "--trusted-dealer")
    procs.wait_for_log("host", r"others run")
    seat = procs.start("seat0", "join", f"127.0.0.1:{port}", "--bot", "greedy", "--name", "p0",
                       "--rematches", "1", "--give-up", "5", "--allow-trusted-dealer")
    other = procs.start("seat1", "join", f"127.0.0.1:{port}", "--bot", "greedy", "--name", "p1",
                        "--allow-trusted-dealer")
    wait_all([host, other])
    try:
        seat.wait(timeout=60)
    except subprocess.TimeoutExpired:
        raise AssertionError("a seat waiting for a rematch stayed after the table ended") from None
    assert procs.log("host").count("match over") == 1


def test_a_table_dealt_by_mental_poker_plays_a_rematch_and_every_seat_verifies_it(
        procs: Procs) -> None:
    """A `--mental` host with a bot and two `join --bot --rematches 1` seats play two matches:
    the second one's rounds number on, every round of both is verified by every seat, and all
    agree on the second result (FAIRNESS.md A8)."""
    port = free_port()
    host = procs.start("host", "host", "--headless", "--mental", "--game", "zodiak",
                       "--players", "3", "--bots", "1", "--rematches", "1",
                       "--house", "target=12", "--port", str(port), "--bind", "127.0.0.1",
                       "--seed", "3", "--speed", "0", "--result", str(procs.tmp / "host.json"))
    procs.wait_for_log("host", r"others run")
    seats = [procs.start(f"seat{i}", "join", f"127.0.0.1:{port}", "--bot", "greedy",
                         "--name", f"p{i}", "--rematches", "1",
                         "--result", str(procs.tmp / f"r{i}.json"),
                         "--seat-file", str(procs.tmp / f"seat{i}.id"))
             for i in range(2)]
    wait_all([host, *seats], timeout=600)
    assert [p.returncode for p in (host, *seats)] == [0, 0, 0]
    host_log = procs.log("host")
    assert host_log.count("match over") == 2, host_log[-3000:]
    dealt = [int(n) for n in re.findall(r"round (\d+) dealing by mental poker", host_log)]
    assert dealt == list(range(1, len(dealt) + 1)), dealt  # the rematch's rounds number on
    for i in range(2):
        log = procs.log(f"seat{i}")
        assert log.count("zodiak match started") == 2, log[-3000:]
        assert "failed its audit" not in log and "blame" not in log.lower(), log[-3000:]
        verified = [int(n) for n in re.findall(
            r"^\(round (\d+) audited: shuffle, deal and every move check out\)$", log,
            re.MULTILINE)]
        assert verified == dealt, (verified, dealt)
    host_result = json.loads((procs.tmp / "host.json").read_text())
    assert_same_result(results(procs.tmp, ["r0", "r1"]), host_result)
    assert max(host_result["scores"]) >= 12


def test_any_seat_at_a_server_table_offers_a_rematch_and_the_others_accept(
        procs: Procs) -> None:
    """At a `cardtui serve` table (no owner plays there) a seated `join --bot --rematches 1`
    offers the rematch itself, the other seat accepts, both play the second match and agree on
    its verified result; then, nobody left, the table closes."""
    ssh_port, port = free_port(), free_port()
    procs.start("serve", "serve", "--bind", "127.0.0.1", "--ssh-port", str(ssh_port),
                "--port", str(port), "--host-key", str(procs.tmp / "host_key"),
                "--bot-speed", "0.01")
    procs.wait_for_log("serve", r"Stop with Ctrl-C")
    api = f"http://127.0.0.1:{port}/tables"
    asked = json.dumps({"game": "zodiak", "players": 3, "bots": 1, "house": "target=12"})
    with urlopen(Request(api, data=asked.encode(), method="POST")) as answer:
        room = json.load(answer)["room"]
    seats = [procs.start(f"seat{i}", "join", "--relay", f"ws://127.0.0.1:{port}", room,
                         "--bot", "greedy", "--name", f"p{i}", "--rematches", "1",
                         "--allow-trusted-dealer",  # a serve table keeps the trusted dealer
                         "--result", str(procs.tmp / f"r{i}.json"),
                         "--seat-file", str(procs.tmp / f"seat{i}.id"))
             for i in range(2)]
    wait_all(seats, timeout=600)
    assert [p.returncode for p in seats] == [0, 0]
    for i in range(2):
        log = procs.log(f"seat{i}")
        # No host plays here: the log names the seat that offered (both may, at once).
        assert re.search(r"(p0|p1) offers a rematch with the same seats", log), log[-3000:]
        assert log.count("zodiak match started") == 2, log[-3000:]
        starts = re.findall(r"zodiak match started in seat (\d): ([^;]+);", log)
        assert starts[0] == starts[1]
    first, second = results(procs.tmp, ["r0", "r1"])
    assert first["verified"] is second["verified"] is True
    assert {k: first[k] for k in ("scores", "winner", "moves")} == {
        k: second[k] for k in ("scores", "winner", "moves")}
    assert max(first["scores"]) >= 12
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # both seats gone: the finished table does not linger
        with urlopen(api) as answer:
            if json.load(answer)["tables"] == []:
                break
        time.sleep(0.2)
    else:
        raise AssertionError("the finished table stayed open after its seats left")


async def test_a_person_at_a_server_table_offers_a_rematch_over_ssh(
        serve: ServerMaker, players: Callable[[], Player]) -> None:
    """Over the real ssh client: at a `cardtui serve` table the seated person (whose turns the
    table's timer hands to a bot) gets Rematch (r) at the match's end, and r starts a new match
    with the same seats at once, the other seat being a bot."""
    server = await serve("--turn-seconds", "0.2", "--bot-speed", "0.01")
    alice = players()
    await alice.login(server, "alice")
    await alice.open_new_table_dialog()
    await alice.type("h")
    await asyncio.sleep(1)  # the field takes the keys once it has the focus, as a person sees
    await alice.type("target=1")
    await alice.see(r"House \(h\) +target=1")
    await alice.type("Enter")
    await alice.see("Your hand")
    await alice.see(r"Rematch \(r\)")
    await alice.type("r")
    # The second match (to 1 point, every turn played within 0.2 s) can be over before the
    # screen is read, its result covering the log and its moves pushing the line out of view:
    # then look back (v) and page up the log (PgUp), as a person would.
    new_match = "A new match with the same seats"
    try:
        await alice.see(new_match)
    except AssertionError:
        await alice.type("v")
        screen = await alice.see("The match is over")
        while new_match not in screen:
            await alice.type("PageUp")
            before, screen = screen, await alice.see_change(screen)
            assert screen != before, f"the log's top, and no {new_match!r}:\n{screen}"
