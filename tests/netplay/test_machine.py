"""netplay.machine: the one writer of private files, the one data directory, the one LAN address."""

from __future__ import annotations

import argparse
import ipaddress
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import platformdirs
import pytest

from netplay.machine import (
    DiskFlusher,
    config_dir,
    data_dir,
    flush_to_disk,
    host_and_port,
    lan_address,
    reachable_address,
    write_private,
)
from netplay.seat.keyfile import SeatIdentity
from netplay.ssh.hostkey import load_or_create_host_key
from tui.commands import host as host_command
from tui.commands import serve as serve_command

ROOT = Path(__file__).resolve().parents[2]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# -- the private file writer ---------------------------------------------------------------


def test_write_private_writes_0600_whatever_the_umask(tmp_path: Path) -> None:
    """A private file is created 0600 even under umask 0, in a directory it makes."""
    old = os.umask(0)
    try:
        path = tmp_path / "deep" / "er" / "secret.json"
        assert write_private(path, '{"a": 1}') is True
    finally:
        os.umask(old)
    assert path.read_text() == '{"a": 1}' and mode(path) == 0o600
    assert sorted(p.name for p in path.parent.iterdir()) == ["secret.json"]  # no temporary left


def test_write_private_replaces_a_readable_file_with_a_private_one(tmp_path: Path) -> None:
    """Rewriting a file that others could read leaves it 0600 with only the new content."""
    path = tmp_path / "save.json"
    path.write_text("old and longer than the new")
    path.chmod(0o644)
    write_private(path, b"new")
    assert path.read_bytes() == b"new" and mode(path) == 0o600


def test_write_private_without_replace_keeps_the_first(tmp_path: Path) -> None:
    """replace=False keeps an existing file, says so, and leaves no temporary behind."""
    path = tmp_path / "key"
    assert write_private(path, "first", replace=False) is True
    assert write_private(path, "second", replace=False) is False
    assert path.read_text() == "first" and os.listdir(tmp_path) == ["key"]


def test_concurrent_writers_leave_one_whole_file(tmp_path: Path) -> None:
    """Eight threads writing different contents at once: the file is exactly one of them."""
    path = tmp_path / "shared.json"
    contents = [bytes([65 + i]) * 200_000 for i in range(8)]
    threads = [threading.Thread(target=write_private, args=(path, c)) for c in contents]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert path.read_bytes() in contents and os.listdir(tmp_path) == ["shared.json"]


WRITER = """
import sys
from pathlib import Path
from netplay.machine import write_private
path = Path(sys.argv[1])
print("ready", flush=True)
n = 0
while True:
    n += 1
    write_private(path, bytes([65 + n % 2]) * 1_000_000)
"""


def test_a_writer_killed_mid_write_leaves_a_whole_file(tmp_path: Path) -> None:
    """A process killed while it rewrites a file over and over leaves the old file or the new
    one, never a part of one (written whole, then renamed)."""
    path = tmp_path / "state.bin"
    write_private(path, b"A" * 1_000_000)
    for _ in range(5):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], cwd=ROOT,
                                stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        for _ in range(3):
            write_private(tmp_path / "pace", b"x")  # a few of our own fsyncs let it get going
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        data = path.read_bytes()
        assert data in (b"A" * 1_000_000, b"B" * 1_000_000)
        assert mode(path) == 0o600


def test_the_seat_file_and_the_host_key_are_private(tmp_path: Path) -> None:
    """The seat file and the SSH host key are written by the one writer: 0600, whole."""
    seat_file = tmp_path / "seats" / "me.json"
    identity = SeatIdentity(token=b"\x01" * 16)
    identity.save(seat_file)
    assert mode(seat_file) == 0o600
    assert SeatIdentity.load(seat_file).key.seed == identity.key.seed
    key_path = tmp_path / "host_key"
    first = load_or_create_host_key(key_path)
    assert mode(key_path) == 0o600
    assert load_or_create_host_key(key_path).export_public_key() == first.export_public_key()


# -- the data directory --------------------------------------------------------------------


def test_data_dir_is_the_override_or_the_platform_directory(monkeypatch: pytest.MonkeyPatch,
                                                            tmp_path: Path) -> None:
    """$CARDTUI_DATA_DIR wins; without it, platformdirs' user data directory for cardtui."""
    monkeypatch.setenv("CARDTUI_DATA_DIR", str(tmp_path))
    assert data_dir() == tmp_path
    monkeypatch.delenv("CARDTUI_DATA_DIR")
    assert data_dir() == platformdirs.user_data_path("cardtui")


def test_every_default_file_lives_in_the_data_dir(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    """The saved match, the host's save, the seat files and the SSH host key share one
    directory, and $CARDTUI_DATA_DIR moves them all."""
    from tui.commands.join import seat_file_for
    from tui.matchsetup import save_path

    monkeypatch.setenv("CARDTUI_DATA_DIR", str(tmp_path))
    paths = [save_path(), host_command.default_save_path(),
             seat_file_for("ws://127.0.0.1:1/ws", None, "me"), serve_command.default_host_key()]
    assert all(tmp_path in p.parents for p in paths)


def test_config_dir_is_the_override_or_the_platform_directory(monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Path) -> None:
    """$CARDTUI_CONFIG_DIR wins; without it, platformdirs' user config directory for cardtui;
    the app's settings file is in it."""
    from tui.settings import settings_path

    monkeypatch.setenv("CARDTUI_CONFIG_DIR", str(tmp_path))
    assert config_dir() == tmp_path
    assert settings_path() == tmp_path / "settings.json"
    monkeypatch.delenv("CARDTUI_CONFIG_DIR")
    assert config_dir() == platformdirs.user_config_path("cardtui")


# -- the address others reach this machine by -------------------------------------------------


def test_the_lan_address_is_one_of_this_machines_own() -> None:
    """The LAN address is never a loopback one (Debian's 127.0.1.1), and a socket can bind to
    it, so it belongs to this machine; with no route out it falls back to the host name."""
    address = lan_address()
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        assert address == socket.gethostname()
        return
    assert not ip.is_loopback and not ip.is_unspecified
    family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        s.bind((address, 0))


def test_reachable_address_keeps_a_specific_bind() -> None:
    """A server bound to one address is reached at that address; bound to every interface, at
    the LAN address."""
    assert reachable_address("127.0.0.1") == "127.0.0.1"
    assert reachable_address("10.1.2.3") == "10.1.2.3"
    assert reachable_address("0.0.0.0") == reachable_address("::") == lan_address()


def test_host_and_port_brackets_ipv6() -> None:
    assert host_and_port("192.0.2.7", 80) == "192.0.2.7:80"
    assert host_and_port("fe80::1", 80) == "[fe80::1]:80"
    assert host_and_port("example.org", 22) == "example.org:22"


def test_host_and_serve_tell_others_the_lan_address(capsys: pytest.CaptureFixture[str]) -> None:
    """`cardtui host` and `cardtui serve` on every interface print the LAN address to join."""
    args = argparse.Namespace(bind="0.0.0.0", relay=None, game="zodiak", players=2)
    hint = host_command.announce(args, "ab" * 8, 7777)
    assert hint == f"cardtui join {host_and_port(lan_address(), 7777)}"
    serve_args = argparse.Namespace(bind="0.0.0.0", api_bind="0.0.0.0", authorized_keys=None,
                                    password=None, tls_cert=None)
    serve_command.announce(serve_args, "SHA256:x", 2222, 7777, 7778, 8080)
    out = capsys.readouterr().out
    assert f"ssh -p 2222 {lan_address()}" in out and "127.0.1.1" not in out
    assert f"ws://{host_and_port(lan_address(), 7778)}" in out
    assert f"http://{host_and_port(lan_address(), 8080)}/" in out


async def test_the_saved_match_is_private_and_replays_as_a_record(tmp_path: Path) -> None:
    """The match against bots saves itself 0600, and `cardtui replay` reads the save as the
    record of the round so far (docs/RECORDS.md, "Records the programs write")."""
    import asyncio
    import json

    from netplay.session.events import SeatInfo
    from netplay.session.local import LocalMatch
    from tui.cli import main

    path = tmp_path / "saved.json"
    seats = [SeatInfo("Me", "leo"), SeatInfo("Ada", "pisces", "greedy")]
    match = LocalMatch.new("zodiak", seats, seed=3, delay=0.0, save_path=path)
    await match.start()
    while match.state is None or match.state.turn != 0:
        await asyncio.sleep(0)
    await match.submit(next(iter(match.state.legal_moves())))
    while match.state.turn != 0 and not match.state.round_over:
        await asyncio.sleep(0)
    await match.close()
    assert mode(path) == 0o600
    saved = json.loads(path.read_text())
    assert "cardtui" in saved and len(saved["moves"]) >= 1
    assert main(["replay", "--json", str(path)]) == 0


def test_a_save_left_to_the_flusher_is_whole_and_reaches_the_disk(tmp_path: Path) -> None:
    # The host's save after every move: renamed into place at once, fsync'd beside the table.
    path = tmp_path / "hosted.json"
    flusher = DiskFlusher()
    for n in range(20):
        assert write_private(path, f'{{"n": {n}}}', sync=False) is True
        flusher.request(path)
    for _ in range(500):  # not a timing assertion: waits for the thread to end, at most 5 s
        if all(t.name != "cardtui-flush" for t in threading.enumerate()):
            break
        time.sleep(0.01)
    assert path.read_text() == '{"n": 19}'
    assert [p.name for p in tmp_path.iterdir()] == ["hosted.json"]  # no temporary left behind
    assert all(t.name != "cardtui-flush" for t in threading.enumerate())  # the thread ended
    flush_to_disk(tmp_path / "gone.json")  # a save already removed is nothing to flush
