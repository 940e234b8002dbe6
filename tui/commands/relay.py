"""`cardtui relay`: a standalone relay for many rooms, until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import logging
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
                        help="seated connections per room, the host included (watchers and"
                        " connections waiting to join have their own caps)")
    parser.add_argument("--max-rooms-per-address", type=int, default=10,
                        help="rooms open at once from one source address")
    parser.add_argument("--max-conns-per-address", type=int, default=64,
                        help="connections open at once from one source address")
    parser.add_argument("--max-waiting", type=int, default=0, metavar="N",
                        help="connections not yet in a room (or not yet admitted to one) from"
                        " all addresses; past it the newest evicts the oldest of the address"
                        " holding most (default 0: half the connections the relay can hold)")
    parser.add_argument("--trust", action="append", default=[], metavar="ADDRESS",
                        help="a source address the per-address limits do not apply to (e.g. a"
                        " TLS proxy in front of this relay, which makes every player come from"
                        " its address); repeatable")
    parser.add_argument("--messages-per-second", type=float, default=100.0,
                        help="messages a connection may send each second (a host twenty times"
                        " as many)")
    parser.add_argument("--burst", type=int, default=200,
                        help="messages a connection may send at once above that rate")
    parser.add_argument("--host-grace", type=float, default=300.0, metavar="SECONDS",
                        help="how long a room waits for its host to come back")
    parser.add_argument("--tls-cert", metavar="PEM", help="serve wss:// with this certificate"
                        " chain (with --tls-key); or put a TLS proxy in front, see README")
    parser.add_argument("--tls-key", metavar="PEM", help="the private key of --tls-cert")


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted; the exit status."""
    if (args.max_rooms < 1 or args.max_conns_per_room < 2 or args.max_rooms_per_address < 1
            or args.max_conns_per_address < 1 or args.max_waiting < 0):
        print("cardtui relay: --max-rooms and the per-address limits must be at least 1,"
              " --max-conns-per-room at least 2", file=sys.stderr)
        return 2
    if args.messages_per_second <= 0 or args.burst < 1 or args.host_grace < 0:
        print("cardtui relay: --messages-per-second must be positive, --burst at least 1 and"
              " --host-grace not negative", file=sys.stderr)
        return 2
    if bool(args.tls_cert) != bool(args.tls_key):
        print("cardtui relay: --tls-cert and --tls-key go together", file=sys.stderr)
        return 2
    if not 0 <= args.port <= 65535:
        print(f"cardtui relay: --port {args.port} is not a TCP port (0 to 65535)", file=sys.stderr)
        return 2
    return asyncio.run(_serve(args))


async def _serve(args: argparse.Namespace) -> int:
    # Imported here so `cardtui --help` does not pay for aiohttp.
    from netplay.relay.guard import throttle_logs
    from netplay.relay.launch import start_relay
    from netplay.relay.limits import RelayLimits
    from tui.commands.netargs import server_tls, stop_on_signals

    limits = RelayLimits(max_rooms=args.max_rooms, max_conns_per_room=args.max_conns_per_room,
                         max_rooms_per_address=args.max_rooms_per_address,
                         max_conns_per_address=args.max_conns_per_address,
                         max_waiting=args.max_waiting, exempt_addresses=frozenset(args.trust),
                         messages_per_second=args.messages_per_second, burst=args.burst,
                         host_grace_seconds=args.host_grace)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s: %(message)s")
    throttle_logs(limits.log_interval_seconds)
    tls, unusable = server_tls("relay", args.tls_cert, args.tls_key)
    if unusable:
        print(unusable, file=sys.stderr)
        return 2
    try:
        relay = await start_relay(args.bind, args.port, limits, tls=tls)
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
