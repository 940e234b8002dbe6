"""`cardtui serve` as players meet it: the real OpenSSH client in tmux, the lobby, real tables."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import signal
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import asyncssh
import pytest

from tests.e2e.conftest import SSHTmux, ssh_argv, ssh_run

pytestmark = pytest.mark.timeout(90)

WAIT_SECONDS = 20.0  # only a broken server gets near it: every wait polls and returns early
POLL_SECONDS = 0.1
SERVER_LOGIN = "Tables on this server — you are"


def free_port() -> int:
    """Return a TCP port that was free on 127.0.0.1 a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def descendants(root: int) -> list[int]:
    """Return the pids of every live process below root."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (FileNotFoundError, ProcessLookupError):
                continue
            if fields[0] not in "ZX":
                children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, pending = [], [root]
    while pending:
        for child in children.get(pending.pop(), []):
            found.append(child)
            pending.append(child)
    return found


async def eventually(check: Callable[[], Awaitable[object]], what: str) -> object:
    """Poll the coroutine function check until it returns something truthy, or fail."""
    deadline = asyncio.get_running_loop().time() + WAIT_SECONDS
    while True:
        result = await check()
        if result:
            return result
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(POLL_SECONDS)


@dataclass
class Server:
    """A running `cardtui serve` subprocess and its ports."""

    process: asyncio.subprocess.Process
    ssh_port: int
    port: int
    web_port: int
    banner: str

    @property
    def base(self) -> str:
        """Return the tables API's base URL."""
        return f"http://127.0.0.1:{self.port}"

    async def stop(self) -> str:
        """Send SIGTERM, wait for the exit, and return the rest of the output."""
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
        assert self.process.stdout is not None
        rest = await asyncio.wait_for(self.process.stdout.read(), WAIT_SECONDS)
        await asyncio.wait_for(self.process.wait(), WAIT_SECONDS)
        return rest.decode()


ServerMaker = Callable[..., Awaitable[Server]]

PORT_TRIES = 3


class PortTaken(Exception):
    """`cardtui serve` could not bind a port that was free a moment before."""

@pytest.fixture
async def serve(tmp_path: Path) -> AsyncIterator[ServerMaker]:
    """Yield a coroutine that starts `cardtui serve` on free loopback ports with extra options."""
    servers: list[Server] = []

    async def start(*options: str, host_key: bool = True, web: bool = True,
                    wrapper: tuple[str, ...] = (), **environment: str) -> Server:
        # A port found free can be taken by another test's process before serve binds it:
        # start again on fresh ports then, a few times at most.
        for _ in range(PORT_TRIES - 1):
            try:
                return await start_once(*options, host_key=host_key, web=web, wrapper=wrapper,
                                        **environment)
            except PortTaken:
                pass
        return await start_once(*options, host_key=host_key, web=web, wrapper=wrapper,
                                **environment)

    async def start_once(*options: str, host_key: bool, web: bool,
                         wrapper: tuple[str, ...], **environment: str) -> Server:
        ssh_port, port, web_port = free_port(), free_port(), free_port()
        argv = [*wrapper, sys.executable, "-m", "tui.cli", "serve", "--bind", "127.0.0.1",
                "--ssh-port", str(ssh_port), "--port", str(port),
                *(["--web-port", str(web_port)] if web else []), "--bot-speed", "0.05", *options]
        if host_key:
            argv += ["--host-key", str(tmp_path / "host_key")]
        env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), **environment}
        process = await asyncio.create_subprocess_exec(
            *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=env)
        assert process.stdout is not None
        banner = ""
        while "Stop with Ctrl-C." not in banner:
            line = await asyncio.wait_for(process.stdout.readline(), WAIT_SECONDS)
            if not line and "address already in use" in banner:
                await process.wait()
                raise PortTaken(banner)
            assert line, f"cardtui serve ended early:\n{banner}"
            banner += line.decode()
        server = Server(process, ssh_port, port, web_port, banner)
        servers.append(server)
        return server

    yield start
    for server in servers:
        await server.stop()


class Player(SSHTmux):
    """A person at a terminal: a private tmux server running the real ssh client."""

    async def login(self, server: Server, user: str, width: int = 100, height: int = 30,
                    source: str | None = None) -> str:
        """Connect as user (from the loopback address source, if given) and return the lobby."""
        command = shlex.join(ssh_argv(server.ssh_port, *(["-b", source] if source else []),
                                      user=user))
        await self.start(f"{command}; echo EXIT=$?; sleep 60", width, height)
        return await self.see(f"{SERVER_LOGIN} {user}")

    async def see(self, pattern: str) -> str:
        """Wait until the regular expression pattern matches the screen, and return the screen."""
        try:
            found = await eventually(lambda: self._matching(pattern), f"{pattern!r} on screen")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; the screen:\n{await self.screen()}") from None
        return str(found)

    async def see_change(self, screen: str, seconds: float = 3.0) -> str:
        """Wait until the screen differs from `screen` (for at most `seconds`); the screen."""
        deadline = asyncio.get_running_loop().time() + seconds
        while (now := await self.screen()) == screen \
                and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(POLL_SECONDS)
        return now

    async def _matching(self, pattern: str) -> str | None:
        screen = await self.screen()
        return screen if re.search(pattern, screen) else None

    async def new_table(self, *cycle_keys: str, expect: str) -> None:
        """Open a new table, cycling the dialog's choices with keys until expect describes it."""
        await self.open_new_table_dialog()
        for key in cycle_keys:
            await self.type(key)
        await self.see(re.escape(expect))
        await self.type("Enter")
        await self.see("Your hand")

    async def open_new_table_dialog(self) -> None:
        """Press n in the lobby and wait for the dialog (the lobby's footer says "New table" too,
        so keys sent on seeing that could reach the lobby, where enter joins a table)."""
        await self.type("n")
        await self.see(r"Create \(⏎\)")

    async def leave_table(self) -> None:
        """Leave the table with q and y; the dealer keeps it (a bot plays the seat)."""
        await self.type("q")
        await self.see(r"Leave the table for the lobby\? A bot plays your seat")
        await self.type("y")


@pytest.fixture
async def players() -> AsyncIterator[Callable[[], Player]]:
    """Yield a maker of players, each with its own tmux server, killed after the test."""
    made: list[Player] = []

    def make() -> Player:
        player = Player(socket=f"cardtui-serve-{os.getpid()}-{len(made)}-{id(made) % 9973}")
        made.append(player)
        return player

    yield make
    for player in made:
        process = await asyncio.create_subprocess_exec(
            "tmux", "-L", player.socket, "kill-server",
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
        await process.wait()


async def test_announces_a_kept_host_key_and_serves_browsers(serve: ServerMaker,
                                                             tmp_path: Path) -> None:
    server = await serve(host_key=False)
    fingerprint = re.search(r"host key fingerprint: (SHA256:\S+)", server.banner)
    assert fingerprint, server.banner
    assert f"ssh -p {server.ssh_port} 127.0.0.1" in server.banner
    key = tmp_path / "data" / "cardtui" / "ssh_host_ed25519_key"
    assert key.stat().st_mode & 0o777 == 0o600

    async with aiohttp.ClientSession() as http, http.get(
            f"http://127.0.0.1:{server.web_port}/") as page:
        assert page.status == 200
        html = await page.text()
    # Nothing is loaded from elsewhere, and the socket's URL is the browser's own location.
    assert not re.search(r"""(href|src|url)\(?=?["']?(https?:)?//""", html), html
    assert "location.host" in html and "googleapis" not in html
    # What the page's terminal does: open the socket and read the app's output.
    async with aiohttp.ClientSession() as http, http.ws_connect(
            f"ws://127.0.0.1:{server.web_port}/ws?width=100&height=30") as terminal:
        seen = ""
        while f"{SERVER_LOGIN} guest" not in seen:
            message = await asyncio.wait_for(terminal.receive(), WAIT_SECONDS)
            assert message.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT), message
            if message.type is aiohttp.WSMsgType.BINARY:  # text messages are meta (title, ...)
                seen += message.data.decode(errors="replace")

    assert "cardtui serve stopped." in await server.stop()
    assert server.process.returncode == 0
    again = await serve(host_key=False)
    assert f"host key fingerprint: {fingerprint.group(1)}" in again.banner


async def test_play_against_a_bot_resize_and_quit(serve: ServerMaker,
                                                  players: Callable[[], Player]) -> None:
    # Issue 14: the dialog's k chooses the expert, which thinks as briefly as --think says.
    server = await serve("--away-seconds", "0.2", "--bot-speed", "0.005", "--think", "0.01")
    alice = players()
    await alice.login(server, "alice")
    await alice.see("No tables yet: press n to open one.")

    await alice.new_table("k", "k", expect="Zodiak for 2: you, 1 expert bot.")
    await alice.see("Your turn")
    await alice.type("d")
    await alice.see(r"alice draws \d+ card")

    await alice.tmux("resize-window", "-x", "80", "-y", "24")
    # The header on top and a log border exactly 80 wide: the app has redrawn at 80x24.
    await alice.see(r"^ ♠ +cardtui[^\n]*\n(.*\n)*╭─ Log ─{72}╮\n")

    await alice.leave_table()
    await alice.see(f"{SERVER_LOGIN} alice")
    await alice.see(r"Zodiak +2/2 +0 +0 +playing")  # the dealer keeps the table; alice is away
    # A bot plays for her until the match ends, and the finished table goes.
    await alice.see("No tables yet")
    await alice.type("q")
    await alice.see("EXIT=0")


async def test_a_player_who_leaves_for_the_lobby_gets_the_seat_back(
        serve: ServerMaker, players: Callable[[], Player]) -> None:
    """The quit question promises that a bot plays the seat until the player sits at the table
    again: back from the lobby, the player takes that seat, not a watcher's place (each
    sitting used to present a new seat secret, which the dealer could not tell was the same
    player's)."""
    server = await serve("--bot-speed", "5")  # the match is still on when alice comes back
    alice = players()
    await alice.login(server, "alice")
    await alice.new_table(expect="Zodiak for 2: you, 1 greedy bot.")
    await alice.leave_table()
    await alice.see(r"Zodiak +2/2 +0 +0 +playing")
    await alice.type("Enter")
    screen = await alice.see(r"alice \(you\)")
    assert "you are watching" not in screen and "(away)" not in screen, screen
    await alice.see(r"\d cards")  # her hand, dealt before she left, is hers again


async def test_two_ssh_players_play_each_other(serve: ServerMaker,
                                               players: Callable[[], Player]) -> None:
    server = await serve()
    alice, bob, carol = players(), players(), players()
    await alice.login(server, "alice")
    await bob.login(server, "bob")
    await carol.login(server, "carol")
    await alice.new_table("b", expect="Zodiak for 2: you and 1 more person.")
    await bob.see(r"Zodiak +1/2 +1 +0 +waiting")
    await bob.type("Enter")
    at_table = {"alice": alice, "bob": bob}
    for player in at_table.values():
        await player.see(r"alice .*\n.*bob ")  # both seats filled, in order
    await carol.see(r"Zodiak +2/2 +2 +0 +playing")
    await carol.type("w")
    await carol.see(r"alice .*\n.*bob ")

    moved: set[str] = set()
    while moved != {"alice", "bob"}:
        name = await eventually(lambda: _whose_turn(at_table), "someone's turn")
        other = at_table["bob" if name == "alice" else "alice"]
        mover = at_table[name]
        before = [(await player.screen()).count(f"{name} draws") for player in (mover, other)]
        await mover.type("d")
        # Both screens show the draw before the next turn is looked for: a screen that still
        # says "Your turn" from before would send the next "d" out of turn.
        for player, count, who in zip((mover, other), before, ("the mover", "the other player"),
                                      strict=True):
            await eventually(lambda p=player, n=name, c=count: _count_grew(p, f"{n} draws", c),
                             f"{who} to see {name} draw")
        moved.add(str(name))
    await carol.see(r"alice draws(.*\n)*.*bob draws|bob draws(.*\n)*.*alice draws")


async def _whose_turn(at_table: dict[str, Player]) -> str | None:
    for name, player in at_table.items():
        if "Your turn" in await player.screen():
            return name
    return None


async def _count_grew(player: Player, text: str, before: int) -> bool:
    return (await player.screen()).count(text) > before


async def test_killed_ssh_client_leaves_no_process(serve: ServerMaker,
                                                   players: Callable[[], Player]) -> None:
    server = await serve()
    alice = players()
    before = set(descendants(server.process.pid))  # the warm process sessions fork from
    await alice.login(server, "alice")
    session = set(descendants(server.process.pid)) - before
    assert len(session) == 1  # the session's app, forked from the warm process

    os.kill(await alice.pane_pid(), signal.SIGKILL)

    async def gone() -> bool:
        # Reaped, not merely dead: a zombie would still have its /proc entry.
        return not any(Path(f"/proc/{pid}").exists() for pid in session)

    await eventually(gone, "the session's processes to end and be reaped")
    assert set(descendants(server.process.pid)) == before


async def test_cold_sessions_start_and_end_too(serve: ServerMaker,
                                               players: Callable[[], Player]) -> None:
    server = await serve("--cold")
    alice = players()
    await alice.login(server, "alice")
    children = descendants(server.process.pid)
    assert len(children) == 1  # the session's own cardtui, started from scratch
    os.kill(await alice.pane_pid(), signal.SIGKILL)

    async def gone() -> bool:
        return not descendants(server.process.pid) and not Path(f"/proc/{children[0]}").exists()

    await eventually(gone, "the session's process to end and be reaped")


async def test_tables_api_refuses_garbage_and_limits_tables(serve: ServerMaker) -> None:
    server = await serve("--max-tables", "2", "--empty-table-seconds", "1")
    garbage = {
        b"not json": "not JSON",
        b"[1, 2]": "JSON object",
        b"": "JSON object",
        b'{"game": "poker", "players": 2}': "game must be",
        b'{"game": "zodiak"}': "players must be 2 or 3 or 4",
        b'{"game": "zodiak", "players": "2"}': "players must be",
        b'{"game": "zodiak", "players": true}': "players must be",
        b'{"game": "hekata", "players": 3}': "players must be 2 or 4 for hekata",
        b'{"game": "zodiak", "players": 2, "bots": 2}': "bots must be",
        b'{"game": "zodiak", "players": 2, "bots": -1}': "bots must be",
        b'{"game": "zodiak", "players": 2, "bots": 0.5}': "bots must be",
        b'{"game": "zodiak", "players": 2, "seed": 1}': "unknown field 'seed'",
        b"[" * 100_000: "over 1024 bytes",
    }
    async with aiohttp.ClientSession() as http:
        for body, reason in garbage.items():
            async with http.post(f"{server.base}/tables", data=body) as answer:
                assert answer.status in (400, 413), body[:60]
                assert reason in (await answer.json())["error"], body[:60]
        good = {"game": "hekata", "players": 4, "bots": 2}
        for _ in range(2):
            async with http.post(f"{server.base}/tables", json=good) as answer:
                assert answer.status == 201
                assert re.fullmatch(r"[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{2}",
                                    (await answer.json())["room"])
        async with http.post(f"{server.base}/tables", json=good) as answer:
            assert answer.status == 503
            assert "the most it keeps" in (await answer.json())["error"]

        async def listing() -> list[dict[str, object]]:
            async with http.get(f"{server.base}/tables") as answer:
                return (await answer.json())["tables"]

        tables = await listing()
        assert [(t["game"], t["players"], t["taken"], t["state"]) for t in tables] == [
            ("hekata", 4, 2, "waiting")] * 2

        async def all_closed() -> bool:
            return await listing() == []

        await eventually(all_closed, "the unattended tables to close")


async def test_door_options_pass_through(serve: ServerMaker, tmp_path: Path) -> None:
    key = tmp_path / "player_key"
    keygen = await asyncio.create_subprocess_exec(
        "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key),
        stdout=asyncio.subprocess.DEVNULL)
    assert await keygen.wait() == 0
    allowed = tmp_path / "authorized_keys"
    allowed.write_text(Path(f"{key}.pub").read_text())
    server = await serve("--authorized-keys", str(allowed), web=False)

    status, _, err = await ssh_run(ssh_argv(server.ssh_port, "-T"))
    assert status == 255 and "Permission denied" in err
    status, _, err = await ssh_run(ssh_argv(server.ssh_port, "-T", "-i", str(key)))
    assert status == 1 and "cardtui needs a terminal: connect with ssh -t" in err

    by_flag = await serve("--password", "open sesame")
    by_environment = await serve(CARDTUI_SSH_PASSWORD="open sesame")
    for guarded in (by_flag, by_environment):
        with pytest.raises(asyncssh.PermissionDenied):
            await asyncssh.connect("127.0.0.1", guarded.ssh_port, username="eve",
                                   password="guess", known_hosts=None, client_keys=None,
                                   agent_path=None)
        async with asyncssh.connect("127.0.0.1", guarded.ssh_port, username="ann",
                                    password="open sesame", known_hosts=None, client_keys=None,
                                    agent_path=None):
            pass


async def test_serve_tables_take_house_rules(serve: ServerMaker, players: Callable[[], Player]
                                             ) -> None:
    """A table opened through the API or from the SSH lobby's dialog plays by the house rules
    asked for, lists them, and refuses bad ones with the reason."""
    server = await serve()
    async with aiohttp.ClientSession() as http:
        for body, reason in {
            b'{"game": "hekata", "players": 2, "house": "max-row=0"}': "max-row must be",
            b'{"game": "hekata", "players": 2, "house": "rows=4"}': "'rows' is not a house rule",
            b'{"game": "zodiak", "players": 2, "house": "max-row=4"}': "Zodiak has none",
            b'{"game": "hekata", "players": 2, "house": 4}': "house must be text",
            b'{"game": "hekata", "players": 2, "house": "' + b"x" * 300 + b'"}': "written like",
        }.items():
            async with http.post(f"{server.base}/tables", data=body) as answer:
                assert answer.status == 400, body[:60]
                assert reason in (await answer.json())["error"], body[:60]
        good = {"game": "zodiak", "players": 3, "bots": 1, "house": "target = 30"}
        async with http.post(f"{server.base}/tables", json=good) as answer:
            assert answer.status == 201
        async with http.get(f"{server.base}/tables") as answer:
            tables = (await answer.json())["tables"]
        assert [(t["game"], t["house"]) for t in tables] == [("zodiak", "target=30")]

    alice, bob = players(), players()
    await alice.login(server, "alice")
    await alice.see(r"Zodiak +1/3 .*target=30")
    await alice.open_new_table_dialog()
    await alice.type("g")  # Hekata for 2, 1 bot
    await alice.type("h")
    await asyncio.sleep(1)  # the field takes the keys once it has the focus, as a person sees
    await alice.type("max-row=0")
    await alice.see("House \\(h\\) +max-row=0")
    await alice.type("Enter")
    await alice.see("House rules: max-row must be")
    await alice.type("BSpace")
    # Under load the app can take the keys typed next before the backspace (a binding's action):
    # a person sees the 0 go before typing on.
    await alice.see(r"House \(h\) +max-row= {10}")
    await alice.type("3,target=90000")
    await alice.see("House \\(h\\) +max-row=3,target=90000")
    await alice.type("Enter")
    await alice.see("Your hand")
    await alice.see("first to 90,000")
    await alice.type("?")
    await alice.see("House rules: Hekata rows of at most 3 cards")
    await alice.type("Escape")
    await bob.login(server, "bob")
    await bob.see(r"Hekata +2/2 .*playing +max-row=3")  # cut to the column; the lobby says all
