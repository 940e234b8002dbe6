"""The SSH front door: every SSH terminal session gets its own program in its own pseudo-terminal."""

from __future__ import annotations

import asyncio
import hmac
import logging
import os
from collections import Counter
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncssh

from netplay.ssh.hostkey import fingerprint, load_or_create_host_key
from netplay.ssh.visitor import DoorSession, SessionInfo

__all__ = ["CommandFactory", "DoorLimits", "SSHDoor", "SessionInfo"]

log = logging.getLogger(__name__)

UTF8_LOCALE = "C.UTF-8"


@dataclass(frozen=True)
class DoorLimits:
    """Bounds on what the door gives out: sessions per address and in total, and timeouts (s)."""

    sessions_per_address: int = 4
    total_sessions: int = 64
    idle_timeout: float = 30 * 60
    login_timeout: float = 60

    def __post_init__(self) -> None:
        for name in ("sessions_per_address", "total_sessions", "idle_timeout", "login_timeout"):
            if getattr(self, name) <= 0:
                raise ValueError(f"DoorLimits.{name} must be positive, not {getattr(self, name)}")


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
        self._sessions: set[DoorSession] = set()
        self._sessions_by_address: Counter[str] = Counter()
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def fingerprint(self) -> str:
        """Return the host key's fingerprint as OpenSSH shows it ("SHA256:...")."""
        return fingerprint(self._host_key)

    @property
    def idle_timeout(self) -> float:
        """Return after how many seconds without client input a session is closed."""
        return self.limits.idle_timeout

    def command_for(self, info: SessionInfo) -> Sequence[str]:
        """Return the argv the command factory gives for the session described by info."""
        return self.command(info)

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
        # No COLUMNS/LINES: programs prefer them to the pty's size and would never see a resize.
        for frozen in ("COLUMNS", "LINES"):
            environment.pop(frozen, None)
        environment.update(TERM=info.term, LANG=UTF8_LOCALE, LC_ALL=UTF8_LOCALE)
        return environment

    def admit(self, session: DoorSession, address: str) -> str | None:
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

    def release(self, session: DoorSession, address: str) -> None:
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

    def session_requested(self) -> DoorSession:
        if self._no_session_timer is not None:
            self._no_session_timer.cancel()
        return DoorSession(self._door)

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
