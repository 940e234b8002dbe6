"""The game screen's common half: it drains a GameSession's events and shows players, log and scores.

The screen never knows what kind of session feeds it (a local match, a
networked seat); it reads events and views and submits moves, checking each
move with the engine first so it never sends an illegal one.
"""

from __future__ import annotations

import asyncio
import time
from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from engine.errors import IllegalMove
from engine.games import game_named
from engine.match import Round
from netplay.session.events import (
    Event,
    GameSession,
    MatchEnded,
    MatchStarted,
    Move,
    MoveMade,
    Notice,
    RoundEnded,
    RoundStarted,
    SeatInfo,
    SeatsChanged,
)
from tui.literal import literal
from tui.screens.dialogs import ConfirmQuit, Summary
from tui.screens.help import HelpScreen
from tui.widgets.gamelog import GameLog
from tui.widgets.hand import CardRow
from tui.widgets.players import Players, TableState

COMMON_BINDINGS: list[BindingType] = [
    Binding("pageup", "log_page(-1)", "Log", key_display="PgUp"),
    Binding("pagedown", "log_page(1)", "Log down", show=False),
    Binding("question_mark", "help", "Help", key_display="?"),
    Binding("q", "quit_match", "Quit"),
]

# Wider than this, the log moves to a column on the right and the table gets the room.
WIDE = 110
# Taller than this as well, cards are drawn large.
TALL = 32


class GameScreen(Screen[None]):
    """Players, last move, log and footer around a game-specific table and hand."""

    # Each game's screen lists its own keys first and then these, so the footer reads in that order.
    BINDINGS: ClassVar[list[BindingType]] = []

    def __init__(self, session: GameSession, ascii_only: bool = False, pace: float = 0.0) -> None:
        super().__init__()
        self.session = session
        self.ascii_only = ascii_only
        self.pace = pace
        self.seats: tuple[SeatInfo, ...] = ()
        self.my_seat: int | None = session.my_seat
        self.target = 0
        self.view: Round | None = None
        self.scores: tuple[int, ...] = ()
        self.round_number = 0
        self.last_mover: int | None = None
        self.last_move: Move | None = None
        self.sent = False
        self.match_over = False
        self._last_shown = 0.0
        self.log_lines: list[str] = []

    # -- layout -------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header(icon="♠" if not self.ascii_only else "*")
        with Horizontal(id="body"):
            with Vertical(id="main"):
                with Horizontal(id="top"):
                    yield Players(self.ascii_only, id="players")
                    yield from self.compose_table()
                yield from self.compose_middle()
                yield Static("", id="last-move")
                yield GameLog(id="log")
                yield from self.compose_hand()
                yield Static("", id="status")
            yield GameLog(id="side-log")
        yield Footer()

    def compose_table(self) -> ComposeResult:
        """The game's public cards (pile or table); subclasses yield their widgets."""
        yield from ()

    def compose_middle(self) -> ComposeResult:
        """What fills the middle of a big window; subclasses may yield widgets."""
        yield from ()

    def compose_hand(self) -> ComposeResult:
        """Your hand and any move builder; subclasses yield their widgets."""
        yield from ()

    def on_mount(self) -> None:
        self.query_one("#players").border_title = "Players"
        self.query_one("#log").border_title = "Log"
        self.query_one("#side-log").border_title = "Log"
        self._apply_width(self.app.size.width)
        self.drain()

    def on_resize(self) -> None:
        self._apply_width(self.app.size.width)

    def _apply_width(self, width: int) -> None:
        wide = width >= WIDE
        self.set_class(wide, "-wide")
        for row in self.query(CardRow):
            row.big = wide and self.app.size.height >= TALL

    @property
    def log_widget(self) -> GameLog:
        """The log that is visible at this width."""
        return self.query_one("#side-log" if self.has_class("-wide") else "#log", GameLog)

    def write_log(self, text: str, mine: bool = False, note: bool = False) -> None:
        """Write to both logs so resizing never loses history."""
        self.log_lines.append(text)
        for log in self.query(GameLog):
            log.note(text) if note else log.move(text, mine)

    # -- the session --------------------------------------------------------

    @work(exclusive=True, group="session")
    async def drain(self) -> None:
        """Start the session and show each of its events in order."""
        await self.session.start()
        async for event in self.session.events():
            await self.show_event(event)

    async def show_event(self, event: Event) -> None:
        """Update the screen for one event; round and match ends wait for the player."""
        if isinstance(event, MatchStarted):
            self.seats, self.my_seat, self.target = event.seats, event.my_seat, event.target
            self.scores = event.scores
            self.app.sub_title = f"first to {event.target:,}"
        elif isinstance(event, RoundStarted):
            self.round_number, self.view, self.scores = event.number, event.view, event.scores
            self.last_mover, self.last_move, self.sent = None, None, False
            word = game_named(self.session.game).round_word.capitalize()
            self.write_log(f"— {word} {event.number} —", note=True)
            self.app.sub_title = f"{word.lower()} {event.number} · first to {self.target:,}"
            self.on_new_round()
        elif isinstance(event, MoveMade):
            await self._pace(event.seat)
            self.view, self.last_mover, self.last_move = event.view, event.seat, event.move
            self.scores = tuple(event.view.scores)
            if event.seat == self.my_seat:
                self.sent = False
            self.write_log(self.move_text(event), mine=event.seat == self.my_seat)
            self.query_one("#last-move", Static).update(literal(f"Last move: {event.text}"))
        elif isinstance(event, RoundEnded):
            self.view, self.scores = event.view, event.scores
            self.write_log(event.summary, note=True)
            self.show_view()
            if self.my_seat is None:
                return  # a watcher is not asked to click through every round
            await self.app.push_screen_wait(
                Summary(event.summary, self.score_lines(event.scores), "Next round"))
            return
        elif isinstance(event, MatchEnded):
            self.match_over = True
            self.scores = event.scores
            self.show_view()
            title = self.result_title(event.winner)
            self.write_log(title, note=True)
            await self.app.push_screen_wait(
                Summary(title, self.score_lines(event.scores), "Leave"))
            self.app.exit(title)
            return
        elif isinstance(event, SeatsChanged):
            self.seats = event.seats
        elif isinstance(event, Notice):
            self.write_log(event.text, note=True)
            if event.level != "info":
                self.notify(literal(event.text).plain, markup=False,
                            severity="warning" if event.level == "warning" else "error")
        self.show_view()

    async def _pace(self, seat: int) -> None:
        # A backlog of bot moves (after a dialog) is replayed at the bots' pace.
        if seat != self.my_seat and self.pace > 0:
            wait = self._last_shown + self.pace - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
        self._last_shown = time.monotonic()

    def move_text(self, event: MoveMade) -> str:
        """The log line for a move: the session's words, plus the cards you drew."""
        history = getattr(event.view, "history", None)
        if event.seat != self.my_seat or not history:
            return event.text
        drawn = [c for c in getattr(history[-1], "drawn", ()) if c is not None]
        if not drawn or not game_named(self.session.game).uses_signs:
            return event.text
        return f"{event.text}: {' '.join(map(str, drawn))}"

    def score_lines(self, scores: tuple[int, ...]) -> str:
        """The match scores, one line per seat (Zodiak) or team (Hekata)."""
        if not game_named(self.session.game).plays_in_teams(len(self.seats)):
            sizes = self.view.hand_sizes() if self.view is not None else []
            rows = [(s.name, scores[i], f"  {sizes[i]:>2} left" if i < len(sizes) else "")
                    for i, s in enumerate(self.seats) if i < len(scores)]
        else:
            rows = [(self.team_name(t), score, "") for t, score in enumerate(scores)]
        width = max((len(name) for name, _, _ in rows), default=4)
        lines = [f"{name:<{width}}{left}  {score:>6,}" for name, score, left in rows]
        return "\n".join(lines) + f"\n\nThe match is played to {self.target:,}."

    def team_name(self, team: int) -> str:
        """A Hekata team named by its players."""
        players = len(self.seats)
        return " & ".join(s.name for i, s in enumerate(self.seats)
                          if (i % 2 if players == 4 else i) == team)

    def result_title(self, winner: int | None) -> str:
        """Who won the match, in words."""
        if winner is None:
            return "The match is over."
        if not game_named(self.session.game).plays_in_teams(len(self.seats)):
            name = self.seats[winner].name
            return "You win the match!" if winner == self.my_seat else f"{name} wins the match."
        mine = self.my_seat is not None and (self.my_seat % 2 if len(self.seats) == 4
                                             else self.my_seat) == winner
        return "Your team wins the match!" if mine else f"{self.team_name(winner)} win the match."

    # -- showing ------------------------------------------------------------

    @property
    def my_turn(self) -> bool:
        """Whether you may act now: it is your turn and your last move is not still on its way."""
        view = self.view
        return (view is not None and not self.sent and self.my_seat is not None
                and view.turn == self.my_seat)

    def show_view(self) -> None:
        """Redraw everything from the current view."""
        view = self.view
        self.query_one(Players).state = TableState(
            self.session.game, self.seats, self.my_seat,
            tuple(view.hand_sizes()) if view else (), view.turn if view else None,
            self.scores, self.last_mover)
        self.query_one("#last-move", Static).set_class(self.last_mover is not None, "-fresh")
        self.show_game()
        self.refresh_bindings()

    def show_game(self) -> None:
        """Redraw the game's own widgets; subclasses implement it."""

    def on_new_round(self) -> None:
        """Forget what was being composed in the last round; subclasses implement it."""

    def set_status(self, text: str, level: str = "") -> None:
        """The line under the hand: what you are building, whether it is legal, and why not."""
        status = self.query_one("#status", Static)
        status.update(literal(text))
        status.set_class(level == "error", "-error")
        status.set_class(level == "ok", "-ok")

    async def send(self, move: Move) -> bool:
        """Check `move` with the engine and submit it; on a rule's refusal show the reason."""
        view = self.view
        if view is None or not self.my_turn:
            self.set_status("It is not your turn.", "error")
            return False
        try:
            view.check(move, self.my_seat)
            self.sent = True
            await self.session.submit(move)
        except IllegalMove as exc:
            self.sent = False
            self.set_status(str(exc), "error")
            self.app.bell()
            return False
        self.refresh_bindings()
        return True

    # -- actions ------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "log_page":
            return not self.has_class("-building")
        return True

    # The hand is the CardRow #hand in both games; each screen keeps `hand` and `cursor`.
    def action_cursor(self, step: int) -> None:
        if self.hand:  # type: ignore[attr-defined]
            self.cursor = (self.cursor + step) % len(self.hand)  # type: ignore[attr-defined]
            self.query_one("#hand", CardRow).cursor = self.cursor

    def action_cursor_line(self, direction: int) -> None:
        row = self.query_one("#hand", CardRow)
        target = self.cursor + direction * row.per_line()  # type: ignore[attr-defined]
        if self.hand and 0 <= target < len(self.hand):  # type: ignore[attr-defined]
            self.cursor = target
            row.cursor = target

    def action_help(self) -> None:
        game = self.session.game
        self.app.push_screen(HelpScreen(str(getattr(game, "name", game))))

    def action_log_page(self, direction: int) -> None:
        log = self.log_widget
        log.scroll_page_down() if direction > 0 else log.scroll_page_up()

    def action_quit_match(self) -> None:
        if self.match_over:
            question = "Quit? The match is over."
        elif getattr(self.session, "save_path", None) is not None:
            question = "Quit now? The match is saved; `cardtui play --resume` continues it."
        elif getattr(self.session, "is_owner", False):
            question = ("Close the table? You are the host: the game stops for everyone"
                        " (`cardtui host --resume` continues it).")
        elif self.my_seat is None:
            question = "Stop watching?"
        else:
            question = ("Leave the table? A bot plays your seat until you come back"
                        " (run the same `cardtui join` again).")

        async def answer(yes: bool | None) -> None:
            if yes:
                await self.app.leave()

        self.app.push_screen(ConfirmQuit(question), answer)
