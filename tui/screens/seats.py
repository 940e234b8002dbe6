"""The table's lobby before a networked match: who sits where, who is ready, bots, and a chat."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Input, Label, RichLog, Static

from engine.bots import BOT_KINDS
from engine.errors import IllegalMove
from engine.games import game_named
from engine.house import HOUSE_OPTIONS, HouseRules
from engine.zodiak import SIGN_CARDS
from netplay.relay.wire import format_room_code
from netplay.seat.remote import CHAT_KEPT, RemoteSession
from netplay.session.events import SeatInfo
from tui.appapi import card_app
from tui.literal import literal
from tui.screens.dialogs import ClosesOnce, ConfirmQuit
from tui.widgets.house import HouseRulesInput

POLL_SECONDS = 0.25


def seat_row(index: int, seat: SeatInfo, game: str, players: int, mine: bool) -> tuple[str, ...]:
    """One lobby line: seat, name, sign or team, who plays it, and whether they are ready."""
    if seat.bot:
        who, ready = f"bot ({seat.bot})", "ready"
    elif seat.name:
        who = "you" if mine else ("here" if seat.connected else "away")
        ready = "ready" if seat.ready else "not ready"
    else:
        who, ready = "empty", ""
    if game_named(game).uses_signs:
        extra = f"{seat.sign.capitalize()} {SIGN_CARDS[seat.sign].pretty()}" if seat.sign else ""
    else:
        extra = f"team {'AB'[index % 2]}" if players == 4 else ""
    return (str(index), seat.name or "—", extra, who, ready)


class SeatsScreen(Screen[None]):
    """Seats, readiness and chat of one table; the host adds or removes bots and starts."""

    DEFAULT_CSS = """
    SeatsScreen #seats-title { padding: 1 2 0 2; text-style: bold; }
    SeatsScreen #seats-help { padding: 0 2; color: $text-muted; }
    SeatsScreen #seats { height: auto; max-height: 8; margin: 1 2 0 2; }
    SeatsScreen #chat-box { height: 1fr; min-height: 3; margin: 0 2; border: round $primary; }
    SeatsScreen #chat { height: 1fr; }
    SeatsScreen #say { margin: 0 2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        # One key, named for what it does now (check_action shows the one that applies).
        Binding("f2", "ready(True)", "Ready"),
        Binding("f2", "ready(False)", "Not ready"),
        Binding("f3", "add_bot", "Add bot"),
        Binding("f4", "remove_bot", "Drop bot"),
        Binding("f5", "start", "Start"),
        Binding("f6", "change_bot", "Bot kind"),
        Binding("f7", "house_rules", "House"),
        Binding("escape", "leave", "Leave"),
    ]

    seats: reactive[tuple[SeatInfo, ...]] = reactive(tuple, always_update=True)

    def __init__(self, session: RemoteSession) -> None:
        super().__init__()
        self.session = session
        self._chat_seen = 0
        self._house_shown = session.house
        self._deck_shown = session.first_deck_line()
        self._started_shown = session.table_started
        # Whether this screen saw the table's lobby waiting: then a start is the deal being made
        # for this seat, not a match under way that it is dealt into later.
        self._saw_waiting = False

    def compose(self) -> ComposeResult:
        # No Header: its title watcher can fire after the quick switch to the game screen.
        yield Static("", id="seats-title")
        yield Static("", id="seats-help")
        yield DataTable(id="seats", cursor_type="row", zebra_stripes=True)
        with Vertical(id="chat-box"):
            yield RichLog(id="chat", wrap=True, markup=False, max_lines=CHAT_KEPT)
        yield Input(placeholder="Say something to the table (enter sends)", id="say",
                    max_length=300)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#chat-box").border_title = "Chat"
        self.query_one(DataTable).add_columns("Seat", "Name", "Sign" if game_named(
                                              self.session.game).uses_signs else "Team", "Who", "Ready")
        self.query_one("#say", Input).focus()
        self._poller = self.set_interval(POLL_SECONDS, self.poll)
        self.poll()

    def poll(self) -> None:
        """Show the session's latest lobby and chat; move on to the game when it starts."""
        session = self.session
        if session.match_started:
            self._poller.stop()  # the switch takes a moment; switching twice would break it
            self.app.call_later(card_app(self.app).play, session)
            return
        self._saw_waiting = self._saw_waiting or bool(session.seats and not session.table_started)
        deck = session.first_deck_line()
        if (session.seats != self.seats or session.house != self._house_shown
                or deck != self._deck_shown or session.table_started != self._started_shown):
            # House rules the host changed, the first deck's progress, or the match begun
            # (before this seat's first deal): redraw the help, and the footer's F2.
            self._house_shown, self._deck_shown = session.house, deck
            self._started_shown = session.table_started
            self.seats = session.seats  # always_update: redrawn even when the seats are the same
            self.refresh_bindings()
        chat = self.query_one("#chat", RichLog)
        new = min(session.chat_count - self._chat_seen, len(session.chat_log))
        for line in session.chat_log[len(session.chat_log) - new:]:
            chat.write(Text(line))
        self._chat_seen = session.chat_count

    def watch_seats(self, seats: tuple[SeatInfo, ...]) -> None:
        session = self.session
        table = self.query_one(DataTable)
        row = table.cursor_row
        table.clear()
        for i, seat in enumerate(seats):
            table.add_row(*map(literal, seat_row(i, seat, session.game, len(seats),
                                                  i == session.my_seat)))
        if seats:
            table.move_cursor(row=min(row, len(seats) - 1))
        taken = sum(1 for s in seats if s.name)
        where = "you watch" if session.my_seat is None else f"you sit in seat {session.my_seat}"
        room = format_room_code(session.room) if session.room else "?"
        self.query_one("#seats-title", Static).update(Text(
            f"{session.game.capitalize()} for {len(seats)} · room {room} · {where}"
            f" · {taken}/{len(seats)} seats taken"))
        # The footer names the keys; at 80x24 the whole lobby must fit without scrolling.
        owner_keys = (" F5 starts now, bots in the empty seats."
                      if session.is_owner and not session.table_started else "")
        hint = session.extra.get("join_hint", "")
        fingerprint = session.fingerprint()
        self.query_one("#seats-help", Static).update(literal(
            (f"Join with: {hint}\n" if hint else "")
            + (f"Table fingerprint {fingerprint}: every screen should show the same.\n"
               if fingerprint else "")
            + dealing_text(session.dealing, session.away_seconds,
                           seated=session.my_seat is not None) + "\n"
            + (f"{self._deck_shown}\n" if self._deck_shown else "")
            + session.house.describe() + "\n"
            + self._when_it_starts() + owner_keys))

    def _when_it_starts(self) -> str:
        """What the table waits for, as this visitor can act on it."""
        watching = self.session.my_seat is None
        if self.session.table_started and self._saw_waiting:
            return "The match has started: the cards are being dealt."
        if self.session.table_started:
            # A seat back mid-round (a new key) is dealt in at the next round, or the round
            # dealt again; a watcher sees the round once its chain has reached it.
            return ("The match is under way: you see the table at the next deal."
                    if watching else
                    "The match is under way: you are dealt in at the next round.")
        if watching:
            return "Starts when every seat is taken and everyone is ready."
        return "Starts when every seat is taken and everyone is ready (F2)."


    async def action_leave(self) -> None:
        if not self.session.is_owner:
            await self.app.action_quit()
            return

        async def answer(yes: bool | None) -> None:
            if yes:
                await self.app.action_quit()

        # The host's seat: leaving closes the table for everyone who joined.
        self.app.push_screen(ConfirmQuit("Close the table? You are the host: it closes for"
                                         " everyone (cardtui host --resume opens it again).",
                                         yes="Close (y)", no="Stay (n)"), answer)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("add_bot", "remove_bot", "change_bot", "start", "house_rules"):
            # Under way (a resumed host's seat waits here for the next deal), seats and rules
            # are the match's own: the host refuses a change, so the footer offers none.
            return self.session.is_owner and not self.session.table_started
        if action == "ready":
            return (self.session.my_seat is not None and not self.session.table_started
                    and parameters[:1] != (self._am_ready(),))
        return True

    def _am_ready(self) -> bool:
        seat = self.session.my_seat
        return seat is not None and seat < len(self.seats) and self.seats[seat].ready

    async def action_ready(self, ready: bool) -> None:
        if self.session.my_seat is not None:
            await self.session.set_ready(ready)

    async def action_add_bot(self) -> None:
        seats = self.session.seats or self.seats  # the latest lobby, not the last one drawn
        empty = next((i for i, seat in enumerate(seats) if not seat.name), None)
        if empty is None:
            self.notify("Every seat is taken.")
        else:
            await self.session.set_bot(empty, "greedy")

    async def action_change_bot(self) -> None:
        seats = self.session.seats  # the latest lobby, which the table shows at the next poll
        bots = [i for i, seat in enumerate(seats) if seat.bot]
        if not bots:
            self.notify("No bot sits at this table: F3 seats one.")
            return
        row = self.query_one(DataTable).cursor_row
        index = row if row in bots else bots[-1]
        kind = seats[index].bot or "greedy"
        following = BOT_KINDS[(BOT_KINDS.index(kind) + 1) % len(BOT_KINDS)] \
            if kind in BOT_KINDS else "greedy"
        await self.session.set_bot(index, following)

    async def action_remove_bot(self) -> None:
        bots = [i for i, seat in enumerate(self.seats) if seat.bot]
        if not bots:
            self.notify("No bot sits at this table.")
        else:
            await self.session.set_bot(bots[-1], None)

    def action_house_rules(self) -> None:
        self.app.push_screen(HouseRulesDialog(self.session.house), self._set_house)

    async def _set_house(self, house: HouseRules | None) -> None:
        if house is not None and house != self.session.house:
            await self.session.set_house(house)

    async def action_start(self) -> None:
        await self.session.start_match()

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        event.input.value = ""
        if text:
            await self.session.chat(text)


class HouseRulesDialog(ClosesOnce, ModalScreen[HouseRules | None]):
    """The host sets the table's house rules before the start; enter sets, escape keeps them."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "set", "Set", key_display="⏎", priority=True),
        Binding("escape", "keep", "Keep"),
    ]

    def __init__(self, house: HouseRules) -> None:
        super().__init__()
        self.house = house

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog compact-form"):
            yield Label("House rules for this table", classes="dialog-title")
            yield Static(literal("\n".join(f"{name}: {what}" for name, what in
                                            HOUSE_OPTIONS.items())), classes="dialog-body")
            with Horizontal(classes="field"):
                yield Label("House rules", classes="field-label")
                yield HouseRulesInput(self.house, id="house", compact=True)
            yield Static("Enter sets them (everyone says ready again); escape keeps them.",
                         id="house-error")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#house", HouseRulesInput).focus()

    def action_keep(self) -> None:
        self.close(None)

    def action_set(self) -> None:
        self.query_one("#house", HouseRulesInput).once_typed(self._set)

    def _set(self) -> None:
        if self.closing:
            return
        try:
            self.close(self.query_one("#house", HouseRulesInput).rules())
        except IllegalMove as exc:
            self.query_one("#house-error", Static).update(literal(str(exc)))


def dealing_text(dealing: str, away_timeout: float | None, seated: bool = True) -> str:
    """What the table's dealing means for the players' cards, and for a player who leaves."""
    if dealing != "mental":
        return "Trusted dealer: the host's program deals and can see every hand."
    shown = ("Mental poker: nobody, the host included, sees a card before it is a player's or"
             " face up (the host sees its bots').")
    if not seated:
        return shown  # a watcher has no seat to leave, nor a key to hand over
    away = f"{away_timeout:g} s" if away_timeout else "the away time"
    return (shown + f" Away over {away}: redealt with a bot in your seat; q hands your key (and"
            " cards) to the host's bot.")
