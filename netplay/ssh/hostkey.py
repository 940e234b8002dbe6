"""The SSH door's host key: made once, kept private, reused so clients can pin it."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import asyncssh

HOST_KEY_ALGORITHM = "ssh-ed25519"
PRIVATE_FILE_MODE = 0o600


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
    path.parent.mkdir(parents=True, exist_ok=True)
    key = asyncssh.generate_private_key(HOST_KEY_ALGORITHM, comment="cardtui ssh door")
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(key.export_private_key())
            file.flush()
            os.fsync(file.fileno())
        # link() refuses to overwrite, so two doors starting together agree on one key.
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass
    finally:
        temporary.unlink(missing_ok=True)
