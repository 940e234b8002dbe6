"""The SSH front door: every SSH terminal session gets its own program in its own pseudo-terminal."""

from __future__ import annotations

import asyncio
import hmac
import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncssh
from asyncssh.auth import _server_auth_handlers, _ServerPublicKeyAuth

from netplay.addresses import address_key
from netplay.ssh.guard import (
    DescriptorWarning,
    LoginThrottle,
    PacedReads,
    ReadBudget,
    SessionCounter,
    log_failure,
    log_success,
)
from netplay.ssh.hostkey import fingerprint, load_or_create_host_key
from netplay.ssh.ptychild import ForkServer
from netplay.ssh.visitor import DoorSession, SessionInfo

__all__ = ["CommandFactory", "DoorLimits", "ForkServer", "SSHDoor", "SessionInfo"]

log = logging.getLogger("cardtui.door")
# How often refused connections are summed up in the log, instead of a line each.
REFUSAL_LOG_INTERVAL = 60.0
SHUTDOWN_NOTICE_SECONDS = 2.0  # how long clients get to take in the shutdown notice

UTF8_LOCALE = "C.UTF-8"
# Key exchange: X25519 first (cheap and what OpenSSH picks), the NIST curves and a 2048-bit
# group for clients without it.
KEX_ALGORITHMS = ("curve25519-sha256", "curve25519-sha256@libssh.org", "ecdh-sha2-nistp256",
                  "ecdh-sha2-nistp384", "ecdh-sha2-nistp521", "diffie-hellman-group14-sha256")
# AES-GCM, then AES-CTR, and no ChaCha20-Poly1305: OpenSSH takes that one whenever it is
# offered, and asyncssh builds it from three cipher objects per packet where AES-GCM is one call.
CIPHERS = ("aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "aes128-ctr", "aes256-ctr")


@dataclass(frozen=True)
class DoorLimits:
    """Bounds on what the door gives out, like OpenSSH's MaxAuthTries, MaxStartups and MaxSessions.

    Sessions (running programs) per address and in total; authentication attempts per
    connection; connections not yet logged in, in total and per address; session channels per
    connection; and the idle and login timeouts in seconds. A connection that has not started
    a terminal session when the login timeout has passed again after login is closed.
    """

    sessions_per_address: int = 4
    total_sessions: int = 64
    idle_timeout: float = 30 * 60
    login_timeout: float = 60
    max_auth_tries: int = 6
    max_startups: int = 100
    startups_per_address: int = 10
    channels_per_connection: int = 10
    # Bytes a second. A person types, clicks and resizes in a few KiB a second, and four
    # seconds' worth may come at once (a key exchange, a paste); the door parses the worst
    # bytes (SSH_MSG_IGNORE before the key exchange) at about 1 us each, so all addresses
    # together cost the process at most about a quarter of a core.
    read_per_address: int = 32 * 1024
    read_total: int = 256 * 1024

    def __post_init__(self) -> None:
        for name in ("sessions_per_address", "total_sessions", "idle_timeout", "login_timeout",
                     "max_auth_tries", "max_startups", "startups_per_address",
                     "channels_per_connection", "read_per_address", "read_total"):
            if getattr(self, name) <= 0:
                raise ValueError(f"DoorLimits.{name} must be positive, not {getattr(self, name)}")


# The argv of a session's program, or the fork server that starts it.
CommandFactory = Callable[[SessionInfo], Sequence[str] | ForkServer]


class SSHDoor:
    """An asyncssh server that runs command(session) in a new pty for each SSH terminal session.

    With both a password and authorized keys, a client needs both: a listed key first, then
    the password (OpenSSH's "AuthenticationMethods publickey,password").
    """

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
        sessions: SessionCounter | None = None,
        throttle: LoginThrottle | None = None,
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
        self.sessions = sessions or SessionCounter(limits.total_sessions,
                                                   limits.sessions_per_address)
        self.throttle = throttle or LoginThrottle()
        self.reads = ReadBudget(limits.read_per_address, limits.read_total)
        self._startups: Counter[str] = Counter()
        self._refused_since_log = 0
        self._refusal_logged = -REFUSAL_LOG_INTERVAL
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def fingerprint(self) -> str:
        """Return the host key's fingerprint as OpenSSH shows it ("SHA256:...")."""
        return fingerprint(self._host_key)

    @property
    def idle_timeout(self) -> float:
        """Return after how many seconds without client input a session is closed."""
        return self.limits.idle_timeout

    def command_for(self, info: SessionInfo) -> Sequence[str] | ForkServer:
        """Return what the command factory gives for the session described by info."""
        return self.command(info)

    @property
    def session_count(self) -> int:
        """Return how many sessions currently have a running program."""
        return sum(isinstance(s, DoorSession) for s in self.sessions)

    @property
    def startup_count(self) -> int:
        """Return how many connections have not logged in yet."""
        return sum(self._startups.values())

    @property
    def child_pids(self) -> list[int]:
        """Return the process ids of the programs currently running for sessions."""
        return [s.child.pid for s in self.sessions
                if isinstance(s, DoorSession) and s.child is not None]

    async def start(self) -> int:
        """Start listening and return the bound port (useful when port 0 was asked for)."""
        _server_auth_handlers[b"publickey"] = _KeyThenMaybePassword
        DescriptorWarning.install_once(asyncio.get_running_loop())
        self._acceptor = await asyncssh.create_server(
            lambda: _DoorServer(self),
            self._bind,
            self._port,
            server_host_keys=[self._host_key],
            kex_algs=KEX_ALGORITHMS,
            encryption_algs=CIPHERS,
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
        ending = [session for session in self.sessions if isinstance(session, DoorSession)]
        for session in ending:
            session.shut_down()  # before the connections go: the terminal is restored first
        if ending:
            # The restore, the message and the exit status reach the client before its
            # connection is closed; a client that does not answer is cut off after a moment.
            await asyncio.wait([asyncio.ensure_future(s.wait_closed()) for s in ending],
                               timeout=SHUTDOWN_NOTICE_SECONDS)
        for connection in list(self._connections):
            connection.close()
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        for connection in list(self._connections):
            await connection.wait_closed()

    @property
    def accepts_keys(self) -> bool:
        """Return whether clients may (or must) log in with a key from the authorized keys file."""
        return self._authorized_keys is not None

    @property
    def accepts_password(self) -> bool:
        """Return whether clients may (or must) log in with the door's password."""
        return self._password is not None

    @property
    def requires_auth(self) -> bool:
        """Return whether clients must prove a key or password (otherwise anyone may enter)."""
        return self.accepts_keys or self.accepts_password

    @property
    def requires_both(self) -> bool:
        """Return whether clients must prove a listed key and then the password."""
        return self.accepts_keys and self.accepts_password

    def password_matches(self, password: str) -> bool:
        """Return whether password is the door's password, compared in constant time."""
        return self._password is not None and hmac.compare_digest(
            password.encode(), self._password.encode()
        )

    def child_environment(self, info: SessionInfo) -> dict[str, str]:
        """Return the environment for a session's program: the base plus terminal and locale.

        The base is the env given to the door, or else PATH alone: the server's own
        environment (secrets included) is none of a visitor's program's business.
        """
        environment = dict({"PATH": os.environ.get("PATH", os.defpath)} if self._env is None
                           else self._env)
        # No COLUMNS/LINES: programs prefer them to the pty's size and would never see a resize.
        for frozen in ("COLUMNS", "LINES"):
            environment.pop(frozen, None)
        environment.update(TERM=info.term, LANG=UTF8_LOCALE, LC_ALL=UTF8_LOCALE)
        return environment

    def admit(self, session: DoorSession, address: str) -> str | None:
        """Count session in if the limits allow it; otherwise return the reason it was refused."""
        return self.sessions.admit(session, address)

    def release(self, session: DoorSession, address: str) -> None:
        """Count a session out again."""
        self.sessions.release(session, address)

    def run_task(self, coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run coroutine as a task that close() waits for."""
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(_log_failure)
        return task

    def connection_opened(self, connection: asyncssh.SSHServerConnection, address: str) -> bool:
        """Track a new client connection; return False if it must be dropped at once."""
        address = address_key(address)
        if (self.startup_count >= self.limits.max_startups
                or self._startups[address] >= self.limits.startups_per_address):
            self._note_refusal(address)
            return False
        self._connections.add(connection)
        self._startups[address] += 1
        return True

    def logged_in(self, address: str) -> None:
        """Count a connection out of those still logging in."""
        address = address_key(address)
        self._startups[address] -= 1
        if self._startups[address] <= 0:
            del self._startups[address]

    def connection_closed(self, connection: asyncssh.SSHServerConnection) -> None:
        """Stop tracking a client connection."""
        self._connections.discard(connection)

    def _note_refusal(self, address: str) -> None:
        """Log refused connections, one line per interval however many there are."""
        self._refused_since_log += 1
        now = time.monotonic()
        if now - self._refusal_logged >= REFUSAL_LOG_INTERVAL:
            log.warning("ssh: dropping connections from %s and others: too many not logged in"
                        " (%d dropped since the last such line)", address,
                        self._refused_since_log)
            self._refused_since_log = 0
            self._refusal_logged = now

    def set_client_keys(self, connection: asyncssh.SSHServerConnection) -> None:
        """Give connection the keys it may authenticate with, if the door restricts keys."""
        if self._authorized_keys is not None:
            connection.set_authorized_keys(self._authorized_keys)


def _log_failure(task: asyncio.Task[Any]) -> None:
    """Log a session task that died of an unexpected error, since nobody awaits its result."""
    if not task.cancelled() and task.exception() is not None:
        log.error("ssh door task failed", exc_info=task.exception())


class _KeyThenMaybePassword(_ServerPublicKeyAuth):
    """asyncssh's public key check, answering "partial success" when the password must follow."""

    async def send_success(self) -> None:
        owner = self._conn.get_owner()
        if isinstance(owner, _DoorServer) and owner.key_proven():
            self.send_failure(partial_success=True)
            return
        await super().send_success()


class _DoorServer(asyncssh.SSHServer):
    """One client connection: authentication, its limits, and the refusal of all but terminals."""

    def __init__(self, door: SSHDoor) -> None:
        self._door = door
        self._connection: asyncssh.SSHServerConnection | None = None
        self._address = ""
        self._port = 0
        self._admitted = False
        self._logging_in = False
        self._failures = 0
        self._has_key = False
        self._username = ""
        self._channels = 0
        self._programs = 0
        self._no_terminal_timer: asyncio.TimerHandle | None = None

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self._connection = conn
        peer = conn.get_extra_info("peername") or ("", 0)
        self._address, self._port = str(peer[0]), int(peer[1])
        self._admitted = self._door.connection_opened(conn, self._address)
        if not self._admitted:
            asyncio.get_running_loop().call_soon(conn.abort)
            return
        self._logging_in = True
        # asyncssh reads its socket itself and has no hook to pace that: its transport gets a
        # protocol that stands between them (netplay/ssh/guard.py), before the first byte.
        transport = conn._transport
        if transport is not None:
            transport.set_protocol(PacedReads(conn, transport, self._door.reads, self._address))

    def connection_lost(self, exc: Exception | None) -> None:
        if self._no_terminal_timer is not None:
            self._no_terminal_timer.cancel()
        if self._logging_in:
            self._logging_in = False
            self._door.logged_in(self._address)
        if self._connection is not None and self._admitted:
            self._door.connection_closed(self._connection)

    def begin_auth(self, username: str) -> bool:
        self._username = username
        if self._connection is not None:
            self._door.set_client_keys(self._connection)
        return self._door.requires_auth

    def auth_completed(self) -> None:
        if self._logging_in:
            self._logging_in = False
            self._door.logged_in(self._address)
        method = ("publickey+password" if self._door.requires_both else
                  "publickey" if self._has_key else
                  "password" if self._door.accepts_password else "open door")
        log_success("ssh", method, self._username, self._address, self._port)
        self._door.throttle.succeeded(self._address)
        self._expect_terminal()

    def _expect_terminal(self) -> None:
        """Close the connection unless a terminal session runs within the login timeout."""
        # A connection that never runs a terminal session can only want what we refuse.
        if self._no_terminal_timer is not None:
            self._no_terminal_timer.cancel()
        self._no_terminal_timer = asyncio.get_running_loop().call_later(
            self._door.limits.login_timeout, self._close_if_no_terminal
        )

    def _close_if_no_terminal(self) -> None:
        if self._connection is not None and self._programs == 0:
            self._connection.disconnect(
                asyncssh.DISC_BY_APPLICATION,
                "cardtui: this server only offers its card table; connect with ssh -t",
            )

    def key_proven(self) -> bool:
        """Note that the client proved a listed key; return whether the password must follow."""
        self._has_key = True
        if self._door.requires_both and self._connection is not None:
            # No further keys: what is left to prove is the password.
            self._connection.set_authorized_keys(None)
        return self._door.requires_both

    def _failed(self, method: str) -> None:
        """Count and log a failed attempt; past the limit, disconnect."""
        self._failures += 1
        recent = self._door.throttle.failed(self._address)
        log_failure("ssh", method, self._username, self._address, self._port, recent)
        if self._failures >= self._door.limits.max_auth_tries and self._connection is not None:
            self._connection.disconnect(asyncssh.DISC_NO_MORE_AUTH_METHODS_AVAILABLE,
                                        "cardtui: too many authentication failures")

    def public_key_auth_supported(self) -> bool:
        return self._door.accepts_keys and not self._has_key

    def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
        # Called only for a key that is not in the authorized keys.
        self._failed("publickey")
        return False

    def password_auth_supported(self) -> bool:
        if self._door.requires_both:
            return self._has_key
        return self._door.accepts_password

    async def validate_password(self, username: str, password: str) -> bool:
        await self._door.throttle.wait_turn(self._address)
        if self._door.password_matches(password) and (self._has_key
                                                      or not self._door.requires_both):
            return True
        self._failed("password")
        return False

    def session_requested(self) -> DoorSession | bool:
        if self._channels >= self._door.limits.channels_per_connection:
            return False
        self._channels += 1
        return DoorSession(self._door, on_started=self._program_started,
                           on_closed=self._channel_closed)

    def _program_started(self) -> None:
        self._programs += 1

    def _channel_closed(self, started: bool) -> None:
        self._channels -= 1
        self._programs -= started
        if started and self._programs == 0:
            self._expect_terminal()

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
