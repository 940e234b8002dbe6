"""Exceptions the engine raises."""


class IllegalMove(ValueError):
    """A move, card, run or trick that the rules do not allow, with the reason in words."""


class RecordError(ValueError):
    """A game record that is not valid (bad JSON, unknown card, impossible deal)."""
