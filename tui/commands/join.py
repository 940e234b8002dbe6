"""`cardtui join`: take a seat at a table hosted elsewhere, directly or through a relay."""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import sys
import time
from collections.abc import Callable
from pathlib import Path

import aiohttp

from engine.bots import BOT_KINDS
from netplay.machine import data_dir
from netplay.messages import ProtocolError
from netplay.relay.client import (
    RelayClosed,
    RelayRefused,
    RelayUnreachable,
    client_tls,
    relay_url,
)
from netplay.relay.wire import parse_room_code
from netplay.seat.bot_player import play_as_bot
from netplay.seat.remote import RemoteSession
from netplay.session.events import (
    Event,
    MatchEnded,
    MatchStarted,
    MoveMade,
    Notice,
    RematchOffered,
    RoundEnded,
    RoundStarted,
)
from tui.commands.netargs import (
    add_player_arguments,
    stop_on_signals,
)
from tui.matchsetup import name_and_sign

# Refusals that can pass: a room's waiting slots free up within seconds, a rate refills.
RETRY_CODES = frozenset({"room_full", "rate_limited"})
JOIN_TRIES = 6
WELCOME_SECONDS = 15.0

HELP = ("Join a networked game: `cardtui join HOST[:PORT]` straight to a host, or"
        " `cardtui join --relay ws://HOST:PORT CODE` through a relay.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's options."""
    parser.add_argument("target", metavar="HOST[:PORT] | CODE",
                        help="the host's address, or the room code when --relay is given")
    parser.add_argument("--relay", metavar="URL", help="the relay holding the room (ws://HOST:PORT)")
    parser.add_argument("--ca-file", metavar="PEM",
                        help="trust the wss:// relay's certificate from this file (default:"
                        " the system's trusted authorities)")
    parser.add_argument("--room", help="the room code, when the host's relay holds several rooms")
    parser.add_argument("--bot", choices=BOT_KINDS,
                        help="let a bot play this seat instead of opening the app")
    parser.add_argument("--think", type=float, metavar="SECONDS",
                        help="with --bot expert: its time limit per move (default 0.8)")
    parser.add_argument("--playouts", type=int, metavar="N",
                        help="with --bot expert: its playouts per move instead of a time limit")
    parser.add_argument("--watch", action="store_true", help="watch as a spectator")
    parser.add_argument("--rematches", type=int, default=0, metavar="N",
                        help="with --bot: accept up to N rematches the host offers (default 0)")
    parser.add_argument("--give-up", type=float, default=120.0, metavar="SECONDS",
                        help="with --bot: stop when the table is out of reach this long"
                             " (default 120)")
    parser.add_argument("--expect", metavar="FINGERPRINT",
                        help="refuse the table unless the host's fingerprint is this one"
                             " (`cardtui host` prints it)")
    parser.add_argument("--allow-trusted-dealer", action="store_true",
                        help="take a seat even where the host deals every card itself and can"
                        " see every hand (`cardtui host --trusted-dealer`, `cardtui serve`);"
                        " without it such a table is refused")
    parser.add_argument("--seat-file", type=Path, metavar="FILE",
                        help="where this seat's secret is kept, to come back after a crash")
    add_player_arguments(parser)


def seat_file_for(url: str, room: str | None, name: str) -> Path:
    """The default place for a seat's secret: one file per table and name."""
    digest = hashlib.sha256(f"{url} {room} {name}".encode()).hexdigest()[:16]
    return data_dir() / "seats" / f"{digest}.json"


def run(args: argparse.Namespace) -> int:
    """Join and play (with the app, or as a bot) until the match ends."""
    session = seat_session(args, say)
    if session is None:
        return 2
    try:
        if args.bot:
            return asyncio.run(bot_main(session, args))
        return asyncio.run(run_seat_app(session, ascii_only=args.ascii))
    except KeyboardInterrupt:
        return 130


def seat_session(args: argparse.Namespace,
                 report: Callable[[str], None]) -> RemoteSession | None:
    """The session the command line describes, or None once `report` was told what is wrong."""
    room: str | None
    try:
        if args.relay:
            url, room = relay_url(args.relay), parse_room_code(args.target)
        else:
            url = relay_url(args.target)
            room = parse_room_code(args.room) if args.room else None
        tls = client_tls(args.ca_file) if args.ca_file or url.startswith("wss:") else None
    except (ValueError, OSError) as exc:
        report(str(exc))
        return None
    if args.bot and ((args.think is not None and not args.think > 0)
                     or (args.playouts is not None and args.playouts < 1)):
        report("--think is seconds (more than 0), --playouts at least 1")
        return None
    name, sign = name_and_sign(args.name, args.sign)
    seat_file = args.seat_file or seat_file_for(url, room, name)
    return RemoteSession(game="", url=url, room=room, name=name, sign=sign,
                         identity_path=seat_file, result_path=args.result, tls=tls,
                         watch=args.watch, expect=args.expect,
                         allow_trusted=args.allow_trusted_dealer)


def join_from_start_screen(args: argparse.Namespace) -> tuple[int, str | None]:
    """Join as the start screen's Join chose; the exit status, and the reason when no seat
    was taken (the start screen then opens again with it: a typo must not end the program)."""
    said: list[str] = []

    def report(line: str) -> None:
        said.append(line)
        say(line)  # the terminal between the two apps shows the tries as they happen

    session = seat_session(args, report)
    if session is None:
        return 2, said[-1]

    async def join_and_play() -> tuple[int, str | None]:
        session.after_match = True
        if status := await take_seat(session, report):
            return status, said[-1] if said else "could not take a seat"
        return await play_seated(session, args.ascii), None

    try:
        return asyncio.run(join_and_play())
    except KeyboardInterrupt:
        return 130, None


def say(line: str) -> None:
    """One line on stderr, for the person who typed the command."""
    print(f"cardtui join: {line}", file=sys.stderr, flush=True)


async def take_seat(session: RemoteSession, report: Callable[[str], None] = say) -> int:
    """Connect and wait for the host's welcome, retrying where that can help; 0 if it worked,
    else the exit status (1: no table; 2: not the table `--expect` names).

    Every failure is said in one line; the session is closed on failure.
    """
    try:
        for attempt in range(1, JOIN_TRIES + 1):
            try:
                await session.start()
                break
            except RelayRefused as exc:
                if exc.code not in RETRY_CODES or attempt == JOIN_TRIES:
                    raise
                delay = min(2 ** (attempt - 1), 8)
                report(f"{exc.message}; trying again in {delay} s (try {attempt} of {JOIN_TRIES})")
                await asyncio.sleep(delay)
        await session.wait_seated(WELCOME_SECONDS)
        if session.refused is None:
            return 0
        report(session.refused)
        await session.close()
        return 2
    except RelayRefused as exc:
        report(f"the relay refused: {exc.message} ({exc.code})")
    except RelayUnreachable as exc:
        report(str(exc))
    except RelayClosed as exc:
        report(f"the relay closed the connection{f' ({exc.close_code})' if exc.close_code else ''}")
    except ProtocolError as exc:
        report(f"{session.url} does not speak the cardtui relay protocol: {exc.message}")
    except TimeoutError:
        report(f"the room is open but its host did not answer within {WELCOME_SECONDS:g} s")
    except (ConnectionError, OSError, aiohttp.ClientError) as exc:
        report(f"cannot reach {session.url}: {exc}")
    await session.close()
    return 1


async def bot_main(session: RemoteSession, args: argparse.Namespace) -> int:
    """Play the seat with a bot, printing each event as a line; give up on a vanished table."""
    print(f"joining {session.url} as {session.name} (a {args.bot} bot plays the seat)",
          flush=True)
    if status := await take_seat(session):
        return status
    lost_since: list[float] = []  # when the table went out of reach, while it is

    def report(event: Event) -> None:
        # Names and notices come from other parties: no control characters reach the terminal.
        line = "".join(ch for ch in event_line(event) if ch.isprintable())
        if line:
            print(line, flush=True)
        if isinstance(event, Notice) and event.state:  # not a chat line that reads alike
            if event.out_of_reach:
                lost_since[:] = lost_since or [time.monotonic()]
            else:
                lost_since.clear()

    async def patience() -> None:
        while True:
            await asyncio.sleep(1.0)
            if lost_since and time.monotonic() - lost_since[0] > args.give_up:
                return

    playing = asyncio.create_task(play_as_bot(session, args.bot,
                                              seed=hash(session.name) & 0xFFFF, report=report,
                                              seconds=args.think, playouts=args.playouts,
                                              rematches=args.rematches))
    waiting = asyncio.create_task(patience())
    stopping = asyncio.create_task(stop_on_signals().wait())
    await asyncio.wait([playing, waiting, stopping], return_when=asyncio.FIRST_COMPLETED)
    waiting.cancel()
    if stopping.done() and not playing.done():
        playing.cancel()
        await session.close()  # in good order: a deal by mental poker gets this seat's key
        say("stopped; this seat left the table")
        return 130
    stopping.cancel()
    if not playing.done():
        playing.cancel()
        await session.close()
        say(f"the table has been out of reach for {args.give_up:g} s; giving up")
        return 1
    result = playing.result()
    await session.close()
    if result is None:
        say(session.gone or "the connection ended before the match did")
        return 1
    print(f"result: {result}", flush=True)
    return 0


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
    if isinstance(event, RematchOffered):
        return f"{rematch_offerer(event)} offers a rematch with the same seats"
    return ""


def rematch_offerer(event: RematchOffered) -> str:
    """Who offered a rematch, as a sentence's subject."""
    return event.by if event.by is not None else "the host"


async def run_seat_app(session: RemoteSession, *, ascii_only: bool = False,
                       join_hint: str = "") -> int:
    """Open the app for a seat at a networked table."""
    session.extra["join_hint"] = join_hint
    session.after_match = True  # the table may offer a rematch; leaving closes the session
    if status := await take_seat(session):
        return status
    return await play_seated(session, ascii_only)


async def play_seated(session: RemoteSession, ascii_only: bool) -> int:
    """Play a seat already taken in the app; the exit status."""
    from tui.app import CardApp

    try:
        await CardApp(session, ascii_only=ascii_only).run_async()
    finally:
        await session.close()
    if session.gone:
        say(session.gone)
        return 0 if session.result is not None else 1  # a match played to its end succeeded
    return 0

