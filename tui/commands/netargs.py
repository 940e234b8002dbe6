"""Options shared by `cardtui host` and `cardtui join`."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_player_arguments(parser: argparse.ArgumentParser) -> None:
    """Name, sign, result file and pacing: what every seat may set."""
    parser.add_argument("--name", help="your name at the table (default: your login name)")
    parser.add_argument("--sign", help="your zodiac sign for Zodiak (e.g. leo)")
    parser.add_argument("--result", type=Path, metavar="FILE",
                        help="write the final match result as JSON to FILE")
    parser.add_argument("--ascii", action="store_true", help="no Unicode suit symbols")

