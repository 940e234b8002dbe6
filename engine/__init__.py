"""The rules of Zodiak and Hekata (tui/RULES.md), pure Python: `engine.IllegalMove` and friends live here."""

from __future__ import annotations

import importlib
from typing import Any

from engine.cards import Card, format_cards, parse_cards, parse_digit, parse_suit
from engine.errors import IllegalMove, InvalidMove, RecordError

# The game modules are loaded on first use, so `import engine` stays cheap and cycle-free.
_LAZY = {
    "ZodiakRound": "engine.zodiak",
    "Run": "engine.zodiak",
    "Draw": "engine.zodiak",
    "HekataDeal": "engine.hekata",
    "HekataMove": "engine.hekata",
    "Trick": "engine.tricks",
    "parse_trick": "engine.tricks",
    "best_trick": "engine.tricks",
    "Match": "engine.match",
    "Record": "engine.records",
}

__all__ = [
    "Card",
    "Draw",
    "HekataDeal",
    "HekataMove",
    "IllegalMove",
    "InvalidMove",
    "Match",
    "Record",
    "RecordError",
    "Run",
    "Trick",
    "ZodiakRound",
    "best_trick",
    "format_cards",
    "parse_cards",
    "parse_digit",
    "parse_suit",
    "parse_trick",
]


def __getattr__(name: str) -> Any:
    """Load a game-level name (`engine.ZodiakRound`, `engine.Record` ...) from its module on use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
