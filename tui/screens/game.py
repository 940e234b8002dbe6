"""The game screen's common half: it drains a GameSession's events and shows players, log and scores.

The screen never knows what kind of session feeds it (a local match, a
networked seat); it reads events and views and submits moves, checking each
move with the engine first so it never sends an illegal one.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import replace
from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Static

from engine.bots import GreedyBot
from engine.errors import IllegalMove
from engine.expert import ExpertBot
from engine.games import game_named
from engine.house import HouseRules
from engine.match import Round
from netplay.session.events import (
    Event,
    GameSession,
    MatchEnded,
    MatchStarted,
    Move,
    MoveMade,
    Notice,
    RematchOffered,
    RoundEnded,
    RoundStarted,
    SeatInfo,
    SeatsChanged,
)
from netplay.session.thinking import choose_off_loop
from tui.appapi import card_app
from tui.literal import literal
from tui.screens.dialogs import ConfirmQuit, MatchResult, Summary
from tui.screens.help import HelpScreen
from tui.screens.match_words import MatchWords
from tui.widgets.bars import card_header
from tui.widgets.gamelog import MAX_LINES, GameLog
from tui.widgets.hand import CardRow
from tui.widgets.players import Players, TableState
from tui.words import grouped, plain_text, pretty_cards

COMMON_BINDINGS: list[BindingType] = [
    Binding("home", "cursor_to(0)", "First card", show=False),
    Binding("end", "cursor_to(-1)", "Last card", show=False),
    Binding("r", "show_result", "Result"),  # shown only while looking back (check_action)
    Binding("pageup", "log_page(-1)", "Log", key_display="PgUp"),
    Binding("pagedown", "log_page(1)", "Log down", show=False),
    Binding("question_mark", "help", "Help", key_display="?"),
    Binding("q", "quit_match", "Quit"),
]

# Wider than this, the log moves to a column on the right and the table gets the room.
WIDE = 110
# Taller than this as well, cards are drawn large.
TALL = 32
# Narrower than this, the footer's keys are packed closer (Textual's compact footer).
COMPACT_FOOTER_BELOW = 90
# How long the last move stays highlighted.
FRESH_SECONDS = 2.5
# Smaller than this, the screen says so instead of drawing a table nobody can read, and takes
# only these keys.
MIN_SIZE = (80, 24)
KEYS_WHEN_TOO_SMALL = frozenset({"quit_match", "help"})
# Notices pop up at most this many within TOAST_SECONDS (a failed check always does); the log
# keeps every one, so a host sending refusals or chat without end cannot bury the table in them.
TOASTS_AT_ONCE = 3
TOAST_SECONDS = 5.0
TOAST_SEVERITY: dict[str, SeverityLevel] = {"warning": "warning", "error": "error"}  # else info


class GameScreen(MatchWords, Screen[None]):
    """Players, last move, log and footer around a game-specific table and hand."""

    # Each game's screen lists its own keys first and then these, so the footer reads in that order.
    BINDINGS: ClassVar[list[BindingType]] = []
    # The hand is the CardRow #hand in both games; each screen keeps its cards and the cursor.
    hand: Sequence[object]
    cursor: int

    def __init__(self, session: GameSession, ascii_only: bool = False, pace: float = 0.0) -> None:
        super().__init__()
        self.session = session
        self.ascii_only = ascii_only
        self.pace = pace
        self.seats: tuple[SeatInfo, ...] = ()
        self.my_seat: int | None = session.my_seat
        self.target = 0
        self.view: Round | None = None
        self.hint_thinking = False  # the expert searches for a hint in a worker thread
        # Chat lines already read in the lobby come through here too: logged, not popped up.
        self._lobby_chat = getattr(session, "chat_count", 0)
        self.scores: tuple[int, ...] = ()
        self.round_number = 0
        self.rounds_before = 0  # a rematch's rounds are numbered on at the table, from 1 here
        self.rematch_offer = ""  # who offered a rematch of the match that ended, in words
        self.scores_before: tuple[int, ...] | None = None  # the match's scores before this screen
        self.last_mover: int | None = None
        self.last_move: Move | None = None
        self.sent = False
        self.match_over = False
        self._round_summary: Summary | None = None  # a networked round's result still up
        self._last_shown = 0.0
        self.log_lines: deque[str] = deque(maxlen=MAX_LINES)  # what the logs hold, as text
        self._toasts: deque[float] = deque(maxlen=TOASTS_AT_ONCE)  # when the last ones showed
        self.match_winner: int | None = None
        self.reviewing = False
        # (round number, its winner, its points, the match scores after it)
        self.history: list[tuple[int, int | None, int, tuple[int, ...]]] = []
        self.was_my_turn = False
        self.halted = ""  # why nobody can move now (the host is out of reach), or ""
        self._bindings_shown: tuple[object, ...] | None = None  # what the footer was drawn for
        self._fresh_timer: Timer | None = None

    # -- layout -------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield card_header(self.ascii_only)
        with Horizontal(id="body"):
            with Vertical(id="main"):
                with Horizontal(id="top"):
                    yield Players(self.ascii_only, id="players")
                    yield from self.compose_table()
                yield from self.compose_middle()
                yield Static("No scores yet.", id="score-board", markup=False)
                yield Static("", id="last-move")
                yield GameLog(id="log")
                yield from self.compose_hand()
                yield Static("", id="status")
            yield GameLog(id="side-log")
        yield Static(self.plain(f"This window is too small for the table: make it at least"
                                f" {MIN_SIZE[0]}×{MIN_SIZE[1]}."), id="too-small")
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
        self.query_one("#score-board").border_title = f"Scores after each {self.round_word}"
        self.query_one("#log").border_title = "Log"
        self.query_one("#side-log").border_title = "Log"
        self._apply_width(self.app.size.width)
        self.set_interval(1.0, self._count_down)
        self.drain()

    def _count_down(self) -> None:
        """Show the seconds left on the turn timer, if the table has one."""
        players = self.query_one(Players)
        shown = self._turn_left()
        if players.state is not None and players.state.turn_left != shown:
            players.state = replace(players.state, turn_left=shown)

    def on_resize(self) -> None:
        self._apply_width(self.app.size.width)

    def _apply_width(self, width: int) -> None:
        wide = width >= WIDE
        self.set_class(wide, "-wide")
        small = width < MIN_SIZE[0] or self.app.size.height < MIN_SIZE[1]
        self.set_class(small, "-too-small")
        self.update_bindings()
        tall = self.app.size.height >= TALL
        self.set_class(tall, "-tall")
        for row in self.query(CardRow):
            row.big = wide and tall
        # Textual's compact footer keeps every key of a Hekata trick on 80 columns.
        self.query_one(Footer).compact = width < COMPACT_FOOTER_BELOW

    @property
    def log_widget(self) -> GameLog:
        """The log that is visible at this width."""
        return self.query_one("#side-log" if self.has_class("-wide") else "#log", GameLog)

    def plain(self, text: str) -> str:
        """`text` as this terminal can show it (no dashes or dots outside ASCII with --ascii)."""
        return plain_text(text) if self.ascii_only else text

    def fade_last_move(self) -> None:
        """End the last move's highlight."""
        self._fresh_timer = None
        self.last_mover = None
        self.query_one("#last-move", Static).set_class(False, "-fresh")
        self.show_view()

    def _may_toast(self, notice: Notice) -> bool:
        """Whether `notice` pops up: a kept one always, others while few did lately."""
        now = time.monotonic()
        if not notice.kept and len(self._toasts) == TOASTS_AT_ONCE \
                and now - self._toasts[0] < TOAST_SECONDS:
            return False
        self._toasts.append(now)
        return True

    def write_log(self, text: str, mine: bool = False, note: bool = False) -> None:
        """Write to both logs so resizing never loses history."""
        text = self.plain(text)
        self.log_lines.append(text)
        for log in self.query(GameLog):
            log.note(text) if note else log.move(text, mine)

    def _close_round_summary(self) -> None:
        """Close the last round's result if it is still up: the table has gone on to your turn
        in the next round, and your turn's clock runs."""
        dialog, self._round_summary = self._round_summary, None
        if dialog is not None:
            dialog.close(None)
            self.log_widget.scroll_end(animate=False)
            self.notify("Your turn: the next round has started.", timeout=4)

    # -- the session --------------------------------------------------------

    @work(exclusive=True, group="session")
    async def drain(self) -> None:
        """Start the session and show each of its events in order."""
        await self.session.start()
        async for event in self.session.events():
            await self.show_event(event)
            if self._round_summary is not None and self.my_turn:
                self._close_round_summary()

    async def show_event(self, event: Event) -> None:
        """Update the screen for one event; round and match ends wait for the player."""
        if isinstance(event, MatchStarted):
            self._match_started(event)
        elif isinstance(event, RoundStarted):
            self._round_started(event)
        elif isinstance(event, MoveMade):
            await self._move_made(event)
        elif isinstance(event, RoundEnded):
            await self._round_ended(event)
            return
        elif isinstance(event, MatchEnded):
            self._match_ended(event)
            return
        elif isinstance(event, RematchOffered):
            self._rematch_offered(event)
        elif isinstance(event, SeatsChanged):
            self._seats_changed(event)
        elif isinstance(event, Notice):
            self._notice(event)
        self.show_view()

    def _match_started(self, event: MatchStarted) -> None:
        """A match begins at this table (a rematch too): its seats, target and scores so far."""
        if self.match_over:  # a rematch at a networked table: the same screen plays it
            self._start_again()
        self.seats, self.my_seat, self.target = event.seats, event.my_seat, event.target
        self.scores = event.scores
        if event.rounds_before is not None:  # a seat that came back after a rematch began
            self.rounds_before = event.rounds_before
        # Scores already won when this screen began (a seat back mid-match, a resumed
        # match): the rounds that made them were not seen here, their total is.
        self.scores_before = event.scores if any(event.scores) else None
        if self.my_seat is None:
            self.query_one("#hand", CardRow).empty_text = "Every hand is hidden from you."
        self.app.sub_title = f"first to {event.target:,}"

    def _round_started(self, event: RoundStarted) -> None:
        """A round begins, or one under way is joined: its story so far goes to the log."""
        self.round_number = event.number - self.rounds_before
        self.view, self.scores = event.view, event.scores
        if getattr(event.view, "history", ()):
            # A resumed or rejoined round is under way: its tricks so far have scored.
            self.scores = tuple(event.view.scores)
        self.last_mover, self.last_move, self.sent = None, None, False
        if self.my_seat is not None:
            self.query_one("#hand", CardRow).empty_text = (
                "You have no cards." if self.session.plays_own_seat() else
                f"Dealt out of this {self.round_word}: the host's bot plays your seat until the"
                " next.")  # one line at 80 columns; the log says why (away, or a key handed over)
        word = self.round_word.capitalize()
        self.write_log(f"— {word} {self.round_number} —", note=True)
        # After a resume or a rejoin the round is already under way: tell its story so far.
        told = ""
        for effect in getattr(event.view, "history", ()):
            told = self.describe(effect, None)
            self.write_log(told, mine=effect.seat == self.my_seat)
        # The last round's last move is not this round's: the line shows this round's.
        self.query_one("#last-move", Static).update(
            literal(self.plain(f"Last move: {told}")) if told else "")
        max_row = getattr(event.view, "max_row", None)  # the other house rule, if set
        self.app.sub_title = self.plain(f"{word.lower()} {self.round_number} · first to"
                                        f" {self.target:,}"
                                        + (f" · max-row={max_row}" if max_row else ""))
        self.on_new_round()

    async def _move_made(self, event: MoveMade) -> None:
        """A move, logged and shown as the last move for a moment."""
        await self._pace(event.seat)
        self.view, self.last_mover, self.last_move = event.view, event.seat, event.move
        self.scores = tuple(event.view.scores)
        if event.seat == self.my_seat:
            self.sent = False
        text = self.move_text(event)
        self.write_log(text, mine=event.seat == self.my_seat)
        self.query_one("#last-move", Static).update(literal(self.plain(f"Last move: {text}")))
        # The last move stays highlighted for a moment, so a bot's move is seen on the table.
        if self._fresh_timer is not None:
            self._fresh_timer.stop()
        self._fresh_timer = self.set_timer(FRESH_SECONDS, self.fade_last_move)

    async def _round_ended(self, event: RoundEnded) -> None:
        """A round is over: its result in the log and the score history, and a summary to read."""
        self.view, self.scores = event.view, event.scores
        if event.number:  # also a round whose start this seat never saw (it came back)
            self.round_number = event.number - self.rounds_before
        summary = self.round_title(event.winner, event.points)
        self.history.append((self.round_number, event.winner, event.points, event.scores))
        self.query_one("#score-board", Static).update(self.score_history())
        self.write_log(summary, note=True)
        self.show_view()
        if self.my_seat is None or max(event.scores, default=0) >= self.target:
            return  # watchers are not asked to click through rounds; a won match says it all
        dialog = Summary(summary, self.score_lines(event.scores), "Next " + self.round_word)
        if self.session.next_round_waits:
            await self.app.push_screen_wait(dialog)
        else:  # the table goes on: the next round closes the dialog (or enter does)
            self._round_summary = dialog
            self.app.push_screen(dialog)

    def _match_ended(self, event: MatchEnded) -> None:
        """The match is over: its result, counted in the statistics."""
        self.match_over = True
        self.match_winner = event.winner
        self.scores = event.scores
        self.show_view()
        title = self.result_title(event.winner)
        self.write_log(title, note=True)
        self.on_match_ended(event)
        self.show_result()

    def _rematch_offered(self, event: RematchOffered) -> None:
        """A rematch is offered: said in the log and on the result."""
        by = "The host" if event.by is None else event.by
        # Said on the result too: at 80x24 the dialog hides the log that says it. A
        # watcher has nothing to accept: it watches the rematch if the seats accept.
        offer = f"{by} offers a rematch with the same seats"
        seated = self.my_seat is not None
        self.rematch_offer = f"{offer}: r accepts it." if seated else f"{offer}."
        self.write_log(f"{offer}: r on the result accepts it." if seated else f"{offer}.",
                       note=True)
        if getattr(self.session, "is_owner", False):
            self.write_log("It starts when everyone has accepted.", note=True)
        elif isinstance(self.app.screen, MatchResult):
            self.app.screen.close("again")  # shown again below, now offering the rematch
        elif not self.reviewing:
            self.show_result()

    def _seats_changed(self, event: SeatsChanged) -> None:
        """Who sits where changed (a seat kept its name on the result of a match that ended)."""
        if self.match_over and len(event.seats) == len(self.seats):
            # The result and its scores name who played the match: a seat freed for the
            # rematch (its person gone) keeps its name here until the rematch starts.
            self.seats = tuple(new if new.name else replace(new, name=old.name)
                               for old, new in zip(self.seats, event.seats))
        else:
            self.seats = event.seats

    def _notice(self, event: Notice) -> None:
        """A notice: logged, and popped up when it matters and not too often."""
        text = event.numbered_from(self.rounds_before)  # a rematch's rounds count from 1 here
        self.write_log(text, note=True)
        halted_before = bool(self.halted)
        # While the host is out of reach nobody's move counts: do not invite one. Only the
        # session's own `state` notices say so (a host's refusal or a chat line may read alike).
        if event.state:
            self.halted = event.text if event.out_of_reach else ""
            result = self.app.screen
            if (isinstance(result, MatchResult) and result.rematch
                    and not card_app(self.app).can_rematch()):
                result.close("again")  # shown again below, without a rematch to offer
        lobby_chat = event.level == "chat" and self._lobby_chat > 0
        self._lobby_chat -= lobby_chat
        # The status line shows the connection's state: a toast only when it changes, not
        # one for every try of a reconnect.
        repeated = event.state and bool(self.halted) == halted_before
        if event.level != "info" and not lobby_chat and not repeated \
                and self._may_toast(event):
            self.notify(literal(text).plain, markup=False,
                        severity=TOAST_SEVERITY.get(event.level, "information"))

    async def _pace(self, seat: int) -> None:
        # A backlog of bot moves (after a dialog) is replayed at the bots' pace.
        if seat != self.my_seat and self.pace > 0:
            wait = self._last_shown + self.pace - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
        self._last_shown = time.monotonic()

    def move_text(self, event: MoveMade) -> str:
        """The log line for a move, in names and card symbols, with the cards you drew."""
        history = getattr(event.view, "history", None)
        effect = history[-1] if history else None
        if effect is None or effect.seat != event.seat or effect.move != event.move:
            return self.plain(grouped(pretty_cards(event.text, self.ascii_only)))
        return self.describe(effect, event.view)

    def describe(self, effect: object, after: Round | None) -> str:
        """One move in words; `after` is the view right after it (None when retelling)."""
        raise NotImplementedError

    def on_match_ended(self, event: MatchEnded) -> None:
        """Count the match in the saved statistics (a hook the app fills in)."""
        record = getattr(self.app, "record_result", None)
        if record is not None and self.my_seat is not None:
            won = event.winner is not None and (
                event.winner == (self.my_seat if self.session.game == "zodiak" else self.my_team))
            record(self.session.game, won)

    def show_result(self) -> None:
        """The match's result with its score history: rematch, look back at the table, or leave."""
        title = self.result_title(self.match_winner)
        body = self.score_lines(self.scores)
        if self.history:
            _number, winner, points, _scores = self.history[-1]
            body = f"{self.round_title(winner, points)}\n\n{body}"
        table = self.score_history()
        if table:
            body += "\n\n" + table
        if self.rematch_offer:
            body = f"{self.rematch_offer}\n\n{body}"
        rematch = card_app(self.app).can_rematch()
        self.app.push_screen(MatchResult(title, body, rematch), self._after_result)

    def _start_again(self) -> None:
        """Forget the match that ended: a rematch begins on this screen."""
        self.match_over, self.match_winner, self.reviewing = False, None, False
        self.history, self.rematch_offer = [], ""
        self.rounds_before += self.round_number
        if isinstance(self.app.screen, MatchResult):
            self.app.screen.close("again")
        self.write_log("— A new match with the same seats —", note=True)

    def _after_result(self, choice: str | None) -> None:
        title = self.result_title(self.match_winner)
        if choice == "again":
            if self.match_over:
                self.show_result()
        elif choice == "rematch":
            card_app(self.app).rematch()
        elif choice == "leave":
            card_app(self.app).after_match(title)
        else:
            self.reviewing = True
            self.show_view()

    # -- showing ------------------------------------------------------------

    @property
    def table_gone(self) -> str | None:
        """Why the table is gone for good (its host closed it, its room is gone), if it is."""
        gone = getattr(self.session, "gone", None)
        return gone if isinstance(gone, str) else None

    @property
    def my_turn(self) -> bool:
        """Whether you may act now: it is your turn and your last move is not still on its way."""
        view = self.view
        return (view is not None and not self.sent and self.my_seat is not None
                and view.turn == self.my_seat and not self.halted
                and self.session.plays_own_seat())

    def waiting_status(self, turn: int | None) -> str:
        """The status line while another seat moves (yours too, when its bot plays it)."""
        if self.sent:
            return "Sent…"
        if turn is not None and turn == self.my_seat and not self.session.plays_own_seat():
            return "The host's bot plays your seat this round…"
        name = self.seats[turn].name if turn is not None and self.seats else "?"
        return f"{name} to move…"

    def show_view(self) -> None:
        """Redraw everything from the current view."""
        view = self.view
        self.query_one(Players).state = TableState(
            self.session.game, self.seats, self.my_seat,
            tuple(view.hand_sizes()) if view else (), view.turn if view else None,
            self.scores, self.last_mover, self._turn_left())
        self.query_one("#last-move", Static).set_class(self.last_mover is not None, "-fresh")
        self.show_game()
        if self.halted and not self.match_over:
            self.set_status(f"{self.halted.capitalize()} (q leaves).", "error")
        if self.reviewing:
            self.set_status("The match is over: PgUp scrolls the log, r shows the result again,"
                            " q leaves.")
        self._notice_turn()
        self.update_bindings()

    def update_bindings(self) -> None:
        """Have the footer show the keys that work now, if that may have changed.

        Textual's footer rebuilds all its keys on every refresh_bindings: a burst of events (a
        host flooding its seats with notices) asked for one each and kept the app busy for half
        a minute. What `check_action` answers depends only on these.
        """
        shown = (self.my_turn, self.reviewing, self.has_class("-building"), self.my_seat is None,
                 self.match_over, self.table_gone is not None, self.has_class("-too-small"),
                 *self.footer_state())
        if shown != self._bindings_shown:
            self._bindings_shown = shown
            self.refresh_bindings()

    def footer_state(self) -> tuple[object, ...]:
        """What else a game's `check_action` answers depend on (the footer is redrawn when it
        changes)."""
        return ()

    def _turn_left(self) -> int | None:
        left = self.session.turn_left()
        return None if left is None else math.ceil(left)

    def _notice_turn(self) -> None:
        """Light up the hand (and ring the bell, if wanted) when it becomes your turn."""
        mine = self.my_turn and not self.match_over
        self.set_class(mine, "-your-turn")
        hands = self.query("#hand")
        if hands:
            title = ("Watching" if self.my_seat is None and self.seats
                     else "Your hand — your turn" if mine else "Your hand")
            hands.first().border_title = self.plain(title)
        settings = getattr(self.app, "settings", None)
        if mine and not self.was_my_turn and settings is not None and settings.bell:
            self.app.bell()
        self.was_my_turn = mine

    def show_game(self) -> None:
        """Redraw the game's own widgets; subclasses implement it."""

    def on_new_round(self) -> None:
        """Forget what was being composed in the last round; subclasses implement it."""

    def set_status(self, text: str, level: str = "") -> None:
        """The line under the hand: what you are building, whether it is legal, and why not."""
        status = self.query_one("#status", Static)
        status.update(literal(self.plain(text)))
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
            self.set_status(pretty_cards(str(exc), self.ascii_only) + self.refusal_hint(), "error")
            self.app.bell()
            return False
        self.update_bindings()
        return True

    def refusal_hint(self) -> str:
        """What to do after the engine refused your move; games may add a way out."""
        return ""

    # -- hints --------------------------------------------------------------

    async def action_hint(self) -> None:
        view = self.view
        if view is not None and self.my_turn:
            await self.show_hint(GreedyBot().choose(view), "Hint")

    def action_expert_hint(self) -> None:
        view = self.view
        # A thread cannot be stopped: one search at a time, however fast H is pressed (an ssh
        # visitor's presses must not pile up searches on the server).
        if view is not None and self.my_turn and not self.hint_thinking:
            self.set_status("The expert is thinking (about a second)…")
            self.hint_thinking = True
            self._think_of_hint(view, self.composing())

    @work(group="hint")
    async def _think_of_hint(self, view: Round, composing: object) -> None:
        """Search for the expert's move in a worker thread, so the screen keeps answering."""
        try:
            move = await choose_off_loop(ExpertBot(), view.copy())
        finally:
            self.hint_thinking = False
        if self.view is not view or not self.my_turn:  # the table moved on while it thought
            return
        if self.composing() != composing:
            # What you set up meanwhile stays: enter must play what you chose, not the hint.
            self.notify("The expert's hint came after you changed your move, so it is not set"
                        " up: H asks again.", timeout=4)
            return
        await self.show_hint(move, "The expert's hint")

    def composing(self) -> object:
        """What you have set up for your move (the games add theirs to the cursor)."""
        return self.cursor

    async def show_hint(self, move: Move, who: str) -> None:
        """Set up `move` for you to play (or not); each game shows it its own way."""

    # -- actions ------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.has_class("-too-small") and action not in KEYS_WHEN_TOO_SMALL:
            return False  # a key must not act on a table the player cannot see
        return self.allows(action, parameters)

    def allows(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Whether `action` may run now (Textual's check_action, for a table that is shown)."""
        if action in ("cursor", "cursor_to", "cursor_line") and (
                self.my_seat is None or self.match_over):
            return False  # a watcher has no hand to move along, a finished match no move
        if action == "log_page":
            return not self.has_class("-building")
        if action == "show_result":
            return self.reviewing
        return True

    def action_cursor(self, step: int) -> None:
        if self.hand:
            self.cursor = (self.cursor + step) % len(self.hand)
            self.query_one("#hand", CardRow).cursor = self.cursor

    def action_cursor_to(self, index: int) -> None:
        if self.hand:
            self.cursor = index % len(self.hand)
            self.query_one("#hand", CardRow).cursor = self.cursor

    def action_show_result(self) -> None:
        if self.reviewing:
            self.reviewing = False
            self.show_result()

    def action_cursor_line(self, direction: int) -> None:
        row = self.query_one("#hand", CardRow)
        target = self.cursor + direction * row.per_line()
        if self.hand and 0 <= target < len(self.hand):
            self.cursor = target
            row.cursor = target

    def action_help(self) -> None:
        game = self.session.game
        self.app.push_screen(HelpScreen(str(getattr(game, "name", game)), self.house_rules()))

    def house_rules(self) -> HouseRules:
        """The house rules this match is played by, as far as the view and the target show them."""
        standard = game_named(str(self.session.game)).target
        target = self.target if self.target and self.target != standard else None
        return HouseRules(getattr(self.view, "max_row", None), target)

    def action_log_page(self, direction: int) -> None:
        log = self.log_widget
        log.scroll_page_down() if direction > 0 else log.scroll_page_up()

    def action_quit_match(self) -> None:
        buttons: dict[str, str] = {}
        if self.table_gone is not None and not self.match_over:
            question = f"Leave? The table is closed: {self.table_gone}."
            buttons = {"yes": "Leave (y)", "no": "Stay (n)"}
        elif self.my_seat is None:
            question = "Stop watching? The match is over." if self.match_over else "Stop watching?"
            buttons = {"yes": "Stop (y)", "no": "Keep watching (n)"}
        elif self.match_over:
            question = "Quit? The match is over."
            buttons = {"no": "Stay (n)"}
        elif getattr(self.session, "save_path", None) is not None:
            question = "Quit now? The match is saved: cardtui play --resume continues it."
        elif getattr(self.app, "tables", None) is not None:
            # A seat taken over SSH: the server deals, so the table goes on, even when this
            # visitor opened it (and so is its owner).
            question = ("Leave the table for the lobby? A bot plays your seat until you sit"
                        " at this table again.")
            buttons = {"yes": "Leave (y)"}
        elif getattr(self.session, "is_owner", False):
            question = ("Close the table? You are the host: the game stops for everyone"
                        " (cardtui host --resume continues it).")
        else:
            question = ("Leave the table? A bot plays your seat until you come back: run the"
                        " same cardtui join command again.")
            buttons = {"yes": "Leave (y)"}

        async def answer(yes: bool | None) -> None:
            if yes:
                await card_app(self.app).leave()

        self.app.push_screen(ConfirmQuit(question, **buttons), answer)
