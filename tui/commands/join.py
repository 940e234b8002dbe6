"""`cardtui join`: take a seat at a table hosted elsewhere, directly or through a relay."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import hashlib
import sys
import time
from pathlib import Path

from engine.bots import BOT_KINDS
from netplay.machine import data_dir
from netplay.relay.client import relay_url
from netplay.relay.wire import parse_room_code
from netplay.seat.remote import RemoteSession, play_as_bot
from netplay.session.events import (
    Event,
    MatchEnded,
    MatchStarted,
    MoveMade,
    Notice,
    RoundEnded,
    RoundStarted,
)
from tui.commands.netargs import add_player_arguments

HELP = ("Join a networked game: `cardtui join HOST[:PORT]` straight to a host, or"
        " `cardtui join --relay ws://HOST:PORT CODE` through a relay.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's options."""
    parser.add_argument("target", metavar="HOST[:PORT] | CODE",
                        help="the host's address, or the room code when --relay is given")
    parser.add_argument("--relay", metavar="URL", help="the relay holding the room (ws://HOST:PORT)")
    parser.add_argument("--room", help="the room code, when the host's relay holds several rooms")
    parser.add_argument("--bot", choices=BOT_KINDS,
                        help="let a bot play this seat instead of opening the app")
    parser.add_argument("--think", type=float, metavar="SECONDS",
                        help="with --bot expert: its time limit per move (default 0.8)")
    parser.add_argument("--playouts", type=int, metavar="N",
                        help="with --bot expert: its playouts per move instead of a time limit")
    parser.add_argument("--watch", action="store_true", help="watch as a spectator")
    parser.add_argument("--give-up", type=float, default=120.0, metavar="SECONDS",
                        help="with --bot: stop when the table is out of reach this long"
                             " (default 120)")
    parser.add_argument("--expect", metavar="FINGERPRINT",
                        help="refuse the table unless the host's fingerprint is this one"
                             " (`cardtui host` prints it)")
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
        if (args.think is not None and not args.think > 0) or (
                args.playouts is not None and args.playouts < 1):
            print("cardtui join: --think is seconds (more than 0), --playouts at least 1",
                  file=sys.stderr)
            return 2
        return asyncio.run(bot_main(url, room, name, args, seat_file))
    return asyncio.run(run_seat_app(url, room, name, args.sign, owner=None, result=args.result,
                                    ascii_only=args.ascii, seat_file=seat_file,
                                    watch=args.watch, expect=args.expect))


async def bot_main(url: str, room: str | None, name: str, args: argparse.Namespace,
                   seat_file: Path) -> int:
    """Play the seat with a bot, printing each event as a line; give up on a vanished table."""
    session = RemoteSession(game="", url=url, room=room, name=name, sign=args.sign,
                            identity_path=seat_file, result_path=args.result,
                            expect=args.expect)
    print(f"joining {url} as {name} (a {args.bot} bot plays the seat)", flush=True)
    try:
        await session.start()
        await session.wait_seated()
    except (OSError, ValueError, TimeoutError) as exc:
        print(f"cardtui join: cannot reach {url}: {exc}", file=sys.stderr)
        return 2
    if await refused(session):
        return 2
    lost_since: list[float] = []  # when the table went out of reach, while it is

    def report(event: Event) -> None:
        # Names and notices come from other parties: no control characters reach the terminal.
        line = "".join(ch for ch in event_line(event) if ch.isprintable())
        if line:
            print(line, flush=True)
        if isinstance(event, Notice):
            if event.text.startswith(("connection lost", "the host is away")):
                lost_since[:] = lost_since or [time.monotonic()]
            elif event.text in ("reconnected", "the host is back"):
                lost_since.clear()

    async def patience() -> None:
        while True:
            await asyncio.sleep(1.0)
            if lost_since and time.monotonic() - lost_since[0] > args.give_up:
                return

    playing = asyncio.create_task(play_as_bot(session, args.bot, seed=hash(name) & 0xFFFF,
                                              report=report, seconds=args.think,
                                              playouts=args.playouts))
    waiting = asyncio.create_task(patience())
    await asyncio.wait([playing, waiting], return_when=asyncio.FIRST_COMPLETED)
    waiting.cancel()
    if not playing.done():
        playing.cancel()
        await session.close()
        print(f"cardtui join: the table has been out of reach for {args.give_up:g} s;"
              " giving up", file=sys.stderr)
        return 1
    result = playing.result()
    await session.close()
    print(f"result: {result}", flush=True)
    return 0 if result is not None else 1


def event_line(event: Event) -> str:
    """One line for the terminal of a bot's seat."""
    if isinstance(event, MatchStarted):
        seat = "watching" if event.my_seat is None else f"in seat {event.my_seat}"
        names = ", ".join(s.name for s in event.seats)
        return f"{event.game} match started {seat}: {names}; first to {event.target:,}"
    if isinstance(event, RoundStarted):
        return f"round {event.number}"
    if isinstance(event, MoveMade):
        return event.text
    if isinstance(event, RoundEnded):
        return event.summary
    if isinstance(event, MatchEnded):
        return f"match over: scores {', '.join(f'{s:,}' for s in event.scores)}"
    if isinstance(event, Notice):
        return f"({event.text})"
    return ""


async def run_seat_app(url: str, room: str | None, name: str, sign: str | None, *,
                       owner: bytes | None, result: Path | None, ascii_only: bool = False,
                       seat_file: Path | None = None, watch: bool = False,
                       join_hint: str = "", expect: str | None = None) -> int:
    """Open the app for a seat at a networked table."""
    from tui.app import CardApp

    session = RemoteSession(game="", url=url, room=room, name=name, sign=sign, owner=owner,
                            identity_path=seat_file, result_path=result, watch=watch,
                            expect=expect)
    session.extra["join_hint"] = join_hint
    await session.start()
    await session.wait_seated()
    if await refused(session):
        return 2
    app = CardApp(session, ascii_only=ascii_only)
    await app.run_async()
    await session.close()
    return 0


async def refused(session: RemoteSession) -> bool:
    """Say why, and leave, when the host is not the one `--expect` names."""
    if session.refused is None:
        return False
    print(f"cardtui join: {session.refused}", file=sys.stderr)
    await session.close()
    return True
