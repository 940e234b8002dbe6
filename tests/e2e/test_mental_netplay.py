"""Mental-poker dealing end to end (FAIRNESS.md A8): `cardtui host --headless --mental` and
`join --bot` processes on 127.0.0.1, every message through the host's relay room."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_netplay import (
    Procs,
    assert_same_result,
    free_port,
    results,
    start_bots,
    wait_all,
)


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[Procs]:
    started = Procs(tmp_path)
    yield started
    started.stop_all()


@pytest.mark.parametrize(("game", "players", "bots"), [
    ("zodiak", 2, 0), ("hekata", 2, 0), ("zodiak", 4, 1), ("hekata", 4, 2)])
def test_people_and_bots_finish_a_match_dealt_by_mental_poker(
        processes: Procs, game: str, players: int, bots: int) -> None:
    """Every seat and the host end the match with the same result; nobody's check failed."""
    procs, port = processes, free_port()
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
    assert "dealing by mental poker" in procs.log("host")


def test_house_rules_apply_to_a_table_dealt_by_mental_poker(processes: Procs) -> None:
    """RULES 2.3 under max-row=3, target=1500 on a mental-poker table: every seat's and the
    host's view check moves by the table's rules and the match ends at 1,500."""
    procs, port = processes, free_port()
    host = procs.start("host", "host", "--headless", "--mental", "--game", "hekata",
                       "--players", "2", "--house", "max-row=3,target=1500", "--port", str(port),
                       "--bind", "127.0.0.1", "--seed", "5", "--speed", "0",
                       "--result", str(procs.tmp / "host.json"),
                       "--save", str(procs.tmp / "hosted.json"))
    procs.wait_for_log("host", r"others run")
    seats = start_bots(procs, [f"127.0.0.1:{port}"], count=2)
    wait_all([host, *seats], timeout=600)
    found = json.loads((procs.tmp / "host.json").read_text())
    assert_same_result(results(procs.tmp, ["r0", "r1"]), found)
    assert 1500 <= max(found["scores"]) < 10_000
    assert "dealing by mental poker" in procs.log("host")
