"""The seat file: what lets a seat come back to its table after its process or connection ends."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

from netplay.fair import FairnessError, Identity
from netplay.machine import write_private

log = logging.getLogger("cardtui.client")  # the client's logger: the seat file is its concern


@dataclass
class SeatIdentity:
    """What lets a seat come back: its token, its key seed and its nonces, in a small file."""

    token: bytes | None = None
    key: Identity = field(default_factory=Identity.generate)
    nonces: dict[str, str] = field(default_factory=dict)  # "table round/epoch" -> hex
    revealed: set[str] = field(default_factory=set)  # keys of nonces already revealed: never reused

    @classmethod
    def load(cls, path: Path | None) -> SeatIdentity:
        """The identity stored at `path`, or a fresh one."""
        if path is not None and path.exists():
            try:
                data = json.loads(path.read_text())
                return cls(bytes.fromhex(data["token"]) if data.get("token") else None,
                           Identity(bytes.fromhex(data["key"])), dict(data.get("nonces", {})),
                           {str(key) for key in data.get("revealed", [])})
            except (ValueError, KeyError, TypeError, FairnessError):
                log.warning("ignoring unreadable seat file %s", path)
        return cls()

    def save(self, path: Path | None) -> None:
        """Store the identity at `path` (readable by its owner only)."""
        if path is None:
            return
        # Written whole: a seat killed mid-write must still find its seat and key.
        write_private(path, json.dumps({"token": self.token.hex() if self.token else None,
                                        "key": self.key.seed.hex(), "nonces": self.nonces,
                                        "revealed": sorted(self.revealed)}))
