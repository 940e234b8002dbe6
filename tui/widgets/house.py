"""A field for the match's house rules in their text form (engine.house), empty for none."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.widgets import Input

from engine.house import HOUSE_OPTIONS, HouseRules

HOUSE_PLACEHOLDER = "none, or e.g. max-row=4,target=3000"


class HouseRulesInput(Input):
    """House rules as text: `max-row=4,target=3000`; the tooltip explains each option."""

    def __init__(self, house: HouseRules, **kwargs: Any) -> None:
        # kwargs are Input's own (id, compact...), passed on as they are.
        super().__init__("" if house.standard else str(house), placeholder=HOUSE_PLACEHOLDER,
                         max_length=60, **kwargs)
        self.tooltip = "\n".join(f"{name}: {what}" for name, what in HOUSE_OPTIONS.items())

    def rules(self) -> HouseRules:
        """The house rules typed, raising IllegalMove that says what is wrong."""
        return HouseRules.parse(self.value)

    def once_typed(self, callback: Callable[[], None]) -> None:
        """Call `callback` once the keys typed into this field so far are in its value.

        A dialog's enter is a priority key, acted on before keys typed just ahead of it reach
        the field (a fast typist or a paste over ssh): read at once, the rules were half typed.
        This field's own queue runs the callback after them.
        """
        self.call_later(callback)
