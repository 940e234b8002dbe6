"""Help inside the app: a short how to play for the game at hand, the full rules one key away."""

from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.widgets import ContentSwitcher, Footer, Markdown

from engine.house import STANDARD, HouseRules
from tui.words import plain_document

PACKAGE = Path(__file__).resolve().parent.parent
RULES = PACKAGE / "RULES.md"
HOW_TO_PLAY = PACKAGE / "HOW_TO_PLAY.md"


def how_to_play(game: str | None = None) -> str:
    """HOW_TO_PLAY.md for `game` (its own section and the keys used everywhere), or all of it."""
    text = HOW_TO_PLAY.read_text(encoding="utf-8")
    if game is None:
        return text
    title, *sections = re.split(r"(?m)^(?=## )", text)
    wanted = {game.lower(), "everywhere"}
    kept = [s for s in sections if s.removeprefix("## ").split("\n", 1)[0].strip().lower() in wanted]
    if len(kept) < 2:  # a game this file does not know yet: show everything rather than nothing
        return text
    own, everywhere = kept if kept[1].startswith("## Everywhere") else kept[::-1]
    title = title.replace("# How to play", f"# How to play {game.capitalize()}", 1)
    return title + own.split("\n", 1)[1].lstrip("\n") + "\n" + everywhere


class PlainMarkdown(Markdown):
    """Markdown whose lists are bulleted in ASCII, for a terminal without Unicode."""

    BULLETS = ["* ", "- ", "+ ", "* ", "- "]  # noqa: RUF012 -- an instance variable in Markdown


class HelpScreen(ModalScreen[None]):
    """How to play (the game at hand, or both), with the full rules behind `r`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "app.pop_screen", "Close help"),
        Binding("r", "show('rules')", "Full rules"),
        Binding("r", "show('how')", "How to play"),
        Binding("up", "scroll('up')", "Scroll", show=False),
        Binding("down", "scroll('down')", "Scroll", show=False),
        Binding("pageup", "scroll('page_up')", "Page up"),
        Binding("pagedown,space", "scroll('page_down')", "Page down"),
    ]

    showing: reactive[str] = reactive("how", bindings=True)

    def __init__(self, game: str | None = None, house: HouseRules = STANDARD) -> None:
        super().__init__()
        self.game = game
        self.house = house

    def page(self, text: str, name: str) -> Markdown:
        """`text` laid out, in ASCII alone when the app draws only that (--ascii)."""
        if self.app.has_class("-ascii"):
            return PlainMarkdown(plain_document(text), id=name)
        return Markdown(text, id=name)

    def compose(self) -> ComposeResult:
        with ContentSwitcher(initial="how"):
            with VerticalScroll(id="how", classes="help-page"):
                house = "" if self.house.standard else f"**{self.house.describe()}**\n\n"
                yield self.page(house + how_to_play(self.game), "how-text")
            # The full rules are long to lay out: they are read only when first asked for.
            yield VerticalScroll(id="rules", classes="help-page")
        yield Footer()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Offer `r` for the page that is not showing."""
        if action == "show":
            return parameters[0] != self.showing
        return True

    async def watch_showing(self, page: str) -> None:
        rules = self.query_one("#rules", VerticalScroll)
        if page == "rules" and not rules.children:
            await rules.mount(self.page(RULES.read_text(encoding="utf-8"), "rules-text"))
        self.query_one(ContentSwitcher).current = page

    def action_show(self, page: str) -> None:
        self.showing = page

    def action_scroll(self, how: str) -> None:
        getattr(self.query_one(f"#{self.showing}", VerticalScroll), f"scroll_{how}")()
