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
    turn_left: int | None = None  # seconds on the turn timer of the seat to move


SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def score_text(score: int, width: int = 15, ascii_only: bool = False) -> str:
    """A score with grouped digits, or its first three digits and a power of ten if too wide."""
    grouped = f"{score:,}"
    if len(grouped) <= width:
        return grouped
    digits = str(abs(score))
    sign = "-" if score < 0 else ""
    power = str(len(digits) - 1)
    if ascii_only:
        return f"{sign}{digits[0]}.{digits[1:3]}e{power}"
    return f"{sign}{digits[0]}.{digits[1:3]}×10{power.translate(SUPERSCRIPTS)}"


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
        table.add_column(ratio=1, no_wrap=True, overflow="ellipsis", min_width=4)
        table.add_column(justify="right", no_wrap=True)
        table.add_column(no_wrap=True)
        table.add_column(justify="right", no_wrap=True)
        hekata = not game_named(state.game).uses_signs
        # Narrow panels abbreviate signs and drop bot kinds; Hekata's team column is short.
        roomy = self.size.width >= (30 if hekata else 50)
        # Long scores (a Hekata match can reach billions) keep every digit: the words go first.
        longest = max((len(f"{s:,}") for s in state.scores), default=1)
        terse = self.size.width < 34 + longest
        for seat, info in enumerate(state.seats):
            size = state.sizes[seat] if seat < len(state.sizes) else 0
            if hekata:
                teams = len(state.seats) == 4  # two players play alone: no team to name
                team = seat % 2 if teams else seat
                side = "" if not teams else TEAM_NAMES[team] if terse else f"team {TEAM_NAMES[team]}"
                score = state.scores[team] if team < len(state.scores) else 0
            else:
                card = SIGN_CARDS[info.sign].pretty(self.ascii_only) if info.sign else ""
                sign = (info.sign or "").capitalize()
                side = f"{sign if roomy else sign[:3]} {card}"
                score = state.scores[seat] if seat < len(state.scores) else 0
            name = literal(info.name, style="bold" if seat == state.my_seat else "")
            if seat == state.my_seat:
                name.append(" (you)", style="bold")
            if info.bot and roomy:
                name.append(f" ({info.bot})", style="dim")
            if not info.name and not info.bot:  # nobody has sat here yet
                name.append("open seat", style="dim italic")
            elif not info.connected:
                name.append(" (away)", style="dim italic")
            turn = seat == state.turn
            # The timer is a person's: an away seat's bot and a bot move without waiting for it.
            if turn and state.turn_left is not None and info.connected and not info.bot:
                name.append(f" {state.turn_left}s", style="bold")
            marker = (">" if self.ascii_only else "▶") if turn else ""
            row_style = "reverse" if turn else ""
            if seat == state.last_mover and not turn:
                row_style = "italic"
            count = str(size) if terse else f"{size} card{'s' if size != 1 else ''}"
            table.add_row(marker, name, count, side, score_text(score, ascii_only=self.ascii_only), style=row_style)
        return table
