"""The SSH door, driven by the real OpenSSH client on loopback."""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import signal
import socket
import stat
from pathlib import Path

import asyncssh
import pytest

from netplay.ssh.door import DoorLimits, SSHDoor
from tests.e2e.conftest import (
    SSHDoorMaker,
    SSHTmux,
    ssh_argv,
    ssh_eventually,
    ssh_options,
    ssh_run,
)

pytestmark = pytest.mark.timeout(60)


def is_running(pid: int) -> bool:
    """Return whether pid names a live process (a zombie someone else must reap is not live)."""
    try:
        with open(f"/proc/{pid}/stat") as status:
            state = status.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in {"Z", "X"}


def screen_value(screen: str, key: str) -> str:
    """Return the word after "key=" on the screen."""
    return screen.split(f"{key}=", 1)[1].split()[0]


async def test_session_shows_user_term_echoes_utf8_resizes_and_exits_with_status(
    ssh_door: SSHDoorMaker, ssh_tmux: SSHTmux
) -> None:
    door, port = await ssh_door()
    command = shlex.join(ssh_argv(port, user="bob"))
    # A TERM unlike the door's fallback proves the client's own value arrives.
    await ssh_tmux.start(f"TERM=screen-256color {command}; echo EXIT=$?; sleep 60", 100, 30)

    screen = await ssh_tmux.wait_for("READY")
    assert "USER=bob" in screen
    assert "TERM=screen-256color" in screen
    assert "LANG=C.UTF-8 LC_ALL=C.UTF-8" in screen
    assert "SIZE 100x30" in screen

    await ssh_tmux.type("cards ♠♥♦♣ ok", "Enter")
    await ssh_tmux.wait_for("ECHO:cards ♠♥♦♣ ok")

    await ssh_tmux.tmux("resize-window", "-x", "90", "-y", "25")
    await ssh_tmux.wait_for("SIZE 90x25")

    child_pid = int(screen_value(screen, "PID"))
    await ssh_tmux.type("quit", "Enter")
    await ssh_tmux.wait_for("EXIT=7")
    await ssh_eventually(lambda: not is_running(child_pid), "the app to be reaped")
    assert door.session_count == 0


async def test_killing_the_client_ends_the_app_and_its_descendants(
    ssh_door: SSHDoorMaker, ssh_tmux: SSHTmux
) -> None:
    door, port = await ssh_door("--grandchild")
    await ssh_tmux.start(shlex.join(ssh_argv(port)))
    screen = await ssh_tmux.wait_for("READY")
    child_pid = int(screen_value(screen, "PID"))
    grandchild_pid = int(screen_value(screen, "GRANDCHILD"))
    assert door.child_pids == [child_pid]
    assert is_running(grandchild_pid)

    os.kill(await ssh_tmux.pane_pid(), signal.SIGKILL)

    await ssh_eventually(lambda: door.session_count == 0, "the door to notice the client left")
    await ssh_eventually(lambda: not is_running(child_pid), "the app to end")
    await ssh_eventually(lambda: not is_running(grandchild_pid), "the app's helper to end")
    with pytest.raises(ProcessLookupError):
        os.kill(child_pid, 0)  # reaped, not a zombie


async def test_session_without_terminal_is_told_to_use_ssh_t(ssh_door: SSHDoorMaker) -> None:
    door, port = await ssh_door()
    status, out, err = await ssh_run(ssh_argv(port, "-T"))
    assert status == 1
    assert "cardtui needs a terminal: connect with ssh -t" in err
    assert out == ""
    assert door.session_count == 0


async def test_commands_are_refused(ssh_door: SSHDoorMaker, tmp_path: Path) -> None:
    _, port = await ssh_door()
    witness = tmp_path / "witness"
    status, _, err = await ssh_run([*ssh_argv(port), f"touch {witness}"])
    assert status == 1
    assert "runs only the card table, not commands" in err
    assert not witness.exists()
    status, _, err = await ssh_run([*ssh_argv(port, "-tt"), "ls"])
    assert status == 1
    assert "not commands" in err


async def test_sftp_is_refused(ssh_door: SSHDoorMaker) -> None:
    _, port = await ssh_door()
    sftp = shutil.which("sftp")
    if sftp is not None:
        status, _, err = await ssh_run(
            [sftp, *ssh_options(), "-P", str(port), "-b", "/dev/null", "alice@127.0.0.1"]
        )
        assert status != 0
        assert "subsystem request failed" in err
    async with asyncssh.connect(
        "127.0.0.1", port, username="alice", known_hosts=None, client_keys=None, agent_path=None
    ) as connection:
        with pytest.raises(asyncssh.ChannelOpenError):
            await connection.start_sftp_client()


def free_port() -> int:
    """Return a loopback port that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def test_port_forwarding_is_refused(ssh_door: SSHDoorMaker) -> None:
    _, port = await ssh_door(limits=DoorLimits(login_timeout=2))

    status, _, err = await ssh_run(
        ssh_argv(port, "-N", "-o", "ExitOnForwardFailure=yes", "-R", "0:127.0.0.1:9")
    )
    assert status == 255
    assert "remote port forwarding failed" in err

    local_port = free_port()
    # The channel-open failure is reported at ssh's INFO level; the first LogLevel given wins.
    forwarder = await asyncio.create_subprocess_exec(
        "/usr/bin/ssh", "-o", "LogLevel=INFO",
        *ssh_argv(port, "-N", "-L", f"{local_port}:127.0.0.1:{port}")[1:],
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )

    async def try_the_tunnel() -> bytes | None:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", local_port)
        except ConnectionRefusedError:
            return None
        received = await reader.read()  # the door's SSH banner would arrive if it forwarded
        writer.close()
        return received

    loop = asyncio.get_running_loop()
    deadline = loop.time() + 10
    while (received := await try_the_tunnel()) is None and loop.time() < deadline:
        await asyncio.sleep(0.05)
    assert received == b""
    # A connection that opens no session has nothing to do here; the door ends it.
    _, err_bytes = await asyncio.wait_for(forwarder.communicate(), 15)
    err = err_bytes.decode()
    assert "administratively prohibited" in err
    assert "only offers its card table" in err


async def test_password_mode(ssh_door: SSHDoorMaker) -> None:
    _, port = await ssh_door(password="queen of hearts")
    options = {"known_hosts": None, "client_keys": None, "agent_path": None}
    async with asyncssh.connect(
        "127.0.0.1", port, username="alice", password="queen of hearts", **options
    ) as connection:
        process = await connection.create_process(term_type="xterm", term_size=(80, 24))
        line = await asyncio.wait_for(process.stdout.readline(), 15)
        assert "USER=alice" in line
        process.stdin.write("quit\n")
        completed = await asyncio.wait_for(process.wait(), 15)
        assert completed.exit_status == 7
    with pytest.raises(asyncssh.PermissionDenied):
        await asyncssh.connect(
            "127.0.0.1", port, username="alice", password="knave", **options
        )
    status, _, err = await ssh_run(ssh_argv(port, "-T"))
    assert status == 255
    assert "Permission denied" in err


async def make_key(path: Path) -> Path:
    """Generate an ed25519 key pair at path with the real ssh-keygen and return the private key."""
    status, _, err = await ssh_run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)])
    assert status == 0, err
    return path


async def test_authorized_keys_mode(ssh_door: SSHDoorMaker, tmp_path: Path) -> None:
    allowed = await make_key(tmp_path / "allowed")
    stranger = await make_key(tmp_path / "stranger")
    authorized = tmp_path / "authorized_keys"
    authorized.write_text(Path(f"{allowed}.pub").read_text())
    _, port = await ssh_door(authorized_keys=authorized)

    def with_key(key: Path) -> list[str]:
        return ssh_argv(port, "-T", "-o", "IdentitiesOnly=yes", "-i", str(key))

    status, _, err = await ssh_run(with_key(allowed))
    assert (status, "cardtui needs a terminal" in err) == (1, True)
    status, _, err = await ssh_run(with_key(stranger))
    assert status == 255
    assert "Permission denied" in err


async def test_per_address_and_total_limits(ssh_door: SSHDoorMaker) -> None:
    door, port = await ssh_door(limits=DoorLimits(sessions_per_address=1, total_sessions=2))
    holders: list[asyncio.subprocess.Process] = []

    async def hold_session(source: str) -> None:
        process = await asyncio.create_subprocess_exec(
            *ssh_argv(port, "-tt", "-b", source),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        holders.append(process)
        assert process.stdout is not None
        while b"READY" not in await asyncio.wait_for(process.stdout.readline(), 15):
            pass

    try:
        await hold_session("127.0.0.1")
        status, _, err = await ssh_run(ssh_argv(port, "-tt", "-b", "127.0.0.1"))
        assert status == 1
        assert "too many sessions from your address" in err
        await hold_session("127.0.0.2")
        status, _, err = await ssh_run(ssh_argv(port, "-tt", "-b", "127.0.0.3"))
        assert status == 1
        assert "the server is full" in err
        assert door.session_count == 2
    finally:
        for process in holders:
            process.kill()
            await process.wait()


async def test_idle_session_is_closed(ssh_door: SSHDoorMaker) -> None:
    door, port = await ssh_door(limits=DoorLimits(idle_timeout=1))
    status, out, err = await ssh_run(ssh_argv(port, "-tt"))
    assert "READY" in out
    assert "closed after 1 s without input" in err
    assert status == 1
    await ssh_eventually(lambda: door.session_count == 0, "the idle session to be released")


async def test_host_key_is_kept_across_restarts(ssh_door: SSHDoorMaker, tmp_path: Path) -> None:
    host_key = tmp_path / "kept_host_key"
    known_hosts = tmp_path / "known_hosts"
    first, port = await ssh_door(host_key_path=host_key)
    # ssh takes the first value given for an option, so these must precede the usual ones.
    pinned = [
        "/usr/bin/ssh", "-o", f"UserKnownHostsFile={known_hosts}", "-o", "StrictHostKeyChecking=yes",
        *ssh_options(), "-p", str(port), "-T", "alice@127.0.0.1",
    ]
    assert stat.S_IMODE(host_key.stat().st_mode) == 0o600
    status, listing, _ = await ssh_run(["ssh-keygen", "-lf", str(host_key)])
    assert first.fingerprint in listing
    status, scanned, _ = await ssh_run(
        ["ssh-keyscan", "-p", str(port), "-t", "ed25519", "127.0.0.1"]
    )
    known_hosts.write_text(scanned)
    await first.close()

    second = SSHDoor(lambda session: ["true"], host_key, port=port, bind="127.0.0.1")
    await second.start()
    try:
        assert second.fingerprint == first.fingerprint
        status, _, err = await ssh_run(pinned)
        assert status == 1, err
        assert "needs a terminal" in err
    finally:
        await second.close()


async def test_closing_the_door_ends_live_sessions(
    ssh_door: SSHDoorMaker, ssh_tmux: SSHTmux
) -> None:
    door, port = await ssh_door("--grandchild")
    await ssh_tmux.start(f"{shlex.join(ssh_argv(port))}; echo EXIT=$?; sleep 60")
    screen = await ssh_tmux.wait_for("READY")
    child_pid = int(screen_value(screen, "PID"))
    grandchild_pid = int(screen_value(screen, "GRANDCHILD"))

    await door.close()

    assert not is_running(child_pid)
    await ssh_eventually(lambda: not is_running(grandchild_pid), "the app's helper to end")
    await ssh_tmux.wait_for("EXIT=")


async def test_a_failing_command_factory_is_reported_to_the_client(tmp_path: Path) -> None:
    def broken_factory(session: object) -> list[str]:
        return [str(tmp_path / "no-such-program")]

    door = SSHDoor(broken_factory, tmp_path / "host_key", port=0, bind="127.0.0.1")
    port = await door.start()
    try:
        status, _, err = await ssh_run(ssh_argv(port, "-tt"))
        assert status == 1
        assert "could not start the game" in err
        assert door.session_count == 0
    finally:
        await door.close()


async def test_a_client_that_never_logs_in_is_dropped(ssh_door: SSHDoorMaker) -> None:
    _, port = await ssh_door(limits=DoorLimits(login_timeout=1))
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        banner = await asyncio.wait_for(reader.readline(), 15)
        assert banner.startswith(b"SSH-2.0-")
        # Say nothing more: the door must hang up on its own once the login timeout passes.
        while await asyncio.wait_for(reader.read(4096), 15):
            pass
    finally:
        writer.close()
