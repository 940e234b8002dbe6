"""Hekata at the table: the table's cards, your hand, and the trick builder for the card you lay."""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical

from engine.errors import IllegalMove
from engine.games import Move
from engine.hekata import HekataDeal, HekataEffect, HekataMove, best_trick
from engine.match import Round
from netplay.session.events import GameSession
from tui.appapi import card_app
from tui.screens.game import COMMON_BINDINGS, GameScreen
from tui.settings import HEKATA_ORDERS
from tui.widgets.cardface import digit_face
from tui.widgets.hand import CardRow
from tui.widgets.trick_builder import TrickBuilder
from tui.words import hekata_words

# More table cards than this do not fit beside the players panel.
BESIDE_PLAYERS = 6


def sort_digits(cards: list[int], by: str = "up", takers: set[int] | frozenset[int] = frozenset()
                ) -> list[int]:
    """A Hekata hand low to high (`up`), high to low (`down`), or the trick-takers first (`takers`,
    each group high to low, since the higher taker usually makes the bigger trick)."""
    if by == "down":
        return sorted(cards, reverse=True)
    if by == "takers":
        return sorted(cards, key=lambda c: (c not in takers, -c))
    return sorted(cards)


class HekataScreen(GameScreen):
    """Play Hekata: choose a card to lay, then build a trick with it or lay it alone."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "cursor(-1)", "Move", key_display="←→"),
        Binding("right", "cursor(1)", "Right", show=False),
        Binding("up", "cursor_line(-1)", "Up", show=False),
        Binding("down", "cursor_line(1)", "Down", show=False),
        Binding("enter,space", "choose", "Lay card", key_display="⏎"),
        Binding("h", "hint", "Hint"),
        Binding("H", "expert_hint", "Expert hint", show=False),
        Binding("b", "back", "Hand"),
        Binding("o", "sort", "Sort"),
        *COMMON_BINDINGS,
    ]

    def __init__(self, session: GameSession, ascii_only: bool = False, pace: float = 0.0) -> None:
        super().__init__(session, ascii_only, pace)
        self.hand: list[int] = []
        self.cursor = 0
        self.takers: set[int] = set()
        self._takers_key: tuple | None = None

    def compose_table(self) -> ComposeResult:
        yield CardRow(self.ascii_only, "The table is empty.", id="table", classes="table-panel")

    def compose_hand(self) -> ComposeResult:
        yield Vertical(id="builder-slot")
        yield CardRow(self.ascii_only, "You have no cards.", id="hand")

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#hand").border_title = "Your hand"

    @property
    def deal_view(self) -> HekataDeal | None:
        """The current view, typed."""
        return self.view if isinstance(self.view, HekataDeal) else None

    @property
    def builder(self) -> TrickBuilder | None:
        """The trick builder, while you are composing a trick."""
        found = self.query(TrickBuilder)
        return found.first() if found else None

    def on_new_round(self) -> None:
        self.cursor = 0
        self._close_builder()

    # -- showing ------------------------------------------------------------

    def show_game(self) -> None:
        view = self.deal_view
        if view is None:
            return
        seat = self.my_seat
        mine = view.hands[seat] if seat is not None and seat < len(view.hands) else []
        self._update_takers(view, [c for c in mine if c is not None])
        self.cursor = max(0, min(self.cursor, len(self.hand) - 1))
        table = self.query_one("#table", CardRow)
        fresh_last = (self.last_mover is not None and self.last_move is not None
                      and getattr(self.last_move, "trick", 1) is None and bool(view.table))
        table.faces = tuple(digit_face(c, fresh=fresh_last and i == len(view.table) - 1)
                            for i, c in enumerate(view.table))
        # A big table goes under the players, full width, its cards overlapping on one line.
        self.set_class(len(view.table) > BESIDE_PLAYERS, "-big-table")
        table.compact = True
        stock = f" · stock {len(view.stock)}" if view.players == 2 else ""
        table.border_title = self.plain(
            f"Table · {len(view.table)} card{'s' if len(view.table) != 1 else ''}{stock}")
        row = self.query_one("#hand", CardRow)
        row.faces = tuple(digit_face(c, playable=self.my_turn and c in self.takers)
                          for c in self.hand)
        row.cursor = self.cursor if self.hand and self.builder is None else None
        self._show_status(view)

    def _update_takers(self, view: HekataDeal, cards: list[int]) -> None:
        # The digits that can take a trick now; searched once per table and hand.
        key = (tuple(view.table), tuple(sorted(set(cards))))
        if key != self._takers_key:
            self._takers_key = key
            self.takers = {d for d in set(cards)
                           if view.table and best_trick(view.table, d, view.max_row) is not None}
        self.hand = sort_digits(cards, self.hand_order, self.takers)

    @property
    def hand_order(self) -> str:
        """How the player likes a Hekata hand ordered (tui.settings.HEKATA_ORDERS)."""
        settings = getattr(self.app, "settings", None)
        return settings.hekata_order if settings is not None else "up"

    def _show_status(self, view: HekataDeal) -> None:
        if self.builder is not None:
            card = self.builder.card
            self.set_status(f"t takes the trick · esc lays the {card} alone · b back to your hand")
        elif view.round_over:
            self.set_status("The match is over." if self.match_over else "The deal is over.")
        elif not self.my_turn:
            self.set_status(self.waiting_status(view.turn))
        elif self.takers:
            dot = "*" if self.ascii_only else "•"
            self.set_status(f"Your turn: enter lays the cursor's card; {dot} marks cards that"
                            " take a trick.")
        else:
            self.set_status("Your turn: enter lays the card under the cursor (none takes a trick).")

    # -- actions ------------------------------------------------------------

    def allows(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("choose", "hint", "expert_hint") and (self.match_over or self.table_gone):
            return False  # looking back at a finished match, or a closed table: nothing to lay
        if action in ("choose", "hint", "expert_hint", "sort") and self.my_seat is None:
            return False  # a watcher has no hand: the footer offers none of these
        if action in ("choose", "hint", "expert_hint"):
            return True if self.my_turn and self.builder is None else None
        if action == "back":
            return self.builder is not None
        if action in ("cursor", "cursor_line", "sort"):
            # A watcher has no hand to move along (the base class says so for every game).
            return self.builder is None and super().allows(action, parameters) is not False
        return super().allows(action, parameters)

    async def action_choose(self) -> None:
        view = self.deal_view
        if view is None or not self.my_turn or not self.hand:
            return
        card = self.hand[self.cursor]
        if card not in self.takers:
            await self.send(HekataMove(card))
            self.show_game()
            return
        await self._open_builder(view, card)

    def composing(self) -> object:
        return (self.cursor, self.builder is not None)

    async def show_hint(self, move: Move, who: str) -> None:
        view = self.deal_view
        assert isinstance(move, HekataMove) and view is not None
        self.cursor = self.hand.index(move.card) if move.card in self.hand else self.cursor
        if move.trick is None:
            self.show_game()
            self.set_status(f"{who}: no trick worth taking; lay the {move.card} (enter).", "ok")
            return
        builder = await self._open_builder(view, move.card)
        builder.set_trick(move.trick)

    async def _open_builder(self, view: HekataDeal, card: int) -> TrickBuilder:
        self._close_builder()
        builder = TrickBuilder(view.table, card, self.ascii_only, max_row=view.max_row,
                               id="builder")
        await self.query_one("#builder-slot").mount(builder)
        self.add_class("-building")
        builder.focus()
        self.show_game()
        self.update_bindings()
        return builder

    def _close_builder(self) -> None:
        for builder in self.query(TrickBuilder):
            builder.remove()
        self.remove_class("-building")

    async def action_back(self) -> None:
        # Wait for the builder to go, so the hand gets its cursor and the status its words back.
        await self.query(TrickBuilder).remove()
        self.remove_class("-building")
        self.show_game()
        self.update_bindings()

    def action_sort(self) -> None:
        """Order your hand low to high, high to low, or trick-takers first (the choice is saved)."""
        settings = getattr(self.app, "settings", None)
        if settings is None:
            return
        orders = list(HEKATA_ORDERS)
        by = orders[(orders.index(settings.hekata_order) + 1) % len(orders)]
        card_app(self.app).update_settings(replace(settings, hekata_order=by))
        current = self.hand[self.cursor] if self.hand else None
        self.show_game()
        if current in self.hand:
            self.cursor = self.hand.index(current)
            self.show_game()
        self.notify(f"Your hand is sorted {HEKATA_ORDERS[by]}.", timeout=2)

    def describe(self, effect: object, after: Round | None) -> str:
        assert isinstance(effect, HekataEffect)
        if effect.seat == self.my_seat and effect.move.trick is not None and after is not None:
            record = getattr(self.app, "record_trick", None)
            if record is not None:
                record(effect.total)
        return hekata_words(self.seat_name(effect.seat), effect,
                            show_drawn=effect.seat == self.my_seat)

    async def on_trick_builder_confirmed(self, event: TrickBuilder.Confirmed) -> None:
        event.stop()
        await self._lay(HekataMove(event.builder.card, event.trick))

    async def on_trick_builder_cancelled(self, event: TrickBuilder.Cancelled) -> None:
        event.stop()
        await self._lay(HekataMove(event.builder.card))

    async def _lay(self, move: HekataMove) -> None:
        view = self.deal_view
        if view is None:
            return
        try:
            view.check(move, self.my_seat)
        except IllegalMove as exc:
            self.set_status(str(exc), "error")
            return
        # Wait for the builder to go (as `b` does): while it is there the status keeps its
        # words and the hand has no cursor, for the rest of the deal.
        await self.query(TrickBuilder).remove()
        self.remove_class("-building")
        await self.send(move)
        self.show_game()
        self.update_bindings()

    async def on_card_row_clicked(self, event: CardRow.Clicked) -> None:
        # The first click puts the cursor on a card; a click on the cursor's card lays it.
        if event.row.id != "hand" or self.builder is not None or event.index >= len(self.hand):
            return
        if event.index == self.cursor and self.my_turn:
            await self.action_choose()
            return
        self.cursor = event.index
        event.row.cursor = event.index
