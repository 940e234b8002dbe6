"""The player's settings and statistics, kept between runs in the user's config and data directories."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from engine.errors import IllegalMove
from engine.zodiak import SIGNS
from netplay.machine import config_dir, data_dir

BOT_SPEEDS = {"slow": 1.2, "normal": 0.6, "fast": 0.25, "instant": 0.0}
CARD_STYLES = ("unicode", "ascii")
HAND_ORDERS = ("suit", "rank")
HEKATA_ORDERS = {"up": "low to high", "down": "high to low", "takers": "trick-takers first"}


@dataclass(frozen=True)
class Settings:
    """What the player chose once and expects every time: name, sign, theme, pace, bell, cards."""

    name: str = ""
    sign: str = ""
    theme: str = ""
    bot_speed: str = "normal"
    bell: bool = False
    card_style: str = "unicode"
    hand_order: str = "suit"
    hekata_order: str = "up"

    def check(self) -> None:
        """Raise IllegalMove saying what cannot be used."""
        if self.sign and self.sign not in SIGNS:
            raise IllegalMove(f"{self.sign!r} is not a zodiac sign")
        if self.bot_speed not in BOT_SPEEDS:
            raise IllegalMove(f"bot speed is one of {', '.join(BOT_SPEEDS)}")
        if self.card_style not in CARD_STYLES:
            raise IllegalMove(f"card style is one of {', '.join(CARD_STYLES)}")
        if self.hand_order not in HAND_ORDERS:
            raise IllegalMove(f"hand order is one of {', '.join(HAND_ORDERS)}")
        if self.hekata_order not in HEKATA_ORDERS:
            raise IllegalMove(f"Hekata hand order is one of {', '.join(HEKATA_ORDERS)}")
        if len(self.name) > 20:
            raise IllegalMove("a name has at most 20 characters")

    @property
    def speed(self) -> float:
        """Seconds between bot moves."""
        return BOT_SPEEDS[self.bot_speed]


def settings_path() -> Path:
    """The settings file."""
    return config_dir() / "settings.json"


def load_settings() -> Settings:
    """The saved settings; defaults for anything missing or unreadable (a bad file never stops play)."""
    try:
        data = json.loads(settings_path().read_text())
    except (OSError, ValueError):
        return Settings()
    if not isinstance(data, dict):
        return Settings()
    known = {f.name: f.type for f in fields(Settings)}
    settings = Settings()
    for key, value in data.items():
        if key in known and isinstance(value, type(getattr(settings, key))):
            candidate = replace(settings, **{key: value})
            try:
                candidate.check()
            except IllegalMove:
                continue
            settings = candidate
    return settings


def save_settings(settings: Settings) -> Path:
    """Write the settings (checked first) and return the file."""
    settings.check()
    path = settings_path()
    _write_json(path, asdict(settings))
    return path


@dataclass
class Stats:
    """Matches played and won per game, and the best Hekata trick you took."""

    played: dict[str, int] = field(default_factory=dict)
    won: dict[str, int] = field(default_factory=dict)
    best_trick: int = 0

    def lines(self) -> list[str]:
        """The statistics in words, one line per game."""
        out = []
        for game in ("zodiak", "hekata"):
            played, won = self.played.get(game, 0), self.won.get(game, 0)
            out.append(f"{game.capitalize()}: {played} match{'es' if played != 1 else ''},"
                       f" {won} won")
        out.append(f"Best Hekata trick: {self.best_trick:,}" if self.best_trick
                   else "Best Hekata trick: none taken yet")
        return out


def stats_path() -> Path:
    """The statistics file, next to the saved match."""
    return data_dir() / "stats.json"


def load_stats() -> Stats:
    """The saved statistics, or empty ones."""
    try:
        data: Any = json.loads(stats_path().read_text())
        return Stats({k: int(v) for k, v in data["played"].items()},
                     {k: int(v) for k, v in data["won"].items()}, int(data["best_trick"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return Stats()


def record_match(game: str, won: bool) -> Stats:
    """Count one finished match."""
    stats = load_stats()
    stats.played[game] = stats.played.get(game, 0) + 1
    stats.won[game] = stats.won.get(game, 0) + int(won)
    _write_json(stats_path(), asdict(stats))
    return stats


def record_trick(total: int) -> None:
    """Remember a trick you took if it is your best."""
    stats = load_stats()
    if total > stats.best_trick:
        stats.best_trick = total
        _write_json(stats_path(), asdict(stats))


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(path)
