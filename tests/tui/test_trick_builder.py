"""TrickBuilder under Textual's Pilot: the tricks of tui/RULES.md 2.3 built by keys, refusals, hint, editing."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from textual import events
from textual.app import App, ComposeResult
from textual.pilot import Pilot

from engine.errors import IllegalMove
from engine.tricks import Row, Trick, best_trick, check_trick, parse_trick
from tui.widgets.trick_builder import TrickBuilder

# Keys that edit the trick; enter/t/escape are added where a test wants them.
EDIT_KEYS = ["left", "right", "space", "n", "plus", "s", "underscore", "backspace", "c", "h",
             "enter", "0", "2", "5", "8"]


class BuilderApp(App[None]):
    """A bare app hosting one TrickBuilder and recording what it posts."""

    def __init__(self, table: Sequence[int], card: int, ascii_only: bool = False) -> None:
        super().__init__()
        self.table = table
        self.card = card
        self.ascii_only = ascii_only
        self.confirmed: list[Trick] = []
        self.cancelled = 0

    def compose(self) -> ComposeResult:
        yield TrickBuilder(self.table, self.card, self.ascii_only)

    def on_trick_builder_confirmed(self, message: TrickBuilder.Confirmed) -> None:
        self.confirmed.append(message.trick)

    def on_trick_builder_cancelled(self, message: TrickBuilder.Cancelled) -> None:
        self.cancelled += 1


async def pick(pilot: Pilot[None], builder: TrickBuilder, digit: int, laid: bool = False) -> None:
    """Walk the cursor to a free card showing `digit` (the laid card if `laid`) and add it."""
    used = builder.used()
    target = next(p for p, d in enumerate(builder.faces)
                  if d == digit and p not in used and (p == 0) == laid)
    for _ in range(len(builder.faces)):
        if builder.cursor == target:
            break
        await pilot.press("right" if builder.cursor < target else "left")
    assert builder.cursor == target
    await pilot.press("space")


async def build(pilot: Pilot[None], builder: TrickBuilder, text: str) -> None:
    """Type `text` (trick notation, the laid card marked with a leading *) by keys."""
    for number, row in enumerate(text.split("+")):
        if number:
            await pilot.press("n")
        row = row.strip()
        shift = len(row) - len(row.rstrip("_"))
        row = row.rstrip("_")
        index = 0
        while index < len(row):
            laid = row[index] == "*"
            index += laid
            await pick(pilot, builder, int(row[index]), laid)
            index += 1
        for _ in range(shift):
            await pilot.press("s")


def expected(builder: TrickBuilder) -> tuple[Trick | None, str | None]:
    """What `trick` and `reason` must be for the builder's draft, straight from the engine."""
    rows = [row for row in builder.draft if row.positions]
    if not rows:
        return None, None
    try:
        trick = Trick(tuple(Row(tuple(builder.faces[p] for p in row.positions), row.shift)
                            for row in rows))
    except IllegalMove as exc:
        return None, str(exc)
    try:
        check_trick(builder.table, builder.card, trick)
    except IllegalMove as exc:
        return trick, str(exc)
    return trick, None


EXAMPLES = [
    ([9, 8], 2, "98 + *2", "98 + 2", 100),
    ([9, 8], 2, "9*2 + 8", "92 + 8", 100),
    ([3, 5, 9, 8], 2, "5398 + *2", "5398 + 2", 5400),
    ([1, 0], 9, "10 + *9_", "10 + 9_", 100),
    ([6, 0, 2, 2], 2, "60 + *2__ + 2_ + 2_", "60 + 2__ + 2_ + 2_", 300),
    ([1, 0, 2, 2, 2, 3, 4], 7, "31 + 2*7 + 42", "31 + 27 + 42", 100),
    ([2, 0], 0, "20*0", "200", 200),
]


@pytest.mark.parametrize(("table", "card", "keys", "notation", "total"), EXAMPLES)
async def test_every_rules_example_built_by_keys_is_confirmed(
        table: list[int], card: int, keys: str, notation: str, total: int) -> None:
    app = BuilderApp(table, card)
    async with app.run_test() as pilot:
        builder = app.query_one(TrickBuilder)
        await build(pilot, builder, keys)
        assert str(builder.trick) == notation
        assert builder.reason is None and builder.total == total
        await pilot.press("enter")
        await pilot.pause()
        assert app.confirmed == [parse_trick(notation)]


async def test_typing_the_notation_builds_the_trick() -> None:
    app = BuilderApp([6, 0, 2, 2], 2)
    async with app.run_test() as pilot:
        builder = app.query_one(TrickBuilder)
        await pilot.press(*"60+2__+2_+2_", "enter")
        await pilot.pause()
        assert app.confirmed == [parse_trick("60 + 2__ + 2_ + 2_")]
        assert 0 in builder.used()  # the laid 2 is the first 2 typed
        await pilot.press("7")
        assert "no free 7" in builder.notice


async def test_keys_typed_faster_than_the_screen_are_applied_in_order() -> None:
    """A fast typist (or a paste) sends `87n6n7` before the builder has handled the first key:
    87 + 6 + 7, where the n keys used to be applied after the digits typed after them."""
    app = BuilderApp([5, 7, 6, 6, 8], 7)
    async with app.run_test() as pilot:
        builder = app.query_one(TrickBuilder)
        for key in "87n6n7":
            app.post_message(events.Key(key, key))
        await pilot.pause()
        await pilot.press("t")
        await pilot.pause()
        assert app.confirmed == [parse_trick("87 + 6 + 7")], builder.draft


async def test_take_key_confirms_and_escape_cancels() -> None:
    app = BuilderApp([9, 8], 2)
    async with app.run_test() as pilot:
        builder = app.query_one(TrickBuilder)
        await build(pilot, builder, "9*2 + 8")
        await pilot.press("t", "escape")
        await pilot.pause()
        assert app.confirmed == [parse_trick("92 + 8")]
        assert app.cancelled == 1


async def test_illegal_arrangement_shows_the_reason_and_enter_does_not_confirm() -> None:
    app = BuilderApp([9, 8, 3], 2)
    async with app.run_test() as pilot:
        builder = app.query_one(TrickBuilder)
        await build(pilot, builder, "93 + *2")
        assert builder.trick == parse_trick("93 + 2")
        assert builder.reason == "the total 95 is not a multiple of 100"
        assert not builder.is_legal
        assert "the total 95 is not a multiple of 100" in screen_text(app)
        await pilot.press("t")
        await pilot.press("enter")  # not a trick: enter adds the card under the cursor instead
        await pilot.pause()
        assert app.confirmed == []
        assert str(builder.trick) == "93 + 28"


async def test_the_tens_column_must_hold_a_card() -> None:
    app = BuilderApp([1, 0], 9)
    async with app.run_test() as pilot:
        builder = app.query_one(TrickBuilder)
        await build(pilot, builder, "1 + 0 + *9__")
        assert builder.reason is not None and "tens column is empty" in builder.reason
        await pilot.press("enter")
        await pilot.pause()
        assert app.confirmed == []


async def test_a_row_starting_with_zero_is_refused_with_the_engine_reason() -> None:
    app = BuilderApp([0, 5], 5)
    async with app.run_test() as pilot:
        builder = app.query_one(TrickBuilder)
        await build(pilot, builder, "05")
        assert builder.trick is None
        assert builder.reason is not None and "starts with 0" in builder.reason
        assert "starts with 0" in screen_text(app)


async def test_shift_cycles_and_only_moves_a_single_card() -> None:
    app = BuilderApp([1, 0], 9)
    async with app.run_test() as pilot:
        builder = app.query_one(TrickBuilder)
        await build(pilot, builder, "*9")
        shifts = []
        for _ in range(3):
            await pilot.press("s")
            shifts.append(builder.draft[-1].shift)
        assert shifts == [1, 2, 0]
        await pick(pilot, builder, 1)
        await pilot.press("s")
        assert builder.draft[-1].shift == 0 and str(builder.trick) == "91"
        assert "single card" in builder.notice


async def test_hint_fills_the_best_trick() -> None:
    table, card = [1, 0, 2, 2, 2, 3, 4], 7
    app = BuilderApp(table, card)
    async with app.run_test() as pilot:
        builder = app.query_one(TrickBuilder)
        await pilot.press("h")
        best = best_trick(table, card)
        assert best is not None
        assert builder.trick == best and builder.reason is None
        await pilot.press("enter")
        await pilot.pause()
        assert app.confirmed == [best]


async def test_hint_says_when_there_is_no_trick() -> None:
    app = BuilderApp([1, 1], 1)
    async with app.run_test() as pilot:
        builder = app.query_one(TrickBuilder)
        await pilot.press("h")
        assert builder.trick is None
        assert "No trick" in builder.notice and "No trick" in screen_text(app)


async def test_backspace_and_clear() -> None:
    app = BuilderApp([9, 8], 2)
    async with app.run_test() as pilot:
        builder = app.query_one(TrickBuilder)
        await build(pilot, builder, "98 + *2")
        await pilot.press("backspace")
        assert str(builder.trick) == "98" and builder.cursor == 0  # the cursor is on the freed card
        await pilot.press("backspace")  # drops the empty new row
        assert str(builder.trick) == "98" and len(builder.draft) == 1
        await pilot.press("backspace")
        assert str(builder.trick) == "9"
        await pilot.press("space", "c")
        assert builder.trick is None and builder.reason is None
        assert builder.used() == set()


async def test_clicking_a_card_adds_it() -> None:
    app = BuilderApp([9, 8], 2)
    async with app.run_test() as pilot:
        builder = app.query_one(TrickBuilder)
        cards = list(builder.query("CardFace"))
        for index in (1, 2, 0):
            await pilot.click(cards[index])
        assert str(builder.trick) == "982"
        assert builder.used() == {0, 1, 2}


async def test_set_trick_loads_and_refuses_missing_cards() -> None:
    app = BuilderApp([6, 0, 2, 2], 2)
    async with app.run_test():
        builder = app.query_one(TrickBuilder)
        builder.set_trick(parse_trick("60 + 2__ + 2_ + 2_"))
        assert builder.is_legal and builder.total == 300
        assert builder.used() == {0, 1, 2, 3, 4}
        try:
            builder.set_trick(parse_trick("70 + 30"))
        except IllegalMove as exc:
            assert "7" in str(exc)
        else:
            raise AssertionError("a trick with a card not on the table was loaded")
        builder.set_trick(None)
        assert builder.trick is None


async def test_the_sum_reads_like_a_written_addition() -> None:
    app = BuilderApp([3, 5, 9, 8], 2)
    async with app.run_test(size=(80, 16)) as pilot:
        builder = app.query_one(TrickBuilder)
        await build(pilot, builder, "5398 + *2")
        lines = screen_text(app).splitlines()
        assert any(line.startswith("│    5398") for line in lines)
        assert any(line.startswith("│ +     2") for line in lines)
        assert any(line.startswith("│    5400") and "✓ a trick worth 5,400" in line
                   for line in lines)
        assert builder.region.width <= 64 and builder.region.height <= 14


async def test_ascii_only_draws_no_box_characters() -> None:
    app = BuilderApp([6, 0, 2, 2], 2, ascii_only=True)
    async with app.run_test(size=(80, 16)) as pilot:
        builder = app.query_one(TrickBuilder)
        await pilot.press("right")
        builder.set_trick(parse_trick("60 + 2__ + 2_ + 2_"))
        await pilot.pause()
        text = screen_text(app)
        assert "a trick worth 300" in text
        assert all(ord(ch) < 128 for ch in text), text


def screen_text(app: App[None]) -> str:
    """The screen as plain text, one line per terminal row."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def random_keys(table: list[int], card: int, keys: list[str]) -> None:
    """Press `keys`; after each, trick and reason must agree with the engine."""
    app = BuilderApp(table, card)
    async with app.run_test() as pilot:
        builder = app.query_one(TrickBuilder)
        for key in keys:
            legal_before = builder.is_legal
            trick_before = builder.trick
            confirmed = len(app.confirmed)
            await pilot.press(key)
            assert (builder.trick, builder.reason) == expected(builder)
            if len(app.confirmed) > confirmed:
                assert legal_before and app.confirmed[-1] == trick_before
            assert builder.cursor in range(len(builder.faces))


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    table=st.lists(st.integers(0, 9), min_size=1, max_size=6),
    card=st.integers(0, 9),
    keys=st.lists(st.sampled_from(EDIT_KEYS + ["t"]), max_size=12),
)
def test_random_keys_never_crash_and_stay_consistent(
        table: list[int], card: int, keys: list[str]) -> None:
    asyncio.run(random_keys(table, card, keys))
