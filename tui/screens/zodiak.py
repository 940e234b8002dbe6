"""Zodiak at the table: the pile, your hand, the run you are building and whether it is legal."""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Static

from engine.cards import SUIT_NAMES, SUIT_SYMBOLS, Card
from engine.errors import IllegalMove
from engine.games import Move
from engine.match import Round
from engine.zodiak import Draw, MoveEffect, Run, ZodiakRound
from netplay.session.events import GameSession
from tui.appapi import card_app
from tui.literal import literal
from tui.screens.dialogs import SuitPicker
from tui.screens.game import COMMON_BINDINGS, GameScreen
from tui.widgets.cardface import french_face
from tui.widgets.hand import CardRow
from tui.words import pretty_cards, zodiak_words

# Suits alternate colours in the hand so neighbouring suits are easy to tell apart.
SUIT_ORDER = {"S": 0, "H": 1, "C": 2, "D": 3}


def sort_hand(cards: list[Card], by: str = "suit") -> list[Card]:
    """Your cards grouped by suit (black, red, black, red), ace to king within a suit; or by rank."""
    if by == "rank":
        return sorted(cards, key=lambda c: (c.rank, SUIT_ORDER[c.suit]))
    return sorted(cards, key=lambda c: (SUIT_ORDER[c.suit], c.rank))


class ZodiakScreen(GameScreen):
    """Play Zodiak: build a run card by card, or draw; a wild eight asks for its suit."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "cursor(-1)", "Move", key_display="←→↑↓"),
        Binding("right", "cursor(1)", "Right", show=False),
        Binding("up", "cursor_line(-1)", "Up", show=False),
        Binding("down", "cursor_line(1)", "Down", show=False),
        Binding("space", "select", "Pick", key_display="␣"),
        Binding("enter", "play", "Play", key_display="⏎"),
        Binding("d", "draw", "Draw"),
        Binding("h", "hint", "Hint"),
        Binding("H", "expert_hint", "Expert hint", show=False),
        Binding("escape", "clear", "Clear", key_display="esc"),
        Binding("o", "sort", "Sort"),
        *COMMON_BINDINGS,
    ]

    def __init__(self, session: GameSession, ascii_only: bool = False, pace: float = 0.0) -> None:
        super().__init__(session, ascii_only, pace)
        self.hand: list[Card] = []
        self.cursor = 0
        self.selected: list[Card] = []
        self.hint_suit: str | None = None
        self.last_run: tuple[int, Run] | None = None
        # Whether the run was picked by enter alone (the card under the cursor), not by space.
        self.implicit = False

    def compose_table(self) -> ComposeResult:
        with Vertical(id="pile-panel"):
            yield CardRow(self.ascii_only, "", id="pile")
            yield Static("", id="pile-info")

    def compose_middle(self) -> ComposeResult:
        # Only shown in a big window: the last run played, face up, large.
        yield CardRow(self.ascii_only, "", id="last-run")

    def compose_hand(self) -> ComposeResult:
        yield CardRow(self.ascii_only, "You have no cards.", id="hand")

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#pile-panel").border_title = "Pile"
        self.query_one("#hand").border_title = "Your hand"

    @property
    def round_view(self) -> ZodiakRound | None:
        """The current view, typed."""
        return self.view if isinstance(self.view, ZodiakRound) else None

    def on_new_round(self) -> None:
        self.selected, self.cursor, self.hint_suit = [], 0, None
        self.last_run = None

    # -- showing ------------------------------------------------------------

    def show_game(self) -> None:
        view = self.round_view
        if view is None:
            return
        seat = self.my_seat
        mine = view.hands[seat] if seat is not None and seat < len(view.hands) else []
        order = getattr(self.app, "settings", None)
        by = order.hand_order if order is not None else "suit"
        self.hand = sort_hand([c for c in mine if c is not None], by)
        self.selected = [c for c in self.selected if c in self.hand]
        self.cursor = max(0, min(self.cursor, len(self.hand) - 1))
        self._show_pile(view)
        self._show_hand(view)
        self._show_status(view)
        self.update_bindings()  # esc Clear comes and goes with the cards picked

    def _show_last_run(self) -> None:
        if isinstance(self.last_move, Run) and self.last_mover is not None:
            self.last_run = (self.last_mover, self.last_move)
        row = self.query_one("#last-run", CardRow)
        row.set_class(self.last_run is None, "-empty")
        if self.last_run is None:
            row.faces, row.border_title = (), ""
            return
        seat, run = self.last_run
        fresh = run is self.last_move and self.last_mover is not None
        row.faces = tuple(french_face(c, self.ascii_only, fresh=fresh) for c in run.cards)
        name = self.seat_name(seat)
        suit = f", declaring {SUIT_NAMES[run.declared]}" if run.declared else ""
        row.border_title = literal(self.plain(f"{name} played{suit}"))

    def _show_pile(self, view: ZodiakRound) -> None:
        self._show_last_run()
        fresh = isinstance(self.last_move, Run) and self.last_mover is not None
        self.query_one("#pile", CardRow).faces = (french_face(view.top, self.ascii_only,
                                                              fresh=fresh),)
        lines = []
        if view.declared:
            symbol = view.declared if self.ascii_only else SUIT_SYMBOLS[view.declared]
            lines.append(f"[b]Declared: {symbol} {SUIT_NAMES[view.declared]}[/b]")
        if view.penalty:
            lines.append(f"[b $error]Penalty: draw {view.penalty}[/]")
        lines.append(self.plain(f"Stock {len(view.stock)} · pile {len(view.pile)}"))
        if self.my_seat is not None:
            star = "*" if self.ascii_only else "★"
            # Two lines: one wrapped in the narrow panel, leaving the star alone below.
            lines.append(f"Your zodiac card:\n{view.zodiac_card(self.my_seat).pretty(self.ascii_only)}"
                         f" {star}")
        self.query_one("#pile-info", Static).update("\n".join(lines))

    def _show_hand(self, view: ZodiakRound) -> None:
        playable = self.my_turn
        order = {card: i + 1 for i, card in enumerate(self.selected)}
        zodiac = view.zodiac_card(self.my_seat) if self.my_seat is not None else None
        row = self.query_one("#hand", CardRow)
        row.faces = tuple(
            french_face(c, self.ascii_only, playable=playable and view.can_start(c),
                        order=order.get(c), special=c == zodiac)
            for c in self.hand)
        row.cursor = self.cursor if self.hand else None

    def _show_status(self, view: ZodiakRound) -> None:
        if view.round_over:
            self.set_status("The match is over." if self.match_over else "The round is over.")
            return
        if not self.my_turn:
            self.set_status(self.waiting_status(view.turn))
            return
        if self.selected:
            run = self._run()
            text = "Run: " + " ".join(c.pretty(self.ascii_only) for c in self.selected)
            try:
                view.check(run if run.declared or not self._wild_alone() else
                           Run(run.cards, "S"), self.my_seat)
            except IllegalMove as exc:
                self.set_status(f"{text} — not legal: {pretty_cards(str(exc), self.ascii_only)}"
                                " (esc clears the run)", "error")
                return
            self.set_status(f"{text} — legal: enter plays it", "ok")
            return
        if not self._has_run(view):
            what = f"{view.penalty} cards" if view.penalty else "a card"
            self.set_status(f"Your turn. Nothing you hold fits: press d (or enter) to draw {what}.",
                            "error")
        elif view.penalty:
            self.set_status(f"Your turn. You face {view.penalty} cards: play an ace alone, or d"
                            f" draws {view.penalty}.", "error")
        else:
            self.set_status("Your turn: space picks cards for a run, enter plays, d draws,"
                            " h/H hints.")  # one line beside the wide layout's log

    def _has_run(self, view: ZodiakRound) -> bool:
        return any(view.can_start(c) for c in self.hand)

    def _wild_alone(self) -> bool:
        return len(self.selected) == 1 and self.selected[0].rank == 8

    def _run(self) -> Run:
        return Run(tuple(self.selected), self.hint_suit if self._wild_alone() else None)

    # -- actions ------------------------------------------------------------

    def allows(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("play", "draw", "hint", "expert_hint", "select", "clear"):
            if self.my_seat is None or self.match_over or self.table_gone:
                return False  # a watcher has no hand, a finished match or closed table no moves
            if action == "clear" and not self.picked():
                return False  # nothing to clear: the footer has room for o Sort at 80 columns
            return True if self.my_turn else None
        if action == "sort" and self.picked():
            return False  # mid-run: esc Clear takes its place, so ASCII keys fit 80 columns
        return super().allows(action, parameters)

    def picked(self) -> bool:
        """Whether cards are picked for a run (or a hint's suit is set): esc clears them."""
        return bool(self.selected) or self.hint_suit is not None

    def footer_state(self) -> tuple[object, ...]:
        return (self.picked(),)

    def composing(self) -> object:
        return (self.cursor, tuple(self.selected), self.hint_suit)

    def action_select(self) -> None:
        if not self.hand or not self.my_turn:
            return
        self.toggle(self.hand[self.cursor])

    def toggle(self, card: Card) -> None:
        """Add `card` to the end of the run, or take it (and nothing else) out."""
        self.implicit = False
        if card in self.selected:
            self.selected.remove(card)
        else:
            self.selected.append(card)
        self.hint_suit = None
        self.show_game()

    def action_clear(self) -> None:
        self.selected, self.hint_suit, self.implicit = [], None, False
        self.show_game()

    def action_sort(self) -> None:
        """Sort your hand by suit or by rank (the choice is saved)."""
        app = self.app
        settings = getattr(app, "settings", None)
        if settings is None:
            return
        by = "rank" if settings.hand_order == "suit" else "suit"
        card_app(app).update_settings(replace(settings, hand_order=by))
        current = self.hand[self.cursor] if self.hand else None
        self.show_game()
        if current in self.hand:
            self.cursor = self.hand.index(current)
            self.query_one("#hand", CardRow).cursor = self.cursor
        self.notify(f"Your hand is sorted by {by}.", timeout=2)

    def describe(self, effect: object, after: Round | None) -> str:
        assert isinstance(effect, MoveEffect)
        view = self.round_view
        zodiac = view.zodiac_card(effect.seat) if view is not None else None
        penalty = after.penalty if isinstance(after, ZodiakRound) else 0
        return zodiak_words(self.seat_name(effect.seat), effect, zodiac, penalty,
                            self.ascii_only, show_drawn=effect.seat == self.my_seat)

    async def action_play(self) -> None:
        view = self.round_view
        if view is None or not self.my_turn:
            return
        if not self.selected:
            if not self._has_run(view):
                await self.action_draw()
                return
            if not self.hand:
                return
            self.selected, self.implicit = [self.hand[self.cursor]], True
        if self._wild_alone() and self.hint_suit is None:
            self.app.push_screen(SuitPicker(self.ascii_only, self._suggest_suit()),
                                 self._play_wild)
            return
        await self._play(self._run())

    async def _play_wild(self, suit: str | None) -> None:
        if suit is None:
            self.show_game()
            return
        await self._play(Run(tuple(self.selected), suit))

    async def _play(self, run: Run) -> None:
        if await self.send(run):
            self.selected, self.hint_suit, self.implicit = [], None, False
            self.show_game()
        elif self.implicit:
            # Enter alone tried the card under the cursor: it must not stay stuck in the run.
            self.selected, self.implicit = [], False
            self._show_hand_only()
        else:
            self._show_hand_only()

    def refusal_hint(self) -> str:
        return " (esc clears the run)" if self.selected and not self.implicit else ""

    def _show_hand_only(self) -> None:
        view = self.round_view
        if view is not None:
            self._show_hand(view)

    async def action_draw(self) -> None:
        if await self.send(Draw()):
            self.selected, self.hint_suit = [], None
            self.show_game()

    async def show_hint(self, move: Move, who: str) -> None:
        if isinstance(move, Draw):
            self.selected, self.hint_suit = [], None
            self.show_game()
            self.set_status(f"{who}: draw (d).", "ok")
            return
        assert isinstance(move, Run)
        self.selected = list(move.cards)
        self.hint_suit = move.declared
        if move.cards[0] in self.hand:
            self.cursor = self.hand.index(move.cards[0])
        self.show_game()
        if move.declared:
            symbol = move.declared if self.ascii_only else SUIT_SYMBOLS[move.declared]
            self.set_status(f"{who}: {move.cards[0].pretty(self.ascii_only)} wild, declaring"
                            f" {symbol} — enter plays it", "ok")
        elif who != "Hint":
            cards = " ".join(c.pretty(self.ascii_only) for c in move.cards)
            self.set_status(f"{who}: {cards} — enter plays it", "ok")

    def _suggest_suit(self) -> str:
        rest = [c.suit for c in self.hand if c not in self.selected]
        return max("SHDC", key=lambda s: (rest.count(s), s)) if rest else "S"

    def on_card_row_clicked(self, event: CardRow.Clicked) -> None:
        if event.row.id != "hand" or event.index >= len(self.hand):
            return
        self.cursor = event.index
        if self.my_turn:
            self.toggle(self.hand[event.index])
        else:
            event.row.cursor = event.index
