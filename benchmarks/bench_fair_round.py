"""What verifiable dealing adds to networked play: client CPU per round and round trips per shuffle.

Run: python benchmarks/bench_fair_round.py [matches]

Plays whole 4-seat Zodiak matches through a real relay on 127.0.0.1 with an in-process host
and four in-process RemoteSession bots. For each client it measures the thread CPU time
(time.thread_time) spent in the fair-play work: every transcript-chain check (signatures,
numbering, links), every RoundAudit feed and the final audit, opening sealed cards, checking
commitment proofs, computing and signing its own nonces and moves, and replaying the round from
the revealed decks. Nested calls are counted once. For context it also measures all the
client's message handling (the engine's checks included). On the host it counts, per shuffle,
the round trips it waited for (1: reveal only; 2: commit, then reveal) and the wall time from
announcing the shuffle to publishing the deck; and, before a match's first deal, how long it
waited for the seats' lobby commitments (the last seat to join sends its one after `welcome`).
"""

from __future__ import annotations

import asyncio
import functools
import platform
import statistics
import sys
import time
from collections import defaultdict
from typing import Any, ClassVar

import nacl

import netplay.seat.checks as client_module  # where the fairness checks are called from
from netplay.fair import RoundAudit, TranscriptChain
from netplay.protocol import RoundLedger
from netplay.relay.client import RelayConnection
from netplay.relay.launch import start_relay
from netplay.seat.bot_player import play_as_bot
from netplay.seat.remote import RemoteSession
from netplay.table.host import Host, HostConfig

SEATS = 4
TARGET_MS = 50.0

fair_cpu: dict[int, float] = defaultdict(float)  # id(session) -> seconds
all_cpu: dict[int, float] = defaultdict(float)
_current: list[int] = []
_depth = [0]


def timed(function: Any, bucket: dict[int, float], outermost_only: bool = True) -> Any:
    """Wrap `function` so its thread CPU time is added to the current session's bucket."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not _current or (outermost_only and _depth[0]):
            return function(*args, **kwargs)
        _depth[0] += 1
        start = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            bucket[_current[-1]] += time.thread_time() - start
            _depth[0] -= 1

    return wrapper


def in_session(function: Any) -> Any:
    """Wrap a RemoteSession method so the work inside it is attributed to that session."""

    @functools.wraps(function)
    def wrapper(self: RemoteSession, *args: Any, **kwargs: Any) -> Any:
        _current.append(id(self))
        start = time.thread_time()
        try:
            return function(self, *args, **kwargs)
        finally:
            all_cpu[id(self)] += time.thread_time() - start
            _current.pop()

    return wrapper


def instrument() -> None:
    """Time the fair-play work of every client (a benchmark may patch; tests may not)."""
    for name in ("seed_committed", "nonce_committed", "nonce_revealed", "deck_committed",
                 "dealt", "delivered", "opened", "seed_revealed", "verify"):
        setattr(RoundAudit, name, timed(getattr(RoundAudit, name), fair_cpu))
    TranscriptChain.append = timed(TranscriptChain.append, fair_cpu)  # type: ignore[method-assign]
    RoundLedger.replay = timed(RoundLedger.replay, fair_cpu)  # type: ignore[method-assign]
    for name in ("open_card", "verify_message", "nonce_commitment"):
        setattr(client_module, name, timed(getattr(client_module, name), fair_cpu))
    RemoteSession._sign = timed(RemoteSession._sign, fair_cpu)  # type: ignore[method-assign]
    RemoteSession._on_game_message = in_session(  # type: ignore[method-assign]
        RemoteSession._on_game_message)
    submit = RemoteSession.submit

    async def timed_submit(self: RemoteSession, move: Any) -> None:
        _current.append(id(self))
        try:
            await submit(self, move)
        finally:
            _current.pop()

    RemoteSession.submit = timed_submit  # type: ignore[method-assign]


class MeasuredHost(Host):
    """An honest host that notes each shuffle's round trips and how long it took."""

    shuffles: ClassVar[list[tuple[int, float, bool]]] = []  # (round trips, seconds, first deal)
    lobby_waits: ClassVar[list[float]] = []  # seconds waited for lobby commitments, per match
    _had_missing: bool = False

    async def _await_first_commits(self) -> None:
        start = time.perf_counter()
        await super()._await_first_commits()
        self.lobby_waits.append(time.perf_counter() - start)

    async def _shuffle(self, epoch: int, canonical: list[str]) -> Any:
        fresh = epoch == len(self.epochs)
        start = time.perf_counter()
        deck = await super()._shuffle(epoch, canonical)
        if fresh:
            trips = 2 if self._had_missing else 1
            first = (self.round_number, epoch) == (1, 0)
            self.shuffles.append((trips, time.perf_counter() - start, first))
        return deck

    async def _broadcast_locked(self, t: str, **fields: Any) -> None:
        if t == "shuffle":
            self._had_missing = bool(fields["missing"])
        await super()._broadcast_locked(t, **fields)


async def one_match(seed: int) -> tuple[int, list[int]]:
    """Play one match; return its rounds and the ids of its four sessions."""
    relay = await start_relay("127.0.0.1", 0)
    url = f"ws://127.0.0.1:{relay.port}/ws"
    conn = await RelayConnection.open_room(url)
    host = MeasuredHost(HostConfig(game="zodiak", players=SEATS, seed=seed),
                        on_event=lambda line: None)
    serving = asyncio.create_task(host.serve(conn))
    sessions = [RemoteSession(game="", url=url, room=conn.room, name=f"p{i}") for i in range(SEATS)]
    for session in sessions:
        await session.start()
    results = await asyncio.wait_for(
        asyncio.gather(*(play_as_bot(s, "greedy", i) for i, s in enumerate(sessions))), 300)
    assert all(r and r["verified"] for r in results), "an honest match must verify"
    for session in sessions:
        await session.close()
    serving.cancel()
    await conn.close()
    await relay.close()
    assert host.match is not None
    return host.match.rounds_played, [id(s) for s in sessions]


def machine() -> str:
    """The CPU model and the Python and PyNaCl versions."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            model = next((line.split(":", 1)[1].strip() for line in cpuinfo
                          if line.startswith("model name")), model)
    except OSError:
        pass
    return (f"{model}, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}, PyNaCl {nacl.__version__}")


async def main() -> None:
    matches = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    instrument()
    fair_per_round: list[float] = []
    all_per_round: list[float] = []
    rounds_total = 0
    for number in range(matches):
        rounds, ids = await one_match(number)
        rounds_total += rounds
        fair_per_round += [fair_cpu[i] / rounds * 1000 for i in ids]
        all_per_round += [all_cpu[i] / rounds * 1000 for i in ids]
    trips = [t for t, _, _ in MeasuredHost.shuffles]
    counts = ", ".join(f"{trips.count(k)} shuffles took {k}" for k in sorted(set(trips)))
    later = [seconds * 1000 for t, seconds, _ in MeasuredHost.shuffles if t == 1]
    print(f"machine: {machine()}")
    print(f"played: {matches} matches of 4-seat Zodiak, {rounds_total} rounds,"
          f" {len(trips)} shuffles ({len(trips) - rounds_total} of them reshuffles)")
    print(f"fair-play CPU per round, per client (median over {len(fair_per_round)} clients):"
          f" {statistics.median(fair_per_round):.2f} ms, max {max(fair_per_round):.2f} ms"
          f" (target < {TARGET_MS:.0f} ms)")
    print(f"all game-message handling per round, per client, engine included:"
          f" median {statistics.median(all_per_round):.2f} ms")
    first = sorted({t for t, _, at_start in MeasuredHost.shuffles if at_start})
    print(f"extra round trips per shuffle: {counts} (2 only when a seat has no commitment"
          f" waiting: commit, then reveal); a match's first deal took {first}")
    print(f"before a match's first deal, waiting for lobby commitments: median"
          f" {statistics.median(MeasuredHost.lobby_waits) * 1000:.1f} ms")
    print(f"a one-round-trip shuffle on loopback, announce to deck: median"
          f" {statistics.median(later):.1f} ms")

if __name__ == "__main__":
    asyncio.run(main())
