"""Options shared by `cardtui host` and `cardtui join`."""

from __future__ import annotations

import argparse
import socket
from pathlib import Path


def add_player_arguments(parser: argparse.ArgumentParser) -> None:
    """Name, sign, result file and pacing: what every seat may set."""
    parser.add_argument("--name", help="your name at the table (default: your login name)")
    parser.add_argument("--sign", help="your zodiac sign for Zodiak (e.g. leo)")
    parser.add_argument("--result", type=Path, metavar="FILE",
                        help="write the final match result as JSON to FILE")
    parser.add_argument("--ascii", action="store_true", help="no Unicode suit symbols")


def lan_address() -> str:
    """This machine's address on the local network, as others would reach it.

    `gethostbyname(gethostname())` gives 127.0.1.1 on stock Debian; the address the system
    would send from to a LAN peer is one others can use. Connecting a UDP socket sends nothing.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: routed like a LAN peer, never sent to
            address = probe.getsockname()[0]
        except OSError:
            address = ""
    return address if address and not address.startswith("127.") else socket.gethostname()
