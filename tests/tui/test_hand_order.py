"""Hekata hands sort like Zodiak hands (issue 13, "hands sortable"): `o` cycles the order, kept."""

from __future__ import annotations

from engine.hekata import best_trick
from tests.tui.conftest import app_from_deal, settle
from tui.screens.hekata import sort_digits
from tui.settings import load_settings
from tui.widgets.hand import CardRow
from tui.widgets.trick_builder import TrickBuilder

TABLE = [3, 5, 9, 8]


def hekata_app():
    """Me to move first against Ada, holding 9 3 4 5 6 7 with 3 5 9 8 on the table."""
    return app_from_deal("hekata", [{"name": "Me"}, {"name": "Ada", "bot": "greedy"}], 0, {
        "hands": [[9, 3, 4, 5, 6, 7], [2, 2, 3, 3, 4, 4]], "table": TABLE,
        "stock": [5, 5, 6, 6, 7, 7, 8, 8]})


def test_the_three_orders() -> None:
    assert sort_digits([5, 0, 9, 5], "up") == [0, 5, 5, 9]
    assert sort_digits([5, 0, 9, 5], "down") == [9, 5, 5, 0]
    assert sort_digits([5, 0, 9, 5, 1], "takers", {0, 5}) == [5, 5, 0, 9, 1]


async def test_o_cycles_the_hekata_hand_order_keeps_the_cursors_card_and_is_saved() -> None:
    takers = {d for d in (9, 3, 4, 5, 6, 7) if best_trick(TABLE, d) is not None}
    assert takers and takers != {9, 3, 4, 5, 6, 7}  # the third order differs from the others
    app = hekata_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        assert screen.hand == [3, 4, 5, 6, 7, 9]
        await pilot.press("right")  # the cursor on the 4
        await pilot.press("o")
        await pilot.pause()
        assert screen.hand == [9, 7, 6, 5, 4, 3]
        assert screen.hand[screen.cursor] == 4
        assert screen.query_one("#hand", CardRow).cursor == screen.cursor
        assert load_settings().hekata_order == "down"
        await pilot.press("o")
        await pilot.pause()
        assert screen.hand == sort_digits([9, 3, 4, 5, 6, 7], "takers", takers)
        assert set(screen.hand[:len(takers)]) == takers
        assert load_settings().hekata_order == "takers"
        await pilot.press("h")  # the trick builder has the keys now: o does not sort under it
        await pilot.pause()
        assert screen.query(TrickBuilder)
        await pilot.press("o")
        await pilot.pause()
        assert load_settings().hekata_order == "takers"
        await pilot.press("b")
        await pilot.press("o")
        await pilot.pause()
        assert screen.hand == [3, 4, 5, 6, 7, 9] and load_settings().hekata_order == "up"
    again = hekata_app()
    async with again.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        assert screen.hand == [3, 4, 5, 6, 7, 9]
