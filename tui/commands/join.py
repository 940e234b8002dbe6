"""`cardtui join`: take a seat at a table hosted elsewhere, directly or through a relay."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import hashlib
import sys
from pathlib import Path

from netplay.machine import data_dir
from netplay.relay.client import relay_url
from netplay.relay.wire import parse_room_code
from netplay.seat.remote import RemoteSession, play_as_bot
from tui.commands.netargs import add_player_arguments

HELP = ("Join a networked game: `cardtui join HOST[:PORT]` straight to a host, or"
        " `cardtui join --relay ws://HOST:PORT CODE` through a relay.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's options."""
    parser.add_argument("target", metavar="HOST[:PORT] | CODE",
                        help="the host's address, or the room code when --relay is given")
    parser.add_argument("--relay", metavar="URL", help="the relay holding the room (ws://HOST:PORT)")
    parser.add_argument("--room", help="the room code, when the host's relay holds several rooms")
    parser.add_argument("--bot", choices=("greedy", "random"),
                        help="let a bot play this seat instead of opening the app")
    parser.add_argument("--watch", action="store_true", help="watch as a spectator")
    parser.add_argument("--seat-file", type=Path, metavar="FILE",
                        help="where this seat's secret is kept, to come back after a crash")
    add_player_arguments(parser)


def seat_file_for(url: str, room: str | None, name: str) -> Path:
    """The default place for a seat's secret: one file per table and name."""
    digest = hashlib.sha256(f"{url} {room} {name}".encode()).hexdigest()[:16]
    return data_dir() / "seats" / f"{digest}.json"


def run(args: argparse.Namespace) -> int:
    """Join and play (with the app, or as a bot) until the match ends."""
    try:
        if args.relay:
            url, room = relay_url(args.relay), parse_room_code(args.target)
        else:
            url = relay_url(args.target)
            room = parse_room_code(args.room) if args.room else None
    except ValueError as exc:
        print(f"cardtui join: {exc}", file=sys.stderr)
        return 2
    name = args.name or getpass.getuser()
    seat_file = args.seat_file or seat_file_for(url, room, name)
    if args.bot:
        return asyncio.run(bot_main(url, room, name, args, seat_file))
    return asyncio.run(run_seat_app(url, room, name, args.sign, owner=None, result=args.result,
                                    ascii_only=args.ascii, seat_file=seat_file,
                                    watch=args.watch))


async def bot_main(url: str, room: str | None, name: str, args: argparse.Namespace,
                   seat_file: Path) -> int:
    """Play the seat with a bot, printing each event as a line."""
    session = RemoteSession(game="", url=url, room=room, name=name, sign=args.sign,
                            identity_path=seat_file, result_path=args.result)
    try:
        await session.start()
    except (OSError, ValueError) as exc:
        print(f"cardtui join: cannot reach {url}: {exc}", file=sys.stderr)
        return 2
    result = await play_as_bot(session, args.bot, seed=hash(name) & 0xFFFF)
    await session.close()
    print(f"result: {result}", flush=True)
    return 0 if result is not None else 1


async def run_seat_app(url: str, room: str | None, name: str, sign: str | None, *,
                       owner: bytes | None, result: Path | None, ascii_only: bool = False,
                       seat_file: Path | None = None, watch: bool = False,
                       join_hint: str = "") -> int:
    """Open the app for a seat at a networked table."""
    from tui.app import CardApp

    session = RemoteSession(game="", url=url, room=room, name=name, sign=sign, owner=owner,
                            identity_path=seat_file, result_path=result, watch=watch)
    session.extra["join_hint"] = join_hint
    await session.start()
    await session.wait_seated()
    app = CardApp(session, ascii_only=ascii_only)
    await app.run_async()
    await session.close()
    return 0
