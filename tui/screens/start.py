"""The start screen: choose the game, the number of players, your name and sign, then play."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Footer, Header, Input, Label, Select, Static

from engine.bots import BOT_KINDS
from engine.errors import IllegalMove, RecordError
from engine.games import GAMES, ZODIAK
from tui.appapi import card_app
from tui.matchsetup import MatchOptions, new_match, resume_match, save_path
from tui.screens.dialogs import ConfirmQuit
from tui.widgets.bars import card_header, header_icon
from tui.widgets.dropdown import Dropdown
from tui.widgets.house import HouseRulesInput
from tui.words import sign_choices

if TYPE_CHECKING:
    from tui.screens.netstart import JoinFailure

BOT_LABELS = {"greedy": "Greedy (quick, easy to beat)", "random": "Random (any legal move)",
              "expert": "Expert (searches up to a second a move)"}


class StartScreen(Screen[None]):
    """Pick a game and seats; enter (or the Play button) starts a match against bots."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # Not a priority key: on a drop-down enter opens it, and only the Play button, the name
        # field or the screen itself start a match.
        Binding("enter", "play", "Play", show=False),
        Binding("p", "play", "Play"),
        Binding("r", "resume", "Resume"),
        Binding("s", "settings", "Settings"),
        Binding("o", "host", "Host"),
        Binding("j", "join", "Join"),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("escape", "escape", "Quit"),
        # As on every other screen (typed in a field, q is a letter there).
        Binding("q", "app.quit", "Quit", show=False),
    ]

    def __init__(self, defaults: MatchOptions | None, ascii_only: bool = False,
                 join_failure: JoinFailure | None = None) -> None:
        super().__init__()
        self.defaults = defaults or MatchOptions(ZODIAK.name, ZODIAK.default_players)
        self.ascii_only = ascii_only
        self.join_failure = join_failure

    def compose(self) -> ComposeResult:
        d = self.defaults = self._with_settings(self.defaults)
        yield card_header(self.ascii_only)
        # Every field is one line (compact), so all of them and the buttons fit 80x24.
        with Vertical(id="start", classes="compact-form"):
            yield Static("Play cards against bots", id="start-title")
            with Horizontal(classes="field"):
                yield Label("Game", classes="field-label")
                yield Dropdown([(g.title, g.name) for g in GAMES.values()], value=d.game,
                             allow_blank=False, id="game", compact=True)
            with Horizontal(classes="field"):
                yield Label("Players", classes="field-label")
                yield Dropdown(self._player_options(d.game), value=d.players, allow_blank=False,
                             id="players-choice", compact=True)
            with Horizontal(classes="field"):
                yield Label("Your name", classes="field-label")
                yield Input(d.name, id="name", max_length=20, compact=True)
            with Horizontal(classes="field", id="sign-field"):
                yield Label("Your sign", classes="field-label")
                yield Dropdown(sign_choices(self.ascii_only), value=d.sign,
                             allow_blank=False, id="sign", compact=True)
            with Horizontal(classes="field"):
                yield Label("Bots", classes="field-label")
                yield Dropdown(self._bot_options(d.bots), value=",".join(d.bots),
                             allow_blank=False, id="bot-kind", compact=True)
            with Horizontal(classes="field"):
                yield Label("House rules", classes="field-label")
                yield HouseRulesInput(d.house, id="house", compact=True)
            yield Static(GAMES[d.game].blurb, id="about")
            with Horizontal(id="start-buttons"):
                yield Button("Play (p)", variant="primary", id="play")
                if save_path().exists():
                    yield Button("Resume (r)", id="resume")
                yield Button("Host (o)", id="host-button")
                yield Button("Join (j)", id="join-button")
                yield Button("Settings (s)", id="settings-button")
            yield Static("", id="start-error")
        yield Footer()

    def _with_settings(self, d: MatchOptions) -> MatchOptions:
        # The saved name, sign and bot speed are the defaults; the command line's seed stays.
        settings = getattr(self.app, "settings", None)
        if settings is None:
            return d
        return replace(d, name=settings.name or d.name, sign=settings.sign or d.sign,
                       speed=settings.speed)

    def action_settings(self) -> None:
        card_app(self.app).open_settings(self._refresh_from_settings)

    def _refresh_from_settings(self) -> None:
        self.defaults = self._with_settings(self.defaults)
        self.query_one("#name", Input).value = self.defaults.name
        # The card style may have changed: the header's icon, the sign cards and the arrows.
        self.ascii_only = self.app.has_class("-ascii")
        self.query_one(Header).icon = header_icon(self.ascii_only)
        signs = self.query_one("#sign", Select)
        signs.set_options(sign_choices(self.ascii_only))
        signs.value = self.defaults.sign
        for dropdown in self.query(Dropdown):
            dropdown.match_card_style()

    @staticmethod
    def _bot_options(chosen: tuple[str, ...]) -> list[tuple[str, str]]:
        options = [(BOT_LABELS[kind], kind) for kind in BOT_KINDS]
        if ",".join(chosen) not in BOT_KINDS:
            options.append((", ".join(chosen), ",".join(chosen)))  # --bots gave several kinds
        return options

    @staticmethod
    def _player_options(game: str) -> list[tuple[str, int]]:
        return [(f"{n} (you and {n - 1} bot{'s' if n > 2 else ''})", n) for n in GAMES[game].players]

    def on_mount(self) -> None:
        self.query_one("#game", Select).focus()
        if self.join_failure is not None:
            self.action_join(self.join_failure)

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
        """The choices on the screen as match options; IllegalMove if the house rules are not."""
        # Ignored below: Textual types the value as maybe BLANK; allow_blank=False rules that out.
        return MatchOptions(
            game=str(self.query_one("#game", Select).value),
            players=int(self.query_one("#players-choice", Select).value),  # type: ignore[arg-type]
            name=self.query_one("#name", Input).value,
            sign=str(self.query_one("#sign", Select).value),
            bots=tuple(str(self.query_one("#bot-kind", Select).value).split(",")),
            seed=self.defaults.seed, speed=self.defaults.speed,
            house=self.query_one("#house", HouseRulesInput).rules())

    async def action_escape(self) -> None:
        """Leave the field being typed in; from nowhere in particular, quit."""
        if isinstance(self.focused, Input):
            self.set_focus(None)  # a slip of the finger mid-name must not end the program
            return
        await card_app(self.app).leave()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # An open drop-down takes enter for itself.
        if action == "play":
            return not any(s.expanded for s in self.query(Select))
        if action == "resume":
            return save_path().exists()
        return True

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_play()

    def action_play(self) -> None:
        try:
            self.options().check()
        except IllegalMove as exc:
            self.query_one("#start-error", Static).update(str(exc))
            return
        if save_path().exists():
            # One save slot: a new match would replace the saved one when it is quit.
            question = ("You have a saved match. A new match replaces it when you quit."
                        " Start a new match anyway?")
            self.app.push_screen(ConfirmQuit(question, yes="Start new (y)", no="Keep it (n)"),
                                 self._start_if)
            return
        self._start_if(True)

    def _start_if(self, yes: bool | None) -> None:
        if not yes:
            return
        try:
            session = new_match(self.options())
        except IllegalMove as exc:
            self.query_one("#start-error", Static).update(str(exc))
            return
        card_app(self.app).play(session)

    def action_resume(self) -> None:
        try:
            session = resume_match(self.defaults.speed)
        except (FileNotFoundError, RecordError, ValueError) as exc:
            self.query_one("#start-error", Static).update(Text(str(exc)))
            return
        card_app(self.app).play(session)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "play":
            self.action_play()
        elif event.button.id == "resume":
            self.action_resume()
        elif event.button.id == "settings-button":
            self.action_settings()
        elif event.button.id == "host-button":
            self.action_host()
        elif event.button.id == "join-button":
            self.action_join()

    def action_host(self) -> None:
        from tui.screens.netstart import HostSetup

        try:
            options = self.options()
        except IllegalMove as exc:
            self.query_one("#start-error", Static).update(Text(str(exc)))
            return
        self.app.push_screen(HostSetup(options.game, options.name.strip(), options.sign,
                                       options.house), self._run_command)

    def action_join(self, failure: JoinFailure | None = None) -> None:
        from tui.screens.netstart import JoinScreen

        name = self.query_one("#name", Input).value.strip()
        sign = str(self.query_one("#sign", Select).value)
        self.app.push_screen(JoinScreen(name, sign, getattr(self.app, "lan_interfaces", None),
                                        failure), self._run_command)

    def _run_command(self, command: list[str] | None) -> None:
        # The network commands own the terminal themselves: this app ends and hands over.
        if command:
            card_app(self.app).next_command = command
            self.app.exit()

    def action_help(self) -> None:
        from tui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen())
