"""Hekata through the keyboard alone: a trick built in the trick builder, hints, a whole deal."""

from __future__ import annotations

from textual.geometry import Region

from tests.tui.conftest import app_from_deal, fresh_app, game_screen, log_text, settle
from tui.screens.dialogs import Summary
from tui.screens.hekata import HekataScreen
from tui.widgets.trick_builder import TrickBuilder

SEATS = [{"name": "Me"}, {"name": "Ada", "bot": "greedy"}]


def deal_app() -> object:
    # An example of tui/RULES.md 2.3: table 1 0, you lay 9 and take `10 + 9_`.
    return app_from_deal("hekata", SEATS, 0, {
        "hands": [[9, 3, 4, 5, 6, 7], [2, 2, 3, 3, 4, 4]], "table": [1, 0],
        "stock": [5, 5, 6, 6, 7, 7, 8, 8]})


def layout(screen: HekataScreen) -> dict[str, Region]:
    """Where the hand, the log and the status line are drawn."""
    return {name: screen.query_one(name).region for name in ("#hand", "#log", "#status")}


async def test_a_trick_built_in_the_builder() -> None:
    app = deal_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        assert isinstance(screen, HekataScreen) and screen.hand == [3, 4, 5, 6, 7, 9]
        before = layout(screen)
        await pilot.press("left", "enter")  # the 9, the only card that takes a trick
        builder = screen.query_one(TrickBuilder)
        assert builder.has_focus and builder.card == 9
        # Row one: 1 then 0 from the table; row two: the 9, shifted to the tens column.
        await pilot.press("right", "space", "space", "n", "space", "s")
        assert str(builder.trick) == "10 + 9_" and builder.is_legal
        await pilot.press("t")
        await settle(pilot)
        assert "Me lays 9 and takes 10 + 9_ = 100" in log_text(app)
        assert not screen.query(TrickBuilder)
        assert screen.scores[0] == 100
        # The builder's words go with it (they stayed on for the rest of the deal).
        assert "takes the trick" not in str(screen.query_one("#status").render())
        # And its room: the emptied slot kept the builder's height, which pushed the hand and
        # the status line off an 80x24 screen until the window was resized.
        assert layout(screen) == before


async def test_hint_fills_the_best_trick_and_escape_lays_alone() -> None:
    app = deal_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        await pilot.press("h")
        builder = screen.query_one(TrickBuilder)
        assert builder.is_legal and builder.trick is not None and builder.trick.total == 100
        await pilot.press("b")  # back to the hand: nothing laid
        await pilot.pause()
        assert not screen.query(TrickBuilder) and screen.my_turn
        await pilot.press("enter")  # the cursor is on the 9 the hint chose
        await pilot.press("escape")  # lay it without taking
        await settle(pilot)
        assert all(region.bottom <= 23 and region.height for region in layout(screen).values())
        assert "Me lays 9, draws a 5\n" in log_text(app) + "\n"  # issue 13.17: what you drew


async def test_a_whole_deal_by_keys() -> None:
    app = fresh_app("hekata", 2, seed=4)
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(200):
            screen = await settle(pilot)
            if isinstance(screen, Summary):
                break
            assert isinstance(screen, HekataScreen)
            await pilot.press("h")
            await pilot.press("t" if screen.builder is not None else "enter")
        else:
            raise AssertionError("the deal did not end")
        assert "takes" in log_text(app)
        await pilot.press("enter")
        await settle(pilot)
        assert game_screen(app).round_number == 2


async def test_clicks_choose_and_lay_a_card() -> None:
    app = deal_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        # The hand's content starts inside its border and padding; each card is 6 columns.
        await pilot.click("#hand", offset=(2 + 6 * 5 + 2, 1 + 2))
        assert screen.cursor == 5 and not screen.query(TrickBuilder)
        await pilot.click("#hand", offset=(2 + 6 * 5 + 2, 1 + 2))
        assert screen.query_one(TrickBuilder).card == 9
