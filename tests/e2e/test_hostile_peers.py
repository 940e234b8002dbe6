"""Issue 10, items 1-4 and 9, end to end: real hosts, relays and `join --bot` seats in their own
processes, and a hostile peer (tests/e2e/hostile_peer.py) in another, all on 127.0.0.1."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys

import pytest

from tests.e2e.test_netplay import (
    Procs,
    assert_same_result,
    free_port,
    results,
    start_bots,
    wait_all,
)

pytestmark = pytest.mark.slow


def start_peer(procs: Procs, name: str, *args: str) -> subprocess.Popen:
    """A hostile peer of tests/e2e/hostile_peer.py in its own process, logging to NAME.log."""
    with open(procs.tmp / f"{name}.log", "w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "tests.e2e.hostile_peer", *args],
                                stdout=log, stderr=subprocess.STDOUT, env=procs.env,
                                cwd=procs.tmp, start_new_session=True)
    procs.procs.append(proc)
    return proc


def standalone_relay(procs: Procs) -> str:
    port = free_port()
    procs.start("relay", "relay", "--port", str(port), "--bind", "127.0.0.1")
    procs.wait_for_log("relay", r"ws://")
    return f"ws://127.0.0.1:{port}"


def relay_host(procs: Procs, url: str, *args: str) -> tuple[subprocess.Popen, str]:
    host = procs.start("host", "host", "--headless", "--relay", url, "--speed", "0",
                       "--result", str(procs.tmp / "host.json"),
                       "--save", str(procs.tmp / "hosted.json"), *args)
    code = procs.wait_for_log("host", r"join --relay \S+ (\S+)").group(1)
    return host, code


def direct_host(procs: Procs, *args: str) -> tuple[subprocess.Popen, int]:
    port = free_port()
    host = procs.start("host", "host", "--headless", "--port", str(port), "--bind", "127.0.0.1",
                       "--result", str(procs.tmp / "host.json"),
                       "--save", str(procs.tmp / "hosted.json"), *args)
    procs.wait_for_log("host", r"others run")
    return host, port


def host_result(procs: Procs) -> dict:
    return json.loads((procs.tmp / "host.json").read_text())


def test_padded_nonce_reveals_are_refused_and_the_host_lives(procs: Procs) -> None:
    """Item 1: two seats pad their signed reveals with 40 KB; the host refuses them (it never
    copies them into a `shuffle` too big for the relay), the two forfeit those shuffles, and
    the honest seats finish with the host's result."""
    url = standalone_relay(procs)
    # Nonces are Part B's: a trusted dealer's table (FAIRNESS.md A9).
    host, code = relay_host(procs, url, "--game", "hekata", "--players", "4", "--seed", "6",
                            "--reveal-timeout", "1", "--trusted-dealer")
    honest = start_bots(procs, ["--relay", url, code, "--allow-trusted-dealer"], 2)
    padded = [start_peer(procs, f"pad{i}", "pad-nonce", f"{url}/ws", code,
                         str(procs.tmp / f"pad{i}.json")) for i in range(2)]
    wait_all([host, *honest, *padded], timeout=240)
    assert host.returncode == 0
    assert "did not commit or reveal its nonce in time" in procs.log("host")
    assert "relay error" not in procs.log("host")
    found, expected = results(procs.tmp, ["r0", "r1"]), host_result(procs)
    padders = {f"seat {int(line.split()[1])}" for line in procs.log("host").splitlines()
               if line.startswith("seat ") and "(pad-nonce) joined" in line}
    for r in found:
        assert {k: r[k] for k in expected} == expected
        # The audit names only the padding seats (they forfeited), never the dealer.
        assert r["failures"] and all(f.split(":")[0] in padders for f in r["failures"]), r


def test_a_watcher_flooding_resyncs_gets_a_bounded_answer(procs: Procs) -> None:
    """Item 2: a watcher asks for the whole round 95 times a second for 10 s through a standalone
    relay; it is answered a few times a minute, the host is never struck off, and the seats
    finish. A match to 30, which outlasts the flood: its length is not under test."""
    url = standalone_relay(procs)
    # The byte bound below is a trusted dealer's round; a round dealt by mental poker carries
    # every shuffle (about 10 KB each), so each answer is larger, not more frequent.
    host, code = relay_host(procs, url, "--game", "zodiak", "--players", "2", "--seed", "2",
                            "--speed", "0.05", "--trusted-dealer", "--house", "target=30")
    seats = start_bots(procs, ["--relay", url, code, "--allow-trusted-dealer"], 2)
    procs.wait_for_log("host", r"move 3:")
    flood = start_peer(procs, "flood", "sync-flood", f"{url}/ws", code,
                       str(procs.tmp / "flood.json"), "10")
    wait_all([host, *seats, flood], timeout=240)
    assert host.returncode == 0
    assert "relay error" not in procs.log("host")
    got = json.loads((procs.tmp / "flood.json").read_text())
    assert got["sent"] > 500
    # Three resyncs at once and one every ten seconds: well under a megabyte, where an answer
    # to every request was about 24 MB in 30 s.
    assert got["bytes"] < 1_000_000, got
    assert_same_result(results(procs.tmp, ["r0", "r1"]), host_result(procs))


def test_a_trick_worth_10_to_the_29_travels_and_is_written(procs: Procs) -> None:
    """Item 3: two Hekata seats lay until 29 cards lie on the table, then one takes all of them
    and its card as one 30-card row; the total (> 2^64) reaches every seat and `--result`."""
    host, port = direct_host(procs, "--game", "hekata", "--players", "2", "--seed", "4",
                             "--speed", "0")
    peers = [start_peer(procs, f"big{i}", "lay-then-take", f"ws://127.0.0.1:{port}/ws", "-",
                        str(procs.tmp / f"big{i}.json")) for i in range(2)]
    wait_all([host, *peers], timeout=240)
    found = host_result(procs)
    assert max(found["scores"]) >= 10**28 > 2**64
    assert_same_result(results(procs.tmp, ["big0", "big1"]), found)
    assert "takes" in procs.log("host")


def test_a_sniffed_token_does_not_take_the_seat(procs: Procs) -> None:
    """Item 4: a stranger presents a seat's token and public identity but not its key; the host
    only ever answers with a fresh challenge, and the rightful seat plays on to the end. The
    seat's key is under test, not the dealing: a trusted dealer's table (FAIRNESS.md A9)."""
    host, port = direct_host(procs, "--game", "zodiak", "--players", "2", "--seed", "9",
                             "--speed", "0.05", "--trusted-dealer")
    seats = start_bots(procs, [f"127.0.0.1:{port}", "--allow-trusted-dealer"], 2)
    procs.wait_for_log("host", r"move 3:")
    thief = start_peer(procs, "thief", "steal", f"ws://127.0.0.1:{port}/ws", "-",
                       str(procs.tmp / "thief.json"), str(procs.tmp / "seat0.id"))
    thief.wait(timeout=60)
    answers = json.loads((procs.tmp / "thief.json").read_text())["answers"]
    assert [a["t"] for a in answers] == ["challenge"] * 3
    wait_all([host, *seats])
    assert "joined from conn" not in procs.log("host").split("move 3:")[1]
    assert_same_result(results(procs.tmp, ["r0", "r1"]), host_result(procs))


def test_a_player_who_never_moves_is_moved_for_by_the_turn_timer(procs: Procs) -> None:
    """Item 9: a seated, connected player never moves; after --turn-seconds its seat's bot moves
    for it each turn and the table goes on."""
    # A trusted dealer moves for the player (FAIRNESS.md A9); on a mental-poker table nobody
    # but the player holds its key (tests/e2e/test_mental_netplay.py).
    host, port = direct_host(procs, "--game", "zodiak", "--players", "2", "--seed", "1",
                             "--speed", "0", "--turn-seconds", "1", "--reveal-timeout", "1",
                             "--trusted-dealer")
    idle = start_peer(procs, "idle", "idle", f"ws://127.0.0.1:{port}/ws", "-",
                      str(procs.tmp / "idle.json"))
    procs.wait_for_log("host", r"seat 0 .* joined")
    seats = start_bots(procs, [f"127.0.0.1:{port}", "--allow-trusted-dealer"], 1)
    procs.wait_for_log("host", r"move 12:", timeout=120)
    log = procs.log("host")
    assert log.count("ran out of time") >= 5
    assert json.loads((procs.tmp / "idle.json").read_text())["turn_seconds"] == 1
    assert host.poll() is None and seats[0].poll() is None and idle.poll() is None


@pytest.mark.timeout(300)
def test_a_seat_flooding_refused_signed_messages_does_not_hold_up_the_table(
        procs: Procs) -> None:
    """PROTOCOL.md G3, "Budgets": at a table dealt by mental poker (`cardtui host`'s default)
    a seated peer (tests/e2e/hostile_peer.py `refused-flood`) plays, and sends as fast as the
    relay lets it copies of its last signed message and shares of its own cards whose last
    proof fails; past the seat's 20 refusals the host refuses them `rate_limited` before any
    signature or proof is checked, and the two `join --bot` seats finish the match with the
    host's result, every round verified."""
    # Its own messages are refused too once its refusals are spent, so its deals are voided
    # (it owes a share past the away time, or a move past the turn timer): its seat is then
    # the host's bot's for the round. A short match: its length is not under test.
    host, port = direct_host(procs, "--game", "zodiak", "--players", "3", "--seed", "4",
                             "--speed", "0", "--away-timeout", "2", "--turn-seconds", "1",
                             "--house", "target=5")
    start_peer(procs, "flooder", "refused-flood", f"ws://127.0.0.1:{port}/ws", "-",
               str(procs.tmp / "flooder.json"))
    procs.wait_for_log("host", r"seat 0 \(refused-flood\) joined")
    seats = start_bots(procs, [f"127.0.0.1:{port}"], 2)
    wait_all([host, *seats], timeout=200)
    assert host.returncode == 0
    assert_same_result(results(procs.tmp, ["r0", "r1"]), host_result(procs))
    flood = [line for line in procs.log("flooder").splitlines() if line.startswith("flood ")]
    assert flood, procs.log("flooder")[-2000:]
    sent = int(flood[-1].split()[1])
    assert sent >= 200, flood[-1]
    # The host answers a conn's first 20 refusals: the copies (dropped, unanswered) and the
    # bad shares (`bad_frame`) spend the seat's 20 refusals, and the rest is `rate_limited`.
    answers = ast.literal_eval(flood[-1].split("answers ", 1)[1])
    assert answers.get("bad_frame", 0) >= 1 and answers.get("rate_limited", 0) >= 5, answers
    assert "connection lost" not in procs.log("flooder")  # the relay never struck it off
    # Its own messages were refused among the rest: its seat went to the host's bot.
    assert re.search(r"voided .* the host's bots play seat 0 \(refused-flood\)",
                     procs.log("host"))
