"""`cardtui serve` while a visitor keeps tables full of expert bots thinking (issue 14: the expert
never blocks the host's event loop).

Every table of `cardtui serve` is dealt in its one process. Expert bots that searched in that
process's threads shared its interpreter lock with the event loop that runs the relay, every
table and the SSH door: twelve expert tables made the tables API answer in 80 ms (median) and
up to 0.9 s instead of 2 ms (benchmarks/bench_serve_thinking.py). Now they search in the
server's thinking processes (`--thinkers`), and a bot that finds none free within its thinking
time plays greedy's move. Nothing asserts a duration: the honest match must finish within the
wait of any other e2e match, and the serve process's own CPU is compared with its thinker's.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from urllib.request import Request, urlopen

import pytest

from tests.e2e import test_netplay
from tests.e2e.test_door_flood import play_a_server_table, start_serve
from tests.e2e.test_netplay import Procs
from tests.e2e.test_serve import descendants

pytestmark = pytest.mark.timeout(400)

VISITOR_TABLES = 3


def cpu_seconds(pid: int) -> float:
    """The CPU seconds `pid` has used itself (user and system), not counting its children."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thinking_processes(serve_pid: int) -> list[int]:
    """The processes below `serve_pid` that multiprocessing spawned to work (the thinkers)."""
    found = []
    for pid in descendants(serve_pid):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"spawn_main" in command:
            found.append(pid)
    return found


def open_expert_table(port: int) -> str:
    """A four-seat Zodiak table with three expert bots, opened through the tables API."""
    asked = json.dumps({"game": "zodiak", "players": 4, "bots": 3, "bot_kind": "expert"})
    with urlopen(Request(f"http://127.0.0.1:{port}/tables", data=asked.encode(),
                         method="POST"), timeout=60) as answer:
        return str(json.load(answer)["room"])


def test_tables_full_of_thinking_experts_do_not_take_the_servers_process(procs: Procs) -> None:
    """A visitor opens three tables of three expert bots (0.3 s a move, moving at once) and sits
    a `join --bot` in each, so that nine experts want to think all the time. With one thinking
    process, an honest match at another server table finishes, both seats agree, the serve
    process has exactly one thinker, and that thinker, not the serve process, does the
    searching: it uses more CPU than the serve process itself meanwhile. Then the server is
    killed outright (SIGKILL, as by the kernel out of memory): it runs no cleanup, and its
    thinker, which watches the server's process, ends with it."""
    _, port = start_serve(procs, "--bot-kind", "expert", "--think", "0.3", "--thinkers", "1")
    serve = procs.procs[0]
    for table in range(VISITOR_TABLES):
        procs.start(f"visitor{table}", "join", "--relay", f"ws://127.0.0.1:{port}",
                    open_expert_table(port), "--bot", "greedy", "--allow-trusted-dealer",
                    "--rematches", "100", "--give-up", "600")
    for table in range(VISITOR_TABLES):
        procs.wait_for_log(f"visitor{table}", test_netplay.A_MOVE, timeout=60)
    deadline = time.monotonic() + 30
    while not thinking_processes(serve.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    thinkers = thinking_processes(serve.pid)
    assert len(thinkers) == 1, thinkers
    serve_before, thinker_before = cpu_seconds(serve.pid), cpu_seconds(thinkers[0])

    play_a_server_table(procs, port)

    serve_spent = cpu_seconds(serve.pid) - serve_before
    thinker_spent = cpu_seconds(thinkers[0]) - thinker_before
    assert thinking_processes(serve.pid) == thinkers  # the same one all along, no more
    assert serve_spent < thinker_spent, (serve_spent, thinker_spent)
    for table in range(VISITOR_TABLES):
        assert "Traceback" not in procs.log(f"visitor{table}")

    os.kill(serve.pid, signal.SIGKILL)
    serve.wait()
    deadline = time.monotonic() + 30
    while running(thinkers[0]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not running(thinkers[0])


def running(pid: int) -> bool:
    """Whether `pid` is a process that has not ended (a zombie has ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in "ZX"
