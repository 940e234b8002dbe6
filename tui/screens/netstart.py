"""From the start screen to a networked table: host one, or join one listed on the LAN or typed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, DataTable, Footer, Input, Label, Select, Static, Switch

from engine.errors import IllegalMove
from engine.games import GAMES
from engine.house import STANDARD, HouseRules
from netplay.relay.lan import LanBrowser, LanTable
from tui.screens.dialogs import ClosesOnce
from tui.widgets.bars import card_header
from tui.widgets.dropdown import Dropdown
from tui.widgets.house import HouseRulesInput

DEFAULT_PORT = 7777


class HostSetup(ClosesOnce, ModalScreen[list[str] | None]):
    """Choose the game, seats, bots and port of a table to host; answers `cardtui host` arguments."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "host", "Host"),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, game: str, name: str, sign: str, house: HouseRules = STANDARD) -> None:
        super().__init__()
        self.game, self.player_name, self.sign = game, name, sign
        self.house = house

    def compose(self) -> ComposeResult:
        rules = GAMES[self.game]
        # Every field is one line (compact), so the dialog and its buttons fit 80x24.
        with Vertical(classes="dialog compact-form", id="host-setup"):
            yield Label("Host a table on this machine", classes="dialog-title")
            with Horizontal(classes="field"):
                yield Label("Game", classes="field-label")
                yield Dropdown([(g.title, g.name) for g in GAMES.values()], value=self.game,
                             allow_blank=False, id="host-game", compact=True)
            with Horizontal(classes="field"):
                yield Label("Players", classes="field-label")
                yield Dropdown([(str(n), n) for n in rules.players], value=rules.default_players,
                             allow_blank=False, id="host-players", compact=True)
            with Horizontal(classes="field"):
                yield Label("Bots", classes="field-label")
                yield Dropdown([(str(n), n) for n in range(4)], value=0, allow_blank=False,
                             id="host-bots", compact=True)
            with Horizontal(classes="field"):
                yield Label("Port", classes="field-label")
                yield Input(str(DEFAULT_PORT), id="host-port", type="integer", max_length=5,
                            compact=True)
            with Horizontal(classes="field"):
                yield Label("House rules", classes="field-label")
                yield HouseRulesInput(self.house, id="host-house", compact=True)
            with Horizontal(classes="field"):
                yield Label("List on LAN", classes="field-label")
                yield Switch(True, id="host-announce")
            yield Static("", id="host-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Host (ctrl+s)", variant="primary", id="host")
                yield Button("Cancel (esc)", id="cancel")
        yield Footer()

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "host-game":
            rules = GAMES[str(event.value)]
            seats = self.query_one("#host-players", Select)
            seats.set_options([(str(n), n) for n in rules.players])
            seats.value = rules.default_players

    def arguments(self) -> list[str]:
        """The `cardtui host` command line the choices make; ValueError saying what is wrong."""
        game = str(self.query_one("#host-game", Select).value)
        # Ignored below: Textual types the value as maybe BLANK; allow_blank=False rules that out.
        players = int(self.query_one("#host-players", Select).value)  # type: ignore[arg-type]
        bots = int(self.query_one("#host-bots", Select).value)  # type: ignore[arg-type]
        if bots >= players:
            raise ValueError("leave at least your own seat free of bots")
        port_text = self.query_one("#host-port", Input).value.strip()
        if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
            raise ValueError("the port is a number from 1 to 65535")
        args = ["host", "--game", game, "--players", str(players), "--bots", str(bots),
                "--port", port_text]
        if self.player_name:
            args += ["--name", self.player_name]
        if self.sign and GAMES[game].uses_signs:
            args += ["--sign", self.sign]
        try:
            house = self.query_one("#host-house", HouseRulesInput).rules()
            GAMES[game].check_house(house)
        except IllegalMove as exc:
            raise ValueError(str(exc)) from None
        if not house.standard:
            args += ["--house", str(house)]
        if not self.query_one("#host-announce", Switch).value:
            args.append("--no-announce")
        return args

    def action_host(self) -> None:
        try:
            self.close(self.arguments())
        except ValueError as exc:
            self.query_one("#host-error", Static).update(Text(str(exc)))

    def action_cancel(self) -> None:
        self.close(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.action_host() if event.button.id == "host" else self.action_cancel()


@dataclass(frozen=True)
class JoinFailure:
    """Why joining `target` from the Join screen took no seat, to show when it opens again."""

    target: str
    reason: str


class JoinScreen(ClosesOnce, Screen[list[str] | None]):
    """Tables announced on the LAN, kept up to date, and a field to type an address instead."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Back"),
    ]

    def __init__(self, name: str, sign: str, interfaces: list[str] | None = None,
                 failure: JoinFailure | None = None) -> None:
        super().__init__()
        self.player_name, self.sign = name, sign
        self.interfaces = interfaces
        self.failure = failure
        self.browser: LanBrowser | None = None

    def compose(self) -> ComposeResult:
        yield card_header(self.app.has_class("-ascii"))
        with Vertical(id="join"):
            yield Static("Tables on your local network (enter joins)", id="join-title")
            yield DataTable(id="lan-tables", cursor_type="row", zebra_stripes=True)
            yield Static("Looking for tables…", id="lan-status")
            with Horizontal(classes="field"):
                yield Label("Or type", classes="field-label")
                yield Input(placeholder="HOST:PORT, e.g. 192.168.1.20:7777", id="join-address",
                            select_on_focus=False)  # keys typed on the list carry on here
            yield Static("", id="join-error")
        yield Footer()

    async def on_mount(self) -> None:
        table = self.query_one("#lan-tables", DataTable)
        # Fixed widths: however long what a stranger announces, the address stays in view at 80x24.
        for label, width in (("Host", 20), ("Game", 10), ("Seats", 5), ("Address", 21)):
            table.add_column(label, width=width)
        self.browser = LanBrowser(self._tables_changed, self.interfaces)
        try:
            await self.browser.start()
        except OSError as exc:  # no multicast on this machine: typing an address still works
            self.browser = None
            self.query_one("#lan-status", Static).update(
                Text(f"Cannot look for tables here ({exc}); type the host's address."))
        address = self.query_one("#join-address", Input)
        if self.failure is not None:  # the address typed last, and why it took no seat
            address.value = self.failure.target
            self.query_one("#join-error", Static).update(
                Text(f"Could not join {self.failure.target}: {self.failure.reason}"))
        address.focus() if self.browser is None or self.failure is not None else table.focus()

    def on_key(self, event: events.Key) -> None:
        # The list has the focus, so that enter joins a table heard; an address typed there
        # goes to the address field instead of nowhere.
        table = self.query_one("#lan-tables", DataTable)
        if table.has_focus and event.is_printable and event.character and event.character != " ":
            address = self.query_one("#join-address", Input)
            address.focus()
            address.insert_text_at_cursor(event.character)
            event.stop()

    async def on_unmount(self) -> None:
        if self.browser is not None:
            await self.browser.close()

    def _tables_changed(self) -> None:
        # The browser's callback, at most 4 times a second however busy the LAN: redraw after
        # the message being handled (call_later's "was it queued" answer is of no use to the
        # browser, which expects nothing back).
        self.call_later(self.show_tables)

    def show_tables(self) -> None:
        """Redraw the list of announced tables, keeping the cursor on the table it was on."""
        if self.browser is None:
            return
        table = self.query_one("#lan-tables", DataTable)
        chosen, row = None, table.cursor_row
        if table.row_count and table.is_valid_row_index(row):
            chosen = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        table.clear()
        keys = list(self.browser.tables)  # in the order heard: the first heard stay when full
        for key in keys:
            lan = self.browser.tables[key]
            table.add_row(Text(lan.host or "?"), Text(lan.game.capitalize() or "?"),
                          str(lan.players or "?"), lan.target, key=key)
        if chosen in self.browser.tables:  # else it was withdrawn: the cursor stays where it was
            row = keys.index(chosen)
        if keys:
            table.move_cursor(row=min(row, len(keys) - 1), animate=False, scroll=True)
        count, more = len(self.browser.tables), len(self.browser.unlisted)
        tables = f"{count} table{'s' if count != 1 else ''}"
        status = f"{tables} found; still looking…" if count else "Looking for tables…"
        if more:  # a crowded LAN: say so, or a person would not know theirs may be left out
            plus = "+" if self.browser.unlisted_overflow else ""
            status = f"{tables} shown and {more}{plus} more not shown; still looking…"
        self.query_one("#lan-status", Static).update(status)

    def _join(self, target: str) -> None:
        args = ["join", target]
        if self.player_name:
            args += ["--name", self.player_name]
        if self.sign:
            args += ["--sign", self.sign]
        self.close(args)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if self.browser is None or event.row_key.value is None:
            return
        lan: LanTable | None = self.browser.tables.get(event.row_key.value)
        if lan is not None:
            self._join(lan.target)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        target = event.value.strip()
        if not target:
            self.query_one("#join-error", Static).update("Type the address the host printed.")
            return
        self._join(target)

    def action_cancel(self) -> None:
        self.close(None)
