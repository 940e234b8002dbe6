"""Mental-poker dealing end to end (FAIRNESS.md A8): `cardtui host --headless` (mental poker
is its default) and `join --bot` processes on 127.0.0.1, every message through the host's relay
room: honest matches, people who are killed or quit mid-round, house rules, a resumed host, and
a joiner that refuses a trusted dealer."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess

import pytest

from tests.e2e.test_hostile_peers import start_peer
from tests.e2e.test_netplay import (
    Procs,
    assert_same_result,
    free_port,
    results,
    start_bots,
    wait_all,
)


@pytest.mark.parametrize(("game", "players", "bots"), [
    ("zodiak", 2, 0), ("hekata", 2, 0), ("zodiak", 4, 1), ("hekata", 4, 2)])
def test_people_and_bots_finish_a_match_dealt_by_mental_poker(
        procs: Procs, game: str, players: int, bots: int) -> None:
    """Every seat and the host end the match with the same result; nobody's check failed."""
    port = free_port()
    host = procs.start("host", "host", "--headless", "--mental", "--game", game,
                       "--players", str(players), "--bots", str(bots), "--port", str(port),
                       "--bind", "127.0.0.1", "--seed", "11", "--speed", "0",
                       "--result", str(procs.tmp / "host.json"),
                       "--save", str(procs.tmp / "hosted.json"))
    procs.wait_for_log("host", r"others run")
    seats = start_bots(procs, [f"127.0.0.1:{port}"], count=players - bots)
    wait_all([host, *seats], timeout=600)
    host_result = json.loads((procs.tmp / "host.json").read_text())
    assert_same_result(results(procs.tmp, [f"r{i}" for i in range(players - bots)]), host_result)
    log = procs.log("host")
    assert "dealing by mental poker" in log
    # FAIRNESS.md A8, "Prepared deck": later rounds deal from the deck shuffled during the last
    # one (a round that ends before that deck is checked deals its own: bots play fast here).
    if log.count("dealing by mental poker") >= 3:
        assert "from the deck shuffled during round" in log


def host_result(procs: Procs) -> dict:
    return json.loads((procs.tmp / "host.json").read_text())


def mental_host(procs: Procs, *args: str, name: str = "host") -> tuple[subprocess.Popen, int]:
    """`cardtui host --headless` (mental poker is its default) on a free port of 127.0.0.1."""
    port = free_port()
    host = procs.start(name, "host", "--headless", "--port", str(port), "--bind", "127.0.0.1",
                       "--result", str(procs.tmp / "host.json"),
                       "--save", str(procs.tmp / "hosted.json"), *args)
    procs.wait_for_log(name, r"others run")
    return host, port


def test_a_seat_killed_mid_round_voids_the_deal_and_the_others_finish(procs: Procs) -> None:
    """FAIRNESS.md A8: p2's process is killed mid-round; past the away time the host voids
    the deal (`mp_void`) and deals the round again with its bot in p2's seat; the two seats left
    finish the match with the host's result, every check passed. A short match (to 20): its
    length is not under test."""
    host, port = mental_host(procs, "--game", "zodiak", "--players", "3", "--seed", "4",
                             "--speed", "0.05", "--away-timeout", "2", "--house", "target=20")
    seats = start_bots(procs, [f"127.0.0.1:{port}"], count=3)
    procs.wait_for_log("host", r"move 4:", timeout=120)
    os.killpg(seats[2].pid, signal.SIGKILL)
    seats[2].wait()
    procs.wait_for_log("host", r"voided \(away past the away time\)", timeout=120)
    wait_all([host, *seats[:2]], timeout=600)
    assert_same_result(results(procs.tmp, ["r0", "r1"]), host_result(procs))
    assert re.search(r"the host's bots play seat \d \(p2\)", procs.log("host"))
    assert re.search(r"round \d+ is dealt again: p2 gone", procs.log("seat0"))


def p3_quits_mid_round(procs: Procs) -> tuple[subprocess.Popen, int, list[subprocess.Popen]]:
    """Four people at a Hekata table dealt by mental poker; p3's `join --bot` is stopped with
    SIGINT a few moves in, and hands its round key over. The host, its port, the seats. Rows of
    at most 3 cards: one trick of 11,200 once won the whole match before p3 could come back."""
    host, port = mental_host(procs, "--game", "hekata", "--players", "4", "--seed", "2",
                             "--speed", "0.05", "--away-timeout", "600",
                             "--house", "max-row=3,target=3000")
    seats = start_bots(procs, [f"127.0.0.1:{port}"], count=4)
    procs.wait_for_log("host", r"move 3:", timeout=120)
    os.killpg(seats[3].pid, signal.SIGINT)
    assert seats[3].wait(timeout=60) == 130
    procs.wait_for_log("host", r"seat \d \(p3\) left and handed its key over", timeout=60)
    return host, port, seats


def test_a_seat_that_quits_hands_its_key_over_and_the_round_goes_on(procs: Procs) -> None:
    """A `join --bot` stopped with SIGINT leaves in good order: it hands its round key to the
    host (`mp_handover`), which plays the seat with its bot; no deal is voided and the others
    finish with the host's result."""
    host, _port, seats = p3_quits_mid_round(procs)
    wait_all([host, *seats[:3]], timeout=600)
    assert_same_result(results(procs.tmp, ["r0", "r1", "r2"]), host_result(procs))
    assert "voided" not in procs.log("host")
    assert "p3 left and handed their key over" in procs.log("seat0")


def test_a_seat_that_handed_its_key_over_and_comes_back_voids_nothing(procs: Procs) -> None:
    """FAIRNESS.md A8, "A person who stays away": after a handover the host holds that key, so
    nothing is lost: the person's new `join` (same seat file) waits out the round, the host's
    bot playing the seat, no deal is voided, and everyone finishes the match."""
    host, port, seats = p3_quits_mid_round(procs)
    back = procs.start("seat3b", "join", f"127.0.0.1:{port}", "--bot", "greedy", "--name", "p3",
                       "--result", str(procs.tmp / "r3.json"),
                       "--seat-file", str(procs.tmp / "seat3.id"), "--sign", "leo")
    wait_all([host, *seats[:3], back], timeout=600)
    assert "voided" not in procs.log("host")
    assert_same_result(results(procs.tmp, ["r0", "r1", "r2", "r3"]), host_result(procs))


def test_a_host_resumed_after_a_handover_deals_that_seat_out_and_every_check_holds(
        procs: Procs) -> None:
    """FAIRNESS.md A8: p3 hands its key over, then the host is killed and resumed mid-round.
    The void that deals the round again names p3 as gone (every seat's view of the deal in play
    has p3 as a party whose key the host held), so no seat's check fails; p3 comes back with
    its seat file, and all five processes finish with the host's result."""
    host, port, seats = p3_quits_mid_round(procs)
    os.killpg(host.pid, signal.SIGKILL)
    host.wait()
    again = procs.start("host2", "host", "--headless", "--port", str(port), "--bind",
                        "127.0.0.1", "--result", str(procs.tmp / "host.json"),
                        "--save", str(procs.tmp / "hosted.json"), "--speed", "0.05",
                        "--away-timeout", "600", "--resume")
    procs.wait_for_log("host2", r"others run")
    back = procs.start("seat3b", "join", f"127.0.0.1:{port}", "--bot", "greedy", "--name", "p3",
                       "--result", str(procs.tmp / "r3.json"),
                       "--seat-file", str(procs.tmp / "seat3.id"), "--sign", "leo")
    wait_all([again, *seats[:3], back], timeout=600)
    assert_same_result(results(procs.tmp, ["r0", "r1", "r2", "r3"]), host_result(procs))
    assert re.search(r"voided \(the host started again\).*the host's bots play seat \d \(p3\)",
                     procs.log("host2"))
    for seat in ("seat0", "seat1", "seat2", "seat3b"):
        assert "check failed" not in procs.log(seat), procs.log(seat)


def test_house_rules_apply_to_a_table_dealt_by_mental_poker(procs: Procs) -> None:
    """RULES 2.3 under max-row=3, target=1500 on a mental-poker table: every seat's and the
    host's view check moves by the table's rules and the match ends at 1,500."""
    host, port = mental_host(procs, "--game", "hekata", "--players", "2", "--seed", "5",
                             "--speed", "0", "--house", "max-row=3,target=1500")
    seats = start_bots(procs, [f"127.0.0.1:{port}"], count=2)
    wait_all([host, *seats], timeout=600)
    found = host_result(procs)
    assert_same_result(results(procs.tmp, ["r0", "r1"]), found)
    assert 1500 <= max(found["scores"]) < 10_000
    assert "dealing by mental poker" in procs.log("host")


def test_a_resumed_host_voids_the_deal_in_play_and_deals_it_again(procs: Procs) -> None:
    """The host killed mid-round and started with --resume: the round in play is voided and
    dealt again (the old process's key for its bots is gone); the seats reconnect and finish
    with the host's result. A short match (to 20): its length is not under test."""
    args = ["--game", "zodiak", "--players", "3", "--bots", "1", "--seed", "8",
            "--speed", "0.05", "--house", "target=20"]
    host, port = mental_host(procs, *args)
    seats = start_bots(procs, [f"127.0.0.1:{port}"], count=2)
    procs.wait_for_log("host", r"move 5:", timeout=120)
    os.killpg(host.pid, signal.SIGKILL)
    host.wait()
    again = procs.start("host2", "host", "--headless", "--port", str(port), "--bind",
                        "127.0.0.1", "--result", str(procs.tmp / "host.json"),
                        "--save", str(procs.tmp / "hosted.json"), *args, "--resume")
    wait_all([again, *seats], timeout=600)
    assert "voided (the host started again)" in procs.log("host2")
    assert_same_result(results(procs.tmp, ["r0", "r1"]), host_result(procs))


def test_join_refuses_a_trusted_dealer_unless_allowed(procs: Procs) -> None:
    """A host that deals every card itself (`--trusted-dealer`) sees every hand: `join` refuses
    it and says why, and plays there only with --allow-trusted-dealer. A short match (to 1,500):
    its length is not under test."""
    host, port = mental_host(procs, "--trusted-dealer", "--game", "hekata", "--players", "2",
                             "--bots", "1", "--seed", "3", "--speed", "0",
                             "--house", "target=1500", "--away-timeout", "2")
    refused = procs.start("refused", "join", f"127.0.0.1:{port}", "--bot", "greedy",
                          "--name", "wary", "--seat-file", str(procs.tmp / "wary.id"))
    assert refused.wait(timeout=60) == 2
    assert "--allow-trusted-dealer" in procs.log("refused")
    # The host's challenge says how it deals: the refusing join leaves before it takes a seat,
    # so the seat is still free for the next one and no match starts with a seat away.
    assert "joined" not in procs.log("host")
    seats = start_bots(procs, [f"127.0.0.1:{port}", "--allow-trusted-dealer"], count=1)
    wait_all([host, *seats])
    assert_same_result(results(procs.tmp, ["r0"]), host_result(procs))
    assert "a trusted dealer" in procs.log("seat0")
    assert "seat 0 (wary)" not in procs.log("host") and "seat 1 (wary)" not in procs.log("host")


def test_a_connected_seat_that_never_sends_its_key_is_voided_out(procs: Procs) -> None:
    """A seat that takes its place and then sends nothing (no round key) stops no one: past the
    away time the host voids the deal and deals again with its bot in that seat, every round."""
    host, port = mental_host(procs, "--game", "zodiak", "--players", "2", "--seed", "1",
                             "--speed", "0", "--turn-seconds", "1", "--away-timeout", "2",
                             "--reveal-timeout", "2")
    idle = start_peer(procs, "idle", "idle", f"ws://127.0.0.1:{port}/ws", "-",
                      str(procs.tmp / "idle.json"))
    procs.wait_for_log("host", r"seat 0 .* joined")
    seats = start_bots(procs, [f"127.0.0.1:{port}"], count=1)
    procs.wait_for_log("host", r"move 12:", timeout=180)
    assert "voided (owed a key, shuffle or share past the away time)" in procs.log("host")
    assert host.poll() is None and seats[0].poll() is None and idle.poll() is None

