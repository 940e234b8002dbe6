"""`cardtui host`: a relay, the dealer and (unless headless) your own seat, in one process."""

from __future__ import annotations

import argparse
import asyncio
import errno
import secrets
import ssl
import sys
from pathlib import Path

from engine.bots import BOT_KINDS
from engine.errors import IllegalMove
from engine.games import GAME_NAMES
from netplay.machine import data_dir, host_and_port, reachable_address
from netplay.messages import ProtocolError
from netplay.relay.client import (
    RelayClosed,
    RelayConnection,
    RelayRefused,
    RelayUnreachable,
    client_tls,
    relay_url,
)
from netplay.relay.lan import LanAnnouncement
from netplay.relay.launch import start_relay
from netplay.relay.wire import format_room_code
from netplay.seat.remote import RemoteSession
from netplay.table.host import Host, HostConfig
from tui.commands.netargs import (
    add_player_arguments,
    add_think_argument,
    stop_on_signals,
)
from tui.commands.play import add_house_argument
from tui.matchsetup import name_and_sign

HELP = ("Host a networked game: starts a relay in this process, deals, validates every move,"
        " and opens the app for your own seat. Friends join with `cardtui join HOST:PORT`.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's options."""
    parser.add_argument("--game", choices=GAME_NAMES, default=GAME_NAMES[0])
    parser.add_argument("--players", type=int, default=4, help="seats in all (default 4)")
    parser.add_argument("--bots", type=int, default=0, help="how many of the seats bots take")
    parser.add_argument("--bot-kind", choices=BOT_KINDS, default="greedy",
                        help="which bot takes them: greedy (default), random or expert")
    parser.add_argument("--port", type=int, default=7777, help="port to listen on (default 7777)")
    parser.add_argument("--bind", default="0.0.0.0", help="address to listen on")
    parser.add_argument("--relay", metavar="URL",
                        help="open the room on a standalone relay (ws://HOST:PORT) instead")
    parser.add_argument("--ca-file", metavar="PEM",
                        help="trust the wss:// relay's certificate from this file (default:"
                        " the system's trusted authorities)")
    parser.add_argument("--headless", action="store_true",
                        help="no app and no seat: print events; start when every seat is filled")
    parser.add_argument("--seed", type=int,
                        help="seed for the bots, their signs and the first dealer (the deck"
                        " itself comes from every seat's nonce: docs/FAIRNESS.md)")
    parser.add_argument("--speed", type=float, default=0.6, help="seconds between bot moves")
    parser.add_argument("--away-timeout", type=float, default=60.0,
                        help="seconds a player may be away before a bot plays for them (by"
                        " mental poker: before the round is dealt again with a bot in the seat,"
                        " never under 5 s, and 4 s more so that their client agrees)")
    parser.add_argument("--turn-seconds", type=float, default=0.0,
                        help="seconds a connected player may take over a move before their"
                        " seat's bot makes it (default 0: no turn timer)")
    parser.add_argument("--reveal-timeout", type=float, default=10.0,
                        help="seconds a connected seat may take to commit to or reveal its"
                        " nonce before the shuffle goes on without it (default 10)")
    dealing = parser.add_mutually_exclusive_group()
    dealing.add_argument("--mental", action="store_true",
                         help="deal by mental poker (docs/FAIRNESS.md Part A), the default:"
                         " this host sees only its bots' cards")
    dealing.add_argument("--trusted-dealer", action="store_true",
                         help="deal from this host's program instead (FAIRNESS.md Part B): it"
                         " sees every hand, and `join` refuses the table unless given"
                         " --allow-trusted-dealer")
    parser.add_argument("--rematches", type=int, default=0, metavar="N",
                        help="with --headless: offer the same seats N rematches (default 0;"
                             " with the app, r on the result offers one)")
    parser.add_argument("--save", type=Path, metavar="FILE", help="where the game is saved")
    parser.add_argument("--resume", action="store_true",
                        help="continue the game saved by a host that stopped")
    add_house_argument(parser)
    add_think_argument(parser)
    parser.add_argument("--no-announce", action="store_true",
                        help="do not list this table on the local network (mDNS)")
    add_player_arguments(parser)


def default_save_path() -> Path:
    """Where a host keeps its game between moves."""
    return data_dir() / "hosted.json"


def host_seat_file(save: Path) -> Path:
    """Where the host's own seat keeps its token and key, next to the table's save file."""
    return save.with_name(save.stem + ".seat.json")


def run(args: argparse.Namespace) -> int:
    """Run the host until the match ends or Ctrl-C."""
    try:
        return asyncio.run(host_main(args))
    except RelayRefused as exc:
        say(f"the relay refused to open the room: {exc.message} ({exc.code})")
        return 1
    except RelayUnreachable as exc:
        say(str(exc))
        return 1
    except RelayClosed as exc:
        say(f"the relay closed the connection{f' ({exc.close_code})' if exc.close_code else ''}")
        return 1
    except ProtocolError as exc:
        say(f"{args.relay} does not speak the cardtui relay protocol: {exc.message}")
        return 1
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            say(f"port {args.port} is already in use (another cardtui host?): choose another"
                " with --port")
        else:
            say(str(exc))
        return 2
    except (IllegalMove, ValueError) as exc:
        say(str(exc))
        return 2
    except KeyboardInterrupt:
        return 130


def say(line: str) -> None:
    """One line on stderr, for the person who typed the command."""
    print(f"cardtui host: {line}", file=sys.stderr, flush=True)


REMATCH_SECONDS = 600.0  # how long the host's app may take to offer a rematch after a match


async def host_main(args: argparse.Namespace) -> int:
    """Start the relay (or reach one), open the room, and serve the table."""
    save = args.save or default_save_path()
    config = HostConfig(
        game=args.game, players=args.players, bots=args.bots, seed=args.seed,
        bot_kind=args.bot_kind, think=args.think,
        bot_delay=args.speed if not args.headless else min(args.speed, 0.6),
        away_timeout=args.away_timeout, save_path=save, result_path=args.result,
        owner_secret=None if args.headless else secrets.token_hex(16),
        require_ready=not args.headless, turn_seconds=args.turn_seconds or None,
        reveal_timeout=args.reveal_timeout, mental=not args.trusted_dealer, house=args.house,
        rematch_seconds=0.0 if args.headless else REMATCH_SECONDS, rematches=args.rematches,
    )
    if args.turn_seconds < 0 or args.reveal_timeout <= 0:
        print("cardtui host: --turn-seconds must not be negative, --reveal-timeout positive",
              file=sys.stderr)
        return 2
    room = host_secret = None
    if args.resume:
        if not save.exists():
            print(f"cardtui host: no saved game at {save}", file=sys.stderr)
            return 2
        try:
            host, room, host_secret = Host.resume(config, save)
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{save} is not a game this cardtui can resume ({exc}): move it"
                             " away to host a new game") from exc
    else:
        host = Host(config)
        # A new table: the last table's seat file must not lend this one its token or nonces.
        host_seat_file(save).unlink(missing_ok=True)
    if not args.headless:
        # The app owns the terminal; the dealer's running commentary would scribble over it.
        host.on_event = lambda line: None
    relay = None
    tls = None
    if args.relay:
        url = relay_url(args.relay)
        tls = client_tls(args.ca_file) if args.ca_file or url.startswith("wss:") else None
    else:
        relay = await start_relay(args.bind, args.port, single_room=True)
        if room and host_secret:
            relay.relay.adopt_room(room, host_secret)
        url = f"ws://127.0.0.1:{relay.port}/ws"
    try:
        conn = await RelayConnection.open_room(url, room, host_secret, tls=tls)
    except BaseException:
        if relay is not None:
            await relay.close()
        raise
    join_hint = announce(args, conn.room, relay.port if relay else None,
                         host.identity.public.fingerprint())
    stop = stop_on_signals()
    reopen = (lambda lost: reopen_room(url, lost, tls)) if args.relay else None
    serving = asyncio.create_task(host.serve(conn, reopen))
    lan = None
    if relay is not None and not args.no_announce:
        lan = asyncio.create_task(announce_on_lan(args, relay.port))
    seat_app = None
    if not args.headless:
        from tui.commands.join import run_seat_app

        name, sign = name_and_sign(args.name, args.sign)
        seat = RemoteSession(game="", url=url, room=conn.room, name=name, sign=sign,
                             owner=bytes.fromhex(config.owner_secret or ""),
                             identity_path=host_seat_file(save), tls=tls, closes_table=True)
        seat_app = asyncio.create_task(run_seat_app(seat, ascii_only=args.ascii,
                                                    join_hint=join_hint))
    waiters = [serving, asyncio.create_task(stop.wait())] + ([seat_app] if seat_app else [])
    await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    for task in waiters:
        task.cancel()
    if lan is not None:
        await withdraw(lan)
    conn = host.relay or conn  # the last connection, after any reopening
    lost = conn.closed and not stop.is_set() and not host.finished
    try:  # also after the match: seats that wait for a rematch would retry for ever
        await asyncio.wait_for(host.say_closing(), CLOSING_SECONDS)
    except TimeoutError:
        pass  # a relay that does not take it must not hold the host's exit up
    await conn.close()
    if relay is not None:
        await relay.close()
    if not host.finished and host.started and save.exists():
        again = "cardtui host --resume" + (f" --save {args.save}" if args.save else "")
        say(f"the table is closed; the game is saved in {save}: {again} continues it")
    refused = serving.exception() if serving.done() and not serving.cancelled() else None
    if refused is not None:
        raise refused  # the relay refused the room back
    if seat_app is not None and seat_app.done() and not seat_app.cancelled():
        if (failed := seat_app.exception()) is not None:
            raise failed  # the app could not take its seat or stopped: say why, not status 0
        if status := seat_app.result():
            return status  # it said why (take_seat reports a refusal, the app its end)
    if lost and relay is None:
        code = conn.close_code
        say(f"lost the relay before the match ended{f' (close code {code})' if code else ''}")
        return 1
    return 0 if host.finished or not args.headless else 130


CLOSING_SECONDS = 2.0  # the most a stopping host spends telling its seats the table is closed
REOPEN_FIRST, REOPEN_MOST = 0.5, 5.0  # seconds between tries to get the room back
# Refusals worth waiting out; any other (a wrong secret: someone else holds the code) ends.
REOPEN_RETRY_CODES = frozenset({"too_many_rooms", "rate_limited", "no_such_room"})
REOPEN_NO_ROOM_TRIES = 20  # a relay that keeps answering no_such_room cannot recreate rooms


async def reopen_room(url: str, lost: RelayConnection, tls: ssl.SSLContext | None
                      ) -> RelayConnection:
    """Get `lost`'s room back on the relay at `url`, with backoff, saying so on one line."""
    code = lost.close_code
    say(f"lost the relay{f' (close code {code})' if code else ''}; reconnecting to"
        f" {url} and reopening room {format_room_code(lost.room)}…")
    delay, no_room = REOPEN_FIRST, 0
    while True:
        await asyncio.sleep(delay)
        try:
            conn = await RelayConnection.open_room(url, lost.room, lost.host_secret, tls=tls)
        except RelayRefused as exc:
            no_room = no_room + 1 if exc.code == "no_such_room" else 0
            if exc.code not in REOPEN_RETRY_CODES or no_room >= REOPEN_NO_ROOM_TRIES:
                raise
        except (RelayUnreachable, RelayClosed):
            pass
        else:
            say(f"back on the relay: room {format_room_code(conn.room)} open again")
            return conn
        delay = min(delay * 2, REOPEN_MOST)


async def announce_on_lan(args: argparse.Namespace, port: int) -> LanAnnouncement | None:
    """List the table on the LAN; bound to one address, only on that address's interface."""
    bound = args.bind not in ("0.0.0.0", "::", "")
    try:
        return await LanAnnouncement.start(
            port, reachable_address(args.bind), args.game, args.players,
            name_and_sign(args.name, args.sign)[0], interfaces=[args.bind] if bound else None)
    except (OSError, ValueError) as exc:  # no multicast here: joining by address still works
        print(f"cardtui host: not listed on the local network ({exc})", file=sys.stderr)
        return None


async def withdraw(lan: asyncio.Task[LanAnnouncement | None]) -> None:
    """End the LAN listing, however far it got."""
    if not lan.done():
        lan.cancel()
        return
    announcement = lan.result() if not lan.cancelled() and lan.exception() is None else None
    if announcement is not None:
        await announcement.close()


def announce(args: argparse.Namespace, room: str, port: int | None, fingerprint: str = "") -> str:
    """Print, and return, what others type to join (`--expect` names this host's key)."""
    code = format_room_code(room)
    expect = f" --expect {fingerprint}" if fingerprint else ""
    if port is None:
        hint = f"cardtui join --relay {args.relay} {code}{expect}"
        print(f"room open on {args.relay}: others run  {hint}", flush=True)
        return hint
    address = host_and_port(reachable_address(args.bind), port)
    hint = f"cardtui join {address}{expect}"
    print(f"hosting {args.game} for {args.players} on port {port} (room {code})", flush=True)
    print(f"others run:  {hint}", flush=True)
    return hint
