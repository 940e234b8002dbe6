"""The tables lobby of a `cardtui serve` server: see every table, open one, join or watch one."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any, ClassVar

import aiohttp
from rich.text import Text
from textual import events, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.reactive import reactive
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, DataTable, Footer, Label, Select, Static

from engine.bots import BOT_KINDS
from engine.errors import IllegalMove
from engine.games import GAME_NAMES, GAMES
from engine.house import STANDARD
from netplay.relay.wire import ROOM_CODE_LENGTH, format_room_code, parse_room_code
from netplay.table.service import TableInfo, TableRequest, TablesClient
from tui.appapi import lobby_app
from tui.literal import literal
from tui.screens.dialogs import ClosesOnce
from tui.widgets.bars import KeyLine, TitleBar
from tui.widgets.dropdown import Dropdown
from tui.widgets.house import HouseRulesInput
from tui.words import plain_text

REFRESH_SECONDS = 2.0  # between attempts while the server cannot be reached
STATE_WORDS = {"waiting": "waiting", "playing": "playing", "over": "over"}  # Seats says for whom
# Fixed widths, not measured: a DataTable that measures rows drawn before it measured them
# keeps drawing them cut to the width of the headings (Textual 8.2). Together, with a cell's
# padding, they fit an 80-column terminal (76 within the margins): a wider table would get a
# horizontal scroll bar, which also costs a second layout before a session's first frame.
COLUMNS = (("Table", len(format_room_code("0" * ROOM_CODE_LENGTH))),
           ("Game", max(len(name) for name in GAME_NAMES)),
           ("Seats", len("4/4")), ("People", 3), ("Watch", 3),
           ("State", max(len(words) for words in STATE_WORDS.values())),
           ("House", len("max-row=9,target=3000")))  # longer ones are cut: the table's lobby says all


def shown(text: str, app: App[Any]) -> str:
    """`text` in the characters the app draws: plain ASCII under --ascii."""
    return plain_text(text) if app.has_class("-ascii") else text


class NewTableDialog(ClosesOnce, ModalScreen[TableRequest | None]):
    """Choose a game, the seats, how many bots take them and which kind; g, p, b, k cycle them."""

    DEFAULT_CSS = """
    NewTableDialog { align: center middle; }
    NewTableDialog .field { height: auto; }
    NewTableDialog .field-label { width: 12; padding-top: 1; }
    NewTableDialog Select { width: 30; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("g", "cycle('game')", "Game"),
        Binding("p", "cycle('players')", "Players"),
        Binding("b", "cycle('bots')", "Bots"),
        Binding("k", "cycle('kind')", "Bot kind"),
        Binding("h", "focus_house", "House rules"),
        Binding("enter", "create", "Create", key_display="⏎", priority=True),
        Binding("escape", "cancel", "Cancel", key_display="esc"),
    ]

    def compose(self) -> ComposeResult:
        # One line a field (compact), so the dialog and its buttons fit 80x24.
        with Vertical(classes="dialog compact-form"):
            yield Label("New table", classes="dialog-title")
            fields = (("Game (g)", "game", [(g.title, g.name) for g in GAMES.values()],
                       GAME_NAMES[0]),
                      ("Players (p)", "players", [(str(n), n) for n in GAMES[GAME_NAMES[0]].players],
                       2),
                      ("Bots (b)", "bots", [("0", 0), ("1", 1)], 1),
                      ("Kind (k)", "kind", [(k, k) for k in BOT_KINDS], BOT_KINDS[0]))
            for label, name, options, value in fields:
                with Horizontal(classes="field"):
                    yield Label(label, classes="field-label")
                    yield Dropdown(options, value=value, allow_blank=False, id=name, compact=True)
            with Horizontal(classes="field"):
                yield Label("House (h)", classes="field-label")
                yield HouseRulesInput(STANDARD, id="house", compact=True)
            yield Static("", id="new-table-about", classes="dialog-body")
            with Horizontal(classes="dialog-buttons"):
                yield Button(shown("Create (⏎)", self.app), id="create", variant="primary")
                yield Button("Cancel (esc)", id="cancel")
        yield Footer()  # its own: the lobby's underneath offered keys this dialog does not take

    def on_mount(self) -> None:
        self._set_choices(GAME_NAMES[0], players=2, bots=1)

    def _set_choices(self, game: str, players: int, bots: int) -> None:
        """Offer the seat counts game allows and the bot counts that leave a seat for you."""
        seats = GAMES[game].players
        players = players if players in seats else seats[0]
        players_select = self.query_one("#players", Select)
        bots_select = self.query_one("#bots", Select)
        # Without prevent, each value set here came back as a Select.Changed that set them
        # again, for ever: the dialog stopped answering keys (g, p or k pressed in turn).
        with self.prevent(Select.Changed):
            self.query_one("#game", Select).value = game
            players_select.set_options([(str(n), n) for n in seats])
            players_select.value = players
            bots_select.set_options([(str(n), n) for n in range(players)])
            bots_select.value = min(bots, players - 1)
        people = players - bots_select.value
        self.query_one("#new-table-about", Static).update(
            f"{GAMES[game].title} for {players}: you"
            + (f" and {people - 1} more {'person' if people == 2 else 'people'}" if people > 1
               else "")
            + (f", {bots_select.value} {self.query_one('#kind', Select).value}"
               f" bot{'s' if bots_select.value != 1 else ''}" if bots_select.value else "")
            + ".")

    def seats(self) -> TableRequest:
        """Return the game and seats the dialog currently describes, by the rules as written."""
        # Ignored below: Textual types the value as maybe BLANK; allow_blank=False rules that out.
        return TableRequest(str(self.query_one("#game", Select).value),
                            int(self.query_one("#players", Select).value),  # type: ignore[arg-type]
                            int(self.query_one("#bots", Select).value),  # type: ignore[arg-type]
                            str(self.query_one("#kind", Select).value))

    def request(self) -> TableRequest:
        """Return the table the dialog describes, raising IllegalMove for bad house rules."""
        seats = self.seats()
        house = self.query_one("#house", HouseRulesInput).rules()
        GAMES[seats.game].check_house(house)
        return replace(seats, house=house)

    def on_select_changed(self, event: Select.Changed) -> None:
        if self.closing:
            return
        try:
            chosen = self.seats()  # every choice changes the line that describes them
            self._set_choices(chosen.game, chosen.players, chosen.bots)
        except NoMatches:
            # A change that arrives as the dialog is taken down finds its fields gone (seen
            # once over ssh, with keys pressed as fast as a fuzzer sends them): nothing to show.
            return

    def action_cycle(self, name: str) -> None:
        chosen = self.seats()
        if name == "game":
            game = GAME_NAMES[(GAME_NAMES.index(chosen.game) + 1) % len(GAME_NAMES)]
            self._set_choices(game, chosen.players, chosen.bots)
        elif name == "players":
            seats = GAMES[chosen.game].players
            players = seats[(seats.index(chosen.players) + 1) % len(seats)]
            self._set_choices(chosen.game, players, chosen.bots)
        elif name == "kind":
            kind = self.query_one("#kind", Select)
            kind.value = BOT_KINDS[(BOT_KINDS.index(str(kind.value)) + 1) % len(BOT_KINDS)]
            self._set_choices(chosen.game, chosen.players, chosen.bots)
        else:
            self._set_choices(chosen.game, chosen.players, (chosen.bots + 1) % chosen.players)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # An open drop-down takes enter for itself.
        if action == "create":
            return not any(s.expanded for s in self.query(Select))
        return True

    def action_focus_house(self) -> None:
        self.query_one("#house", HouseRulesInput).focus()

    def action_create(self) -> None:
        self.query_one("#house", HouseRulesInput).once_typed(self._create)

    def _create(self) -> None:
        if self.closing:
            return
        try:
            self.close(self.request())
        except IllegalMove as exc:
            self.query_one("#new-table-about", Static).update(literal(f"House rules: {exc}"))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "create":
            self.action_create()
        else:
            self.action_cancel()

    def action_cancel(self) -> None:
        self.close(None)


class LobbyScreen(Screen[None]):
    """The server's tables, refreshed every few seconds; open, join or watch one."""

    DEFAULT_CSS = """
    LobbyScreen #lobby-title { padding: 1 2 0 2; text-style: bold; }
    LobbyScreen #lobby-help { padding: 0 2 1 2; color: $text-muted; }
    LobbyScreen DataTable { height: 1fr; margin: 0 2; }
    LobbyScreen #lobby-status { height: auto; padding: 0 2; }
    LobbyScreen #lobby-status.-error { color: $error; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "new_table", "New table"),
        Binding("enter", "join", "Join", key_display="⏎", priority=True),
        Binding("w", "watch", "Watch"),
        Binding("r", "refresh_tables", "Refresh"),
        Binding("s", "settings", "Sign, settings"),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("q", "app.quit", "Quit"),
    ]

    tables: reactive[tuple[TableInfo, ...]] = reactive(tuple, always_update=True)

    def __init__(self, client: TablesClient, name: str,
                 listing: tuple[list[TableInfo], int] | None = None) -> None:
        super().__init__()
        self.client = client
        self.player_name = name
        # A listing and its version fetched before the app started: shown in the first frame.
        self._prefetched = listing
        self._first_listing = True
        self._status_kept = False
        self._shown: tuple[TableInfo, ...] | None = None  # the listing on screen, if any
        self._resumed = False

    def _on_screen_resume(self, event: events.ScreenResume) -> None:
        # The first time, every widget has just had its styles applied as it mounted: applying
        # them all again would cost a twentieth of a session's start. Later, a dialog or a match
        # may have changed them.
        if not self._resumed:
            self._resumed = True
            event.refresh_styles = False

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static(self.who(), id="lobby-title")
        yield Static(shown("n opens a new table; ⏎ joins the highlighted one, w watches it."
                           " The server deals every table: it can see every hand.", self.app),
                     id="lobby-help")
        yield DataTable(id="tables", cursor_type="row", zebra_stripes=True)
        yield Static(shown("Loading the tables…", self.app), id="lobby-status")
        yield KeyLine()

    def on_mount(self) -> None:
        self.app.sub_title = "lobby"
        table = self.query_one(DataTable)
        for label, width in COLUMNS:
            table.add_column(label, width=max(len(label), width))
        table.focus()
        if self._prefetched is None:
            self.watch_listing()
            return
        listing, version = self._prefetched
        self._show(tuple(listing))
        # Changes are watched for once the first frame is out: it is what a new visitor waits for.
        self.call_after_refresh(self.watch_listing, version)

    @work(exclusive=True, group="watch")
    async def watch_listing(self, version: int | None = None) -> None:
        """Show the listing (unless version, shown already), then each change of it."""
        while True:
            try:
                listing, version = await self.client.watch(version)
            except (OSError, aiohttp.ClientError, ValueError, KeyError) as exc:
                if self._gone():
                    return
                version = None
                self._shown = None
                self.set_status(f"Cannot reach the tables: {exc or type(exc).__name__}",
                                error=True)
                await asyncio.sleep(REFRESH_SECONDS)
                continue
            self._show(tuple(listing))

    @work(exclusive=True, group="tables")
    async def action_refresh_tables(self) -> None:
        """Fetch the listing from the server."""
        try:
            listing = tuple(await self.client.list())
        except (OSError, aiohttp.ClientError, ValueError, KeyError) as exc:
            self._shown = None
            self.set_status(f"Cannot reach the tables: {exc or type(exc).__name__}", error=True)
            return
        self._show(listing)

    def _gone(self) -> bool:
        """Return whether this screen is being taken down (its watcher may still answer)."""
        return not self.is_attached or not self.query("#lobby-status")

    def _show(self, listing: tuple[TableInfo, ...]) -> None:
        if self._gone():
            return
        if listing != self._shown:  # an unchanged listing is not drawn again (idle sessions)
            self._shown = listing
            self.tables = listing

    def watch_tables(self, tables: tuple[TableInfo, ...]) -> None:
        widget = self.query_one(DataTable)
        highlighted = self.highlighted_room()
        widget.clear()
        for t in tables:
            widget.add_row(t.room, t.game.capitalize(), f"{t.taken}/{t.players}", str(t.people),
                           str(t.watching), STATE_WORDS.get(t.state, t.state),
                           "none" if t.house == "standard" else t.house, key=t.room)
        if highlighted is not None and any(t.room == highlighted for t in tables):
            widget.move_cursor(row=widget.get_row_index(highlighted))
        elif self._first_listing:
            # Most people come to join someone: start on the first table that waits for players.
            waiting = next((i for i, t in enumerate(tables) if t.state == "waiting"), 0)
            widget.move_cursor(row=waiting)
        self._first_listing = not tables
        count = len(tables)
        if not self._status_kept:  # why the player's table or seat was refused stays
            self.set_status("No tables yet: press n to open one." if not count else
                            f"{count} table{'s' if count != 1 else ''}.")

    def highlighted_room(self) -> str | None:
        """Return the room code of the highlighted row, if there is one."""
        widget = self.query_one(DataTable)
        if widget.row_count == 0:
            return None
        return str(widget.coordinate_to_cell_key(widget.cursor_coordinate).row_key.value)

    def set_status(self, text: str, error: bool = False, kept: bool = False) -> None:
        """Show text under the listing, in the error colour if error; a `kept` line stays
        until the player's next action, not only until the listing changes."""
        status = self.query_one("#lobby-status", Static)
        status.update(literal(shown(text, self.app)))
        status.set_class(error, "-error")
        self._status_kept = kept

    def action_new_table(self) -> None:
        self._status_kept = False  # a refusal shown stays until the player tries again

        def chosen(request: TableRequest | None) -> None:
            # Only a table to open starts a worker: one in the "sit" group cancels the seat
            # being taken, which a cancelled dialog must leave alone.
            if request is not None:
                self._create(request)

        self.app.push_screen(NewTableDialog(), chosen)

    @work(exclusive=True, group="sit")
    async def _create(self, request: TableRequest) -> None:
        self.set_status(f"Opening a {request.game} table for {request.players}…")
        try:
            room, owner = await self.client.create(request.game, request.players, request.bots,
                                                   request.bot_kind, request.house)
        except (OSError, aiohttp.ClientError, ValueError) as exc:
            self.set_status(f"Could not open a table: {exc}", error=True, kept=True)
            return
        # Only a table that waits for other people has anything to start early.
        waits = request.players - request.bots > 1
        await self.sit(room, owner=owner if waits else None)

    def who(self) -> Text:
        """The lobby's title: whose it is, and their sign when they chose one."""
        sign = lobby_app(self.app).settings.sign
        chosen = f", {sign.capitalize()} (for Zodiak)" if sign else ""
        # A user name is whatever the SSH client sent: shown as plain text, never as markup.
        return Text(shown(f"Tables on this server — you are {self.player_name}{chosen}", self.app))

    def action_settings(self) -> None:
        lobby_app(self.app).open_settings(lambda: self.query_one("#lobby-title", Static)
                                          .update(self.who()))

    def action_help(self) -> None:
        from tui.screens.help import HelpScreen  # Markdown is loaded only by those who ask

        self.app.push_screen(HelpScreen())

    def action_join(self) -> None:
        self._sit_highlighted(watch=False)

    def action_watch(self) -> None:
        self._sit_highlighted(watch=True)

    @work(exclusive=True, group="sit")
    async def _sit_highlighted(self, watch: bool) -> None:
        room = self.highlighted_room()
        if room is None:
            self.set_status("There is no table to join yet: press n to open one.", error=True,
                            kept=True)
            return
        await self.sit(parse_room_code(room), watch=watch)

    async def sit(self, room: str, owner: bytes | None = None, watch: bool = False) -> None:
        """Ask the app to seat this player at room, reporting here if that fails."""
        self.set_status("Taking a seat…" if not watch else "Joining as a watcher…")
        problem = await lobby_app(self.app).sit(room, owner=owner, watch=watch)
        if problem:
            self.set_status(problem, error=True, kept=True)
