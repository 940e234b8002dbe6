"""Card faces drawn as small boxes of text, laid out in wrapping lines, with hit testing for clicks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict, Unpack

from rich.style import Style
from rich.text import Text

from engine.cards import SUIT_SYMBOLS, Card


@dataclass(frozen=True, slots=True)
class CardSize:
    """The cell size of one card face and how far overlapped cards step."""

    width: int
    height: int
    overlap_step: int

    @property
    def line_height(self) -> int:
        """Rows for one line of cards: a row of marks (cursor, run order) above the faces."""
        return self.height + 1


SMALL = CardSize(5, 3, 4)
LARGE = CardSize(7, 5, 4)
GAP = 1

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
STAR_MARK = Style(color="#d4a017", bold=True)

UNICODE_BOX = ("╭", "─", "╮", "│", "╰", "╯")
HEAVY_BOX = ("┏", "━", "┓", "┃", "┗", "┛")
ASCII_BOX = (".", "-", ".", "|", "'", "'")
ASCII_CURSOR_BOX = ("#", "=", "#", "#", "#", "#")


@dataclass(frozen=True, slots=True)
class Face:
    """How one card looks: its label, the pip in its middle, its ink and the marks on it."""

    label: str
    pip: str = ""
    red: bool = False
    playable: bool = False
    order: int | None = None
    fresh: bool = False
    hidden: bool = False
    special: bool = False  # your own zodiac card: a star above it


class Marks(TypedDict, total=False):
    """The marks a face may be given, as Face names them."""

    playable: bool
    order: int | None
    fresh: bool
    hidden: bool
    special: bool


def french_face(card: Card, ascii_only: bool, **marks: Unpack[Marks]) -> Face:
    """The face of a French card (`10♥`, or `10H` in ASCII), red for hearts and diamonds."""
    pip = card.suit if ascii_only else SUIT_SYMBOLS[card.suit]
    return Face(card.pretty(ascii_only), pip, card.suit in "HD", **marks)


def digit_face(digit: int, **marks: Unpack[Marks]) -> Face:
    """The face of a Hekata digit card."""
    return Face(str(digit), str(digit), **marks)


def layout(count: int, width: int, size: CardSize = SMALL,
           compact: bool = False) -> tuple[int, int]:
    """The horizontal step per card and the cards per line for `count` cards in `width` columns.

    Cards overlap once they need more than two lines, or (compact) more than one.
    """
    full = max(1, (width + GAP) // (size.width + GAP))
    if count <= (1 if compact else 2) * full:
        return size.width + GAP, full
    # Many cards: overlap them so a big hand still fits in few lines.
    return size.overlap_step, max(1, (width - size.width) // size.overlap_step + 1)


def lines_needed(count: int, width: int, size: CardSize = SMALL, compact: bool = False) -> int:
    """How many lines of cards `count` faces take in `width` columns."""
    _, per_line = layout(count, width, size, compact)
    return max(1, -(-count // per_line))


def height_needed(count: int, width: int, size: CardSize = SMALL, compact: bool = False) -> int:
    """Terminal rows for `count` faces in `width` columns."""
    return lines_needed(count, width, size, compact) * size.line_height


def hit(x: int, y: int, count: int, width: int, size: CardSize = SMALL,
        compact: bool = False) -> int | None:
    """The index of the card at column `x`, row `y`, or None (the topmost card wins overlaps)."""
    if x < 0 or y < 0:
        return None
    step, per_line = layout(count, width, size, compact)
    line = y // size.line_height
    col = min(x // step, per_line - 1)
    if x - col * step >= size.width:
        return None
    index = line * per_line + col
    return index if index < count else None


def render_faces(faces: tuple[Face, ...], width: int, cursor: int | None, ascii_only: bool,
                 size: CardSize = SMALL, compact: bool = False) -> Text:
    """All faces as text lines, wrapped to `width`, the cursor's card drawn with a heavy edge."""
    step, per_line = layout(len(faces), width, size, compact)
    out = Text(no_wrap=True, overflow="crop", end="")
    for start in range(0, len(faces), per_line):
        chunk = faces[start:start + per_line]
        rows = [Text(no_wrap=True, end="") for _ in range(size.line_height)]
        for i, face in enumerate(chunk):
            last = i == len(chunk) - 1
            pieces = _face_rows(face, start + i == cursor, ascii_only, size)
            span = size.width if last else step
            for row, piece in zip(rows, pieces):
                piece.truncate(span)
                row.append_text(piece)
                if span > size.width:
                    row.append(" " * (span - size.width))
        if start:
            out.append("\n")
        out.append(Text("\n", end="").join(rows))
    return out


def _face_rows(face: Face, cursor: bool, ascii_only: bool, size: CardSize) -> list[Text]:
    """The mark row and the face's rows of one card."""
    box = (ASCII_CURSOR_BOX if cursor else ASCII_BOX) if ascii_only else (
        HEAVY_BOX if cursor else UNICODE_BOX)
    tl, h, tr, v, bl, br = box
    inner = size.width - 2
    edge = CURSOR_EDGE if cursor else FRESH_EDGE if face.fresh else EDGE
    ink = BACK if face.hidden else RED_INK if face.red else INK
    if face.hidden:
        edge = BACK
    pointer = ("v" if ascii_only else "▼") if cursor else " "
    if face.order is not None:
        mark = Text.assemble((pointer, CURSOR_MARK), (f"{face.order:^3}", ORDER_MARK), end="")
        mark.append(" " * (size.width - 4))
    else:
        mark = Text(pointer.center(size.width), style=CURSOR_MARK, end="")
    if face.special:
        mark = mark[:size.width - 1]
        mark.append("*" if ascii_only else "★", STAR_MARK)
    bottom, bottom_edge = h * inner, edge
    if face.playable and not face.hidden:
        dot = "*" if ascii_only else "•"
        bottom = dot.center(inner, h)
        bottom_edge = CURSOR_EDGE if cursor else PLAYABLE_EDGE
    if size.height <= 3:
        middle = [face.label.center(inner)]
    else:
        # A larger card: the index in the corners and the pip in the middle, like a real card.
        fill = [" " * inner] * (size.height - 5)
        middle = [face.label.ljust(inner), *fill, face.pip.center(inner), *fill,
                  face.label.rjust(inner)][:size.height - 2]
    if face.hidden:
        middle = [("#" if ascii_only else "░") * inner for _ in middle]
    rows = [mark, Text.assemble((tl + h * inner + tr, edge), end="")]
    rows += [Text.assemble((v, edge), (text, ink), (v, edge), end="") for text in middle]
    rows.append(Text.assemble((bl, edge), (bottom, bottom_edge), (br, edge), end=""))
    return rows
