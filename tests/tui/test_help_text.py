"""What the in-app help shows players: a short how to play per game, and the full rules
(tui/RULES.md, shipped with the app) written for players, not for developers."""

from __future__ import annotations

import re

import pytest

from tui.screens.help import HOW_TO_PLAY, RULES, how_to_play


def test_the_rules_players_see_name_no_source_files_or_decision_markers() -> None:
    """The full rules in the app mention no source file, path or decision marker; each reading
    the rulebook chose is marked "(our reading)" for players instead."""
    text = RULES.read_text(encoding="utf-8")
    assert "[decision]" not in text and "decision" not in text.lower()
    assert not re.search(r"seeds/|\.txt\b|\.py\b|engine/|netplay/|\btests?\b", text)
    assert "this file" not in text
    assert text.count("*(our reading)*") >= 19  # every decision of the rulebook, marked


def test_the_rules_keep_their_numbered_sections() -> None:
    """Code and tests cite tui/RULES.md by section number: every section 1.1-1.7, 2.1-2.6, 3."""
    headings = re.findall(r"(?m)^##+ (\d+(?:\.\d+)?)", RULES.read_text(encoding="utf-8"))
    assert headings == ["1", *(f"1.{i}" for i in range(1, 8)), "2",
                        *(f"2.{i}" for i in range(1, 7)), "3"]


@pytest.mark.parametrize("game", ["zodiak", "hekata"])
def test_how_to_play_is_short_and_about_one_game(game: str) -> None:
    """How to play a game: its own section and the keys used everywhere, short enough to read
    at a glance (under a quarter of the full rules)."""
    text = how_to_play(game)
    other = {"zodiak": "Hekata", "hekata": "Zodiak"}[game]
    assert text.startswith(f"# How to play {game.capitalize()}")
    assert f"## {other}" not in text and "## Everywhere" in text
    assert len(text.split()) * 4 < len(RULES.read_text(encoding="utf-8").split())
    assert "| key |" in text


def test_how_to_play_an_unknown_game_shows_everything() -> None:
    """A game the help text does not know yet gets all of it rather than an empty page."""
    assert how_to_play("poker") == HOW_TO_PLAY.read_text(encoding="utf-8") == how_to_play(None)
