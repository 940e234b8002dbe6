"""One SSH session channel of the door: a program on its own pty, bytes relayed both ways."""

from __future__ import annotations

import asyncio
import logging
import re
import signal
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import asyncssh

from netplay.ssh.guard import capped_pixels, capped_size
from netplay.ssh.input_filter import InputFilter
from netplay.ssh.ptychild import INPUT_HIGH_WATER, ForkServer, PtyChild, TerminalSize

log = logging.getLogger(__name__)

# How long a hung-up program may take to exit before it gets the next, harsher signal.
TERMINATE_GRACE = 1.0
# Output still in the pty when the program exits is delivered if it arrives within this.
OUTPUT_DRAIN_TIMEOUT = 1.0
DEFAULT_TERM = "xterm-256color"
# TERM ends up in terminfo lookups, so anything that could name a path is replaced.
_SAFE_TERM = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,63}")
# Whatever state the program left the terminal in (it may have been killed mid-screen): back to
# the main screen, mouse reporting and bracketed paste off, cursor shown, colours reset.
RESTORE_TERMINAL = (b"\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1015l\x1b[?1004l"
                    b"\x1b[?2004l\x1b[?1049l\x1b[?25h\x1b[0m")


@dataclass(frozen=True)
class SessionInfo:
    """Who opened an SSH terminal session, from where, and with what terminal."""

    username: str
    peer_address: str
    peer_port: int
    term: str
    width: int
    height: int


class SessionHost(Protocol):
    """What a session needs from the door that owns it."""

    @property
    def idle_timeout(self) -> float:
        """Return after how many seconds without client input a session is closed."""

    def command_for(self, info: SessionInfo) -> Sequence[str] | ForkServer:
        """Return the argv to run for the session described by info, or who forks it."""

    def child_environment(self, info: SessionInfo) -> dict[str, str]:
        """Return the environment for the session's program."""

    def admit(self, session: DoorSession, address: str) -> str | None:
        """Count session in, or return why the limits refuse it."""

    def release(self, session: DoorSession, address: str) -> None:
        """Count session out again (no effect if it was never admitted)."""

    def run_task(self, coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run coroutine as a task the door waits for when it closes."""


class DoorSession(asyncssh.SSHServerSession[bytes]):
    """One SSH session channel: a program on a pty whose bytes it relays both ways."""

    def __init__(self, door: SessionHost, on_started: Callable[[], None] = lambda: None,
                 on_closed: Callable[[bool], None] = lambda started: None) -> None:
        self._door = door
        self._on_started = on_started
        self._on_closed = on_closed
        self._started = False
        self._channel: asyncssh.SSHServerChannel[bytes] | None = None
        self._command: str | None = None
        self._term: str | None = None
        self._size = TerminalSize(80, 24)
        self._address = ""
        self._port = 0
        self.child: PtyChild | None = None
        self._early_input = bytearray()
        self._input = InputFilter()  # why: netplay/ssh/input_filter.py
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
                f"connect with {self._how_to_connect()}"
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
        data = self._input.feed(data)
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
        self._on_closed(self._started)

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
            self.child = await self._start(info, channel)
        # The factory is the embedding program's code: whatever it raises, the person at the
        # terminal must get an answer rather than a session that hangs open.
        except Exception as error:  # noqa: BLE001
            log.error("could not start the session program for %s: %s", info, error)
            self._refuse("cardtui: the server could not start the game; please tell its operator.")
            self._door.release(self, self._address)
            return
        log.info("ssh session for %r from %s runs pid %d", info.username, info.peer_address,
                 self.child.pid)
        self._started = True
        self._on_started()
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
        self._send_output(RESTORE_TERMINAL)
        if status >= 0:
            channel.exit(status)
        else:
            channel.exit_with_signal(signal.Signals(-status).name.removeprefix("SIG"))

    async def _start(self, info: SessionInfo,
                     channel: asyncssh.SSHServerChannel[bytes]) -> PtyChild:
        """Start the session's program on a new pty: forked by the fork server if there is one."""
        command = self._door.command_for(info)
        environment = self._door.child_environment(info)
        if isinstance(command, ForkServer):
            try:
                return await PtyChild.hand_over(command, environment, self._size,
                                                self._send_output, channel.resume_reading)
            except OSError as error:
                log.warning("the fork server did not start a session (%s); starting it cold",
                            error)
                command = command.fallback
        return await PtyChild.spawn(list(command), environment, self._size, self._send_output,
                                    channel.resume_reading)

    def _send_output(self, data: bytes) -> None:
        """Pass the program's output to the client, dropping it once the client has left."""
        if self._channel is not None and not self._channel.is_closing():
            self._channel.write(data)

    def shut_down(self) -> None:
        """Leave the visitor's terminal as it was, say the server is stopping, and end the session."""
        self._send_output(RESTORE_TERMINAL)
        self._refuse("cardtui: the server is shutting down.", leading_newline=True)
        self.hang_up()

    async def wait_closed(self) -> None:
        """Return once the session's channel is closed (at once if it never opened)."""
        if self._channel is not None:
            await self._channel.wait_closed()

    def _watch_idleness(self) -> None:
        """Close the session once the client has sent nothing for the idle timeout."""
        loop = asyncio.get_running_loop()
        timeout = self._door.idle_timeout
        quiet_for = loop.time() - self._last_input if self._last_input else 0.0
        if self._last_input == 0.0:
            self._last_input = loop.time()
        if quiet_for >= timeout:
            # --idle-minutes takes fractions: say 30 s, not a rounded "1 min".
            quiet = (f"{timeout / 60:g} min" if timeout >= 60 and timeout % 60 == 0
                     else f"{timeout:g} s")
            self._send_output(RESTORE_TERMINAL)
            self._refuse(f"cardtui: closed after {quiet} without input.", leading_newline=True)
            self.hang_up()
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
        """Return how to open a terminal session, without naming the address we listen on."""
        # Behind a proxy or NAT our own address means nothing to the client, and it is not
        # ours to tell: the client knows what it typed.
        return "ssh -t and the address you used, and no command"


def _terminal_message(text: str) -> bytes:
    """Return text as one line a raw-mode terminal shows properly."""
    return f"{text}\r\n".encode()


def _usable_size(width: int, height: int, pixwidth: int = 0, pixheight: int = 0) -> TerminalSize:
    """Return the client's size capped (guard.MAX_COLUMNS x MAX_ROWS), 80x24 where it sent 0."""
    columns, rows = capped_size(width, height)
    return TerminalSize(columns, rows, capped_pixels(pixwidth), capped_pixels(pixheight))
