"""`cardtui relay`: a standalone relay for many rooms, until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import sys

HELP = (
    "Run a standalone relay: hosts that cannot accept connections open their rooms here and "
    "players join with the room code. It routes encrypted frames and never sees a hand."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's options."""
    parser.add_argument("--port", type=int, default=7777, help="TCP port to listen on (0: any)")
    parser.add_argument("--bind", default="127.0.0.1",
                        help="address to listen on; 0.0.0.0 to accept players from other machines")
    parser.add_argument("--max-rooms", type=int, default=1000, help="rooms open at once")
    parser.add_argument("--max-conns-per-room", type=int, default=16,
                        help="connections per room, the host included")


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted; the exit status."""
    if args.max_rooms < 1 or args.max_conns_per_room < 2:
        print("cardtui relay: --max-rooms must be at least 1 and --max-conns-per-room at least 2",
              file=sys.stderr)
        return 2
    if not 0 <= args.port <= 65535:
        print(f"cardtui relay: --port {args.port} is not a TCP port (0 to 65535)", file=sys.stderr)
        return 2
    return asyncio.run(_serve(args))


async def _serve(args: argparse.Namespace) -> int:
    # Imported here so `cardtui --help` does not pay for aiohttp.
    from netplay.relay.server import RelayLimits, start_relay
    from tui.commands.netargs import stop_on_signals

    limits = RelayLimits(max_rooms=args.max_rooms, max_conns_per_room=args.max_conns_per_room)
    try:
        relay = await start_relay(args.bind, args.port, limits)
    except OSError as exc:
        print(f"cardtui relay: cannot listen on {args.bind}:{args.port}: {exc.strerror or exc}",
              file=sys.stderr)
        return 1
    stop = stop_on_signals()
    base = relay.url.removesuffix("/ws")
    print(f"cardtui relay listening on {relay.url}")
    if args.bind in ("0.0.0.0", "::"):
        from netplay.machine import host_and_port, reachable_address

        base = f"ws://{host_and_port(reachable_address(args.bind), relay.port)}"
        print("(listening on every interface: below is this machine's address on its network)")
    print(f"Hosts open a room here with:  cardtui host --relay {base}")
    print("Stop with Ctrl-C.", flush=True)
    try:
        await stop.wait()
    finally:
        stats = relay.stats
        await relay.close()
        print(f"cardtui relay stopped: {stats.rooms_opened} rooms opened, "
              f"{stats.frames_in} frames relayed, {stats.rejected} refused.", flush=True)
    return 0
