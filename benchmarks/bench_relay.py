"""Relay throughput against a bare aiohttp echo server, and memory per idle room.

Run: python benchmarks/bench_relay.py [--rooms 200] [--seconds 3]

Each server runs in its own process; the clients run in this one. A room is four
WebSocket clients: a host and three seats. One relay round: every seat sends a frame to
the host, the host reads all three, then broadcasts one frame that every seat reads:
4 frames in, 6 frames written by the relay. The echo server gets the same connections,
the same frame size and the same lockstep: every client sends one frame and reads its
echo, 4 in and 4 out. Both are compared in frames written per second (deliveries).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import sys
import time
from collections.abc import Awaitable, Callable

import aiohttp
from aiohttp import web

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from netplay.messages import encode_map as encode
from netplay.relay.launch import start_relay
from netplay.relay.limits import RelayLimits

BODY = b"\x5a" * 96  # about the size of a sealed move
SEAT_SEND = encode({"t": "send", "to": 0, "body": BODY})
HOST_BROADCAST = encode({"t": "send", "to": None, "body": BODY})
SEATS_PER_ROOM = 3
# Frames the server reads per frame it writes: a relay round reads 4 and writes 6.
READ_PER_WRITTEN = {"relay": (SEATS_PER_ROOM + 1) / (2 * SEATS_PER_ROOM), "echo": 1.0}


# -- servers (run in a child process) --------------------------------------------------------


async def echo_handler(request: web.Request) -> web.WebSocketResponse:
    ws = web.WebSocketResponse(compress=False)
    await ws.prepare(request)
    async for msg in ws:
        if msg.type is aiohttp.WSMsgType.BINARY:
            await ws.send_bytes(msg.data)
    return ws


async def serve(kind: str) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    if kind == "relay":
        # The benchmark measures routing cost, so the rate limits are lifted; but every limit
        # is still checked (the clients all come from 127.0.0.1, which is not exempt).
        relay = await start_relay(limits=RelayLimits(
            messages_per_second=1e9, burst=10**9, max_conns_per_address=10**6,
            connections_per_second_per_address=1e9, connection_burst_per_address=10**9,
            reads_per_second_per_address=1e12, read_burst_per_address=10**12,
            max_rooms_per_address=10**6))
        port, close = relay.port, relay.close
    else:
        app = web.Application()
        app.router.add_get("/ws", echo_handler)
        runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=2.0)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port, close = runner.addresses[0][1], runner.cleanup
    print(f"PORT {port}", flush=True)
    await stop.wait()
    loop.remove_signal_handler(signal.SIGTERM)
    stats = vars(relay.stats) if kind == "relay" else {}
    await close()
    print(json.dumps(stats), flush=True)


# -- clients (this process) ------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process has used so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


class Counter:
    """Frames the clients have read, which is what the server wrote to them."""

    def __init__(self) -> None:
        self.frames = 0


Room = list[aiohttp.ClientWebSocketResponse]  # host first, then the seats


async def relay_rooms(session: aiohttp.ClientSession, url: str, rooms: int) -> list[Room]:
    async def one_room() -> Room:
        host = await session.ws_connect(url, compress=0)
        await host.send_bytes(encode({"t": "open", "v": 1}))
        opened = (await host.receive()).data
        code = __import__("msgpack").unpackb(opened)["room"]
        seats = []
        for _ in range(SEATS_PER_ROOM):
            seat = await session.ws_connect(url, compress=0)
            await seat.send_bytes(encode({"t": "enter", "v": 1, "room": code}))
            entered = __import__("msgpack").unpackb((await seat.receive()).data)
            await host.receive()  # arrived
            await host.send_bytes(encode({"t": "admit", "conn": entered["conn"]}))
            seats.append(seat)
        return [host, *seats]

    return await asyncio.gather(*(one_room() for _ in range(rooms)))


async def echo_rooms(session: aiohttp.ClientSession, url: str, rooms: int) -> list[Room]:
    async def one_room() -> Room:
        return [await session.ws_connect(url, compress=0) for _ in range(SEATS_PER_ROOM + 1)]

    return await asyncio.gather(*(one_room() for _ in range(rooms)))


async def relay_round(room: Room, counter: Counter) -> None:
    host, *seats = room
    for seat in seats:
        await seat.send_bytes(SEAT_SEND)
    for _ in seats:
        await host.receive()
    await host.send_bytes(HOST_BROADCAST)
    for seat in seats:
        await seat.receive()
    counter.frames += 2 * len(seats)


async def echo_round(room: Room, counter: Counter) -> None:
    for ws in room:
        await ws.send_bytes(SEAT_SEND)
    for ws in room:
        await ws.receive()
    counter.frames += len(room)


async def drive(
    rooms: list[Room],
    one_round: Callable[[Room, Counter], Awaitable[None]],
    seconds: float,
    server_pid: int,
) -> tuple[float, float, float]:
    """Lockstep rounds in every room; frames/s and server and client CPU share over the window."""
    counter = Counter()
    stop = asyncio.Event()

    async def loop(room: Room) -> None:
        while not stop.is_set():
            await one_round(room, counter)

    tasks = [asyncio.create_task(loop(room)) for room in rooms]
    await asyncio.sleep(min(1.0, seconds / 3))  # warm-up
    start_frames, start = counter.frames, time.perf_counter()
    server_cpu, client_cpu = cpu_seconds(server_pid), time.process_time()
    await asyncio.sleep(seconds)
    frames, elapsed = counter.frames - start_frames, time.perf_counter() - start
    server_cpu = cpu_seconds(server_pid) - server_cpu
    client_cpu = time.process_time() - client_cpu
    stop.set()
    await asyncio.gather(*tasks)
    return frames / elapsed, server_cpu / elapsed, client_cpu / elapsed


async def measure(kind: str, rooms: int, seconds: float) -> dict[str, float]:
    server = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--serve", kind, stdout=asyncio.subprocess.PIPE
    )
    assert server.stdout is not None
    try:
        port = int((await server.stdout.readline()).split()[1])
        url = f"ws://127.0.0.1:{port}/ws"
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as session:
            await asyncio.sleep(0.2)
            rss_before = rss_kib(server.pid)
            connect = relay_rooms if kind == "relay" else echo_rooms
            room_list = await connect(session, url, rooms)
            await asyncio.sleep(0.3)
            rss_idle = rss_kib(server.pid)
            one_round = relay_round if kind == "relay" else echo_round
            rate, server_cpu, client_cpu = await drive(room_list, one_round, seconds, server.pid)
            for room in room_list:
                for ws in room:
                    await ws.close()
        server.send_signal(signal.SIGTERM)
        stats = json.loads(await server.stdout.readline() or b"{}")
        return {
            "frames_per_second": rate,
            "server_cpu": server_cpu,
            "client_cpu": client_cpu,
            "idle_room_kib": (rss_idle - rss_before) / rooms,
            "server_frames_out": stats.get("frames_out", 0),
            "server_rejected": stats.get("rejected", 0),
        }
    finally:
        try:
            await asyncio.wait_for(server.wait(), 10)
        except TimeoutError:
            server.kill()
            await server.wait()


def machine() -> str:
    model = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            model = next(line.split(":", 1)[1].strip() for line in cpuinfo
                         if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}, aiohttp {aiohttp.__version__}")


async def main(rooms: int, seconds: float, repeat: int) -> None:
    print(f"machine: {machine()}")
    print(f"load: {rooms} rooms x {SEATS_PER_ROOM + 1} clients, {len(SEAT_SEND)}-byte frames, "
          f"{seconds:g} s measured per phase, relay and echo alternated {repeat}x, best shown; "
          "clients in this process, server in a child")
    runs: dict[str, list[dict[str, float]]] = {"relay": [], "echo": []}
    for _ in range(repeat):
        for kind, results in runs.items():
            results.append(await measure(kind, rooms, seconds))
    best = {kind: max(results, key=lambda r: r["frames_per_second"])
            for kind, results in runs.items()}
    # Server CPU per written frame is less sensitive than frames/s to other load on the machine.
    cost = {kind: min(r["server_cpu"] / r["frames_per_second"] * 1e6 for r in results)
            for kind, results in runs.items()}
    for kind, verb in (("relay", "forwarded"), ("echo", "echoed")):
        figures = best[kind]
        print(f"{kind + ':':6} {figures['frames_per_second']:10,.0f} frames {verb}/s   "
              f"server CPU {figures['server_cpu']:.0%}, client CPU {figures['client_cpu']:.0%}, "
              f"server CPU per frame written {cost[kind]:.1f} us, "
              f"per frame read or written {cost[kind] / (1 + READ_PER_WRITTEN[kind]):.1f} us")
    print(f"ratio relay/echo: {best['relay']['frames_per_second'] / best['echo']['frames_per_second']:.2f}"
          f" in frames/s, {cost['echo'] / cost['relay']:.2f} in server CPU per frame written")
    print(f"relay refused {sum(r['server_rejected'] for r in runs['relay'])} frames "
          "(the benchmark sends none that should be)")
    idle = {kind: min(r["idle_room_kib"] for r in results) for kind, results in runs.items()}
    print(f"memory per idle room (host + {SEATS_PER_ROOM} seats connected, server RSS growth): "
          f"relay {idle['relay']:.1f} KiB, bare echo server {idle['echo']:.1f} KiB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--serve", choices=("relay", "echo"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.serve))
    else:
        asyncio.run(main(args.rooms, args.seconds, args.repeat))
