"""House rules: named options players choose before a match, in a text form like `max-row=4,target=3000`.

The defaults are the rules as written (tui/RULES.md); every option set here narrows or shortens
them, and every seat's engine checks moves by the same value.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import IllegalMove

__all__ = ["HOUSE_OPTIONS", "STANDARD", "HouseRules"]

HOUSE_OPTIONS = {
    "max-row": "Hekata: a trick's rows have at most this many cards (1 to 50)",
    "target": "the match ends when a seat or team reaches this score (1 or more)",
}
_MAX_VALUE = 10**9


@dataclass(frozen=True, slots=True)
class HouseRules:
    """The house rules of one match: None for an option means the rules as written."""

    max_row: int | None = None
    target: int | None = None

    def __post_init__(self) -> None:
        if self.max_row is not None and (type(self.max_row) is not int or not 1 <= self.max_row <= 50):
            raise IllegalMove(f"max-row must be a whole number from 1 to 50, not {self.max_row!r}")
        if self.target is not None and (type(self.target) is not int
                                        or not 1 <= self.target <= _MAX_VALUE):
            raise IllegalMove(f"target must be a whole number from 1 to {_MAX_VALUE:,}, not {self.target!r}")

    @classmethod
    def parse(cls, text: str) -> HouseRules:
        """Parse `max-row=4,target=3000` (or an empty text, or `standard`), raising IllegalMove."""
        if not isinstance(text, str) or len(text) > 200:
            raise IllegalMove("house rules are written like max-row=4,target=3000")
        if text.strip().lower() in ("", "standard"):
            return cls()
        values: dict[str, int] = {}
        for part in text.split(","):
            name, equals, value = (s.strip() for s in part.partition("="))
            name = name.lower()
            if name not in HOUSE_OPTIONS:
                raise IllegalMove(f"{name!r} is not a house rule: choose {' or '.join(HOUSE_OPTIONS)}")
            if not equals or not value.isascii() or not value.isdigit():
                raise IllegalMove(f"{name} needs a whole number, like {name}=4")
            if name in values:
                raise IllegalMove(f"{name} is given twice")
            digits = value.lstrip("0") or "0"  # bounded before int(): 10**100000 is slow
            if len(digits) > 12:
                raise IllegalMove(f"{name} is far too large ({len(digits)} digits)")
            values[name] = int(digits)
        return cls(values.get("max-row"), values.get("target"))

    def __str__(self) -> str:
        parts = []
        if self.max_row is not None:
            parts.append(f"max-row={self.max_row}")
        if self.target is not None:
            parts.append(f"target={self.target}")
        return ",".join(parts) or "standard"

    @property
    def standard(self) -> bool:
        """Whether these are the rules as written."""
        return self.max_row is None and self.target is None

    def describe(self) -> str:
        """One line for the lobby and the help."""
        if self.standard:
            return "House rules: none (the rules as written)."
        parts = []
        if self.max_row is not None:
            parts.append(f"Hekata rows of at most {self.max_row} cards")
        if self.target is not None:
            parts.append(f"the match is played to {self.target:,}")
        return "House rules: " + "; ".join(parts) + "."


STANDARD = HouseRules()
"""The rules as written: no house rules."""
