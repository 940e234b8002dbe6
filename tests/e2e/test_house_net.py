"""House rules over the network (docs/PROTOCOL.md welcome `house`): a real `cardtui host --headless`
and two `cardtui join --bot` processes on 127.0.0.1 play a match by the same house rules."""

from __future__ import annotations

import json

from tests.e2e.test_netplay import (
    Procs,
    assert_same_result,
    free_port,
    results,
    start_bots,
    wait_all,
)


def test_two_seats_finish_a_house_rules_match_with_identical_results(procs: Procs) -> None:
    """RULES 2.3 and 2.4 with max-row=3,target=1500: every seat checks moves by the table's rules,
    so bots that only play 3-card rows finish, each seat verifies the host's deals by replaying them
    under the same rules, and the match ends at 1,500 instead of 10,000. A trusted dealer's table:
tests/e2e/test_mental_netplay.py has the same match dealt by mental poker."""
    port = free_port()
    host = procs.start("host", "host", "--headless", "--game", "hekata", "--players", "2",
                       "--house", "max-row=3,target=1500", "--trusted-dealer",
                       "--port", str(port), "--bind", "127.0.0.1", "--seed", "5", "--speed", "0",
                       "--result", str(procs.tmp / "host.json"))
    procs.wait_for_log("host", r"others run")
    seats = start_bots(procs, [f"127.0.0.1:{port}", "--allow-trusted-dealer"], count=2)
    wait_all([host, *seats])
    host_result = json.loads((procs.tmp / "host.json").read_text())
    assert_same_result(results(procs.tmp, ["r0", "r1"]), host_result)
    assert 1500 <= max(host_result["scores"]) < 10_000
    for seat in ("seat0", "seat1"):
        assert "first to 1,500" in procs.log(seat)
