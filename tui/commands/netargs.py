"""What the network commands share: the options of every seat, and stopping on a signal."""

from __future__ import annotations

import argparse
import math
import signal
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio
    import ssl


def add_player_arguments(parser: argparse.ArgumentParser) -> None:
    """Name, sign, result file and pacing: what every seat may set."""
    parser.add_argument("--name", help="your name at the table (default: the name saved in"
                        " Settings, else your login name)")
    parser.add_argument("--sign", help="your zodiac sign for Zodiak, e.g. leo (default: the"
                        " sign saved in Settings, else today's)")
    parser.add_argument("--result", type=Path, metavar="FILE",
                        help="write the final match result as JSON to FILE")
    parser.add_argument("--ascii", action="store_true", help="no Unicode suit symbols")


def add_think_argument(parser: argparse.ArgumentParser) -> None:
    """Declare --think, the expert bots' time limit per move."""
    parser.add_argument("--think", type=think_seconds, metavar="SECONDS",
                        help="an expert bot's time limit per move (default 0.8)")


def think_seconds(text: str) -> float:
    """--think's value, or argparse's error with the reason."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds < math.inf:
        raise argparse.ArgumentTypeError(f"{text[:20]!r} is not a time: seconds, more than 0")
    return seconds


def stop_on_signals() -> asyncio.Event:
    """An event that SIGINT or SIGTERM sets, for a command that runs until its operator stops it."""
    import asyncio  # here, so that the SSH launcher importing this module stays cheap

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    return stop


def server_tls(command: str, cert: str | None, key: str | None
               ) -> tuple[ssl.SSLContext | None, str | None]:
    """The server TLS context of --tls-cert and --tls-key (None without them), or why they
    cannot be used."""
    if not cert or not key:
        return None, None
    import ssl

    from netplay.relay.launch import tls_context

    try:
        return tls_context(cert, key), None
    except (OSError, ssl.SSLError) as exc:
        return None, f"cardtui {command}: cannot use {cert} and {key} for TLS: {exc.strerror or exc}"
