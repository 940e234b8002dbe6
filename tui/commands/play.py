"""`cardtui play`: a match against bots in the terminal, straight away, or resumed."""

from __future__ import annotations

import argparse
import importlib
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from engine.errors import IllegalMove, RecordError
from engine.games import GAME_NAMES, GAMES, ZODIAK
from engine.house import STANDARD, HouseRules
from engine.zodiak import SIGNS
from tui.commands.netargs import add_think_argument
from tui.matchsetup import (
    DEFAULT_SPEED,
    MatchOptions,
    default_name,
    name_and_sign,
    sign_of_today,
)
from tui.settings import load_settings

if TYPE_CHECKING:
    from tui.app import CardApp

HELP = ("Play Zodiak (to 55) or Hekata (to 10,000) against bots. Quitting saves the match;"
        " `cardtui play --resume` continues it.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's options."""
    parser.add_argument("game", nargs="?", choices=GAME_NAMES,
                        help="the game (omit with --resume)")
    parser.add_argument("--players", type=int,
                        help="players including you: zodiak 2-4 (default 3), hekata 2 or 4"
                             " (default 4)")
    parser.add_argument("--name", default=None, help="your name (default: your login name)")
    parser.add_argument("--sign", default=None, choices=SIGNS, metavar="SIGN", type=str.lower,
                        help="your zodiac sign for Zodiak (default: today's)")
    parser.add_argument("--bots", default="greedy",
                        help="bot kinds for the other seats in turn: greedy, random or expert,"
                             " e.g. expert,greedy")
    parser.add_argument("--seed", type=int, help="seed for the deal, for a repeatable match")
    parser.add_argument("--speed", type=float, default=None,
                        help=f"seconds between bot moves (default: the settings' bot speed,"
                             f" else {DEFAULT_SPEED})")
    parser.add_argument("--ascii", action="store_true",
                        help="letters instead of suit symbols and box drawing")
    parser.add_argument("--resume", action="store_true", help="continue the saved match")
    add_think_argument(parser)
    add_house_argument(parser)


def add_house_argument(parser: argparse.ArgumentParser) -> None:
    """Declare --house, the match's house rules (docs/RECORDS.md "House rules")."""
    parser.add_argument("--house", type=house_rules, default=STANDARD, metavar="RULES",
                        help="house rules, e.g. max-row=4,target=3000: Hekata rows of at most 4"
                             " cards, a match to 3,000 (default: the rules as written)")


def house_rules(text: str) -> HouseRules:
    """--house's value, or argparse's error with the reason."""
    try:
        return HouseRules.parse(text)
    except IllegalMove as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def options_from(args: argparse.Namespace) -> MatchOptions:
    """The match the command line asks for."""
    game = args.game or ZODIAK.name
    name, sign = name_and_sign(args.name, args.sign)
    return MatchOptions(
        game=game, players=args.players or GAMES[game].default_players, name=name, sign=sign,
        bots=tuple(b.strip() for b in args.bots.split(",") if b.strip()) or ("greedy",),
        seed=args.seed, speed=speed_of(args), house=args.house, think=args.think)


def speed_of(args: argparse.Namespace) -> float:
    """Seconds between bot moves: --speed, else the saved bot speed."""
    return args.speed if args.speed is not None else load_settings().speed


def run(args: argparse.Namespace) -> int:
    """Start (or resume) the match and play it; print where it was saved on the way out."""
    from tui.matchsetup import new_match, resume_match, save_path

    try:
        if args.resume:
            session = resume_match(speed_of(args), think=args.think)
        elif args.game is None:
            return run_start_screen(ascii_only=args.ascii)
        else:
            session = new_match(options_from(args))
    except (IllegalMove, RecordError, FileNotFoundError, ValueError) as exc:
        print(f"cardtui play: {exc}", file=sys.stderr)
        return 2
    from tui.app import CardApp

    kept = None if args.resume else keep_previous_save()
    status = _run_app(CardApp(session, ascii_only=args.ascii, pace=speed_of(args)))
    if kept is not None:
        print(f"cardtui play: the match saved before this one is kept as {kept}; to play it"
              f" again, move it back to {save_path()} and run cardtui play --resume",
              file=sys.stderr)
    return status


PREVIOUS = "saved.previous.json"  # beside the save: the unfinished match a new one displaced


def keep_previous_save() -> Path | None:
    """Move an unfinished match's save aside before a new match takes its place (the start
    screen asks first; a command line that names a game does not); where it went, if any."""
    from tui.matchsetup import save_path

    saved = save_path()
    if not saved.exists():
        return None
    kept = saved.with_name(PREVIOUS)
    saved.replace(kept)
    return kept


def run_start_screen(ascii_only: bool = False) -> int:
    """`cardtui` with no arguments: choose the game, players, name and sign, then play."""
    from tui.app import CardApp
    from tui.commands.join import join_from_start_screen
    from tui.screens.netstart import JoinFailure

    defaults = MatchOptions(ZODIAK.name, ZODIAK.default_players, default_name(), sign_of_today())
    failure: JoinFailure | None = None
    while True:
        app = CardApp(defaults=defaults, ascii_only=ascii_only, pace=load_settings().speed,
                      join_failure=failure)
        status = _run_app(app)
        if not app.next_command:
            return status
        argv = [*app.next_command, *(["--ascii"] if ascii_only else [])]
        failure = None
        if argv[0] != "join":
            status = run_command(argv)
        else:
            args = command_arguments(argv)
            status, reason = join_from_start_screen(args)
            defaults = replace(defaults, name=args.name or defaults.name,
                               sign=args.sign or defaults.sign)
            if reason is not None:
                # No seat taken (a typo, nobody at that address): back to the Join screen.
                failure = JoinFailure(args.target, reason)
                continue
        if status != 0:
            return status  # what went wrong stays on the terminal, not under a new screen
        # Left the table in good order: back to the start screen it was chosen from.


def command_arguments(argv: list[str]) -> argparse.Namespace:
    """`cardtui host` or `cardtui join`'s arguments, as the start screen chose them."""
    name, rest = argv[0], argv[1:]
    if name not in ("host", "join"):
        raise ValueError(f"the start screen cannot hand over to {name!r}")
    module = importlib.import_module(f"tui.commands.{name}")
    parser = argparse.ArgumentParser(prog=f"cardtui {name}", description=module.HELP)
    module.add_arguments(parser)
    return parser.parse_args(rest)


def run_command(argv: list[str]) -> int:
    """Run `cardtui host` or `cardtui join` as chosen on the start screen."""
    module = importlib.import_module(f"tui.commands.{argv[0]}")
    return int(module.run(command_arguments(argv)) or 0)


def _run_app(app: CardApp) -> int:
    message = app.run()
    session = app.session
    # However the app ended (a crash, a closed terminal), an unfinished local match is kept.
    save = getattr(session, "save", None)
    if save is not None and not getattr(session, "closed", True):
        save()
    if message:
        print(message)
    return app.return_code or 0
