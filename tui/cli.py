"""The `cardtui` command: one sub-command per module in `tui.commands`."""

from __future__ import annotations

import argparse
import importlib
import sys
from importlib import metadata

# Each module defines `HELP` (one line), `add_arguments(parser)` and `run(args) -> int`.
# Modules are imported lazily so `cardtui replay` never pays for Textual or aiohttp.
COMMANDS = {
    "play": "tui.commands.play",
    "replay": "tui.commands.replay",
    "hint": "tui.commands.hint",
    "sim": "tui.commands.sim",
    "host": "tui.commands.host",
    "join": "tui.commands.join",
    "relay": "tui.commands.relay",
    "serve": "tui.commands.serve",
}

SUMMARIES = {
    "play": "play a match against bots in the terminal",
    "replay": "play a game record through the engine and report the result",
    "hint": "show the best trick (Hekata) or a bot's move (greedy, or --bot expert) for a hand",
    "sim": "play bot-only rounds and report wins per bot and speed",
    "host": "host a networked game (a relay, the dealer and your own seat)",
    "join": "join a networked game by address or room code",
    "relay": "run a standalone relay for many rooms",
    "serve": "run a server people can reach with ssh",
}


def installed_version() -> str:
    """The version pip installed, or "unknown" when run from a tree that was never installed."""
    try:
        return metadata.version("cardtui")
    except metadata.PackageNotFoundError:
        return "unknown"


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full argument parser; with `only`, load just that sub-command's module."""
    parser = argparse.ArgumentParser(
        prog="cardtui",
        description="A card table in the terminal. Run with no command to open the start screen.",
    )
    parser.add_argument("--version", action="version", version=f"cardtui {installed_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module_name in COMMANDS.items():
        if only is not None and name != only:
            sub.add_parser(name, help=SUMMARIES[name], add_help=False)
            continue
        module = importlib.import_module(module_name)
        p = sub.add_parser(name, help=SUMMARIES[name], description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_module=module)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line, returning the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    first = next((a for a in argv if not a.startswith("-")), None)
    only = first if first in COMMANDS else None
    if only is None and argv and argv[0] not in ("-h", "--help", "--version"):
        only = "play" if argv[0].startswith("-") else None
    parser = build_parser(only=only)
    if not argv:
        from tui.commands import play

        return play.run_start_screen()
    args = parser.parse_args(argv)
    if getattr(args, "_module", None) is None:
        parser.print_help()
        return 2
    try:
        return int(args._module.run(args) or 0)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
