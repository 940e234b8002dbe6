"""`cardtui serve` against hostile visitors (issue 11): names, the browser door, the tables API,
descriptor exhaustion, idle lobbies, logins in the log. Real `ssh` in tmux where a person is
involved; aiohttp and asyncssh clients where the attack needs them. 127.0.0.x are distinct
visitors."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import shlex
import socket
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp
import asyncssh
import pytest

from tests.e2e import test_serve
from tests.e2e.conftest import ssh_argv
from tests.e2e.test_door_limits import read_to_end
from tests.e2e.test_serve import (
    SERVER_LOGIN,
    WAIT_SECONDS,
    Player,
    Server,
    ServerMaker,
    descendants,
    eventually,
    free_port,
)

# The fixtures of test_serve, for these tests too.
serve = test_serve.serve
players = test_serve.players

pytestmark = pytest.mark.timeout(120)

# Markup that crashed other players' apps, and more than a name may hold. (Control characters
# cannot come in a user name: OpenSSH will not send them and asyncssh refuses them on arrival;
# tests/tui/test_literal_text.py sends them through chat, notices and results.)
HOSTILE_USER = "[/z][b]" + "x" * 80
HOSTILE_SHOWN = HOSTILE_USER[:24]
WATCHER_USER = "[/][link=file:///etc/passwd]" + "y" * 40


async def test_a_hostile_name_is_shown_literally_and_the_other_player_keeps_playing(
        serve: ServerMaker, players: Callable[[], Player]) -> None:
    server = await serve("--bot-speed", "0.005", "--away-seconds", "0.5")
    alice, mallory, watcher = players(), players(), players()
    await alice.login(server, "alice")
    await alice.new_table("b", expect="Zodiak for 2: you and 1 more person.")
    await mallory.start(shlex.join(ssh_argv(server.ssh_port, user=HOSTILE_USER))
                        + "; echo EXIT=$?; sleep 60", 100, 30)
    await mallory.see(re.escape(f"{SERVER_LOGIN} {HOSTILE_SHOWN}"))
    await mallory.see(r"Zodiak +1/2 +1 +0 +waiting")
    await mallory.type("Enter")
    shown = re.escape(HOSTILE_SHOWN)
    for player in (alice, mallory):
        await player.see(r"alice .*\n.*" + shown)  # the players list, the name as it is
    # Two moves each way: the status ("... to move"), the log and the last-move line all show
    # mallory's name on alice's screen.
    at_table = {"alice": alice, HOSTILE_SHOWN: mallory}
    for _ in range(4):
        name = str(await eventually(lambda: _whose_turn(at_table), "someone's turn"))
        other = mallory if name == "alice" else alice
        await other.see(re.escape(name) + " to move")
        mover = at_table[name]
        before = [(await player.screen()).count(f"{name} draws") for player in (mover, other)]
        await mover.type("d")
        # Both screens show the draw before the next turn is looked for (no stale "Your turn").
        for player, count in zip((mover, other), before, strict=True):
            await eventually(lambda p=player, n=name, c=count: _more(p, f"{n} draws", c),
                             f"{name}'s draw on both screens")
    await watcher.start(shlex.join(ssh_argv(server.ssh_port, user=WATCHER_USER))
                        + "; echo EXIT=$?; sleep 60", 100, 30)
    await watcher.see(re.escape(f"{SERVER_LOGIN} {WATCHER_USER[:24]}"))
    await watcher.see(r"Zodiak +2/2 +2 +0 +playing")
    await watcher.type("w")
    await watcher.see(r"alice .*\n.*" + shown)
    await mallory.leave_table()
    await alice.see(shown + r".*\(away\)")
    # A bot plays mallory's seat now, and alice's app still plays: her turn comes back.
    await alice.see("Your turn")
    before = (await alice.screen()).count("alice draws")
    await alice.type("d")
    await eventually(lambda: _more(alice, "alice draws", before), "alice's next draw")
    for player in (alice, mallory, watcher):
        screen = await player.screen()
        assert "Traceback" not in screen and "EXIT=" not in screen, screen


async def _whose_turn(at_table: dict[str, Player]) -> str | None:
    for name, player in at_table.items():
        if "Your turn" in await player.screen():
            return name
    return None


async def _more(player: Player, text: str, before: int) -> bool:
    return (await player.screen()).count(text) > before


async def test_logins_are_logged_one_line_each_with_the_address(serve: ServerMaker) -> None:
    server = await serve("--password", "open sesame", web=False)
    for guess in ("a", "b"):
        with pytest.raises(asyncssh.PermissionDenied):
            await asyncssh.connect("127.0.0.1", server.ssh_port, local_addr=("127.0.0.2", 0),
                                   username="eve", password=guess, known_hosts=None,
                                   client_keys=None, agent_path=None)
    async with asyncssh.connect("127.0.0.1", server.ssh_port, local_addr=("127.0.0.3", 0),
                                username="ann", password="open sesame", known_hosts=None,
                                client_keys=None, agent_path=None):
        pass
    output = await server.stop()
    failed = [line for line in output.splitlines() if "ssh login failed" in line]
    assert len(failed) == 2
    assert all("password for 'eve' from 127.0.0.2 port" in line for line in failed)
    assert len([line for line in output.splitlines()
                if "ssh login: password for 'ann' from 127.0.0.3 port" in line]) == 1
    assert "needs the password" in server.banner


async def test_the_start_up_message_says_what_a_visitor_needs(serve: ServerMaker,
                                                              tmp_path: Path) -> None:
    keygen = await asyncio.create_subprocess_exec(
        "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "key"),
        stdout=asyncio.subprocess.DEVNULL)
    assert await keygen.wait() == 0
    keys = tmp_path / "authorized_keys"
    keys.write_text((tmp_path / "key.pub").read_text())
    both = await serve("--authorized-keys", str(keys), "--password", "pw", web=False)
    assert f"a visitor needs both a key listed in {keys} and the password" in both.banner
    open_door = await serve(web=False)
    assert "anyone may enter: no key or password is asked" in open_door.banner
    # A browser cannot prove an SSH key, so the two cannot go together.
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tui.cli", "serve", "--authorized-keys", str(keys),
        "--web-port", str(free_port()), "--ssh-port", str(free_port()),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    _, err = await asyncio.wait_for(process.communicate(), WAIT_SECONDS)
    assert process.returncode == 2 and b"cannot be used with --authorized-keys" in err


def _basic(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


async def test_the_browser_door_asks_the_password_limits_sessions_and_caps_the_size(
        serve: ServerMaker) -> None:
    server = await serve("--password", "open sesame", "--sessions-per-address", "1")
    base = f"http://127.0.0.1:{server.web_port}"
    ws = f"ws://127.0.0.1:{server.web_port}/ws?width=10000&height=10000"
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{base}/") as page:
            assert page.status == 401 and "Basic" in page.headers["WWW-Authenticate"]
        async with http.get(f"{base}/", headers=_basic("eve", "guess")) as page:
            assert page.status == 401
        async with http.get(f"{base}/", headers=_basic("ann", "open sesame")) as page:
            assert page.status == 200
            assert "googleapis" not in await page.text()
        for path in ("/static/", "/static/js/", "/static/js", "/static/../server.py",
                     "/static/%2e%2e/server.py", "/download/x"):
            async with http.get(f"{base}{path}") as answer:
                assert answer.status == 404, path
        async with http.get(f"{base}/static/js/textual.js") as script:
            assert script.status == 200
        for headers, status in ((_basic("ann", "open sesame") | {"Origin": "http://evil.example"},
                                 403), ({}, 401), (_basic("eve", "guess"), 401)):
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await http.ws_connect(ws, headers=headers)
            assert refused.value.status == status
        page_origin = {"Origin": f"http://127.0.0.1:{server.web_port}"}
        async with http.ws_connect(ws, headers=_basic("ann", "open sesame") | page_origin,
                                   max_msg_size=0) as terminal:
            seen = await _read_until(terminal, f"{SERVER_LOGIN} ann")
            # The whole first frame (its last row is 200) before any resize: its rows below the
            # greeting could otherwise pass for the redraw at 150 below, and a loaded app that
            # then took both resizes at once (back to 500x200) would have nothing to redraw.
            seen += await _read_until(terminal, "\x1b[200;", seen)
            rows = [int(row) for row in re.findall(r"\x1b\[(\d+);\d+H", seen)]
            assert rows and max(rows) <= 200  # drawn at the capped height, not 10000
            await terminal.send_json(["resize", {"width": 120, "height": 150}])
            await _read_until(terminal, "\x1b[150;")  # drawn at 150 rows
            await terminal.send_str("not json")  # garbage is ignored, the session goes on
            await terminal.send_json(["resize", {"width": 9000, "height": 300}])
            redrawn = await _read_until(terminal, "\x1b[200;")  # 300 rows asked, 200 given
            rows = [int(row) for row in re.findall(r"\x1b\[(\d+);\d+H", redrawn)]
            assert max(rows) <= 200
            for pid in descendants(server.process.pid):  # the warm process and this tab's app
                environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
                names = {entry.split(b"=", 1)[0].decode() for entry in environ if entry}
                assert names <= {"PATH", "PYTHONPATH", "LANG", "LC_ALL", "COLUMNS", "ROWS",
                                 "TERM_PROGRAM", "TERM_PROGRAM_VERSION", "TEXTUAL_DRIVER",
                                 "TEXTUAL_FPS", "TEXTUAL_COLOR_SYSTEM", "PWD"}, names
            # One session per address: a second tab is refused while this one is open.
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await http.ws_connect(ws, headers=_basic("ann", "open sesame"))
            assert refused.value.status == 503
    output = await server.stop()
    assert "web login failed: password for 'eve' from 127.0.0.1" in output


async def _read_until(terminal: aiohttp.ClientWebSocketResponse, text: str,
                      already: str = "") -> str:
    """What the terminal sends until `text` is among it (or in `already`, what came before)."""
    seen = ""
    while text not in already + seen:
        message = await asyncio.wait_for(terminal.receive(), WAIT_SECONDS)
        assert message.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT), message
        if message.type is aiohttp.WSMsgType.BINARY:
            seen += message.data.decode(errors="replace")
    return seen


async def test_the_tables_api_is_on_loopback_unless_opened_and_then_limited_per_address(
        serve: ServerMaker) -> None:
    closed = await serve(web=False)
    with pytest.raises(OSError), socket.create_connection(("127.0.0.2", closed.port), timeout=5):
        pass  # bound to 127.0.0.1 alone: another address of this machine is not served
    opened = await serve("--api-bind", "127.0.0.2", web=False)
    api = f"http://127.0.0.2:{opened.port}"
    assert f"ws://127.0.0.2:{opened.port}" in opened.banner
    table = {"game": "zodiak", "players": 2, "bots": 0}

    async def post_from(source: str) -> tuple[int, str]:
        connector = aiohttp.TCPConnector(local_addr=(source, 0))
        async with aiohttp.ClientSession(connector=connector) as http, http.post(
                f"{api}/tables", json=table) as answer:
            return answer.status, (await answer.json()).get("error", "")

    assert [(await post_from("127.0.0.3"))[0] for _ in range(2)] == [201, 201]
    status, error = await post_from("127.0.0.3")
    assert status == 503 and "your address already has 2 tables" in error
    assert (await post_from("127.0.0.4"))[0] == 201  # another address is not held back
    connector = aiohttp.TCPConnector(local_addr=("127.0.0.5", 0))
    async with aiohttp.ClientSession(connector=connector) as http:
        statuses = []
        for _ in range(40):
            async with http.get(f"{api}/tables") as answer:
                statuses.append(answer.status)
    assert 429 in statuses and statuses[0] == 200
    # Limits apply to the opened listener only: the server's own sessions are not counted.
    await _session_opens_a_table(opened)


async def _session_opens_a_table(server: Server) -> None:
    internal = re.search(r"relay and tables on (127\.0\.0\.1:\d+)", server.banner)
    assert internal, server.banner
    async with aiohttp.ClientSession() as http:
        for _ in range(3):
            async with http.post(f"http://{internal.group(1)}/tables",
                                 json={"game": "hekata", "players": 2}) as answer:
                assert answer.status == 201


async def test_running_out_of_descriptors_is_logged_once_and_the_door_keeps_serving(
        serve: ServerMaker, players: Callable[[], Player]) -> None:
    server = await serve("--empty-table-seconds", "600", web=False,
                         wrapper=("prlimit", "--nofile=160:160", "--"))
    alice = players()
    await alice.login(server, "alice")
    flood = []
    try:
        for _ in range(220):
            sock = socket.socket()
            sock.setblocking(False)
            await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", server.port))
            flood.append(sock)
        await asyncio.sleep(3)  # long enough for several failed accepts and their retries
        # Alice's session goes on: her keys reach her app and its screen comes back.
        await alice.open_new_table_dialog()
        await alice.type("Escape")
    finally:
        for sock in flood:
            sock.close()
    bob = players()
    await bob.login(server, "bob")
    output = await server.stop()
    assert output.count("cannot accept connections") == 1, output[-3000:]


async def test_an_idle_lobby_sends_nothing_and_sessions_get_a_minimal_environment(
        serve: ServerMaker) -> None:
    server = await serve(web=False, CARDTUI_TEST_SECRET="server only")
    async with asyncssh.connect("127.0.0.1", server.ssh_port, username="idle", known_hosts=None,
                                client_keys=None, agent_path=None) as conn:
        received: list[bytes] = []

        class Screen(asyncssh.SSHClientSession[bytes]):
            def data_received(self, data: bytes, datatype: asyncssh.DataType) -> None:
                received.append(data)

        channel, _ = await conn.create_session(Screen, term_type="xterm-256color",
                                               term_size=(100, 30), encoding=None)

        async def in_lobby() -> bool:
            return SERVER_LOGIN.encode() in b"".join(received)

        await eventually(in_lobby, "the lobby")
        await asyncio.sleep(1)  # the first listing is drawn
        received.clear()
        await asyncio.sleep(5)  # more than two refreshes of an unchanged listing
        assert b"".join(received) == b""
        async with aiohttp.ClientSession() as http, http.post(
                f"{server.base}/tables", json={"game": "zodiak", "players": 2}) as answer:
            assert answer.status == 201

        async def redrawn() -> bool:
            return b"Zodiak" in b"".join(received)

        await eventually(redrawn, "the new table in the listing")
        for pid in descendants(server.process.pid):
            environment = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            names = {entry.split(b"=", 1)[0].decode() for entry in environment if entry}
            assert "CARDTUI_TEST_SECRET" not in names, names
            assert names <= {"PATH", "PYTHONPATH", "TERM", "LANG", "LC_ALL", "COLORTERM",
                             "TEXTUAL", "TEXTUAL_DRIVER"}, names
        channel.close()


async def test_silent_connections_to_the_browser_door_are_capped_per_address(
        serve: ServerMaker) -> None:
    server = await serve()
    loop = asyncio.get_running_loop()
    silent = []
    try:
        for _ in range(40):
            sock = socket.socket()
            sock.setblocking(False)
            sock.bind(("127.0.0.2", 0))
            await loop.sock_connect(sock, ("127.0.0.1", server.web_port))
            silent.append(sock)
        ended = [asyncio.create_task(read_to_end(sock)) for sock in silent]

        async def eight_closed() -> bool:
            return sum(task.done() for task in ended) == 8

        await eventually(eight_closed, "the connections past 32 from one address to be closed")
        # Another address still gets the page while those 32 sit there.
        connector = aiohttp.TCPConnector(local_addr=("127.0.0.3", 0))
        async with aiohttp.ClientSession(connector=connector) as http, http.get(
                f"http://127.0.0.1:{server.web_port}/") as page:
            assert page.status == 200
        assert sum(task.done() for task in ended) == 8
        for task in ended:
            task.cancel()
    finally:
        for sock in silent:
            sock.close()


async def test_idle_browser_and_ssh_sessions_are_closed(serve: ServerMaker,
                                                        players: Callable[[], Player]) -> None:
    server = await serve("--idle-minutes", "0.1")  # six seconds

    async def over_ssh() -> None:
        alice = players()
        await alice.login(server, "alice")
        await alice.see("closed after 6 s without input")
        await alice.see("EXIT=1")

    async def in_a_browser() -> None:
        async with aiohttp.ClientSession() as http, http.ws_connect(
                f"ws://127.0.0.1:{server.web_port}/ws?width=80&height=24") as terminal:
            while True:
                message = await asyncio.wait_for(terminal.receive(), WAIT_SECONDS)
                if message.type is aiohttp.WSMsgType.CLOSE:
                    assert message.extra == "closed after a while without input"
                    break
                assert message.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT), message

    await asyncio.gather(over_ssh(), in_a_browser())  # idle side by side: one wait, not two


async def test_one_visitor_address_keeps_at_most_two_tables_open(
        serve: ServerMaker, players: Callable[[], Player]) -> None:
    """A visitor who opens tables and leaves them (a bot plays on for them until the table is
    left alone long enough) could fill the server's tables for everyone. Tables opened from
    one address's sessions count against it as through the opened API: the third is refused,
    with the reason on the lobby's status line, while a visitor from another address still
    opens one."""
    # Bots slow enough that no table left to them ends its match while the test counts them.
    server = await serve("--bot-speed", "5")
    alice = players()
    await alice.login(server, "alice", source="127.0.0.2")
    for _ in range(2):
        await alice.new_table(expect="Zodiak for 2: you, 1 greedy bot.")
        await alice.leave_table()
        await alice.see(f"{SERVER_LOGIN} alice")
    await alice.open_new_table_dialog()
    await alice.type("Enter")
    await alice.see("Could not open a table: your address already has 2 tables open")
    async with aiohttp.ClientSession() as http, http.get(f"{server.base}/tables") as answer:
        assert len((await answer.json())["tables"]) == 2

    bob = players()
    await bob.login(server, "bob", source="127.0.0.3")
    await bob.new_table(expect="Zodiak for 2: you, 1 greedy bot.")


DIALOG = "Zodiak for 2: you, 1 greedy bot."


async def test_tables_opened_in_a_browser_count_against_its_address(serve: ServerMaker) -> None:
    """The browser door's sessions carry their visitor's address to the tables API too: a tab
    from 127.0.0.4 opens two tables and leaves them, and its third is refused with the reason."""
    # Bots slow enough that no table left to them ends its match while the test counts them.
    server = await serve("--bot-speed", "5")
    connector = aiohttp.TCPConnector(local_addr=("127.0.0.4", 0))
    async with aiohttp.ClientSession(connector=connector) as http, http.ws_connect(
            f"ws://127.0.0.1:{server.web_port}/ws?width=100&height=30") as terminal:
        seen = [""]

        async def until(text: str) -> None:
            while text not in seen[0]:
                try:
                    message = await asyncio.wait_for(terminal.receive(), WAIT_SECONDS)
                except TimeoutError:
                    raise AssertionError(f"never saw {text!r}: {seen[0][-3000:]!r}") from None
                assert message.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT)
                if message.type is aiohttp.WSMsgType.BINARY:
                    seen[0] += message.data.decode(errors="replace")
            seen[0] = ""

        async def press(key: str, then: str) -> None:
            await terminal.send_str(json.dumps(["stdin", key]))
            await until(then)

        await until(f"{SERVER_LOGIN} guest")
        for opened in (1, 2):
            await press("n", DIALOG)  # the dialog itself: the lobby's footer says "New table"
            await press("\r", "Your hand")
            await press("q", "Keep playing (n)")
            await press("y", "Tables on this server")
            async with http.get(f"{server.base}/tables") as answer:
                assert len((await answer.json())["tables"]) == opened
        await press("n", DIALOG)
        await press("\r", "already has 2 tables open")


# Typed into a session: a terminal size far past the cap (Textual reads a size report in the
# input), bytes that are not UTF-8, a key code past Unicode and half a character. Each used to
# stop the visitor's app or make it draw for 600 x 2000 cells (netplay/ssh/input_filter.py).
OVERSIZED = b"\x1b[48;600;2000;0;0t"
GARBAGE = b"\xc3(\xff" + b"\x1b[9999999u" + b"\x1b[55296u"


def _rows_drawn(output: bytes) -> list[int]:
    return [int(row) for row in re.findall(rb"\x1b\[(\d+);\d+H", output)]


async def test_typed_size_reports_and_broken_keys_neither_grow_nor_stop_an_ssh_session(
        serve: ServerMaker) -> None:
    server = await serve(web=False)
    async with asyncssh.connect("127.0.0.1", server.ssh_port, username="mallory",
                                known_hosts=None, client_keys=None, agent_path=None) as conn:
        received = bytearray()

        class Screen(asyncssh.SSHClientSession[bytes]):
            def data_received(self, data: bytes, datatype: asyncssh.DataType) -> None:
                received.extend(data)

        channel, _ = await conn.create_session(Screen, term_type="xterm-256color",
                                               term_size=(100, 30), encoding=None)

        def seen(text: bytes, after: int = 0) -> Callable[[], Awaitable[bool]]:
            async def check() -> bool:
                return text in received[after:]
            return check

        await eventually(seen(SERVER_LOGIN.encode()), "the lobby")
        before = len(received)
        channel.write(OVERSIZED)
        await eventually(seen(b"\x1b[200;", before), "the lobby redrawn at the capped height")
        channel.write(GARBAGE)
        before = len(received)
        channel.write(b"n")
        await eventually(seen("Create (⏎)".encode(), before), "the new-table dialog")
        assert not channel.is_closing()
        assert max(_rows_drawn(bytes(received))) <= 200
        assert b"Traceback" not in received
        channel.close()


async def test_typed_size_reports_and_broken_keys_neither_grow_nor_stop_a_browser_session(
        serve: ServerMaker) -> None:
    server = await serve()
    page_origin = {"Origin": f"http://127.0.0.1:{server.web_port}"}
    async with aiohttp.ClientSession() as http, http.ws_connect(
            f"ws://127.0.0.1:{server.web_port}/ws?width=100&height=30", headers=page_origin,
            max_msg_size=0) as terminal:
        seen = await _read_until(terminal, SERVER_LOGIN)
        await terminal.send_json(["stdin", OVERSIZED.decode()])
        seen += await _read_until(terminal, "\x1b[200;")
        await terminal.send_json(["stdin", GARBAGE.decode(errors="surrogateescape")])
        await terminal.send_json(["stdin", "n"])
        seen += await _read_until(terminal, "Create (⏎)")
        assert max(_rows_drawn(seen.encode())) <= 200
        assert "Traceback" not in seen
