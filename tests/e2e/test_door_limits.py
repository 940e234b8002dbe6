"""The SSH door against hostile visitors (issue 11): sizes, guessing, floods, channels, leftovers.

The real `ssh` client where it can say what the attack needs; asyncssh clients for what it
cannot (a 65535-column terminal, many passwords on one connection, many channels). Distinct
loopback addresses (127.0.0.x) stand for distinct visitors.
"""

from __future__ import annotations

import asyncio
import logging
import shlex
import socket
from pathlib import Path
from typing import Any

import asyncssh
import pytest

from netplay.ssh.door import DoorLimits
from tests.e2e.conftest import (
    SSHDoorMaker,
    SSHTmux,
    ssh_argv,
    ssh_eventually,
    ssh_options,
    ssh_run,
)

pytestmark = pytest.mark.timeout(90)


async def connect(port: int, source: str = "127.0.0.1", **options: Any) -> asyncssh.SSHClientConnection:
    """Open an asyncssh client connection to the door from the loopback address source."""
    options.setdefault("username", "mallory")
    return await asyncssh.connect("127.0.0.1", port, local_addr=(source, 0), known_hosts=None,
                                  client_keys=None, agent_path=None, **options)


class Collector(asyncssh.SSHClientSession[bytes]):
    """A client session that keeps everything the door sends."""

    def __init__(self) -> None:
        self.received = b""

    def data_received(self, data: bytes, datatype: asyncssh.DataType) -> None:
        self.received += data


async def open_terminal(conn: asyncssh.SSHClientConnection, columns: int,
                        rows: int) -> tuple[asyncssh.SSHClientChannel[bytes], Collector]:
    channel, session = await conn.create_session(
        Collector, term_type="xterm", term_size=(columns, rows), encoding=None)
    return channel, session


async def test_terminal_size_is_capped_at_start_and_on_resize(ssh_door: SSHDoorMaker) -> None:
    _, port = await ssh_door()
    async with await connect(port) as conn:
        channel, session = await open_terminal(conn, 65535, 65535)
        await ssh_eventually(lambda: b"SIZE 500x200" in session.received, "the capped size")
        channel.change_terminal_size(100000, 3)
        await ssh_eventually(lambda: b"SIZE 500x3" in session.received, "the capped resize")
        channel.change_terminal_size(0, 0)  # some clients send zero: the usual 80x24
        await ssh_eventually(lambda: b"SIZE 80x24" in session.received, "the default size")
        channel.close()


class Guesser(asyncssh.SSHClient):
    """A client that answers every password prompt with the next guess."""

    def __init__(self) -> None:
        self.tried = 0

    def password_auth_requested(self) -> str:
        self.tried += 1
        return f"guess-{self.tried}"


async def test_guessing_is_limited_per_connection_slowed_per_address_and_logged(
        ssh_door: SSHDoorMaker, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="cardtui.door")
    door, port = await ssh_door(password="open sesame", limits=DoorLimits(max_auth_tries=4))
    guesser = Guesser()
    with pytest.raises((asyncssh.PermissionDenied, asyncssh.DisconnectError)):
        await asyncssh.connect("127.0.0.1", port, local_addr=("127.0.0.2", 0),
                               username="eve", known_hosts=None, client_keys=None,
                               agent_path=None, client_factory=lambda: guesser,
                               password_auth=True, kbdint_auth=False)
    assert guesser.tried == 4  # the door hung up after its fourth failure
    failed = [r.getMessage() for r in caplog.records if "login failed" in r.getMessage()]
    assert len(failed) == 4
    assert all("from 127.0.0.2 port" in line and "'eve'" in line for line in failed)
    assert all(r.levelno >= logging.WARNING for r in caplog.records
               if "login failed" in r.getMessage())
    # The guesser's address now waits before each check; another address does not.
    assert door.throttle.delay("127.0.0.2") > 0
    assert door.throttle.delay("127.0.0.3") == 0
    async with await connect(port, "127.0.0.3", username="ann", password="open sesame"):
        pass
    assert any("ssh login: password for 'ann' from 127.0.0.3" in r.getMessage()
               for r in caplog.records)


async def test_both_key_and_password_are_needed_when_both_are_set(
        ssh_door: SSHDoorMaker, tmp_path: Path) -> None:
    key = tmp_path / "player_key"
    keygen = await asyncio.create_subprocess_exec(
        "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key),
        stdout=asyncio.subprocess.DEVNULL)
    assert await keygen.wait() == 0
    allowed = tmp_path / "authorized_keys"
    allowed.write_text(Path(f"{key}.pub").read_text())
    _, port = await ssh_door(authorized_keys=allowed, password="open sesame")
    askpass = tmp_path / "askpass"
    askpass.write_text("#!/bin/sh\necho 'open sesame'\n")
    askpass.chmod(0o700)
    wrong = tmp_path / "wrong"
    wrong.write_text("#!/bin/sh\necho 'not it'\n")
    wrong.chmod(0o700)

    def real_ssh(*extra: str) -> list[str]:
        # BatchMode off so that ssh asks SSH_ASKPASS for the password.
        hermetic = ssh_options()
        pairs = zip(hermetic[::2], hermetic[1::2], strict=True)
        options = [word for pair in pairs if pair[1] != "BatchMode=yes" for word in pair]
        return ["/usr/bin/ssh", *options, "-o", "BatchMode=no", "-o", "NumberOfPasswordPrompts=1",
                "-T", "-p", str(port), *extra, "ann@127.0.0.1"]

    async def attempt(argv: list[str], program: Path) -> tuple[int, str]:
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={"SSH_ASKPASS": str(program), "SSH_ASKPASS_REQUIRE": "force",
                 "DISPLAY": ":0", "PATH": "/usr/bin:/bin"})
        _, err = await asyncio.wait_for(process.communicate(), 30)
        assert process.returncode is not None
        return process.returncode, err.decode(errors="replace")

    status, err = await attempt(real_ssh("-i", str(key), "-o", "PreferredAuthentications=publickey"),
                                askpass)
    assert status == 255 and "Permission denied" in err  # the key alone
    status, err = await attempt(real_ssh("-o", "PreferredAuthentications=password"), askpass)
    assert status == 255 and "Permission denied" in err  # the password alone
    status, err = await attempt(real_ssh("-i", str(key)), wrong)
    assert status == 255 and "Permission denied" in err  # the key and a wrong password
    status, err = await attempt(real_ssh("-i", str(key)), askpass)
    assert status == 1 and "cardtui needs a terminal" in err, err  # both: in


async def test_connections_not_logged_in_are_capped_per_address(ssh_door: SSHDoorMaker,
                                                                ssh_tmux: SSHTmux) -> None:
    door, port = await ssh_door(limits=DoorLimits(startups_per_address=5, max_startups=50))
    silent: list[socket.socket] = []
    ended: list[asyncio.Task[None]] = []
    for _ in range(12):
        sock = socket.socket()
        sock.setblocking(False)
        sock.bind(("127.0.0.2", 0))
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
        silent.append(sock)
    try:
        await ssh_eventually(lambda: door.startup_count == 5, "five silent connections kept")
        # The others were closed at once (after the version line asyncssh sends first).
        ended = [asyncio.create_task(read_to_end(sock)) for sock in silent]
        await ssh_eventually(lambda: sum(task.done() for task in ended) == 7, "seven closed")
        assert door.startup_count == 5
        # A visitor from another address gets in with the real client meanwhile.
        command = shlex.join(ssh_argv(port, "-b", "127.0.0.3", user="ann"))
        await ssh_tmux.start(f"{command}; echo EXIT=$?; sleep 60", 100, 30)
        await ssh_tmux.wait_for("READY")
    finally:
        for task in ended:
            task.cancel()
        for sock in silent:
            sock.close()


async def read_to_end(sock: socket.socket) -> None:
    """Read sock until the other side closes it."""
    loop = asyncio.get_running_loop()
    try:
        while await loop.sock_recv(sock, 4096):
            pass
    except ConnectionResetError:
        pass


async def test_session_channels_per_connection_are_capped(ssh_door: SSHDoorMaker) -> None:
    _, port = await ssh_door(limits=DoorLimits(channels_per_connection=3))
    async with await connect(port) as conn:
        channels = []
        for _ in range(3):
            channel, session = await open_terminal(conn, 80, 24)
            channels.append((channel, session))
        with pytest.raises(asyncssh.ChannelOpenError):
            await open_terminal(conn, 80, 24)
        for channel, session in channels:
            await ssh_eventually(lambda s=session: b"READY" in s.received, "each session's app")
            channel.close()


async def test_a_connection_that_runs_no_terminal_is_closed(ssh_door: SSHDoorMaker) -> None:
    _, port = await ssh_door(limits=DoorLimits(login_timeout=1))
    conn = await connect(port)
    # Sessions without a terminal are refused and end; the connection itself stays open...
    for _ in range(5):
        channel, _ = await conn.create_session(Collector, encoding=None)
        await channel.wait_closed()
    # ...until the door closes it for never running a terminal session.
    await asyncio.wait_for(conn.wait_closed(), 30)


async def test_the_terminal_is_restored_however_the_session_ends(ssh_door: SSHDoorMaker,
                                                                 ssh_tmux: SSHTmux) -> None:
    # Idle long enough for the app to start and be looked at on a loaded machine.
    _, port = await ssh_door("--alt", limits=DoorLimits(idle_timeout=4))
    command = shlex.join(ssh_argv(port, user="bob"))
    await ssh_tmux.start(f"{command}; echo EXIT=$?; sleep 60", 100, 30)
    await ssh_tmux.wait_for("ALT")

    async def flags() -> str:
        return await ssh_tmux.tmux("display-message", "-p",
                                   "#{alternate_on} #{mouse_any_flag} #{cursor_flag}")

    assert (await flags()).split() == ["1", "1", "0"]  # the app's state while it runs
    await ssh_tmux.wait_for("closed after 4 s without input")
    await ssh_tmux.wait_for("EXIT=1")
    assert (await flags()).split() == ["0", "0", "1"]


async def test_the_terminal_is_restored_when_the_server_stops(ssh_door: SSHDoorMaker,
                                                             ssh_tmux: SSHTmux) -> None:
    door, port = await ssh_door("--alt")
    command = shlex.join(ssh_argv(port, user="bob"))
    await ssh_tmux.start(f"{command}; echo EXIT=$?; sleep 60", 100, 30)
    await ssh_tmux.wait_for("ALT")
    await door.close()
    await ssh_tmux.wait_for("the server is shutting down")
    await ssh_tmux.wait_for("EXIT=1")
    flags = await ssh_tmux.tmux("display-message", "-p",
                                "#{alternate_on} #{mouse_any_flag} #{cursor_flag}")
    assert flags.split() == ["0", "0", "1"]


async def test_sessions_get_a_minimal_environment(ssh_door: SSHDoorMaker,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARDTUI_TEST_SECRET", "server only")
    _, port = await ssh_door()
    async with await connect(port) as conn:
        channel, session = await open_terminal(conn, 80, 24)
        await ssh_eventually(lambda: b"READY" in session.received, "the app")
        keys = session.received.split(b"ENVKEYS=", 1)[1].split()[0].decode()
        channel.close()
    assert set(keys.split(",")) <= {"PATH", "TERM", "LANG", "LC_ALL", "LC_CTYPE"}, keys


async def test_refusals_do_not_show_the_address_the_door_listens_on(
        ssh_door: SSHDoorMaker) -> None:
    _, port = await ssh_door()
    for command in ([], ["ls"]):
        status, _, err = await ssh_run([*ssh_argv(port, "-T"), *command])
        assert status == 1 and "ssh -t" in err
        assert "127.0.0.1" not in err and str(port) not in err


async def test_connections_not_logged_in_are_capped_in_total(ssh_door: SSHDoorMaker) -> None:
    door, port = await ssh_door(limits=DoorLimits(startups_per_address=5, max_startups=7))
    loop = asyncio.get_running_loop()
    silent: list[socket.socket] = []
    try:
        for source in ("127.0.0.2", "127.0.0.3", "127.0.0.4"):
            for _ in range(4):
                sock = socket.socket()
                sock.setblocking(False)
                sock.bind((source, 0))
                await loop.sock_connect(sock, ("127.0.0.1", port))
                silent.append(sock)
        ended = [asyncio.create_task(read_to_end(sock)) for sock in silent]
        await ssh_eventually(lambda: sum(task.done() for task in ended) == 5, "five dropped")
        assert door.startup_count == 7
        for task in ended:
            task.cancel()
    finally:
        for sock in silent:
            sock.close()
