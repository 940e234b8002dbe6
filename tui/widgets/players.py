"""Who is at the table: each seat's name, card count, sign or team, score, and whose turn it is."""

from __future__ import annotations

from dataclasses import dataclass

from rich.table import Table
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from engine.games import game_named
from engine.zodiak import SIGN_CARDS
from netplay.session.events import SeatInfo
from tui.literal import literal

TEAM_NAMES = ("A", "B")


@dataclass(frozen=True)
class TableState:
    """What the players panel shows: seats, hand sizes, the turn, scores and the last mover."""

    game: str
    seats: tuple[SeatInfo, ...]
    my_seat: int | None
    sizes: tuple[int, ...] = ()
    turn: int | None = None
    scores: tuple[int, ...] = ()
    last_mover: int | None = None


class Players(Widget):
    """A compact table of the seats, the one to move marked with an arrow."""

    state: reactive[TableState | None] = reactive(None, layout=True)

    def __init__(self, ascii_only: bool = False, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.ascii_only = ascii_only

    def render(self) -> Table | Text:
        state = self.state
        if state is None:
            return Text("waiting for the deal…")
        table = Table(box=None, show_header=False, padding=(0, 1), expand=True, pad_edge=False)
        table.add_column(width=1, no_wrap=True)
        table.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
        table.add_column(justify="right", no_wrap=True)
        table.add_column(no_wrap=True)
        table.add_column(justify="right", no_wrap=True)
        hekata = not game_named(state.game).uses_signs
        roomy = self.size.width >= 50  # narrow panels abbreviate signs and drop bot kinds
        for seat, info in enumerate(state.seats):
            size = state.sizes[seat] if seat < len(state.sizes) else 0
            if hekata:
                team = seat % 2 if len(state.seats) == 4 else seat
                side = f"team {TEAM_NAMES[team]}"
                score = state.scores[team] if team < len(state.scores) else 0
            else:
                card = SIGN_CARDS[info.sign].pretty(self.ascii_only) if info.sign else ""
                sign = (info.sign or "").capitalize()
                side = f"{sign if roomy else sign[:3]} {card}"
                score = state.scores[seat] if seat < len(state.scores) else 0
            name = literal(info.name, style="bold" if seat == state.my_seat else "")
            if info.bot and roomy:
                name.append(f" ({info.bot})", style="dim")
            if not info.connected:
                name.append(" (away)", style="dim italic")
            turn = seat == state.turn
            marker = (">" if self.ascii_only else "▶") if turn else ""
            row_style = "reverse" if turn else ""
            if seat == state.last_mover and not turn:
                row_style = "italic"
            table.add_row(marker, name, f"{size} card{'s' if size != 1 else ''}", side,
                          f"{score:,}", style=row_style)
        return table
