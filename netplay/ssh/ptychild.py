"""A child program in its own session whose controlling terminal is a fresh pseudo-terminal."""

from __future__ import annotations

import asyncio
import errno
import fcntl
import json
import os
import signal
import socket
import struct
import termios
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

READ_CHUNK = 65536
# Past this much unread input the caller should stop reading from its client.
INPUT_HIGH_WATER = 256 * 1024
# A group of processes has no exit notification, so its disappearance is polled for.
GROUP_POLL_INTERVAL = 0.02
# A fork server that has not named its child within this is taken to be stuck.
FORK_ANSWER_SECONDS = 30.0


@dataclass(frozen=True)
class TerminalSize:
    """A terminal's size in character cells and, when the client knows it, in pixels."""

    columns: int
    rows: int
    pixel_width: int = 0
    pixel_height: int = 0

    def packed(self) -> bytes:
        """Return the size as the struct winsize that TIOCSWINSZ expects."""
        return struct.pack("HHHH", self.rows, self.columns, self.pixel_width, self.pixel_height)


@dataclass(frozen=True)
class ForkServer:
    """A process that forks a session's program on request, listening on a Unix socket.

    It is sent request (plus "env") as JSON with the pty's slave side, which its child makes
    its controlling terminal; it answers with the child's pid on a line; the child writes its
    exit status on a line when it ends, and ends when the connection is closed. fallback is the
    argv to start instead when the fork server cannot be reached.
    """

    socket_path: str
    fallback: Sequence[str]
    request: Mapping[str, object] = field(default_factory=dict)


class _Program(Protocol):
    """What PtyChild needs of the program on its pty."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> int: ...


class _ForkedProgram:
    """A program a fork server started for us: its pid, and its end as its connection reports."""

    def __init__(self, pid: int, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._reader = reader
        self._writer = writer
        self._ended = asyncio.get_running_loop().create_task(self._read_status())

    async def _read_status(self) -> int:
        status = 1  # it ended without saying how (killed, say)
        try:
            while line := await self._reader.readline():
                if line.strip().lstrip(b"-").isdigit():
                    status = int(line)
        except OSError:
            pass
        self.returncode = status
        self._writer.close()
        return status

    async def wait(self) -> int:
        return await asyncio.shield(self._ended)

    def hang_up(self) -> None:
        """Close the connection, which tells the program to end."""
        self._writer.close()


def _take_controlling_terminal() -> None:
    """Make the pty on stdin the controlling terminal of the new session (runs in the child)."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class PtyChild:
    """A running program attached to the slave side of a pty whose master side we hold."""

    def __init__(
        self,
        process: _Program,
        master_fd: int,
        on_output: Callable[[bytes], None],
        on_input_drained: Callable[[], None],
    ) -> None:
        self._process = process
        self._master_fd = master_fd
        self._on_output = on_output
        self._on_input_drained = on_input_drained
        self._loop = asyncio.get_running_loop()
        self._pending_input = bytearray()
        self._output_paused = False
        self._output_ended = asyncio.Event()
        self._closed = False
        self._loop.add_reader(master_fd, self._read_output)

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str],
        env: Mapping[str, str],
        size: TerminalSize,
        on_output: Callable[[bytes], None],
        on_input_drained: Callable[[], None],
    ) -> PtyChild:
        """Start argv in a new session on a new pty of the given size and return it running."""
        master_fd, slave_fd = os.openpty()
        try:
            fcntl.ioctl(slave_fd, termios.TIOCSWINSZ, size.packed())
            os.set_blocking(master_fd, False)
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=slave_fd,
                stdout=slave_fd,
                stderr=slave_fd,
                env=dict(env),
                start_new_session=True,
                preexec_fn=_take_controlling_terminal,
            )
        except BaseException:
            os.close(master_fd)
            raise
        finally:
            # Only the child may hold the slave: its last close is how we learn output has ended.
            os.close(slave_fd)
        return cls(process, master_fd, on_output, on_input_drained)

    @classmethod
    async def hand_over(
        cls,
        server: ForkServer,
        env: Mapping[str, str],
        size: TerminalSize,
        on_output: Callable[[bytes], None],
        on_input_drained: Callable[[], None],
    ) -> PtyChild:
        """Have the fork server start the program on a new pty of the given size; return it.

        Raises OSError if the fork server cannot be reached or does not answer.
        """
        master_fd, slave_fd = os.openpty()
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            fcntl.ioctl(slave_fd, termios.TIOCSWINSZ, size.packed())
            os.set_blocking(master_fd, False)
            conn.setblocking(False)
            await asyncio.get_running_loop().sock_connect(conn, server.socket_path)
            request = json.dumps({**server.request, "env": dict(env)}).encode()
            # One small message on a fresh connection: the socket buffer takes it whole.
            socket.send_fds(conn, [request], [slave_fd])
            reader, writer = await asyncio.open_unix_connection(sock=conn)
        except BaseException:
            conn.close()
            os.close(master_fd)
            raise
        finally:
            os.close(slave_fd)  # the child holds it now; its last close ends the output
        try:
            answer = await asyncio.wait_for(reader.readline(), FORK_ANSWER_SECONDS)
            if not answer.strip().isdigit():
                raise OSError(f"the fork server answered {answer[:40]!r}, not a pid")
        except BaseException:
            writer.close()
            os.close(master_fd)
            raise
        return cls(_ForkedProgram(int(answer), reader, writer), master_fd, on_output,
                   on_input_drained)

    @property
    def pid(self) -> int:
        """Return the child's process id, which is also its session and process group id."""
        return self._process.pid

    @property
    def pending_input(self) -> int:
        """Return how many bytes of input are waiting for the child to read them."""
        return len(self._pending_input)

    def write(self, data: bytes) -> None:
        """Queue data as keyboard input to the child, writing as much as the pty takes now."""
        if self._closed or not data:
            return
        was_idle = not self._pending_input
        self._pending_input += data
        if was_idle:
            self._write_input()

    def resize(self, size: TerminalSize) -> None:
        """Set the pty's window size; the kernel then sends SIGWINCH to the foreground group."""
        if not self._closed:
            fcntl.ioctl(self._master_fd, termios.TIOCSWINSZ, size.packed())

    def pause_output(self) -> None:
        """Stop reading the child's output until resume_output (the child blocks when the pty fills)."""
        if not self._output_paused and not self._output_ended.is_set() and not self._closed:
            self._loop.remove_reader(self._master_fd)
        self._output_paused = True

    def resume_output(self) -> None:
        """Read the child's output again after pause_output."""
        if self._output_paused and not self._output_ended.is_set() and not self._closed:
            self._loop.add_reader(self._master_fd, self._read_output)
        self._output_paused = False

    async def wait(self) -> int:
        """Wait for the child to exit and return its status (negative: killed by that signal)."""
        return await self._process.wait()

    async def wait_output_ended(self, timeout: float) -> None:
        """Wait until every program on the pty has closed it and its output was delivered."""
        try:
            await asyncio.wait_for(self._output_ended.wait(), timeout)
        except TimeoutError:
            pass

    def signal_group(self, signum: int) -> bool:
        """Send signum to the child's process group; return False if the group is gone."""
        try:
            os.killpg(self._process.pid, signum)
        except ProcessLookupError:
            return False
        return True

    async def terminate(self, grace: float) -> int:
        """Hang up, then TERM, then KILL the child's process group; return the reaped status."""
        for signum in (signal.SIGHUP, signal.SIGTERM):
            if not self.signal_group(signum) or await self._group_gone_within(grace):
                break
        # Whatever survived (say, a grandchild that ignores hangups) gets no further say.
        self.signal_group(signal.SIGKILL)
        status = await self._process.wait()
        self.close()
        return status

    async def _group_gone_within(self, timeout: float) -> bool:
        """Return True once the child is reaped and no process is left in its group."""
        deadline = self._loop.time() + timeout
        while self._loop.time() < deadline:
            if self._process.returncode is not None and not self.signal_group(0):
                return True
            await asyncio.sleep(GROUP_POLL_INTERVAL)
        return False

    def close(self) -> None:
        """Release the pty master; programs still on the slave side get a hangup."""
        if self._closed:
            return
        self._closed = True
        if isinstance(self._process, _ForkedProgram):
            self._process.hang_up()
        self._loop.remove_reader(self._master_fd)
        self._loop.remove_writer(self._master_fd)
        os.close(self._master_fd)
        self._output_ended.set()

    def _read_output(self) -> None:
        """Forward whatever the child wrote; EIO means the last slave descriptor closed."""
        try:
            data = os.read(self._master_fd, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError as error:
            if error.errno != errno.EIO:
                raise
            data = b""
        if data:
            self._on_output(data)
            return
        self._loop.remove_reader(self._master_fd)
        self._output_ended.set()

    def _write_input(self) -> None:
        """Move queued input into the pty, waiting for writability when its buffer is full."""
        try:
            written = os.write(self._master_fd, self._pending_input)
        except BlockingIOError:
            written = 0
        except OSError:
            # The child is gone; its input has nowhere to go.
            self._pending_input.clear()
            written = 0
        del self._pending_input[:written]
        if self._pending_input:
            self._loop.add_writer(self._master_fd, self._write_input)
            return
        self._loop.remove_writer(self._master_fd)
        self._on_input_drained()
