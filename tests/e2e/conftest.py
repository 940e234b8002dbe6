"""Fixtures for end-to-end tests: the processes a test starts; for the SSH door, a door on
loopback, a stand-in app, tmux."""

from __future__ import annotations

import asyncio
import secrets
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from netplay.ssh.door import SSHDoor
from tests.e2e.test_netplay import Procs


@pytest.fixture
def procs(tmp_path: Path) -> Iterator[Procs]:
    """The processes one test starts, each logging to NAME.log in its folder, all stopped after."""
    started = Procs(tmp_path)
    yield started
    started.stop_all()


# Generous: only a broken door should ever get near it, and polling returns as soon as it can.
SSH_WAIT_SECONDS = 15.0
SSH_POLL_SECONDS = 0.05

SSH_STAND_IN_APP = r'''
"""A stand-in for the lobby app: reports what it sees, echoes lines, exits 7 on "quit"."""
import os, signal, subprocess, sys

def report_size(*_):
    columns, rows = os.get_terminal_size(0)
    print(f"SIZE {columns}x{rows}", flush=True)

print(f"TERM={os.environ.get('TERM')} USER={sys.argv[1]} PID={os.getpid()}", flush=True)
print(f"LANG={os.environ.get('LANG')} LC_ALL={os.environ.get('LC_ALL')}", flush=True)
print("ENVKEYS=" + ",".join(sorted(os.environ)), flush=True)
if "--alt" in sys.argv:
    # What a full-screen app does: alternate screen, mouse reporting on, cursor hidden.
    print("\x1b[?1049h\x1b[?1000h\x1b[?1006h\x1b[?25lALT", flush=True)
if "--grandchild" in sys.argv:
    # A descendant that ignores hangups, to prove the door ends the whole process group.
    helper = subprocess.Popen([sys.executable, "-c",
        "import signal, time; signal.signal(signal.SIGHUP, signal.SIG_IGN); time.sleep(600)"])
    print(f"GRANDCHILD={helper.pid}", flush=True)
report_size()
signal.signal(signal.SIGWINCH, report_size)
print("READY", flush=True)
for line in sys.stdin:
    line = line.rstrip("\n")
    if line == "quit":
        sys.exit(7)
    print(f"ECHO:{line}", flush=True)
'''


def ssh_options() -> list[str]:
    """Return ssh options that keep the test hermetic: no config, agent, or known_hosts."""
    return [
        "-F", "/dev/null",
        "-o", "StrictHostKeyChecking=no",
        "-o", "UserKnownHostsFile=/dev/null",
        "-o", "LogLevel=ERROR",
        "-o", "IdentityAgent=none",
        "-o", "BatchMode=yes",
    ]


def ssh_argv(port: int, *extra: str, user: str = "alice") -> list[str]:
    """Return the argv of a real OpenSSH client connecting to the door on 127.0.0.1:port."""
    return ["/usr/bin/ssh", *ssh_options(), "-p", str(port), *extra, f"{user}@127.0.0.1"]


async def ssh_run(argv: list[str], timeout: float = SSH_WAIT_SECONDS) -> tuple[int, str, str]:
    """Run argv with no input to completion and return (status, stdout, stderr)."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), timeout)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    assert process.returncode is not None
    return process.returncode, out.decode(errors="replace"), err.decode(errors="replace")


async def ssh_eventually(check: Callable[[], Any], what: str) -> Any:
    """Poll check until it returns something truthy, failing with what after the deadline."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SSH_WAIT_SECONDS
    while True:
        result = check()
        if result:
            return result
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(SSH_POLL_SECONDS)


@dataclass
class SSHTmux:
    """A private tmux server (its own socket) driving one terminal for a test."""

    socket: str

    async def tmux(self, *args: str) -> str:
        """Run a tmux command on this test's server and return its output."""
        process = await asyncio.create_subprocess_exec(
            "tmux", "-L", self.socket, *args,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await process.communicate()
        if process.returncode != 0:
            raise RuntimeError(f"tmux {args[0]} failed: {err.decode().strip()}")
        return out.decode()

    async def start(self, shell_command: str, width: int = 100, height: int = 30) -> None:
        """Open a detached window of the given size running shell_command."""
        await self.tmux(
            "new-session", "-d", "-x", str(width), "-y", str(height), shell_command
        )
        await self.tmux("set-option", "-g", "remain-on-exit", "on")

    async def screen(self) -> str:
        """Return the visible text of the window."""
        return await self.tmux("capture-pane", "-p")

    async def wait_for(self, text: str) -> str:
        """Wait until text is on screen and return the screen."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + SSH_WAIT_SECONDS
        while True:
            screen = await self.screen()
            if text in screen:
                return screen
            if loop.time() > deadline:
                raise AssertionError(f"{text!r} never appeared; screen:\n{screen}")
            await asyncio.sleep(SSH_POLL_SECONDS)

    async def type(self, *keys: str) -> None:
        """Send keys to the window as if typed (tmux key names such as Enter allowed)."""
        await self.tmux("send-keys", *keys)

    async def pane_pid(self) -> int:
        """Return the process id of the program running in the window."""
        return int((await self.tmux("list-panes", "-F", "#{pane_pid}")).split()[0])


@pytest.fixture
async def ssh_tmux() -> AsyncIterator[SSHTmux]:
    """Yield a private tmux server, killed after the test."""
    terminal = SSHTmux(socket=f"cardtui-door-{secrets.token_hex(6)}")
    yield terminal
    process = await asyncio.create_subprocess_exec(
        "tmux", "-L", terminal.socket, "kill-server",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )
    await process.wait()


@pytest.fixture
def ssh_stand_in_app(tmp_path: Path) -> Path:
    """Write the stand-in app script into tmp_path and return its path."""
    script = tmp_path / "stand_in_app.py"
    script.write_text(SSH_STAND_IN_APP)
    return script


SSHDoorMaker = Callable[..., Awaitable[tuple[SSHDoor, int]]]


@pytest.fixture
async def ssh_door(tmp_path: Path, ssh_stand_in_app: Path) -> AsyncIterator[SSHDoorMaker]:
    """Yield a coroutine that starts a door on 127.0.0.1 (free port) running the stand-in app."""
    doors: list[SSHDoor] = []

    async def make(*app_args: str, **options: Any) -> tuple[SSHDoor, int]:
        options.setdefault("host_key_path", tmp_path / "host_key")
        door = SSHDoor(
            lambda session: [sys.executable, str(ssh_stand_in_app), session.username, *app_args],
            port=0,
            bind="127.0.0.1",
            **options,
        )
        port = await door.start()
        doors.append(door)
        return door, port

    yield make
    for door in doors:
        await door.close()
