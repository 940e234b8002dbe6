"""`cardtui serve`: a relay, server-dealt tables and an SSH front door, in one process."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

# Every SSH session's launcher imports this module (see `launch`), so what only the server
# needs (asyncio, platformdirs, aiohttp, ...) is imported inside the functions that use it.
if TYPE_CHECKING:
    import ssl

    from aiohttp import web

HELP = (
    "Run a card server: anyone can `ssh -p PORT HOST` and sit at a table. One process holds a "
    "relay for many rooms, the dealer of every table (it plays no seat; bots fill empty seats) "
    "and an SSH door that gives each session its own cardtui in its own terminal."
)
WEB_NAME = "guest"
PASSWORD_VARIABLE = "CARDTUI_SSH_PASSWORD"
WARM_START_SECONDS = 30.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's options."""
    from engine.bots import BOT_KINDS
    from tui.commands.netargs import add_think_argument

    parser.add_argument("--ssh-port", type=int, default=2222, help="SSH port (default 2222)")
    parser.add_argument("--port", type=int, default=7777,
                        help="relay and tables HTTP port (default 7777); it listens on loopback"
                             " only, for this server's own sessions, unless --api-bind opens it")
    parser.add_argument("--bind", default="0.0.0.0",
                        help="address the SSH door and the browser door listen on (default all)")
    parser.add_argument("--api-bind", metavar="ADDRESS",
                        help="also open the relay and tables API on ADDRESS:PORT to remote"
                             " `cardtui host`/`join` players, with per-address limits")
    parser.add_argument("--host-key", type=Path, metavar="PATH",
                        help="the SSH host key, made on first start (default: in the user data"
                             " directory)")
    parser.add_argument("--web-port", type=int, metavar="PORT",
                        help="also serve the lobby to web browsers on this port (plain HTTP"
                             " unless --tls-cert: use TLS before using --password with it)")
    parser.add_argument("--tls-cert", metavar="PEM",
                        help="serve the browser door over HTTPS and the --api-bind listener"
                             " over wss:// with this certificate (chain)")
    parser.add_argument("--tls-key", metavar="PEM", help="the private key of --tls-cert")
    parser.add_argument("--web-origin", action="append", default=[], metavar="URL",
                        help="an origin the browser door's page is served from, such as"
                             " https://cards.example.org (repeatable; default: this machine's"
                             " address, 127.0.0.1 and localhost on the web port)")
    parser.add_argument("--authorized-keys", type=Path, metavar="FILE",
                        help="only let in SSH clients holding a key listed in FILE")
    parser.add_argument("--password", metavar="PW", default=os.environ.get(PASSWORD_VARIABLE),
                        help="only let in SSH clients that give this password (or set"
                             f" {PASSWORD_VARIABLE}, which other users cannot read in ps)")
    parser.add_argument("--max-tables", type=int, default=50, help="tables open at once")
    parser.add_argument("--max-sessions", type=int, default=64, help="SSH sessions at once")
    parser.add_argument("--sessions-per-address", type=int, default=4,
                        help="SSH sessions at once from one client address")
    parser.add_argument("--idle-minutes", type=float, default=30.0,
                        help="close an SSH or browser session after this long without input")
    parser.add_argument("--empty-table-seconds", type=float, default=120.0,
                        help="close a table nobody sits at or watches for this long")
    parser.add_argument("--away-seconds", type=float, default=30.0,
                        help="seconds a player may be away before a bot plays for them")
    parser.add_argument("--turn-seconds", type=float, default=60.0,
                        help="seconds a connected player may take over a move before their"
                             " seat's bot makes it (0: no turn timer)")
    parser.add_argument("--cold", action="store_true",
                        help="start every session's program from scratch instead of forking it"
                             " from a warm process (slower, uses more memory)")
    parser.add_argument("--bot-speed", type=float, default=0.6,
                        help="seconds between bot moves")
    parser.add_argument("--bot-kind", choices=BOT_KINDS, default="greedy",
                        help="the bots of a table whose creator chose none: greedy (default),"
                             " random or expert")
    add_think_argument(parser)
    parser.add_argument("--thinkers", type=thinker_count, metavar="N",
                        help="processes the tables' expert bots search in, N searches at a time"
                             " (default: one fewer than this machine's cores, at least 1; 0:"
                             " threads of this process, whose event loop then competes with"
                             " them); a bot that finds none free within its thinking time"
                             " plays greedy's move")


def thinker_count(text: str) -> int:
    """--thinkers' value, or argparse's error with the reason."""
    if not text.isdigit() or int(text) > 64:
        raise argparse.ArgumentTypeError(f"{text[:20]!r} is not a number of processes from 0"
                                         " to 64")
    return int(text)


def default_host_key() -> Path:
    """Where the SSH host key is kept between runs."""
    from netplay.machine import data_dir

    return data_dir() / "ssh_host_ed25519_key"


def check(args: argparse.Namespace) -> str | None:
    """Return what is wrong with the options, or None."""
    for name in ("ssh_port", "port", "web_port"):
        value = getattr(args, name)
        if value is not None and not 0 <= value <= 65535:
            return f"--{name.replace('_', '-')} {value} is not a TCP port (0 to 65535)"
    for name in ("max_tables", "max_sessions", "sessions_per_address"):
        if getattr(args, name) < 1:
            return f"--{name.replace('_', '-')} must be at least 1"
    if (args.empty_table_seconds <= 0 or args.away_seconds <= 0 or args.bot_speed < 0
            or args.turn_seconds < 0 or args.idle_minutes <= 0):
        return ("--empty-table-seconds, --away-seconds and --idle-minutes must be positive,"
                " --bot-speed and --turn-seconds not negative")
    if args.authorized_keys is not None and not args.authorized_keys.is_file():
        return f"--authorized-keys {args.authorized_keys}: no such file"
    if args.password == "":
        return "--password must not be empty"
    if bool(args.tls_cert) != bool(args.tls_key):
        return "--tls-cert and --tls-key go together"
    if args.tls_cert and args.web_port is None and not args.api_bind:
        return ("--tls-cert is for the listeners strangers reach over HTTP: give --web-port or"
                " --api-bind with it")
    if args.web_port is not None and args.authorized_keys is not None:
        return ("--web-port cannot be used with --authorized-keys: a browser cannot prove an SSH"
                " key, so the browser door could not apply the same rule")
    return None


def run(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C or SIGTERM; the exit status."""
    # Sessions' programs inherit this environment; the password has no business there.
    os.environ.pop(PASSWORD_VARIABLE, None)
    problem = check(args)
    if problem:
        print(f"cardtui serve: {problem}", file=sys.stderr)
        return 2
    import asyncio
    import logging

    logging.basicConfig(format="%(asctime)s %(name)s: %(message)s", level=logging.WARNING)
    logging.getLogger("cardtui.tables").setLevel(logging.INFO)  # tables opening and closing
    logging.getLogger("cardtui.door").setLevel(logging.INFO)  # every login, failed or not
    raise_descriptor_limit()
    from tui.commands.netargs import server_tls

    tls, unusable = server_tls("serve", args.tls_cert, args.tls_key)
    if unusable:
        print(unusable, file=sys.stderr)
        return 2
    try:
        return asyncio.run(serve(args, tls))
    except (OSError, ValueError) as exc:
        print(f"cardtui serve: {exc}", file=sys.stderr)
        return 1


def raise_descriptor_limit() -> None:
    """Raise this process's soft limit on open files to the hard limit: each session needs some."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):
            pass


def session_environment() -> dict[str, str]:
    """The environment every session program starts from: where programs and our code are."""
    keep = ("PATH", "PYTHONPATH")  # nothing else of the server's: no secrets, no settings
    return {name: os.environ[name] for name in keep if name in os.environ}


def loopback_for(bind: str) -> str:
    """The address this process reaches its own listeners on."""
    if bind in ("0.0.0.0", "", "localhost"):
        return "127.0.0.1"
    if bind == "::":
        return "[::1]"
    return f"[{bind}]" if ":" in bind else bind


def entry_command(server: str, name: str, visitor: str) -> list[str]:
    """The argv of the program each session runs, for a visitor from the address `visitor`."""
    # `--name=` keeps a user name that starts with a dash from reading as an option.
    return [sys.executable, "-m", "tui.ssh_entry", "--server", server, f"--name={name}",
            f"--visitor={visitor}"]


def launch_command(warm: str, server: str, name: str, visitor: str) -> list[str]:
    """The argv of a session's launcher, which asks the warm process at warm for an app."""
    # -I -S: no site-packages and nothing from the environment, so it starts in milliseconds.
    root = str(Path(__file__).resolve().parents[2])
    code = (f"import sys; sys.path.insert(0, {root!r}); from tui.commands.serve import launch;"
            " sys.exit(launch(sys.argv[1:]))")
    return [sys.executable, "-I", "-S", "-c", code, warm, server, name, visitor]


# What a session's launcher passes on to the app the warm process forks for it: the terminal's
# and, for the browser door, textual-serve's (its driver, colours and initial size).
LAUNCH_FORWARDS = ("TERM", "LANG", "LC_ALL", "COLORTERM", "TEXTUAL_DRIVER", "TEXTUAL_FPS",
                   "TEXTUAL_COLOR_SYSTEM", "COLUMNS", "ROWS", "TERM_PROGRAM",
                   "TERM_PROGRAM_VERSION")


def launch(argv: list[str]) -> int:
    """Hand this terminal to the warm process, relay resizes, and return the app's exit status."""
    warm, server, name, visitor = argv
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(warm)
        request = {"name": name, "visitor": visitor,
                   "env": {k: v for k, v in os.environ.items() if k in LAUNCH_FORWARDS}}
        socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
    except OSError:
        conn.close()
        command = entry_command(server, name, visitor)  # no warm process: start from cold
        os.execv(command[0], command)

    def resized(signum: int, frame: object) -> None:
        try:
            conn.send(b"w")
        except OSError:
            pass

    # SIGWINCH goes to this terminal's foreground group, which the forked app is not in.
    signal.signal(signal.SIGWINCH, resized)
    answer = b""
    while chunk := conn.recv(64):
        answer += chunk
    # The warm process says "pid N"; the app, "exit N" as it ends.
    for line in answer.splitlines():
        kind, _, value = line.strip().partition(b" ")
        if kind == b"exit" and value.lstrip(b"-").isdigit():
            return int(value)
    return 1


async def serve(args: argparse.Namespace, tls: ssl.SSLContext | None = None) -> int:
    """Start the relay with its tables, the SSH door and the web front, then wait for a signal;
    `tls` secures the listeners strangers reach over HTTP (the API's, the browser door's)."""
    from netplay.relay.limits import RelayLimits
    from netplay.relay.server import make_relay_app
    from netplay.ssh.door import DoorLimits, ForkServer, SessionInfo, SSHDoor
    from netplay.ssh.guard import LoginThrottle, SessionCounter
    from netplay.table.opened import OpenedGuard, OpenedLimits
    from netplay.table.service import TableLimits, TablesService, add_table_routes

    # The tables and the SSH sessions' apps all reach the relay from loopback: the relay's
    # limits per source address are for strangers, not for this server's own parts.
    app = make_relay_app(RelayLimits(exempt_addresses=frozenset({"127.0.0.1", "::1"})))
    opened = OpenedGuard(OpenedLimits(), set())
    app.middlewares.append(opened.middleware)
    from netplay.session.thinking import Thinkers, default_thinkers

    workers = default_thinkers() if args.thinkers is None else args.thinkers
    thinkers = Thinkers(workers) if workers else None
    tables = TablesService(TableLimits(max_tables=args.max_tables,
                                       empty_seconds=args.empty_table_seconds,
                                       bot_delay=args.bot_speed,
                                       away_timeout=args.away_seconds,
                                       turn_seconds=args.turn_seconds or None,
                                       bot_kind=args.bot_kind, think=args.think),
                           tables_per_remote_address=opened.limits.tables_per_address,
                           thinkers=thinkers)
    add_table_routes(app, tables)
    runners: list[web.AppRunner] = []
    async with contextlib.AsyncExitStack() as stack:
        if thinkers is not None:
            stack.push_async_callback(thinkers.close)  # after the tables: they may be waiting
        stack.push_async_callback(_cleanup, runners)
        # Sessions reach the API on loopback; only --api-bind opens it (limited) to others.
        runner = await start_runner(app, runners)
        port = await listen(runner, "127.0.0.1", 0 if args.api_bind else args.port)
        api_port = None
        if args.api_bind:
            api_port = await listen(runner, args.api_bind, args.port, capped=True, tls=tls)
            opened.ports.add(api_port)
        server = f"http://127.0.0.1:{port}"
        tables.relay_url = f"ws://127.0.0.1:{port}/ws"
        warm = await stack.enter_async_context(warm_process(server, args.cold))

        def command(session: SessionInfo) -> list[str] | ForkServer:
            cold = entry_command(server, session.username, session.peer_address)
            if warm is None:
                return cold
            return ForkServer(warm, cold, {"name": session.username,
                                           "visitor": session.peer_address})

        limits = DoorLimits(sessions_per_address=args.sessions_per_address,
                            total_sessions=args.max_sessions,
                            idle_timeout=args.idle_minutes * 60)
        sessions = SessionCounter(limits.total_sessions, limits.sessions_per_address)
        throttle = LoginThrottle()
        door = SSHDoor(command, args.host_key or default_host_key(), port=args.ssh_port,
                       bind=args.bind, authorized_keys=args.authorized_keys,
                       password=args.password, limits=limits, env=session_environment(),
                       sessions=sessions, throttle=throttle)
        stack.push_async_callback(door.close)
        ssh_port = await door.start()
        web_port = None
        if args.web_port is not None:
            from netplay.machine import host_and_port, reachable_address
            from tui.webdoor import WebDoor

            scheme = "https" if tls else "http"
            origins = args.web_origin or [f"{scheme}://{host_and_port(host, args.web_port)}" for host
                                          in (reachable_address(args.bind), "127.0.0.1",
                                              "localhost")]
            def web_command(name: str, visitor: str) -> list[str]:
                if warm is None:
                    return entry_command(server, name, visitor)
                return launch_command(warm, server, name, visitor)

            web_door = WebDoor(web_command, session_environment(),
                               sessions, throttle, args.password, origins,
                               idle_timeout=limits.idle_timeout)
            web_port = await listen(await start_runner(web_door.app(), runners), args.bind,
                                    args.web_port, capped=True, tls=tls)
        announce(args, door.fingerprint, ssh_port, port, api_port, web_port)
        await until_signalled()
    print("cardtui serve stopped.", flush=True)
    return 0


async def _cleanup(runners: list[web.AppRunner]) -> None:
    for runner in reversed(runners):
        await runner.cleanup()


@contextlib.asynccontextmanager
async def warm_process(server: str, cold: bool) -> AsyncIterator[str | None]:
    """Run the process sessions fork from and yield its socket (None: sessions start cold)."""
    import asyncio
    import tempfile

    if cold:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="cardtui-warm-") as private:  # mode 0700
        path = os.path.join(private, "warm.sock")
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tui.warmstart", "--server", server, path,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            # Sessions fork from it and inherit this: the minimal environment, not the server's.
            env={**session_environment(), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"})
        assert process.stdin is not None and process.stdout is not None
        try:
            ready = await asyncio.wait_for(process.stdout.readline(), WARM_START_SECONDS)
        except TimeoutError:
            ready = b""
        if ready.strip() != b"warm":
            print("cardtui serve: the warm process did not start; sessions start cold",
                  file=sys.stderr, flush=True)
        try:
            yield path if ready.strip() == b"warm" else None
        finally:
            process.stdin.close()  # it leaves when its stdin closes
            try:
                await asyncio.wait_for(process.wait(), WARM_START_SECONDS)
            except TimeoutError:
                process.kill()
                await process.wait()


async def start_runner(app: web.Application, runners: list[web.AppRunner]) -> web.AppRunner:
    """Set up a runner for app and keep it in runners (cleaned up at the end)."""
    from aiohttp import web

    runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=5.0)
    await runner.setup()
    runners.append(runner)
    return runner


async def listen(runner: web.AppRunner, bind: str, port: int, capped: bool = False,
                 tls: ssl.SSLContext | None = None) -> int:
    """Serve runner's application on bind:port as well; return the bound port.

    capped: count connections per address and in total (netplay.table.opened.ConnectionCap),
    for listeners that strangers reach; `tls` (which implies the cap) serves HTTPS, each
    handshake counted before it begins.
    """
    import asyncio

    from aiohttp import web

    from netplay.table.opened import ConnectionCap

    class Site(web.TCPSite):
        bound_port = 0

        async def start(self) -> None:
            await web.BaseSite.start(self)
            factory = self._runner.server
            assert factory is not None
            server = await asyncio.get_running_loop().create_server(
                ConnectionCap(tls=tls).wrap(factory) if capped or tls else factory,
                self._host, self._port, backlog=self._backlog)
            self._server = server
            self.bound_port = server.sockets[0].getsockname()[1]

    site = Site(runner, bind, port)
    await site.start()
    return site.bound_port


async def until_signalled() -> None:
    """Return on SIGINT or SIGTERM."""
    from tui.commands.netargs import stop_on_signals

    await stop_on_signals().wait()


def who_may_enter(args: argparse.Namespace) -> str:
    """Say exactly what a visitor must prove."""
    if args.authorized_keys and args.password:
        return (f"a visitor needs both a key listed in {args.authorized_keys} and the password")
    if args.authorized_keys:
        return f"a visitor needs a key listed in {args.authorized_keys}"
    if args.password:
        return "a visitor needs the password"
    return "anyone may enter: no key or password is asked"


def announce(args: argparse.Namespace, fingerprint: str, ssh_port: int, port: int,
             api_port: int | None, web_port: int | None) -> None:
    """Tell the operator what to give players."""
    from netplay.machine import host_and_port, reachable_address

    address = reachable_address(args.bind)
    print(f"cardtui serve: SSH on port {ssh_port}; relay and tables on 127.0.0.1:{port}"
          " for this server's sessions", flush=True)
    print(f"host key fingerprint: {fingerprint}")
    print(f"players connect with:  ssh -p {ssh_port} {address}   ({who_may_enter(args)})")
    if api_port is not None:
        api = host_and_port(reachable_address(args.api_bind), api_port)
        print(f"hosts with their own dealer:  cardtui host --relay {'wss' if args.tls_cert else 'ws'}://{api}"
              "   (open to other machines, with per-address limits)")
    if web_port is not None:
        scheme = "https" if args.tls_cert else "http"
        print(f"in a browser:  {scheme}://{host_and_port(address, web_port)}/"
              f"   ({who_may_enter(args)})")
    print("Stop with Ctrl-C.", flush=True)
