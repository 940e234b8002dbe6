"""The SSH front door: every SSH terminal session gets its own program in its own pseudo-terminal."""

from __future__ import annotations

import asyncio
import hmac
import logging
import os
import re
import signal
from collections import Counter
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncssh

from netplay.ptychild import INPUT_HIGH_WATER, PtyChild, TerminalSize
from netplay.sshkeys import fingerprint, load_or_create_host_key

log = logging.getLogger(__name__)

# How long a hung-up program may take to exit before it gets the next, harsher signal.
TERMINATE_GRACE = 1.0
# Output still in the pty when the program exits is delivered if it arrives within this.
OUTPUT_DRAIN_TIMEOUT = 1.0
DEFAULT_TERM = "xterm-256color"
UTF8_LOCALE = "C.UTF-8"
# TERM ends up in terminfo lookups, so anything that could name a path is replaced.
_SAFE_TERM = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,63}")


@dataclass(frozen=True)
class SessionInfo:
    """Who opened an SSH terminal session, from where, and with what terminal."""

    username: str
    peer_address: str
    peer_port: int
    term: str
    width: int
    height: int


@dataclass(frozen=True)
class DoorLimits:
    """Bounds on what the door gives out: sessions per address and in total, and timeouts (s)."""

    sessions_per_address: int = 4
    total_sessions: int = 64
    idle_timeout: float = 30 * 60
    login_timeout: float = 60


CommandFactory = Callable[[SessionInfo], Sequence[str]]


class SSHDoor:
    """An asyncssh server that runs command(session) in a new pty for each SSH terminal session."""

    def __init__(
        self,
        command: CommandFactory,
        host_key_path: Path,
        port: int = 2222,
        bind: str = "0.0.0.0",
        authorized_keys: Path | None = None,
        password: str | None = None,
        limits: DoorLimits = DoorLimits(),
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.command = command
        self.limits = limits
        self._host_key = load_or_create_host_key(Path(host_key_path))
        self._port = port
        self._bind = bind
        self._authorized_keys = (
            asyncssh.read_authorized_keys(str(authorized_keys)) if authorized_keys else None
        )
        self._password = password
        self._env = env
        self._acceptor: asyncssh.SSHAcceptor | None = None
        self._connections: set[asyncssh.SSHServerConnection] = set()
        self._sessions: set[_DoorSession] = set()
        self._sessions_by_address: Counter[str] = Counter()
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def fingerprint(self) -> str:
        """Return the host key's fingerprint as OpenSSH shows it ("SHA256:...")."""
        return fingerprint(self._host_key)

    @property
    def session_count(self) -> int:
        """Return how many sessions currently have a running program."""
        return len(self._sessions)

    @property
    def child_pids(self) -> list[int]:
        """Return the process ids of the programs currently running for sessions."""
        return [session.child.pid for session in self._sessions if session.child is not None]

    async def start(self) -> int:
        """Start listening and return the bound port (useful when port 0 was asked for)."""
        self._acceptor = await asyncssh.create_server(
            lambda: _DoorServer(self),
            self._bind,
            self._port,
            server_host_keys=[self._host_key],
            login_timeout=self.limits.login_timeout,
            keepalive_interval=60,
            encoding=None,
            line_editor=False,
            x11_forwarding=False,
            agent_forwarding=False,
            sftp_factory=None,
            allow_scp=False,
        )
        return self._acceptor.get_port()

    async def close(self) -> None:
        """Stop listening, disconnect every client, and end and reap every session's program."""
        if self._acceptor is not None:
            self._acceptor.close()
            await self._acceptor.wait_closed()
        for connection in list(self._connections):
            connection.close()
        for session in list(self._sessions):
            session.hang_up()
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        for connection in list(self._connections):
            await connection.wait_closed()

    @property
    def accepts_keys(self) -> bool:
        """Return whether clients may log in with a key from the authorized keys file."""
        return self._authorized_keys is not None

    @property
    def accepts_password(self) -> bool:
        """Return whether clients may log in with the door's password."""
        return self._password is not None

    @property
    def requires_auth(self) -> bool:
        """Return whether clients must prove a key or password (otherwise anyone may enter)."""
        return self.accepts_keys or self.accepts_password

    def password_matches(self, password: str) -> bool:
        """Return whether password is the door's password, compared in constant time."""
        return self._password is not None and hmac.compare_digest(
            password.encode(), self._password.encode()
        )

    def child_environment(self, info: SessionInfo) -> dict[str, str]:
        """Return the environment for a session's program: the base plus terminal and locale."""
        environment = dict(os.environ if self._env is None else self._env)
        environment.update(
            TERM=info.term,
            LANG=UTF8_LOCALE,
            LC_ALL=UTF8_LOCALE,
            COLUMNS=str(info.width),
            LINES=str(info.height),
        )
        return environment

    def admit(self, session: _DoorSession, address: str) -> str | None:
        """Count session in if the limits allow it; otherwise return the reason it was refused."""
        if len(self._sessions) >= self.limits.total_sessions:
            return "cardtui: the server is full right now; please try again in a few minutes."
        if self._sessions_by_address[address] >= self.limits.sessions_per_address:
            limit = self.limits.sessions_per_address
            return (
                f"cardtui: too many sessions from your address ({limit} at most); "
                "close one and try again."
            )
        self._sessions.add(session)
        self._sessions_by_address[address] += 1
        return None

    def release(self, session: _DoorSession, address: str) -> None:
        """Count a session out again."""
        if session in self._sessions:
            self._sessions.discard(session)
            self._sessions_by_address[address] -= 1
            if self._sessions_by_address[address] <= 0:
                del self._sessions_by_address[address]

    def run_task(self, coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run coroutine as a task that close() waits for."""
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(_log_failure)
        return task

    def connection_opened(self, connection: asyncssh.SSHServerConnection) -> None:
        """Track a client connection so close() can end it."""
        self._connections.add(connection)

    def connection_closed(self, connection: asyncssh.SSHServerConnection) -> None:
        """Stop tracking a client connection."""
        self._connections.discard(connection)

    def set_client_keys(self, connection: asyncssh.SSHServerConnection) -> None:
        """Give connection the keys it may authenticate with, if the door restricts keys."""
        if self._authorized_keys is not None:
            connection.set_authorized_keys(self._authorized_keys)


def _log_failure(task: asyncio.Task[Any]) -> None:
    """Log a session task that died of an unexpected error, since nobody awaits its result."""
    if not task.cancelled() and task.exception() is not None:
        log.error("ssh door task failed", exc_info=task.exception())


def _terminal_message(text: str) -> bytes:
    """Return text as one line a raw-mode terminal shows properly."""
    return f"{text}\r\n".encode()


class _DoorServer(asyncssh.SSHServer):
    """One client connection: authentication and the refusal of anything but terminal sessions."""

    def __init__(self, door: SSHDoor) -> None:
        self._door = door
        self._connection: asyncssh.SSHServerConnection | None = None
        self._no_session_timer: asyncio.TimerHandle | None = None

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self._connection = conn
        self._door.connection_opened(conn)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._no_session_timer is not None:
            self._no_session_timer.cancel()
        if self._connection is not None:
            self._door.connection_closed(self._connection)

    def begin_auth(self, username: str) -> bool:
        if self._connection is not None:
            self._door.set_client_keys(self._connection)
        return self._door.requires_auth

    def auth_completed(self) -> None:
        # A connection that never opens a session (ssh -N) can only want what we refuse.
        self._no_session_timer = asyncio.get_running_loop().call_later(
            self._door.limits.login_timeout, self._close_sessionless
        )

    def _close_sessionless(self) -> None:
        if self._connection is not None:
            self._connection.disconnect(
                asyncssh.DISC_BY_APPLICATION,
                "cardtui: this server only offers its card table; connect with ssh -t",
            )

    def public_key_auth_supported(self) -> bool:
        return self._door.accepts_keys

    def password_auth_supported(self) -> bool:
        return self._door.accepts_password

    def validate_password(self, username: str, password: str) -> bool:
        return self._door.password_matches(password)

    def session_requested(self) -> _DoorSession:
        if self._no_session_timer is not None:
            self._no_session_timer.cancel()
        return _DoorSession(self._door)

    def connection_requested(self, dest_host: str, dest_port: int, orig_host: str,
                             orig_port: int) -> bool:
        raise asyncssh.ChannelOpenError(
            asyncssh.OPEN_ADMINISTRATIVELY_PROHIBITED,
            "port forwarding is not available on this cardtui server",
        )

    def unix_connection_requested(self, dest_path: str) -> bool:
        raise asyncssh.ChannelOpenError(
            asyncssh.OPEN_ADMINISTRATIVELY_PROHIBITED,
            "socket forwarding is not available on this cardtui server",
        )

    def server_requested(self, listen_host: str, listen_port: int) -> bool:
        return False

    def unix_server_requested(self, listen_path: str) -> bool:
        return False


class _DoorSession(asyncssh.SSHServerSession[bytes]):
    """One SSH session channel: a program on a pty whose bytes it relays both ways."""

    def __init__(self, door: SSHDoor) -> None:
        self._door = door
        self._channel: asyncssh.SSHServerChannel[bytes] | None = None
        self._command: str | None = None
        self._term: str | None = None
        self._size = TerminalSize(80, 24)
        self._address = ""
        self.child: PtyChild | None = None
        self._early_input = bytearray()
        self._gone = False
        self._hangup: asyncio.Task[Any] | None = None
        self._last_input = 0.0
        self._idle_timer: asyncio.TimerHandle | None = None

    # asyncssh callbacks, in the order a client's requests arrive.

    def connection_made(self, chan: asyncssh.SSHServerChannel[bytes]) -> None:
        self._channel = chan
        peer = chan.get_extra_info("peername") or ("", 0)
        self._address, self._port = str(peer[0]), int(peer[1])

    def pty_requested(self, term_type: str, term_size: tuple[int, int, int, int],
                      term_modes: Mapping[int, int]) -> bool:
        self._term = term_type if _SAFE_TERM.fullmatch(term_type) else DEFAULT_TERM
        self._size = _usable_size(*term_size)
        return True

    def shell_requested(self) -> bool:
        return True

    def exec_requested(self, command: str) -> bool:
        # Accepted only so the refusal can be explained to the person who typed it.
        self._command = command
        return True

    def subsystem_requested(self, subsystem: str) -> bool:
        return False

    def session_started(self) -> None:
        if self._command is not None:
            self._refuse(
                "cardtui: this server runs only the card table, not commands; "
                f"connect without one: {self._how_to_connect()}"
            )
            return
        if self._term is None:
            self._refuse(f"cardtui needs a terminal: connect with {self._how_to_connect()}")
            return
        refusal = self._door.admit(self, self._address)
        if refusal is not None:
            self._refuse(refusal)
            return
        self._door.run_task(self._run())

    def data_received(self, data: bytes, datatype: asyncssh.DataType) -> None:
        self._last_input = asyncio.get_running_loop().time()
        if self.child is None:
            self._early_input += data
            return
        self.child.write(data)
        if self.child.pending_input > INPUT_HIGH_WATER and self._channel is not None:
            self._channel.pause_reading()

    def eof_received(self) -> bool:
        # A terminal sends ^D as a byte; a real EOF just means no more input, not goodbye.
        return True

    def terminal_size_changed(self, width: int, height: int, pixwidth: int,
                              pixheight: int) -> None:
        self._size = _usable_size(width, height, pixwidth, pixheight)
        if self.child is not None:
            self.child.resize(self._size)

    def pause_writing(self) -> None:
        if self.child is not None:
            self.child.pause_output()

    def resume_writing(self) -> None:
        if self.child is not None:
            self.child.resume_output()

    def connection_lost(self, exc: Exception | None) -> None:
        self._gone = True
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        self.hang_up()
        self._door.release(self, self._address)

    # The session's own work.

    def hang_up(self) -> None:
        """End the session's program (hangup, then harsher) unless that is already under way."""
        if self.child is not None and self._hangup is None:
            self._hangup = self._door.run_task(self.child.terminate(TERMINATE_GRACE))

    async def _run(self) -> None:
        """Start the program, relay until it exits, then report its status to the client."""
        channel = self._channel
        assert channel is not None and self._term is not None
        info = SessionInfo(
            username=channel.get_extra_info("username") or "",
            peer_address=self._address,
            peer_port=self._port,
            term=self._term,
            width=self._size.columns,
            height=self._size.rows,
        )
        try:
            self.child = await PtyChild.spawn(
                list(self._door.command(info)),
                self._door.child_environment(info),
                self._size,
                self._send_output,
                channel.resume_reading,
            )
        # The factory is the embedding program's code: whatever it raises, the person at the
        # terminal must get an answer rather than a session that hangs open.
        except Exception as error:  # noqa: BLE001
            log.error("could not start the session program for %s: %s", info, error)
            self._refuse("cardtui: the server could not start the game; please tell its operator.")
            self._door.release(self, self._address)
            return
        log.info("ssh session for %r from %s runs pid %d", info.username, info.peer_address,
                 self.child.pid)
        if self._gone:
            self.hang_up()
            return
        self.child.resize(self._size)  # the client may have resized while we were starting
        self.child.write(bytes(self._early_input))
        self._early_input.clear()
        self._watch_idleness()
        status = await self.child.wait()
        await self.child.wait_output_ended(OUTPUT_DRAIN_TIMEOUT)
        self.hang_up()  # whatever the program left running in its group goes with it
        if status >= 0:
            channel.exit(status)
        else:
            channel.exit_with_signal(signal.Signals(-status).name.removeprefix("SIG"))

    def _send_output(self, data: bytes) -> None:
        """Pass the program's output to the client, dropping it once the client has left."""
        if self._channel is not None and not self._channel.is_closing():
            self._channel.write(data)

    def _watch_idleness(self) -> None:
        """Close the session once the client has sent nothing for the idle timeout."""
        loop = asyncio.get_running_loop()
        timeout = self._door.limits.idle_timeout
        quiet_for = loop.time() - self._last_input if self._last_input else 0.0
        if self._last_input == 0.0:
            self._last_input = loop.time()
        if quiet_for >= timeout:
            minutes = max(1, round(timeout / 60))
            self._refuse(f"cardtui: closed after {minutes} min without input.", leading_newline=True)
            return
        self._idle_timer = loop.call_later(timeout - quiet_for, self._watch_idleness)

    def _refuse(self, message: str, leading_newline: bool = False) -> None:
        """Tell the client why on stderr and close the session with status 1."""
        if self._channel is None:
            return
        text = ("\r\n" if leading_newline else "") + message
        self._channel.write_stderr(_terminal_message(text))
        self._channel.exit(1)

    def _how_to_connect(self) -> str:
        """Return the ssh command line that would open a terminal session on this door."""
        channel = self._channel
        username = channel.get_extra_info("username") if channel else None
        local = channel.get_extra_info("sockname") if channel else None
        host = str(local[0]) if local else "HOST"
        port = int(local[1]) if local else 22
        target = f"{username}@{host}" if username else host
        return f"ssh -t -p {port} {target}" if port != 22 else f"ssh -t {target}"


def _usable_size(width: int, height: int, pixwidth: int = 0, pixheight: int = 0) -> TerminalSize:
    """Return the client's size, or 80x24 where it sent zero (some clients do)."""
    return TerminalSize(width or 80, height or 24, pixwidth, pixheight)
