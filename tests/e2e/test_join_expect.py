"""`cardtui join --expect` in separate processes (FAIRNESS.md A10): the fingerprint `cardtui host`
prints lets a seat in; any other is refused at once with the reason, and nothing is played.
The host's key is under test, not the dealing: a trusted dealer's table (FAIRNESS.md A9)."""

from __future__ import annotations

import json

from tests.e2e.test_netplay import Procs, free_port, wait_all


def test_join_expect_admits_the_printed_host_and_refuses_another(procs: Procs) -> None:
    port = free_port()
    host = procs.start("host", "host", "--headless", "--players", "2", "--bots", "1",
                       "--port", str(port), "--bind", "127.0.0.1", "--seed", "4", "--speed", "0",
                       "--trusted-dealer", "--result", str(procs.tmp / "host.json"),
                       "--save", str(procs.tmp / "hosted.json"))
    fingerprint = procs.wait_for_log("host", r"others run: +cardtui join \S+ --expect (\S+)")[1]
    target = f"127.0.0.1:{port}"
    stranger = procs.start("stranger", "join", target, "--bot", "greedy", "--name", "s",
                           "--expect", "0123-4567-89ab-cdef", "--allow-trusted-dealer",
                           "--seat-file", str(procs.tmp / "stranger.id"))
    assert stranger.wait(timeout=60) == 2
    assert "not the table you were told to expect" in procs.log("stranger")
    assert fingerprint in procs.log("stranger")
    seat = procs.start("seat", "join", target, "--bot", "greedy", "--name", "p0",
                       "--expect", fingerprint, "--allow-trusted-dealer",
                       "--result", str(procs.tmp / "r0.json"),
                       "--seat-file", str(procs.tmp / "seat.id"))
    wait_all([host, seat])
    result = json.loads((procs.tmp / "r0.json").read_text())
    assert result["verified"] is True and seat.returncode == 0
    # Seated after watching (until the host's key proved to be the expected one), the seat
    # commits to its first nonce in the lobby, as every seat does: the first deal did not wait
    # the reveal timeout (10 s) for it. Its ready, which the start crossed, is not refused.
    assert "did not commit to its first nonce" not in procs.log("host")
    assert "refused" not in procs.log("seat")
