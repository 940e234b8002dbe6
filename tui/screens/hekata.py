"""Hekata at the table (placeholder until the trick builder lands)."""

from __future__ import annotations

from tui.screens.game import GameScreen


class HekataScreen(GameScreen):
    """Play Hekata."""
