"""Where saved matches live and how a match against bots is set up from the player's choices."""

from __future__ import annotations

import datetime
import getpass
import math
import random
from dataclasses import dataclass
from pathlib import Path

from engine.bots import BOT_KINDS
from engine.errors import IllegalMove, RecordError
from engine.games import game_named
from engine.house import STANDARD, HouseRules
from engine.zodiak import SIGNS, parse_sign
from netplay.machine import data_dir
from netplay.session.events import SeatInfo
from netplay.session.local import LocalMatch
from tui.settings import load_settings

BOT_NAMES = ("Ada", "Boris", "Cleo")
DEFAULT_SPEED = 0.6
# Sun-sign start dates (month, day), Capricorn wrapping the new year.
_SIGN_STARTS = ((1, 20, "aquarius"), (2, 19, "pisces"), (3, 21, "aries"), (4, 20, "taurus"),
                (5, 21, "gemini"), (6, 21, "cancer"), (7, 23, "leo"), (8, 23, "virgo"),
                (9, 23, "libra"), (10, 23, "scorpio"), (11, 22, "sagittarius"),
                (12, 22, "capricorn"))


@dataclass(frozen=True)
class MatchOptions:
    """Everything that starts a match against bots: game, seats, your name and sign, pace."""

    game: str
    players: int
    name: str = "You"
    sign: str = "aries"
    bots: tuple[str, ...] = ("greedy",)
    seed: int | None = None
    speed: float = DEFAULT_SPEED
    house: HouseRules = STANDARD
    think: float | None = None  # an expert bot's time limit per move; None: the default

    def check(self) -> None:
        """Raise IllegalMove with a reason a person can act on if these choices cannot make a match."""
        game_named(self.game).check_players(self.players)
        game_named(self.game).check_house(self.house)
        parse_sign(self.sign)
        if not self.name.strip():
            raise IllegalMove("your name cannot be empty")
        if self.speed < 0:
            raise IllegalMove("--speed is seconds between bot moves: 0 or more")
        if self.think is not None and not 0 < self.think < math.inf:
            raise IllegalMove("--think is seconds per move: more than 0")
        for kind in self.bots:
            if kind not in BOT_KINDS:
                raise IllegalMove(f"{kind!r} is not a bot: choose {', '.join(BOT_KINDS)}")


def save_path() -> Path:
    """The file an unfinished match is saved to and resumed from."""
    return data_dir() / "saved.json"


def sign_of_today(today: datetime.date | None = None) -> str:
    """The sun sign of `today`, a friendly default for the player's own sign."""
    today = today or datetime.date.today()
    sign = "capricorn"
    for month, day, name in _SIGN_STARTS:
        if (today.month, today.day) >= (month, day):
            sign = name
    return sign


def default_name() -> str:
    """Your login name, capitalised, or "You"."""
    try:
        return getpass.getuser().capitalize() or "You"
    except (OSError, KeyError, ImportError):  # no login name on this platform
        return "You"


def name_and_sign(name: str | None, sign: str | None) -> tuple[str, str]:
    """--name and --sign, else what Settings saved, else the login name and today's sign: the
    player every command seats."""
    saved = load_settings()
    return name or saved.name or default_name(), sign or saved.sign or sign_of_today()


def new_match(options: MatchOptions) -> LocalMatch:
    """A fresh LocalMatch: you in seat 0, bots in the other seats, saving to `save_path()`."""
    options.check()
    seed = options.seed if options.seed is not None else random.randrange(2**32)
    rng = random.Random(seed)
    signs = game_named(options.game).uses_signs
    seats = [SeatInfo(options.name.strip(), parse_sign(options.sign) if signs else None)]
    free = [s for s in SIGNS if s != parse_sign(options.sign)]
    rng.shuffle(free)
    for i in range(1, options.players):
        sign = free[i - 1] if signs else None  # every seat its own sign
        kind = options.bots[(i - 1) % len(options.bots)]
        seats.append(SeatInfo(BOT_NAMES[i - 1], sign, kind))
    return LocalMatch.new(options.game, seats, my_seat=0, seed=seed, delay=options.speed,
                          save_path=save_path(), house=options.house, think=options.think)


def resume_match(speed: float = DEFAULT_SPEED, think: float | None = None) -> LocalMatch:
    """The saved match, or FileNotFoundError if there is none."""
    path = save_path()
    if not path.exists():
        raise FileNotFoundError(f"no saved match at {path}: start one with `cardtui play zodiak`")
    try:
        return LocalMatch.resume(path, delay=speed, think=think)
    except (RecordError, ValueError, KeyError, TypeError) as exc:
        raise RecordError(f"the saved match {path} cannot be read ({exc}): move it away to"
                          " start afresh") from exc
