"""Card faces drawn as small boxes of text, laid out in wrapping lines, with hit testing for clicks."""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style
from rich.text import Text

from engine.cards import Card

CARD_WIDTH = 5
CARD_HEIGHT = 3
# One line of cards is a row of marks (cursor, selection order) above the faces.
LINE_HEIGHT = CARD_HEIGHT + 1
GAP = 1
COMPACT_STEP = 4

# Explicit colours so a card reads the same in light and dark themes; 16-colour terminals
# get the nearest ANSI colours (white paper, black and red ink).
PAPER = "#f2f0e6"
INK = Style(color="#111111", bgcolor=PAPER)
RED_INK = Style(color="#c41a1a", bgcolor=PAPER)
EDGE = Style(color="#555555", bgcolor=PAPER)
PLAYABLE_EDGE = Style(color="#0a7d28", bgcolor=PAPER, bold=True)
CURSOR_EDGE = Style(color="#1544b8", bgcolor=PAPER, bold=True)
FRESH_EDGE = Style(color="#b35c00", bgcolor=PAPER, bold=True)
BACK = Style(color="#e8e8ff", bgcolor="#2d3f8f")
CURSOR_MARK = Style(color="#1e5be6", bold=True)
ORDER_MARK = Style(color="#ffffff", bgcolor="#8a2be2", bold=True)

UNICODE_BOX = ("╭", "─", "╮", "│", "╰", "╯")
HEAVY_BOX = ("┏", "━", "┓", "┃", "┗", "┛")
ASCII_BOX = (".", "-", ".", "|", "'", "'")
ASCII_CURSOR_BOX = ("#", "=", "#", "#", "#", "#")


@dataclass(frozen=True, slots=True)
class Face:
    """How one card looks: its label, ink and the marks on it."""

    label: str
    red: bool = False
    playable: bool = False
    order: int | None = None
    fresh: bool = False
    hidden: bool = False


def french_face(card: Card, ascii_only: bool, **marks: object) -> Face:
    """The face of a French card (`10♥`, or `10H` in ASCII), red for hearts and diamonds."""
    return Face(card.pretty(ascii_only), card.suit in "HD", **marks)  # type: ignore[arg-type]


def digit_face(digit: int, **marks: object) -> Face:
    """The face of a Hekata digit card."""
    return Face(str(digit), **marks)  # type: ignore[arg-type]


def layout(count: int, width: int) -> tuple[int, int]:
    """The horizontal step per card and the cards per line for `count` cards in `width` columns."""
    full = max(1, (width + GAP) // (CARD_WIDTH + GAP))
    if count <= 2 * full:
        return CARD_WIDTH + GAP, full
    # Many cards: overlap them so a big hand still fits in few lines.
    return COMPACT_STEP, max(1, (width - CARD_WIDTH) // COMPACT_STEP + 1)


def lines_needed(count: int, width: int) -> int:
    """How many lines of cards `count` faces take in `width` columns."""
    _, per_line = layout(count, width)
    return max(1, -(-count // per_line))


def height_needed(count: int, width: int) -> int:
    """Terminal rows for `count` faces in `width` columns."""
    return lines_needed(count, width) * LINE_HEIGHT


def hit(x: int, y: int, count: int, width: int) -> int | None:
    """The index of the card at column `x`, row `y`, or None (the topmost card wins overlaps)."""
    step, per_line = layout(count, width)
    line = y // LINE_HEIGHT
    col = min(x // step, per_line - 1)
    if x - col * step >= CARD_WIDTH:
        return None
    index = line * per_line + col
    return index if 0 <= index < count and x >= 0 and y >= 0 else None


def render_faces(faces: tuple[Face, ...], width: int, cursor: int | None,
                 ascii_only: bool) -> Text:
    """All faces as text lines, wrapped to `width`, the cursor's card drawn with a heavy edge."""
    step, per_line = layout(len(faces), width)
    out = Text(no_wrap=True, overflow="crop", end="")
    for start in range(0, len(faces), per_line):
        chunk = faces[start:start + per_line]
        rows = [Text(no_wrap=True, end="") for _ in range(LINE_HEIGHT)]
        for i, face in enumerate(chunk):
            index = start + i
            last = i == len(chunk) - 1
            span = CARD_WIDTH if last else step
            _draw(rows, face, index == cursor, ascii_only, span)
        if start:
            out.append("\n")
        out.append(Text("\n", end="").join(rows))
    return out


def _draw(rows: list[Text], face: Face, cursor: bool, ascii_only: bool, span: int) -> None:
    """Append one card, `span` columns wide (a card overlapped by the next shows only its left)."""
    box = (ASCII_CURSOR_BOX if cursor else ASCII_BOX) if ascii_only else (
        HEAVY_BOX if cursor else UNICODE_BOX)
    tl, h, tr, v, bl, br = box
    edge = CURSOR_EDGE if cursor else FRESH_EDGE if face.fresh else EDGE
    if face.hidden:
        edge = ink = BACK
    else:
        ink = RED_INK if face.red else INK
    label = face.label.center(CARD_WIDTH - 2)
    pointer = ("v" if ascii_only else "▼") if cursor else " "
    if face.order is not None:
        mark = Text.assemble((pointer, CURSOR_MARK), (f"{face.order:^3}", ORDER_MARK), " ", end="")
    else:
        mark = Text(pointer.center(CARD_WIDTH), style=CURSOR_MARK, end="")
    bottom_mid = h * (CARD_WIDTH - 2)
    bottom_edge = edge
    if face.playable and not face.hidden:
        dot = "*" if ascii_only else "•"
        bottom_mid = h + dot + h
        bottom_edge = PLAYABLE_EDGE if not cursor else CURSOR_EDGE
    pieces = [
        mark,
        Text.assemble((tl + h * (CARD_WIDTH - 2) + tr, edge), end=""),
        Text.assemble((v, edge), ("░░░" if face.hidden and not ascii_only else label, ink),
                      (v, edge), end=""),
        Text.assemble((bl, edge), (bottom_mid, bottom_edge), (br, edge), end=""),
    ]
    for row, piece in zip(rows, pieces):
        piece.truncate(span)
        row.append_text(piece)
        if span > CARD_WIDTH:
            row.append(" " * (span - CARD_WIDTH))
