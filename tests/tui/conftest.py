"""Helpers for driving the real app with Pilot: fixed deals from game records, and settling."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from netplay.session.local import LocalMatch
from tui.app import CardApp
from tui.matchsetup import MatchOptions, new_match, resume_match, save_path
from tui.screens.dialogs import ConfirmQuit, MatchResult, SuitPicker, Summary
from tui.screens.game import GameScreen
from tui.screens.help import HelpScreen

DIALOGS = (Summary, SuitPicker, ConfirmQuit, HelpScreen, MatchResult)


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test saves its matches in its own directory."""
    monkeypatch.setenv("CARDTUI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CARDTUI_CONFIG_DIR", str(tmp_path / "config"))
    # The last move's highlight fades after a moment; screens under test must not depend on
    # how long a loaded machine takes to reach the assertion.
    monkeypatch.setattr("tui.screens.game.FRESH_SECONDS", 1e6)
    monkeypatch.delenv("CARDTUI_THEME", raising=False)
    return tmp_path / "data"


def fresh_app(game: str, players: int, seed: int, sign: str = "leo") -> CardApp:
    """A new match at speed 0 against greedy bots, as `cardtui play` starts it."""
    options = MatchOptions(game, players, "Me", sign, ("greedy",), seed, 0.0)
    return CardApp(new_match(options), pace=0.0)


def app_from_deal(game: str, seats: list[dict[str, Any]], dealer: int, deal: dict[str, Any],
                  delay: float = 0.0, scores: list[int] | None = None,
                  house: str | None = None) -> CardApp:
    """An app whose match resumes a round that starts from a chosen deal (a game record)."""
    record = {
        "game": game,
        "seats": [{"name": s["name"], **({"sign": s["sign"]} if "sign" in s else {})}
                  for s in seats],
        "dealer": dealer, "deal": deal, "moves": [],
        **({"scores": scores} if scores is not None else {}),
        **({"house": house} if house is not None else {}),
        "cardtui": {"seats": seats, "my_seat": 0, "seed": 7, "moves_made": 0,
                    "rounds_played": 0},
    }
    path = save_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))
    return CardApp(resume_match(delay), pace=0.0)


def game_screen(app: CardApp) -> GameScreen:
    """The game screen under any dialogs."""
    return next(s for s in reversed(app.screen_stack) if isinstance(s, GameScreen))


async def settle(pilot: Pilot, limit: int = 2000):
    """Let bots move until the player must act: their turn, a dialog, or the round's end."""
    app = pilot.app
    for _ in range(limit):
        await pilot.pause()
        screen = app.screen
        if isinstance(screen, DIALOGS):
            return screen
        if isinstance(screen, GameScreen) and screen.view is not None and \
                screen.session.queue.empty() and (screen.my_turn or screen.view.round_over):
            return screen
        if not app.is_running:
            return None
    raise AssertionError("the app never came back to the player")


def log_text(app: CardApp) -> str:
    """Everything the visible log has shown, one line per entry."""
    return "\n".join(game_screen(app).log_lines)


def session_of(app: CardApp) -> LocalMatch:
    """The app's local match."""
    assert isinstance(app.session, LocalMatch)
    return app.session
