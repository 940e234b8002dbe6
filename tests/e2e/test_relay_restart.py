"""A standalone relay that dies mid-match and is started again: the host reopens its room,
the seats come back, and the match finishes with the same result everywhere.

Every party is its own process; the relay is killed (SIGKILL: it forgets every room) and a
new one listens on the same port. Nothing asserts a duration. The host is a trusted dealer
(the relay is under test, not the dealing; tests/e2e/test_relay_hostile.py).
"""

from __future__ import annotations

import re

from tests.e2e.test_netplay import Procs, start_bots
from tests.e2e.test_relay_hostile import (
    TRUSTED_SEATS,
    finish_and_compare,
    start_host,
    start_relay,
)


def test_host_reopens_its_room_on_a_restarted_relay(procs: Procs) -> None:
    url = start_relay(procs)
    port = url.rsplit(":", 1)[1]
    host, code = start_host(procs, url)
    seats = start_bots(procs, ["--relay", url, code, *TRUSTED_SEATS])
    procs.wait_for_log("host", r"move 3:", timeout=90)
    relay = procs.procs[0]
    relay.kill()
    relay.wait(timeout=30)
    procs.wait_for_log("host", r"lost the relay.*reconnecting", timeout=60)
    procs.start("relay2", "relay", "--port", port, "--bind", "127.0.0.1")
    procs.wait_for_log("host", rf"back on the relay: room {code} open again", timeout=90)
    finish_and_compare(procs, host, seats)
    log = procs.log("host")
    assert "Traceback" not in log, log[-3000:]
    assert log.count("lost the relay") == 1, log[-3000:]  # one line, not one per try
    after = log[log.index("open again"):]
    # Every seat came back into the reopened room (its players, not bots, finished the match).
    assert set(re.findall(r"seat \d \((p\d)\) joined", after)) == {f"p{i}" for i in range(4)}, (
        after[:3000])
    for i in range(4):
        assert "Traceback" not in procs.log(f"seat{i}")
