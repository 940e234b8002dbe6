"""The Hekata trick builder: arrange the laid card and table cards into a column addition (RULES 2.3).

The player moves a cursor over the cards, adds them to rows, starts new rows, shifts a
single-card row to the tens or hundreds column, and sees the written sum and the engine's
verdict live. A legal trick is confirmed with enter (or `t`); escape cancels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive, var
from textual.widget import Widget
from textual.widgets import Label

from engine.cards import parse_digit
from engine.errors import IllegalMove
from engine.tricks import Row, Trick, best_trick, check_trick

__all__ = ["TrickBuilder"]

LAID = 0
"""The position of the card just laid; table cards follow it, in table order."""

CARD_WIDTH = 5
CARD_GAP = 1


class DraftRow(NamedTuple):
    """One row being built: the positions of its cards, in order, and its column shift."""

    positions: tuple[int, ...]
    shift: int = 0


EMPTY_DRAFT: tuple[DraftRow, ...] = (DraftRow(()),)


class CardFace(Widget):
    """One digit card; a click on it posts `CardFace.Picked`."""

    # Paper and ink like the table's cards, so a face reads the same in light and dark themes
    # and maps to white/black/blue/yellow in 16 colours; state also shows in the border shape.
    DEFAULT_CSS = """
    CardFace {
        width: 5;
        height: 3;
        background: #f2f0e6;
        color: #111111;
        border: round #555555;
        content-align: center middle;
        text-style: bold;
    }
    CardFace.-laid { border: double #b35c00; }
    CardFace.-used {
        background: #f2f0e6 25%;
        color: $text-disabled;
        border: round $foreground 25%;
        text-style: none;
    }
    CardFace.-cursor { border: heavy #1544b8; color: #1544b8; text-style: bold reverse; }
    CardFace:hover { border: heavy #1544b8; }
    CardFace.-used:hover { border: round $foreground 25%; }
    CardFace.-ascii { border: ascii #555555; }
    CardFace.-ascii.-laid { border: ascii #b35c00; }
    CardFace.-ascii.-used { border: blank; }
    CardFace.-ascii.-cursor { border: ascii #1544b8; }
    CardFace.-ascii:hover { border: ascii #1544b8; }
    """

    class Picked(Message):
        """The card at `position` was clicked."""

        def __init__(self, position: int) -> None:
            self.position = position
            super().__init__()

    def __init__(self, digit: int, position: int, ascii_only: bool = False) -> None:
        super().__init__(classes="-ascii" if ascii_only else None)
        self.digit = digit
        self.position = position
        self.set_class(position == LAID, "-laid")

    def render(self) -> str:
        """The digit, centred by the CSS."""
        return str(self.digit)

    def on_click(self, event: events.Click) -> None:
        """Tell the builder which card was clicked."""
        event.stop()
        self.post_message(self.Picked(self.position))


class TablePile(Widget):
    """The table's cards, wrapped onto as many lines as the width needs."""

    DEFAULT_CSS = f"""
    TablePile {{
        layout: grid;
        grid-size: 8;
        grid-columns: {CARD_WIDTH};
        grid-rows: 3;
        grid-gutter: 0 {CARD_GAP};
        width: 1fr;
        height: auto;
    }}
    """

    def on_resize(self, event: events.Resize) -> None:
        """Fit as many cards on a line as the width holds."""
        # A grid wraps only at its column count, so the count follows the width.
        per_line = max(1, (event.size.width + CARD_GAP) // (CARD_WIDTH + CARD_GAP))
        if self.styles.grid_size_columns != per_line:
            self.styles.grid_size_columns = per_line


@dataclass(frozen=True)
class SheetRow:
    """One row of the written sum: its digits, column shift, and which digit is the laid card."""

    digits: tuple[int, ...]
    shift: int
    laid_at: int | None


@dataclass(frozen=True)
class Sheet:
    """Everything the written sum shows."""

    rows: tuple[SheetRow, ...] = ()
    pending: bool = False
    total: int = 0
    ok: bool = False
    verdict: str = ""
    notice: str = ""


def _grouped_cells(cells: list[tuple[str, str]], group: bool) -> list[tuple[str, str]]:
    """The cells of a row, with a comma (or a space beside blanks) between groups of three digits."""
    if not group:
        return cells
    out: list[tuple[str, str]] = []
    for i, cell in enumerate(cells):
        from_right = len(cells) - i - 1
        out.append(cell)
        if from_right and from_right % 3 == 0:
            digits = cell[0].isdigit() and cells[i + 1][0].isdigit()
            out.append(("," if digits else " ", ""))
    return out


def _grouped_width(field: int, group: bool) -> int:
    """The columns a row of `field` digits takes once grouped."""
    return field + (field - 1) // 3 if group else field


class ColumnSum(Widget):
    """The trick as a written column addition with its total and the verdict beside it."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "column-sum--laid",
        "column-sum--ok",
        "column-sum--bad",
        "column-sum--muted",
    }
    DEFAULT_CSS = """
    ColumnSum { height: auto; }
    ColumnSum > .column-sum--laid { color: $text-primary; text-style: bold underline; }
    ColumnSum > .column-sum--ok { color: $text-success; text-style: bold; }
    ColumnSum > .column-sum--bad { color: $text-warning; text-style: bold; }
    ColumnSum > .column-sum--muted { color: $text-muted; }
    """

    sheet: reactive[Sheet] = reactive(Sheet, layout=True)

    def __init__(self, ascii_only: bool = False, prompt: str = "") -> None:
        super().__init__()
        self.ascii_only = ascii_only
        self.prompt = prompt

    def render(self) -> RenderableType:
        """The rows right-aligned, a rule, the total and the verdict beside it."""
        sheet = self.sheet
        style = self.get_component_rich_style
        muted = style("column-sum--muted")
        if not sheet.rows:
            text = Text(self.prompt, style=muted)
            if sheet.notice:
                text.append("\n" + sheet.notice, style=muted)
            return text
        width = max(len(row.digits) + row.shift for row in sheet.rows)
        field = max(width, len(str(sheet.total))) + 2
        # Long sums (five digits and more) are grouped in thousands, every row alike, so the
        # columns still line up.
        group = max(width, len(str(sheet.total))) > 4
        lines: list[Text] = []
        for index, row in enumerate(sheet.rows):
            cells: list[tuple[str, str]] = [(" ", "")] * (field - len(row.digits) - row.shift)
            cells += [(str(digit), "column-sum--laid" if at == row.laid_at else "")
                      for at, digit in enumerate(row.digits)]
            cells += [(" ", "")] * row.shift
            line = Text(" " if index == 0 else "+")
            for char, name in _grouped_cells(cells, group):
                line.append(char, style(name) if name else "")
            lines.append(line)
        if sheet.pending:
            lines.append(Text("+" + " " * _grouped_width(field, group)))
        rule = "-" if self.ascii_only else "─"
        verdict_style = style("column-sum--ok" if sheet.ok else "column-sum--bad")
        verdict = Text(sheet.verdict, verdict_style)
        if sheet.notice:
            verdict.append("\n" + sheet.notice, muted)
        # Three columns: the sum, a marker on the row the next card joins, the verdict (wrapped
        # under itself, beside the total).
        grid = Table.grid()
        grid.add_column(no_wrap=True)
        grid.add_column(no_wrap=True, width=3)
        grid.add_column(ratio=1, overflow="fold")
        marker = Text(" <" if self.ascii_only else " ◂", muted)
        for index, line in enumerate(lines):
            grid.add_row(line, marker if index == len(lines) - 1 else "", "")
        wide = _grouped_width(field, group)
        total = f"{sheet.total:,}" if group else str(sheet.total)
        grid.add_row(Text(" " + rule * wide, muted), "", "")
        grid.add_row(Text(" " + total.rjust(wide), verdict_style), "", verdict)
        return grid


class TrickBuilder(Widget, can_focus=True):
    """Compose a Hekata trick from the card just laid and the table's cards, checked live."""

    DEFAULT_CSS = """
    TrickBuilder {
        width: 1fr;
        max-width: 64;
        height: auto;
        padding: 0 1;
        border: round $foreground 40%;
        border-title-color: $foreground;
        border-subtitle-color: $text-primary;
    }
    TrickBuilder:focus { border: round $accent; }
    TrickBuilder.-ascii { border: ascii $foreground 40%; }
    TrickBuilder.-ascii:focus { border: ascii $accent; }
    TrickBuilder #cards { height: auto; }
    TrickBuilder .pile { width: auto; height: auto; }
    TrickBuilder #table-pile { width: 1fr; }
    TrickBuilder #laid-pile { margin-right: 3; }
    TrickBuilder .pile-label { color: $text-muted; }
    TrickBuilder ColumnSum { margin-top: 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "move(-1)", "Move", show=False),
        Binding("right", "move(1)", "Move", show=False),
        Binding("enter", "take", "Take trick", show=False),
        Binding("enter", "add", "Add", show=False),
        Binding("space", "add", "Add", key_display="␣"),
        Binding("n", "new_row", "New row"),
        Binding("plus", "new_row", "New row", show=False),
        Binding("s", "shift", "Shift"),
        Binding("underscore", "shift", "Shift", show=False),
        Binding("backspace", "undo", "Undo", show=False),  # named in the builder's help line
        Binding("c", "clear", "Clear", show=False),  # the builder's own help line names it
        Binding("h", "hint", "Hint"),
        Binding("t", "take", "Take"),
        Binding("escape", "cancel", "Lay alone"),  # what esc does: the card laid, no trick
        # A digit key adds a free card of that digit, so typing `98+2` builds `98 + 2`. Digits
        # are bindings like n and s, so keys typed fast are applied in the order typed (a key
        # handler ran digits before an n typed ahead of them).
        *(Binding(str(digit), f"add_digit({digit})", show=False) for digit in range(10)),
    ]

    class Confirmed(Message):
        """The player takes `trick`, which check_trick accepted."""

        def __init__(self, builder: TrickBuilder, trick: Trick) -> None:
            self.builder = builder
            self.trick = trick
            super().__init__()

        @property
        def control(self) -> TrickBuilder:
            """The builder the trick was composed in."""
            return self.builder

    class Cancelled(Message):
        """The player takes no trick."""

        def __init__(self, builder: TrickBuilder) -> None:
            self.builder = builder
            super().__init__()

        @property
        def control(self) -> TrickBuilder:
            """The builder that was cancelled."""
            return self.builder

    draft: reactive[tuple[DraftRow, ...]] = reactive(EMPTY_DRAFT, init=False)
    """The rows being built; the last one (perhaps still empty) takes the next card."""
    cursor: reactive[int] = reactive(LAID, init=False)
    """The position under the cursor: 0 is the laid card, 1.. the table cards in order."""
    notice: reactive[str] = reactive("", init=False)
    """A passing remark about the last key (a hint found, a shift refused)."""
    trick: var[Trick | None] = var(None, init=False, bindings=True)
    """The composed trick, legal or not; None while no card is placed or a row is no number (05)."""
    reason: var[str | None] = var(None, init=False, bindings=True)
    """Why the composed trick is not legal (check_trick's words); None when legal or empty."""

    def __init__(self, table: Sequence[int], card: int, ascii_only: bool = False, *,
                 max_row: int | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.table = tuple(parse_digit(digit) for digit in table)
        self.max_row = max_row
        """The house rules' longest row (engine.house), None for the rules as written."""
        self.card = card = parse_digit(card)
        self.ascii_only = ascii_only
        self.set_class(ascii_only, "-ascii")
        self.total: int | None = None
        """The trick's worth when it is legal."""
        self.faces = (card, *self.table)
        """The digit at each position: the laid card, then the table."""
        self._cards = [CardFace(digit, position, ascii_only)
                       for position, digit in enumerate(self.faces)]
        self._sum = ColumnSum(
            ascii_only,
            f"Add the {card} you laid and table cards: space adds the card under the cursor"
            " (or type its digit), n or + starts a new row, h shows the best trick.")
        self.border_title = f"Take a trick with the {card}"
        self._refresh_views()

    def compose(self) -> ComposeResult:
        """The laid card, the table's cards, then the written sum."""
        with Horizontal(id="cards"):
            with Vertical(id="laid-pile", classes="pile"):
                yield Label("laid", classes="pile-label")
                yield self._cards[LAID]
            with Vertical(id="table-pile", classes="pile"):
                yield Label("table", classes="pile-label")
                with TablePile():
                    yield from self._cards[1:]
        yield self._sum

    @property
    def is_legal(self) -> bool:
        """Whether the composed trick may be taken."""
        return self.trick is not None and self.reason is None

    def used(self) -> set[int]:
        """The positions already placed in the trick."""
        return {position for row in self.draft for position in row.positions}

    def set_trick(self, trick: Trick | None) -> None:
        """Load `trick` (None clears), raising IllegalMove if these cards cannot make it."""
        if trick is None:
            self.draft = EMPTY_DRAFT
            return
        free = list(range(len(self.faces)))  # the laid card comes first, so it is used first
        rows = []
        for row in trick.rows:
            positions = []
            for digit in row.digits:
                position = next((p for p in free if self.faces[p] == digit), None)
                if position is None:
                    raise IllegalMove(f"{trick} needs a {digit} that is not on the table")
                free.remove(position)
                positions.append(position)
            rows.append(DraftRow(tuple(positions), row.shift))
        self.draft = tuple(rows) or EMPTY_DRAFT
        self._settle_cursor()

    # Reactive plumbing.

    def validate_cursor(self, cursor: int) -> int:
        """Keep the cursor on one of the cards."""
        return min(max(cursor, 0), len(self.faces) - 1)

    def watch_draft(self) -> None:
        """Re-check and redraw after every edit; the last remark no longer applies."""
        self.notice = ""
        self._refresh_views()

    def watch_cursor(self) -> None:
        """Redraw the cards and drop a remark about the card that was under the cursor."""
        self.notice = ""
        self._refresh_faces()

    def watch_notice(self) -> None:
        """Show the remark under the verdict."""
        self._refresh_sum()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Offer "take" only for a legal trick."""
        if action == "take":
            # None keeps `t` in the footer, greyed out, and lets enter fall through to "add".
            return True if self.is_legal else None
        return True

    def _refresh_views(self) -> None:
        """Re-check the trick with the engine and redraw the cards and the sum."""
        rows = [row for row in self.draft if row.positions]
        trick: Trick | None = None
        reason: str | None = None
        total: int | None = None
        if rows:
            try:
                trick = Trick(tuple(
                    Row(tuple(self.faces[p] for p in row.positions), row.shift) for row in rows))
                total = check_trick(self.table, self.card, trick, self.max_row)
            except IllegalMove as exc:
                reason = str(exc)
        self.total = total
        self.trick = trick
        self.reason = reason
        self.border_subtitle = str(trick) if trick is not None else ""
        self._refresh_faces()
        self._refresh_sum()

    def _refresh_faces(self) -> None:
        """Dim the cards in the trick and mark the one under the cursor."""
        used = self.used()
        for face in self._cards:
            face.set_class(face.position in used, "-used")
            face.set_class(face.position == self.cursor and face.position not in used, "-cursor")

    def _refresh_sum(self) -> None:
        """Hand the written sum its rows, total, verdict and remark."""
        rows = tuple(
            SheetRow(tuple(self.faces[p] for p in row.positions), row.shift,
                     row.positions.index(LAID) if LAID in row.positions else None)
            for row in self.draft if row.positions)
        # Summed here too: a row the engine refuses to build (05) still shows in the sum.
        total = sum(int("".join(map(str, row.digits))) * 10**row.shift for row in rows)
        if self.is_legal:
            verdict = f"{'OK' if self.ascii_only else '✓'} a trick worth {self.total:,}"
        elif self.reason is not None:
            verdict = f"{'!!' if self.ascii_only else '✗'} {self.reason}"
        else:
            verdict = ""
        self._sum.sheet = Sheet(
            rows=rows,
            pending=len(self.draft) > 1 and not self.draft[-1].positions,
            total=total,
            ok=self.is_legal,
            verdict=verdict,
            notice=self.notice,
        )

    def _available(self, position: int) -> bool:
        """Whether `position` is a card not yet in the trick."""
        return 0 <= position < len(self.faces) and position not in self.used()

    def _settle_cursor(self) -> None:
        """Move the cursor off a used card: to the next free card on the right, else the left."""
        if self._available(self.cursor):
            return
        used = self.used()
        right = [p for p in range(self.cursor + 1, len(self.faces)) if p not in used]
        left = [p for p in range(self.cursor - 1, -1, -1) if p not in used]
        if right or left:
            self.cursor = (right or left)[0]

    def _append(self, position: int) -> None:
        """Put the card at `position` at the end of the current row."""
        *done, current = self.draft
        positions = (*current.positions, position)
        # Only a single card stands in the tens or hundreds column; a longer row is a number.
        shift = current.shift if len(positions) == 1 else 0
        self.draft = (*done, DraftRow(positions, shift))
        self._settle_cursor()

    # Actions.

    def action_move(self, step: int) -> None:
        """Move the cursor to the next card not yet in the trick, `step` 1 right or -1 left."""
        used = self.used()
        position = self.cursor + step
        while 0 <= position < len(self.faces):
            if position not in used:
                self.cursor = position
                return
            position += step

    def action_add(self) -> None:
        """Add the card under the cursor to the current row."""
        if self._available(self.cursor):
            self._append(self.cursor)
        else:
            self.notice = "Every card is in the trick: backspace takes the last one out."

    def action_new_row(self) -> None:
        """Start a new row, unless the current one is still empty."""
        if self.draft[-1].positions:
            self.draft = (*self.draft, DraftRow(()))
        else:
            self.notice = "The new row is empty: add a card to it first."

    def action_shift(self) -> None:
        """Move a single-card row to the next column: units, tens, hundreds, then units again."""
        *done, current = self.draft
        if len(current.positions) != 1:
            self.notice = "Only a row of a single card can move to the tens or hundreds column."
            return
        self.draft = (*done, DraftRow(current.positions, (current.shift + 1) % 3))

    def action_undo(self) -> None:
        """Take the last card out of the trick (or drop an empty new row)."""
        *done, current = self.draft
        if not current.positions:
            if done:
                self.draft = tuple(done)
            return
        freed = current.positions[-1]
        positions = current.positions[:-1]
        self.draft = (*done, DraftRow(positions, current.shift if positions else 0))
        self.cursor = freed

    def action_clear(self) -> None:
        """Take every card out of the trick."""
        self.draft = EMPTY_DRAFT
        self.cursor = LAID

    def action_hint(self) -> None:
        """Load the best trick the engine finds, or say there is none."""
        try:
            best = best_trick(self.table, self.card, self.max_row) if self.table else None
        except IllegalMove:
            best = None
        if best is None:
            self.notice = f"No trick can be made with the {self.card}: lay it alone (escape)."
            return
        self.set_trick(best)
        self.notice = "Hint: the best trick these cards make."

    def action_take(self) -> None:
        """Take the composed trick, if it is legal."""
        if self.trick is not None and self.is_legal:
            self.post_message(self.Confirmed(self, self.trick))

    def action_cancel(self) -> None:
        """Take no trick."""
        self.post_message(self.Cancelled(self))

    def action_add_digit(self, digit: int) -> None:
        """Add a free card showing `digit` to the current row."""
        self.add_digit(digit)

    def add_digit(self, digit: int) -> None:
        """Add a free card showing `digit` to the current row, the laid card before the table's."""
        used = self.used()
        position = next(
            (p for p, d in enumerate(self.faces) if d == digit and p not in used), None)
        if position is None:
            self.notice = f"There is no free {digit} among these cards."
            return
        self._append(position)

    def on_card_face_picked(self, message: CardFace.Picked) -> None:
        """Add a clicked card, if it is not in the trick yet."""
        message.stop()
        self.focus()
        if self._available(message.position):
            self.cursor = message.position
            self._append(message.position)
