"""Exceptions the engine raises: notation it cannot read, moves the rules forbid, records it cannot use.

The line is python-chess's (`InvalidMoveError` for notation, `IllegalMoveError` for rules):
`InvalidMove` means the text is not a move at all (`1S`, `5x`, `8H/X`); `IllegalMove` means the
move is well written and the rules forbid it (`05 + 95`, a lone `8H` with no suit). An
`InvalidMove` is also an `IllegalMove`, so code that only has to refuse bad input catches one
class; code that must tell the two apart (game records: docs/RECORDS.md, "Exit status") catches
`InvalidMove` first.
"""


class IllegalMove(ValueError):
    """A move, card, run or trick that the rules do not allow, with the reason in words."""


class InvalidMove(IllegalMove):
    """Text that is not a card, run, trick or move in tui/RULES.md section 3 notation, with the reason in words."""


class RecordError(ValueError):
    """A game record that is not valid (bad JSON, unknown card, impossible deal)."""
