"""The SSH door's host key: made once, kept private, reused so clients can pin it."""

from __future__ import annotations

import os
from pathlib import Path

import asyncssh

from netplay.machine import PRIVATE_FILE_MODE, write_private

HOST_KEY_ALGORITHM = "ssh-ed25519"


def load_or_create_host_key(path: Path) -> asyncssh.SSHKey:
    """Return the ed25519 host key stored at path, generating and saving it (mode 0600) if absent."""
    path = Path(path)
    if not path.exists():
        _write_new_key(path)
    # A key readable by others is a key anyone on the machine can impersonate the server with.
    if path.stat().st_mode & 0o077:
        os.chmod(path, PRIVATE_FILE_MODE)
    return asyncssh.read_private_key(path)


def fingerprint(key: asyncssh.SSHKey) -> str:
    """Return the key's fingerprint in the form OpenSSH prints it ("SHA256:base64")."""
    return key.get_fingerprint("sha256")


def _write_new_key(path: Path) -> None:
    """Write a fresh key to path atomically, keeping any key another process wrote first."""
    key = asyncssh.generate_private_key(HOST_KEY_ALGORITHM, comment="cardtui ssh door")
    # Not replacing: two doors starting together agree on one key.
    write_private(path, key.export_private_key(), replace=False)
