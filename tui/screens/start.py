"""The start screen: choose the game, the number of players, your name and sign, then play."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Footer, Header, Input, Label, Select, Static

from engine.errors import IllegalMove, RecordError
from engine.games import GAMES, ZODIAK
from engine.zodiak import SIGN_CARDS, SIGNS
from tui.matchsetup import MatchOptions, new_match, resume_match, save_path


class StartScreen(Screen[None]):
    """Pick a game and seats; enter (or the Play button) starts a match against bots."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "play", "Play", priority=True),
        Binding("r", "resume", "Resume saved"),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("escape", "app.quit", "Quit"),
    ]

    def __init__(self, defaults: MatchOptions | None, ascii_only: bool = False) -> None:
        super().__init__()
        self.defaults = defaults or MatchOptions(ZODIAK.name, ZODIAK.default_players)
        self.ascii_only = ascii_only

    def compose(self) -> ComposeResult:
        d = self.defaults
        yield Header()
        with Vertical(id="start"):
            yield Static("Play cards against bots", id="start-title")
            with Horizontal(classes="field"):
                yield Label("Game", classes="field-label")
                yield Select([(g.title, g.name) for g in GAMES.values()], value=d.game,
                             allow_blank=False, id="game")
            with Horizontal(classes="field"):
                yield Label("Players", classes="field-label")
                yield Select(self._player_options(d.game), value=d.players, allow_blank=False,
                             id="players-choice")
            with Horizontal(classes="field"):
                yield Label("Your name", classes="field-label")
                yield Input(d.name, id="name", max_length=20)
            with Horizontal(classes="field", id="sign-field"):
                yield Label("Your sign", classes="field-label")
                yield Select([(self._sign_label(s), s) for s in SIGNS], value=d.sign,
                             allow_blank=False, id="sign")
            yield Static(GAMES[d.game].blurb, id="about")
            with Horizontal(id="start-buttons"):
                yield Button("Play (enter)", variant="primary", id="play")
                if save_path().exists():
                    yield Button("Resume saved match (r)", id="resume")
            yield Static("", id="start-error")
        yield Footer()

    def _sign_label(self, sign: str) -> str:
        return f"{sign.capitalize()} ({SIGN_CARDS[sign].pretty(self.ascii_only)})"

    @staticmethod
    def _player_options(game: str) -> list[tuple[str, int]]:
        return [(f"{n} (you and {n - 1} bot{'s' if n > 2 else ''})", n) for n in GAMES[game].players]

    def on_mount(self) -> None:
        self.query_one("#game", Select).focus()

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id != "game":
            return
        game = str(event.value)
        players = self.query_one("#players-choice", Select)
        current = players.value
        players.set_options(self._player_options(game))
        rules = GAMES[game]
        players.value = current if current in rules.players else rules.default_players
        self.query_one("#sign-field").display = rules.uses_signs
        self.query_one("#about", Static).update(rules.blurb)

    def options(self) -> MatchOptions:
        """The choices on the screen as match options."""
        return MatchOptions(
            game=str(self.query_one("#game", Select).value),
            players=int(self.query_one("#players-choice", Select).value),  # type: ignore[arg-type]
            name=self.query_one("#name", Input).value,
            sign=str(self.query_one("#sign", Select).value),
            bots=self.defaults.bots, seed=self.defaults.seed, speed=self.defaults.speed)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # An open drop-down takes enter for itself.
        if action == "play":
            return not any(s.expanded for s in self.query(Select))
        if action == "resume":
            return save_path().exists()
        return True

    def action_play(self) -> None:
        try:
            session = new_match(self.options())
        except IllegalMove as exc:
            self.query_one("#start-error", Static).update(str(exc))
            return
        self.app.play(session)  # type: ignore[attr-defined]

    def action_resume(self) -> None:
        try:
            session = resume_match(self.defaults.speed)
        except (FileNotFoundError, RecordError, ValueError) as exc:
            self.query_one("#start-error", Static).update(str(exc))
            return
        self.app.play(session)  # type: ignore[attr-defined]

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "play":
            self.action_play()
        elif event.button.id == "resume":
            self.action_resume()

    def action_help(self) -> None:
        from tui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen())
