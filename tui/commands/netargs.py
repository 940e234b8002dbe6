"""What the network commands share: the options of every seat, and stopping on a signal."""

from __future__ import annotations

import argparse
import signal
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio


def add_player_arguments(parser: argparse.ArgumentParser) -> None:
    """Name, sign, result file and pacing: what every seat may set."""
    parser.add_argument("--name", help="your name at the table (default: your login name)")
    parser.add_argument("--sign", help="your zodiac sign for Zodiak (e.g. leo)")
    parser.add_argument("--result", type=Path, metavar="FILE",
                        help="write the final match result as JSON to FILE")
    parser.add_argument("--ascii", action="store_true", help="no Unicode suit symbols")


def stop_on_signals() -> asyncio.Event:
    """An event that SIGINT or SIGTERM sets, for a command that runs until its operator stops it."""
    import asyncio  # here, so that the SSH launcher importing this module stays cheap

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    return stop
