"""CPU a move costs in decoding: the typed kinds of netplay/messages against bare unpacking.

Per move, the host decodes a seat's `s` and the signed `move` inside it, and each seat decodes
the host's `s`, the `moved` it signs and the seat's `move` it carries. This times those five
decodes with `decode(bytes, FAMILY)` (every field checked, unknown fields refused) and, for
comparison, with msgpack alone (what the code did before issue 9's typed boundary), in CPU time
per move, alternating the two.

    python benchmarks/bench_messages.py [--moves 20000]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

from netplay.fair import Identity
from netplay.messages import (
    HOST_BODIES,
    HOST_PAYLOADS,
    MOVE_PAYLOADS,
    SEAT_BODIES,
    SEAT_PAYLOADS,
    HostSays,
    Moved,
    SeatSays,
    decode,
    decode_map,
)
from netplay.protocol import HOST_SENDER, ChainHead, chain_room, pack


def bodies() -> tuple[bytes, bytes]:
    """A seat's signed three-card run, and the host's `moved` that carries it, as sent."""
    host, seat = Identity.generate(), Identity.generate()
    room = chain_room("K7QXM2RD9A-3f09c2d4a1b87e65", 1)
    move = pack("move", round=1, n=5, move="7S 8S 9S",
                open=[[0, i, card, bytes(32)] for i, card in enumerate(["7S", "8S", "9S"])])
    signed = ChainHead.start(room, 0).sign(seat, move)
    moved = pack("moved", round=1, n=5, seat=0, drawn=[], by=signed.to_wire())
    told = ChainHead.start(room, HOST_SENDER).sign(host, moved)
    return pack("s", c=1, m=signed.to_wire()), pack("s", c=1, m=told.to_wire())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=20_000)
    moves = parser.parse_args().moves
    to_host, to_seat = bodies()

    def typed() -> None:
        says = decode(to_host, SEAT_BODIES)
        assert isinstance(says, SeatSays)
        decode(says.m.payload, SEAT_PAYLOADS)
        told = decode(to_seat, HOST_BODIES)
        assert isinstance(told, HostSays)
        moved = decode(told.m.payload, HOST_PAYLOADS)
        assert isinstance(moved, Moved) and moved.by is not None
        decode(moved.by.payload, MOVE_PAYLOADS)

    def bare() -> None:
        says = decode_map(to_host, 60_000)
        decode_map(says["m"][2], 60_000)
        told = decode_map(to_seat, 60_000)
        moved = decode_map(told["m"][2], 60_000)
        decode_map(moved["by"][2], 60_000)

    found: dict[str, list[float]] = {"typed": [], "bare": []}
    runs: list[tuple[str, Callable[[], None]]] = [("bare", bare), ("typed", typed)] * 3
    for name, run in runs:
        start = time.process_time()
        for _ in range(moves):
            run()
        found[name].append((time.process_time() - start) / moves * 1e6)
    for name, times in found.items():
        print(f"{name:>5}: {min(times):6.1f} µs CPU per move (best of {len(times)})")
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
