"""This machine: cardtui's data and config directories, its private-file writer, its address.

Every other part of netplay (and the app) may import this module; it imports none of them.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import socket
import threading
from pathlib import Path

import platformdirs

APP_NAME = "cardtui"
DATA_DIR_VARIABLE = "CARDTUI_DATA_DIR"
CONFIG_DIR_VARIABLE = "CARDTUI_CONFIG_DIR"
PRIVATE_FILE_MODE = 0o600
# Documentation addresses (RFC 5737, RFC 3849): never routed, so connecting a UDP socket to them
# only asks the kernel which interface would carry the traffic; nothing is sent.
_PROBES = ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1"))


def data_dir() -> Path:
    """Where cardtui keeps its files: $CARDTUI_DATA_DIR, else the platform's user data directory."""
    override = os.environ.get(DATA_DIR_VARIABLE)
    return Path(override) if override else platformdirs.user_data_path(APP_NAME)


def config_dir() -> Path:
    """Where the player's settings live: $CARDTUI_CONFIG_DIR, else the user's config directory."""
    override = os.environ.get(CONFIG_DIR_VARIABLE)
    return Path(override) if override else platformdirs.user_config_path(APP_NAME)


def write_private(path: Path, data: bytes | str, *, replace: bool = True,
                  sync: bool = True) -> bool:
    """Write `data` to `path` whole or not at all, readable by its owner only (0600) and fsync'd.

    The data goes to a new temporary file in the same directory, created 0600 (never readable
    by others, not even empty), flushed to disk, then renamed over `path`: a process killed
    mid-write leaves the old file or the new one, never half of one. With `replace=False` an
    existing `path` is kept (two processes creating it at once agree on one) and False returned.
    With `sync=False` the flush to disk is the caller's (see `flush_to_disk`): the rename is
    still atomic for every process, but a power cut may find the previous version.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode() if isinstance(data, str) else data
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
    renamed = False
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(payload)
            file.flush()
            if sync:
                os.fsync(file.fileno())
        if replace:
            os.replace(temporary, path)
            renamed = True
            return True
        try:
            os.link(temporary, path)  # link() refuses to overwrite, which replace() would not
        except FileExistsError:
            return False
        return True
    finally:
        if not renamed:
            temporary.unlink(missing_ok=True)


def flush_to_disk(path: Path) -> None:
    """fsync the file now at `path` (if any): what `write_private(sync=False)` left to do."""
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


class DiskFlusher:
    """fsyncs a file in a worker thread after each `write_private(sync=False)` of it.

    A save after every move cannot wait for the disk each time (a flush takes milliseconds,
    more on a busy disk) without the table waiting too. Requests made while a flush runs are
    merged into one more flush, so the newest version reaches the disk one flush after it was
    written. The thread waits `linger` seconds for the next request before it ends: starting
    one waits for it to run, which a table saving after every move should not do every move.
    """

    def __init__(self, linger: float = 2.0) -> None:
        self._wake = threading.Condition()
        self._pending: Path | None = None
        self._running = False
        self._linger = linger

    def request(self, path: Path) -> None:
        """Flush `path` soon (once more after the flush that is running, if one is)."""
        with self._wake:
            self._pending = path
            if self._running:
                self._wake.notify()
                return
            self._running = True
        threading.Thread(target=self._run, name="cardtui-flush", daemon=True).start()

    def _run(self) -> None:
        while True:
            with self._wake:
                if self._pending is None:
                    self._wake.wait(self._linger)
                path, self._pending = self._pending, None
                if path is None:
                    self._running = False
                    return
            try:
                flush_to_disk(path)
            except OSError:
                pass  # the next save tries again; the file itself is whole either way


def lan_address() -> str:
    """This machine's address on the network it routes outward through (IPv4 first), as others
    on that network would name it.

    `gethostbyname(gethostname())` answers 127.0.1.1 on Debian and its kin; the interface the
    kernel would send outward traffic through is the one others can reach. With no route out,
    the host name's address if it is not a loopback one, else the host name itself.
    """
    for family, probe in _PROBES:
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as probe_socket:
                probe_socket.connect((probe, 9))
                address = probe_socket.getsockname()[0]
        except OSError:
            continue
        if _usable(address):
            return address
    name = socket.gethostname()
    try:
        resolved = socket.gethostbyname(name)
    except OSError:
        return name
    return resolved if _usable(resolved) else name


def reachable_address(bind: str) -> str:
    """How others name this machine when a server listens on `bind`: the address itself if it
    is a specific one, else (every interface) the LAN address."""
    if bind in ("", "0.0.0.0", "::"):
        return lan_address()
    return bind


def host_and_port(host: str, port: int) -> str:
    """`host:port`, with an IPv6 address in brackets as URLs and `cardtui join` want it."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _usable(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return False
    return not (ip.is_loopback or ip.is_unspecified or ip.is_link_local)
